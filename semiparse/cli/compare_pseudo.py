"""``semiparse compare-pseudo``: gold edges kept by optimal projectivization
against spaCy's pseudo-projective lifting, per treebank (the analog of
Nederhof 2019, Table 6).

spaCy (``spacy.pipeline._parser_internals.nonproj``) lifts each
non-projective arc to the head's head until no arc crosses; optimal
projectivization keeps the most gold edges of any projective tree, so it can
never keep fewer.  spaCy is the optional extra ``semiparse[compare]``.

``--round-trip`` measures, per file, what the label encodings give back
(:mod:`semiparse.treebank.encoding`, and spaCy's own ``dep||headlabel`` with its
``deprojectivize``): arcs lost, arcs restored exactly by decoding the
encoded gold, trees restored, and the number of distinct DEPREL values
before and after encoding.
"""
import functools
import json
import random
import sys
from collections import deque

from semiparse.cli import UserError
from semiparse.treebank.conllu import ConlluError
from semiparse.treebank.encoding import ENCODE_TIE_BREAK, ENCODINGS, EncodingError, round_trip
from semiparse.treebank.projectivity import TIE_BREAKS, TreeTooLarge, is_projective, projectivize
from semiparse.cli._treebank import add_input_options, expand_inputs, mapped, progress, sentences, use_single_root
from semiparse.cli.count import treebank_names
from semiparse.treebank.spacy import lifted, nonproj_module, spacy_round_trip


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "compare-pseudo",
        help="edges kept: optimal projectivization vs spaCy's pseudo-projective lifting",
        description="Per treebank: gold edges kept by optimal projectivization and by "
        "spaCy's pseudo-projective lifting (needs: pip install 'semiparse[compare]').",
    )
    parser.add_argument("inputs", nargs="+", metavar="IN", help="CoNLL-U files or directories")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--round-trip", action="store_true",
        help="per file and encoding: arcs lost, arcs restored by decoding the encoded gold, "
        "label-set growth (spaCy rows only when spaCy is installed); with --json per sentence",
    )
    parser.add_argument(
        "--tie-break", choices=TIE_BREAKS, default=ENCODE_TIE_BREAK,
        help=f"tie-break of optimal projectivization for --round-trip (default {ENCODE_TIE_BREAK}, "
        "as for projectivize --encode)",
    )
    add_input_options(parser)
    parser.set_defaults(func=run)
    return parser


def _left_out(problem, on_error):
    """A sentence that cannot be measured (``problem``, a ConlluError) under
    ``--on-error``: ``fail`` raises it; ``skip`` and ``keep`` leave the
    sentence out of the figures, with a warning."""
    if on_error == "fail":
        raise problem
    print(f"{problem} (sentence left out)", file=sys.stderr)


def _kept(heads, root):
    """Worker: ``(words, optimal kept, lifting kept, lifting projective)`` for
    one tree, or the TreeTooLarge error of one whose chart cannot fit."""
    single = use_single_root(root, heads)
    try:
        best = projectivize(heads, single_root=single)
    except TreeTooLarge as error:
        return error
    pseudo = lifted(heads)

    def kept(tree):
        return sum(1 for d in range(1, len(heads)) if tree[d] == heads[d])

    return len(heads) - 1, kept(best), kept(pseudo), is_projective(pseudo)


def _need_spacy():
    """A UserError (status 2) where spaCy cannot be imported."""
    try:
        nonproj_module()
    except ImportError as exc:
        raise UserError(f"compare-pseudo: {exc}") from None


def run(args):
    if args.round_trip:
        return run_round_trip(args)
    _need_spacy()
    worker = functools.partial(_kept, root=args.root)
    rows = {}
    files = expand_inputs(args.inputs)
    names = treebank_names(files)
    for path in files:
        row = rows.setdefault(names[path], {
            "treebank": names[path], "trees": 0, "non_projective": 0, "edges": 0,
            "kept_optimal": 0, "kept_lifting": 0, "trees_optimal_better": 0,
            "lifting_not_projective": 0,
        })
        kept = deque()

        def trees():
            for sentence, ok in sentences(path, args):
                if ok and len(sentence):
                    kept.append(sentence)
                    yield sentence.heads

        with progress(path) as bar:
            for result in mapped(worker, trees(), args.jobs):
                sentence = kept.popleft()
                bar.update()
                if isinstance(result, TreeTooLarge):
                    _left_out(ConlluError(sentence.file, sentence.start_line, str(result)), args.on_error)
                    continue
                n, best, pseudo, projective = result
                if best < pseudo:  # would contradict optimality: a bug, not a finding
                    raise RuntimeError(f"{path}: optimal projectivization kept fewer edges than lifting")
                row["trees"] += 1
                row["non_projective"] += best < n
                row["edges"] += n
                row["kept_optimal"] += best
                row["kept_lifting"] += pseudo
                row["trees_optimal_better"] += best > pseudo
                row["lifting_not_projective"] += not projective
    table = list(rows.values())
    for row in table:
        row["gain"] = row["kept_optimal"] - row["kept_lifting"]
        row["gain_percent_of_lost"] = (
            round(100.0 * row["gain"] / (row["edges"] - row["kept_lifting"]), 2)
            if row["edges"] > row["kept_lifting"] else 0.0
        )
    if args.json:
        json.dump(table, sys.stdout, indent=1)
        print()
        return 0
    header = ("treebank", "trees", "non-proj", "edges", "lost optimal", "lost lifting",
              "optimal better", "%lifting loss avoided")
    lines = [header] + [
        (r["treebank"], r["trees"], r["non_projective"], r["edges"], r["edges"] - r["kept_optimal"],
         r["edges"] - r["kept_lifting"], r["trees_optimal_better"], f'{r["gain_percent_of_lost"]:.2f}')
        for r in table
    ]
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
    broken = sum(r["lifting_not_projective"] for r in table)
    if broken:
        print(f"note: spaCy's lifting left {broken} trees non-projective", file=sys.stderr)
    return 0



def _round_trips(item, tie_break, root, lifting):
    """Worker: per method, ``(lost, restored, distinct labels)`` for one
    tree, or ``(word, reason)`` if its labels cannot be encoded (word 0:
    the tree's chart cannot fit in memory)."""
    index, heads, labels = item
    rng = random.Random(index)
    try:
        best = projectivize(heads, tie_break, seed=rng, single_root=use_single_root(root, heads))
    except TreeTooLarge as error:
        return 0, str(error)
    rows = {}
    try:
        for encoding in ENCODINGS:
            lost, restored, encoded = round_trip(heads, best, labels, encoding)
            rows[f"optimal {encoding}"] = (lost, restored, frozenset(encoded[1:]))
    except EncodingError as exc:
        return exc.word, exc.reason
    if lifting:
        lost, restored, encoded = spacy_round_trip(heads, labels)
        rows["lifting head (spaCy)"] = (lost, restored, frozenset(encoded[1:]))
    return rows


def run_round_trip(args):
    try:
        _need_spacy()
        lifting = True
    except UserError as exc:
        lifting = False
        print(f"note: spaCy's lifting skipped: {exc}", file=sys.stderr)
    worker = functools.partial(_round_trips, tie_break=args.tie_break, root=args.root, lifting=lifting)
    files = []
    for path in expand_inputs(args.inputs):
        kept = deque()

        def items():
            for index, (sentence, ok) in enumerate(sentences(path, args)):
                if ok and len(sentence):
                    kept.append(sentence)
                    yield index, sentence.heads, sentence.deprels()

        rows, per_sentence, before = {}, [], set()
        with progress(path) as bar:
            for result in mapped(worker, items(), args.jobs):
                sentence = kept.popleft()
                bar.update()
                if isinstance(result, tuple):
                    word, reason = result
                    line = sentence.line_of(word) if word else sentence.start_line
                    _left_out(ConlluError(sentence.file, line, reason), args.on_error)
                    continue
                before.update(sentence.deprels()[1:])
                for method, (lost, restored, labels) in result.items():
                    row = rows.setdefault(method, {"method": method, "trees": 0, "trees_changed": 0,
                                                   "trees_restored": 0, "arcs_lost": 0,
                                                   "arcs_restored": 0, "labels": set()})
                    row["trees"] += 1
                    row["trees_changed"] += lost > 0
                    row["trees_restored"] += lost > 0 and restored == lost
                    row["arcs_lost"] += lost
                    row["arcs_restored"] += restored
                    row["labels"] |= labels
                if any(lost for lost, _, _ in result.values()):
                    per_sentence.append({
                        "line": sentence.start_line,
                        **{m: {"lost": lost, "restored": restored} for m, (lost, restored, _) in result.items()},
                    })
        for row in rows.values():
            row["labels_before"], row["labels_after"] = len(before), len(row.pop("labels"))
        files.append({"file": path, "methods": list(rows.values()), "sentences": per_sentence})
    if args.json:
        json.dump({"tie_break": args.tie_break, "lifting": lifting, "files": files}, sys.stdout, indent=1)
        print()
        return 0
    header = ("file", "method", "trees changed", "arcs lost", "arcs restored", "trees restored",
              "labels before", "labels after")
    lines = [header] + [
        (f["file"], r["method"], r["trees_changed"], r["arcs_lost"], r["arcs_restored"],
         r["trees_restored"], r["labels_before"], r["labels_after"])
        for f in files for r in f["methods"]
    ]
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
    return 0
