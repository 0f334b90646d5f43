"""``semiparse count``: projectivity statistics of CoNLL-U files.

Per file: sentences, tokens (words), non-projective trees, gold edges an
optimal projectivization loses, and for every sentence the exact number of
optimal projectivizations (``--json`` lists them all; ``--plot`` draws them
against sentence length, as Nederhof 2019, Figure 8).
"""
import collections
import contextlib
import functools
import json
import math
import sys
import tempfile
from pathlib import Path

from ..outputs import check_output, open_output
from ..projectivity import count_optimal_projectivizations
from ._treebank import add_input_options, expand_inputs, mapped, progress, sentences, use_single_root


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "count",
        help="non-projectivity and number of optimal projectivizations per sentence",
        description="Sentences, tokens, % non-projective trees, gold edges lost by optimal "
        "projectivization and the exact number of optimal projectivizations of each sentence.",
    )
    parser.add_argument("inputs", nargs="+", metavar="IN", help="CoNLL-U files or directories ('-' for stdin)")
    parser.add_argument("--json", action="store_true", help="machine-readable output, every sentence included")
    parser.add_argument("--per-sentence", action="store_true", help="text output: one line per non-projective sentence")
    parser.add_argument("--plot", metavar="FILE.png", help="plot optimal projectivizations against length (log scale)")
    add_input_options(parser)
    parser.set_defaults(func=run)
    return parser


def _analyse(heads, root):
    """Worker: ``(kept, count)`` for one tree."""
    single = use_single_root(root, heads)
    return count_optimal_projectivizations(heads, single_root=single)


def file_statistics(path, args, spool=None):
    """Totals of one file.  Memory does not grow with the file: each
    sentence's row ``[line, sent_id, length, lost, optimal_trees]`` goes to
    ``spool`` (a text file, one JSON list a line) when one is given."""
    worker = functools.partial(_analyse, root=args.root)
    pending = collections.deque()

    def trees(stream):
        for sentence, ok in stream:
            if ok and len(sentence):
                pending.append(sentence)
                yield sentence.heads

    sentences_seen = tokens = lost = nonproj = most = 0
    with progress(path) as bar:
        for kept, count in mapped(worker, trees(sentences(path, args)), args.jobs):
            sentence = pending.popleft()
            n = len(sentence)
            sentences_seen += 1
            tokens += n
            lost += n - kept
            nonproj += kept < n
            most = max(most, count)
            if spool is not None:
                spool.write(json.dumps([sentence.first_line, _sent_id(sentence), n, n - kept, count]) + "\n")
            bar.update()
    return {
        "file": str(path),
        "sentences": sentences_seen,
        "tokens": tokens,
        "non_projective": nonproj,
        "non_projective_percent": _percent(nonproj, sentences_seen),
        "edges_lost": lost,
        "edges_lost_percent": _percent(lost, tokens),
        "max_optimal_trees": most,
    }


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
    keys = ("sentences", "tokens", "non_projective", "edges_lost")
    out = {"file": "TOTAL", **{k: sum(s[k] for s in stats) for k in keys}}
    out["non_projective_percent"] = _percent(out["non_projective"], out["sentences"])
    out["edges_lost_percent"] = _percent(out["edges_lost"], out["tokens"])
    out["max_optimal_trees"] = max((s["max_optimal_trees"] for s in stats), default=0)
    return out


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
    files = expand_inputs(args.inputs)
    if args.plot:
        check_output(args.plot, files)
    rows_wanted = args.json or args.per_sentence or args.plot
    with tempfile.TemporaryFile("w+", encoding="utf-8") if rows_wanted else contextlib.nullcontext() as spool:
        stats = [file_statistics(path, args, spool) for path in files]
        summary = total(stats)
        if args.plot:
            plot(stats, spooled_rows(spool, stats), args.plot)
        if args.json:
            write_json(sys.stdout, args.root, stats, summary, spooled_rows(spool, stats))
            return 0
        header = ("file", "sentences", "tokens", "non-proj", "%non-proj", "edges lost", "%lost", "max optimal trees")
        table = [header] + [
            (s["file"], s["sentences"], s["tokens"], s["non_projective"], f'{s["non_projective_percent"]:.2f}',
             s["edges_lost"], f'{s["edges_lost_percent"]:.2f}', s["max_optimal_trees"])
            for s in stats + ([summary] if len(stats) > 1 else [])
        ]
        widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
        for row in table:
            print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if args.per_sentence:
            print("\nfile:line\tsent_id\tlength\tlost\toptimal_trees")
            for s, file_rows in zip(stats, spooled_rows(spool, stats)):
                for r in file_rows:
                    if r["lost"]:
                        print(f'{s["file"]}:{r["line"]}\t{r["sent_id"] or "_"}\t{r["length"]}\t{r["lost"]}\t{r["optimal_trees"]}')
    return 0


def treebank_of(path):
    """Treebank name of a file: its UD_* directory, else the file name."""
    path = Path(path)
    return path.parent.name if path.parent.name.startswith("UD_") else path.stem


BIN = 10  # words per length bin of the trend lines


def plot(stats, rows, path):
    """Nederhof 2019, Figure 8: optimal projectivizations of each non-projective
    sentence against its length (log scale), one colour per treebank; lines
    join the geometric means of 10-word length bins (bins of 5+ sentences)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {}  # treebank -> [(length, optimal trees)] of its non-projective sentences
    for s, file_rows in zip(stats, rows):
        series.setdefault(treebank_of(s["file"]), []).extend(
            (r["length"], r["optimal_trees"]) for r in file_rows if r["lost"]
        )
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, found in sorted(series.items()):
        if not found:
            continue
        points = ax.scatter([n for n, _ in found], [c for _, c in found],
                            s=7, alpha=0.35, label=f"{name} ({len(found)})")
        bins = {}
        for n, c in found:
            bins.setdefault(n // BIN, []).append(math.log(c))
        xs = sorted(b for b in bins if len(bins[b]) >= 5)
        ax.plot([b * BIN + BIN / 2 for b in xs], [math.exp(sum(bins[b]) / len(bins[b])) for b in xs],
                color=points.get_facecolor()[0][:3], linewidth=1.5)
    ax.set_yscale("log")
    ax.set_xlabel("sentence length (words)")
    ax.set_ylabel("number of optimal projectivizations")
    ax.set_title("Optimal projectivizations of non-projective trees")
    ax.legend(fontsize="small", markerscale=2)
    fig.tight_layout()
    with open_output(path, binary=True) as out:
        fig.savefig(out, format="png", dpi=120)
    plt.close(fig)
