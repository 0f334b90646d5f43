"""Constituency commands: ``semiparse evalb GOLD TEST`` (labelled bracket
precision / recall / F1 with evalb's conventions) and ``semiparse ptb-convert``
(clean a bracketed treebank: traces, function tags, outer bracket)."""
import sys

from semiparse.treebank.evalb import PUNCTUATION, Scores, score
from semiparse.treebank.brackets import ON_ERROR, iter_ptb, write_ptb
from semiparse.treebank.outputs import check_output


def add_parser(subparsers):
    evalb = subparsers.add_parser(
        "evalb", help="labelled bracket precision, recall and F1 of bracketed trees",
        description="Score TEST trees against GOLD trees (one each per sentence, same order) "
        "with evalb's COLLINS.prm conventions: punctuation (by gold tag) deleted, ADVP = PRT, "
        "the outer bracket ignored, the root bracket counted.")
    evalb.add_argument("gold", metavar="GOLD", help="gold bracketed trees")
    evalb.add_argument("test", metavar="TEST", help="test bracketed trees")
    evalb.add_argument("--keep-punctuation", action="store_true",
                       help="count punctuation words in spans (evalb deletes them)")
    evalb.add_argument("--on-error", choices=ON_ERROR, default="fail",
                       help="bad tree or yield mismatch: stop with FILE:LINE: reason (fail, default) "
                       "or leave the sentence out (skip) and report how many were skipped")
    evalb.set_defaults(func=run_evalb)

    convert = subparsers.add_parser(
        "ptb-convert", help="clean a bracketed treebank (traces, function tags, outer bracket)",
        description="Read bracketed trees and write them one per line, by default without "
        "-NONE- traces and the constituents left empty, without function tags, in PTB's "
        "outer bracket.")
    convert.add_argument("input", metavar="IN", help="bracketed treebank")
    convert.add_argument("-o", "--output", default="-", metavar="OUT", help="output file (default: stdout)")
    convert.add_argument("--keep-traces", action="store_true", help="keep -NONE- elements")
    convert.add_argument("--keep-function-tags", action="store_true", help="keep NP-SBJ-1 style labels")
    convert.add_argument("--no-outer", action="store_true", help="write trees without the outer bracket")
    convert.add_argument("--on-error", choices=ON_ERROR, default="fail",
                         help="bad tree: stop (fail, default) or drop it and report (skip)")
    convert.set_defaults(func=run_convert)
    return evalb


def _warn(message):
    print(message, file=sys.stderr)


def run_evalb(args):
    gold = list(iter_ptb(args.gold, on_error=args.on_error))
    test = list(iter_ptb(args.test, on_error=args.on_error))
    for trees, name in ((gold, args.gold), (test, args.test)):
        if not trees:  # scores of 0 would read as a parser that got everything wrong
            raise ValueError(f"{name}:1: no trees")
    if len(gold) != len(test):
        # name the first tree without a partner
        more, name = (gold, args.gold) if len(gold) > len(test) else (test, args.test)
        common = min(len(gold), len(test))
        extra, error = more[common]
        raise ValueError(f"{name}:{extra.line if error is None else error.line}: tree "
                         f"{common + 1} has no partner: {args.test} has {len(test)} trees, "
                         f"but {args.gold} has {len(gold)}")
    punctuation = frozenset() if args.keep_punctuation else PUNCTUATION
    total, skipped = Scores(0, 0, 0), 0
    for (g, gold_error), (t, test_error) in zip(gold, test):
        problem = gold_error or test_error
        if problem is None:
            try:
                total = total + score(g, t, punctuation=punctuation)
                continue
            except ValueError as exc:
                problem = ValueError(f"{args.test}:{t.line}: {exc} (gold tree at {args.gold}:{g.line})")
                if args.on_error == "fail":
                    raise problem from None
        _warn(f"{problem} (sentence skipped)")
        skipped += 1
    print(f"sentences: {len(gold) - skipped} scored, {skipped} skipped")
    print(f"brackets: gold {total.gold}, test {total.test}, matched {total.matched}")
    print(f"precision {100 * total.precision:.2f}  recall {100 * total.recall:.2f}  F1 {100 * total.f1:.2f}")
    return 0


def run_convert(args):
    check_output(args.output, [args.input])
    skipped = 0
    trees = []
    for t, error in iter_ptb(args.input, remove_traces=not args.keep_traces,
                             strip_tags=not args.keep_function_tags, on_error=args.on_error):
        if error is not None:
            _warn(f"{error} (tree skipped)")
            skipped += 1
        else:
            trees.append(t)
    write_ptb(trees, args.output, outer=not args.no_outer)
    print(f"ptb-convert: {len(trees)} trees written, {skipped} skipped", file=sys.stderr)
    return 0
