"""``semiparse evaluate``: attachment scores of a parser's output, the CoNLL
2018 shared task metrics, and calibration."""
import json
import sys

from semiparse.cli import UserError
from semiparse.treebank.data import complete_trees
from semiparse.perceptron.calibration import calibration, format_calibration
from semiparse.treebank.scoring import (ScorerRefused, align, attachment_scores, conll18_scores,
                                        format_scores)


def add_parser(subparsers):
    p = subparsers.add_parser(
        "evaluate", help="UAS/LAS of a system output against a gold CoNLL-U file",
        description="UAS and LAS over all words and without punctuation (UPOS PUNCT, full DEPREL "
        "labels), then the CoNLL 2018 shared task metrics UAS, LAS, CLAS, MLAS and BLEX as F1 "
        "by the official scorer (universal part of DEPREL, universal FEATS, lemmas).",
    )
    p.add_argument("gold", metavar="GOLD.conllu")
    p.add_argument("system", metavar="SYSTEM_OUTPUT.conllu")
    p.add_argument("--calibration", action="store_true",
                   help="also print the calibration table of Goldberg 2013 (Table 4): the "
                   "decisions' probabilities in 10 bins with their accuracy "
                   "(needs 'semiparse parse --probabilities' output)")
    p.add_argument("--system", dest="system_spec", metavar="SYSTEM",
                   help="with --calibration: the parser's transition system (a system file or "
                   "MODULE:ATTR; default: the shipped or registered system the output names)")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.set_defaults(func=run)
    return p


def run(args):
    if args.gold == args.system == "-":
        raise UserError("GOLD and SYSTEM cannot both be - (standard input is read once)")
    why = "evaluate scores complete trees"
    gold = complete_trees(args.gold, why)  # each input is read once (it may be a pipe)
    system = complete_trees(args.system, why)
    align(gold, system)
    scores = attachment_scores(gold, [(s.heads, s.labels) for s in system])
    try:
        scores["conll18"] = conll18_scores(gold, system)
    except ScorerRefused as exc:  # the scores above stand; say why these are missing
        scores["conll18"] = None
        print(f"semiparse evaluate: note: no CoNLL 2018 metrics: the official scorer refuses "
              f"{exc}", file=sys.stderr)
    if args.system_spec and not args.calibration:
        raise ValueError("--system applies to --calibration only")
    table = calibration(gold, system, system=args.system_spec) if args.calibration else None
    if args.json:
        if table is not None:
            scores["calibration"] = [dict(zip(("low", "high", "count", "correct"), row)) for row in table]
        print(json.dumps(scores, indent=2))
    else:
        print(format_scores(scores))
        if table is not None:
            print(format_calibration(table))
    return 0
