"""``semiparse count``: projectivity statistics of CoNLL-U files.

Per file: sentences, syntactic words (the numbered word lines: multiword
token ranges and empty nodes are not words of the basic tree), non-projective
trees, gold edges an optimal projectivization loses, and for every sentence the exact number of
optimal projectivizations (``--json`` lists them all; ``--plot`` draws them
against sentence length, as Nederhof 2019, Figure 8).  With ``--partial``
(HEAD ``_``: unknown) the edges lost and the non-projective trees concern
the known edges.
"""
import collections
import contextlib
import functools
import json
import math
import sys
import tempfile
from pathlib import Path

from semiparse.cli import UserError, pyplot
from semiparse.treebank.outputs import check_output, is_stdout, open_output
from semiparse.treebank.projectivity import NoProjectiveTree, TreeTooLarge, count_optimal_projectivizations
from semiparse.treebank.columns import parse_deprels, words_with
from semiparse.cli._treebank import (add_input_options, add_partial_option, expand_inputs, failed, mapped,
                                     progress, sentences, use_single_root)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "count",
        help="non-projectivity and number of optimal projectivizations per sentence",
        description="Sentences, words, % non-projective trees, gold edges lost by optimal "
        "projectivization and the exact number of optimal projectivizations of each sentence.",
    )
    parser.add_argument("inputs", nargs="+", metavar="IN", help="CoNLL-U files or directories ('-' for stdin)")
    parser.add_argument("--json", action="store_true", help="machine-readable output, every sentence included")
    parser.add_argument("--per-sentence", action="store_true", help="text output: one line per non-projective sentence")
    parser.add_argument(
        "--sort", choices=("count", "loss"),
        help="order of the --per-sentence lines: most optimal projectivizations first (count) "
        "or most edges lost first (loss); default: file order",
    )
    parser.add_argument("--plot", metavar="FILE.png", help="plot optimal projectivizations against length (log scale)")
    parser.add_argument(
        "--only", metavar="DEPREL[,DEPREL...]",
        help="count as projectivize --only does: only words with these relations may change head "
        "(a sentence where they cannot make it projective is an error under --on-error)",
    )
    add_input_options(parser)
    add_partial_option(parser, "the known edges are counted")
    parser.set_defaults(func=run)
    return parser


def _analyse(item, root, partial=False):
    """Worker: ``(kept, count)`` for one tree, or the error when its ``only``
    words cannot make it projective (NoProjectiveTree) or its chart would
    not fit in memory (TreeTooLarge)."""
    heads, only = item
    single = use_single_root(root, heads)
    try:
        return count_optimal_projectivizations(heads, single_root=single, only=only, partial=partial)
    except (NoProjectiveTree, TreeTooLarge) as error:
        return error


def file_statistics(path, args, spool=None):
    """Totals of one file.  Memory does not grow with the file: each
    sentence's row ``[line, sent_id, length, lost, optimal_trees]`` goes to
    ``spool`` (a text file, one JSON list a line) when one is given."""
    worker = functools.partial(_analyse, root=args.root, partial=args.partial)
    only = None if args.only is None else parse_deprels(args.only)
    pending = collections.deque()

    def trees(stream):
        for sentence, ok in stream:
            if ok and len(sentence):
                pending.append(sentence)
                yield sentence.heads, (None if only is None else words_with(sentence, only))

    sentences_seen = words = lost = nonproj = most = 0
    with progress(path) as bar:
        for result in mapped(worker, trees(sentences(path, args)), args.jobs):
            sentence = pending.popleft()
            if isinstance(result, ValueError):  # left out, like other unusable trees
                reason = f"--only {args.only}: {result}" if isinstance(result, NoProjectiveTree) else str(result)
                failed(sentence, reason, args.on_error)
                bar.update()
                continue
            kept, count = result
            n = len(sentence)
            known = n - sentence.heads[1:].count(-1)  # words with a known head
            sentences_seen += 1
            words += n
            lost += known - kept
            nonproj += kept < known
            most = max(most, count)
            if spool is not None:
                spool.write(json.dumps([sentence.start_line, _sent_id(sentence), n, known - kept, count]) + "\n")
            bar.update()
    return _with_alias({
        "file": str(path),
        "sentences": sentences_seen,
        "words": words,
        "non_projective": nonproj,
        "non_projective_percent": _percent(nonproj, sentences_seen),
        "edges_lost": lost,
        "edges_lost_percent": _percent(lost, words),
        "max_optimal_trees": most,
    })


def _with_alias(stats):
    """``stats`` with ``tokens``, the deprecated name of ``words``, after it."""
    keys = list(stats)
    at = keys.index("words") + 1
    return {**{k: stats[k] for k in keys[:at]}, "tokens": stats["words"], **{k: stats[k] for k in keys[at:]}}


ROW_KEYS = ("line", "sent_id", "length", "lost", "optimal_trees")


def spooled_rows(spool, stats):
    """For each file of ``stats`` in turn, an iterator over its rows (dicts)
    read back from ``spool``; each must be used up before the next."""
    spool.seek(0)
    for s in stats:
        yield (dict(zip(ROW_KEYS, json.loads(spool.readline()))) for _ in range(s["sentences"]))


def _sent_id(sentence):
    for line in sentence.comments():
        if line.startswith("# sent_id"):
            return line.split("=", 1)[-1].strip()
    return None


def _percent(part, whole):
    return round(100.0 * part / whole, 3) if whole else 0.0


def total(stats):
    """Totals over several files."""
    keys = ("sentences", "words", "non_projective", "edges_lost")
    out = {"file": "TOTAL", **{k: sum(s[k] for s in stats) for k in keys}}
    out["non_projective_percent"] = _percent(out["non_projective"], out["sentences"])
    out["edges_lost_percent"] = _percent(out["edges_lost"], out["words"])
    out["max_optimal_trees"] = max((s["max_optimal_trees"] for s in stats), default=0)
    return _with_alias(out)


ROWS = "\0per_sentence\0"  # stands for a file's rows in the JSON skeleton (no path holds NUL)


def write_json(out, root, stats, summary, rows):
    """The ``--json`` document, as ``json.dump(..., indent=1)`` of all of it
    would write it, with each file's ``per_sentence`` list streamed from
    ``rows`` (one iterator per file) instead of held in memory."""
    skeleton = json.dumps(
        {"root": root, "files": [{**s, "per_sentence": ROWS} for s in stats], "total": summary}, indent=1
    )
    parts = skeleton.split(json.dumps(ROWS))
    out.write(parts[0])
    for part, file_rows in zip(parts[1:], rows):
        opening = "["
        for row in file_rows:
            out.write(opening + "\n" + "\n".join("    " + line for line in json.dumps(row, indent=1).splitlines()))
            opening = ","
        out.write("[]" if opening == "[" else "\n   ]")
        out.write(part)
    out.write("\n")


def run(args):
    if args.sort and not args.per_sentence:
        raise UserError("--sort orders the lines of --per-sentence: give --per-sentence too")
    files = expand_inputs(args.inputs)
    # The PNG may take standard output (--plot -); the table then goes to stderr.
    text = sys.stdout
    if args.plot:
        check_output(args.plot, files)
        pyplot()
        if is_stdout(args.plot):
            if args.json or args.per_sentence:
                raise UserError("--plot - writes the PNG to standard output, which --json and --per-sentence "
                                "need too: give --plot a file name")
            text = sys.stderr
    rows_wanted = args.json or args.per_sentence or args.plot
    with tempfile.TemporaryFile("w+", encoding="utf-8") if rows_wanted else contextlib.nullcontext() as spool:
        stats = [file_statistics(path, args, spool) for path in files]
        summary = total(stats)
        if args.plot:
            plot(stats, spooled_rows(spool, stats), args.plot, args.root)
        if args.json:
            write_json(sys.stdout, args.root, stats, summary, spooled_rows(spool, stats))
            return 0
        header = ("file", "sentences", "words", "non-proj", "%non-proj", "edges lost", "%lost", "max optimal trees")
        table = [header] + [
            (s["file"], s["sentences"], s["words"], s["non_projective"], f'{s["non_projective_percent"]:.2f}',
             s["edges_lost"], f'{s["edges_lost_percent"]:.2f}', s["max_optimal_trees"])
            for s in stats + ([summary] if len(stats) > 1 else [])
        ]
        widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
        for row in table:
            print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))),
                  file=text)
        if args.per_sentence:
            print("\nfile:line\tsent_id\tlength\tlost\toptimal_trees")
            for name, r in sorted_rows(stats, spooled_rows(spool, stats), args.sort):
                print(f'{name}:{r["line"]}\t{r["sent_id"] or "_"}\t{r["length"]}\t{r["lost"]}\t{r["optimal_trees"]}')
    return 0


SORT_KEYS = {"count": "optimal_trees", "loss": "lost"}


def sorted_rows(stats, rows, sort=None):
    """``(file, row)`` of each non-projective sentence: in file order, or
    (``sort`` ``count`` or ``loss``) largest first, ties in file order.
    Only sorting holds the rows in memory."""
    found = ((s["file"], r) for s, file_rows in zip(stats, rows) for r in file_rows if r["lost"])
    if sort is None:
        return found
    return sorted(found, key=lambda item: -item[1][SORT_KEYS[sort]])


def treebank_names(paths):
    """``{path: treebank name}``: a file's UD_* directory (the files of one
    treebank share a row), else its file name without extension, else, where
    files of other directories have that name too, its path without
    extension (two treebanks never share a row)."""
    ud = {name for name in paths if Path(name).parent.name.startswith("UD_")}
    folders = {}  # file name without extension -> the folders (not UD_*) holding one
    for name in paths:
        if name not in ud:
            folders.setdefault(Path(name).stem, set()).add(Path(name).parent)
    return {name: Path(name).parent.name if name in ud
            else str(Path(name).with_suffix("")) if len(folders[Path(name).stem]) > 1
            else Path(name).stem for name in paths}


BIN = 10  # words per length bin of the trend lines


def plot(stats, rows, path, root="single"):
    """Nederhof 2019, Figure 8: optimal projectivizations of each non-projective
    sentence against its length (log scale), one colour per treebank; a line
    joins the geometric means of 10-word length bins, each bin's marker
    sized by its number of sentences (bins of a single sentence included).
    The title says which root mode (``--root``) the counts are for."""
    plt = pyplot()

    series = {}  # treebank -> [(length, optimal trees)] of its non-projective sentences
    names = treebank_names([s["file"] for s in stats])
    for s, file_rows in zip(stats, rows):
        series.setdefault(names[s["file"]], []).extend(
            (r["length"], r["optimal_trees"]) for r in file_rows if r["lost"]
        )
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, found in sorted(series.items()):
        if not found:
            continue
        points = ax.scatter([n for n, _ in found], [c for _, c in found],
                            s=7, alpha=0.35, label=f"{name}: sentences ({len(found)})")
        bins = {}
        for n, c in found:
            bins.setdefault(n // BIN, []).append(math.log(c))
        xs = sorted(bins)
        centres = [b * BIN + BIN / 2 for b in xs]
        means = [math.exp(sum(bins[b]) / len(bins[b])) for b in xs]
        colour = points.get_facecolor()[0][:3]
        ax.plot(centres, means, color=colour, linewidth=1.5,
                label=f"{name}: geometric mean per {BIN} words")
        ax.scatter(centres, means, s=[12 + 4 * math.sqrt(len(bins[b])) for b in xs], color=colour,
                   edgecolors="black", linewidths=0.5, zorder=3)
    ax.set_yscale("log")
    if not any(series.values()):  # nothing to draw: say so rather than leave a blank, legend-less plot
        ax.text(0.5, 0.5, "no non-projective sentence", transform=ax.transAxes, ha="center", va="center")
    ax.set_xlabel("sentence length (words)")
    ax.set_ylabel("number of optimal projectivizations")
    mode = "one word on the root (--root single)" if root == "single" else "any number of root children (--root any)"
    ax.set_title(f"Optimal projectivizations of non-projective trees\n{mode}; bin marker size: sentences in bin",
                 fontsize="medium")
    if any(series.values()):
        ax.legend(fontsize="small", markerscale=2)
    fig.tight_layout()
    with open_output(path, binary=True) as out:
        fig.savefig(out, format="png", dpi=120)
    plt.close(fig)
