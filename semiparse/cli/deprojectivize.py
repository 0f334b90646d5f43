"""``semiparse deprojectivize``: undo ``projectivize --encode`` on gold or
parser output, giving back plain labels and the heads they encode.

Only the HEAD and DEPREL columns of decoded words change; comments,
multiword tokens, empty nodes and every other column are copied byte for
byte.  The decoding itself is :func:`semiparse.treebank.encoding.decode`.
"""
import sys

from semiparse.heads import tree_problems
from semiparse.treebank.conllu import ConlluError, _tolerated
from semiparse.treebank.encoding import EncodingError, decode, encode
from semiparse.treebank.outputs import check_output, open_output
from semiparse.cli._treebank import add_input_options, progress, sentences


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "deprojectivize",
        help="undo projectivize --encode (gold or parser output)",
        description="Restore the heads encoded in the DEPREL column by projectivize "
        "--encode and plain labels. Only HEAD and DEPREL columns change.",
    )
    parser.add_argument("input", nargs="?", default="-", metavar="IN", help="CoNLL-U file (default: stdin)")
    parser.add_argument("-o", "--output", default="-", metavar="OUT", help="output file (default: stdout)")
    add_input_options(parser)
    parser.set_defaults(func=run)
    return parser


def encode_sentence(sentence, heads, encoding, on_error):
    """The bytes of ``sentence`` with projective ``heads`` and its labels
    encoded; a label that cannot be encoded (e.g. already encoded) is an
    error of the sentence under ``on_error`` (nothing when skipped, the
    sentence unchanged when kept)."""
    try:
        labels = encode(sentence.heads, heads, sentence.deprels(), encoding)
    except EncodingError as exc:
        problem = ConlluError(sentence.file, sentence.line_of(exc.word), exc.reason)
        return sentence.raw if _tolerated([problem], on_error) else b""
    return sentence.relabeled(heads, labels)


def decode_sentence(sentence, on_error, multiple_roots="error"):
    """``(bytes, decoded)`` for one usable sentence: labels that do not parse
    or point nowhere are errors under ``on_error`` (``fail`` raises the
    first, ``skip`` gives ``(b"", None)``, ``keep`` leaves those arcs as
    they are); so are labels that attach a second word to the root, unless
    ``multiple_roots`` is ``warn`` (then a warning)."""
    decoded = decode(sentence.heads, sentence.deprels(), strict=False,
                     single_root=multiple_roots == "error")
    if decoded.bad:
        problems = [ConlluError(sentence.file, sentence.line_of(d), reason) for d, reason in decoded.bad]
        if on_error == "keep":
            for problem in problems:
                print(f"{problem} (arc left as it is)", file=sys.stderr)
        elif not _tolerated(problems, on_error):
            return b"", None
    roots = [d for d in decoded.moved if decoded.heads[d] == 0]
    if roots and decoded.heads.count(0) > 1:  # only with --multiple-roots warn
        reason = next(r for _, r, roots_only in tree_problems(decoded.heads) if roots_only)
        print(f"{sentence.file}:{sentence.line_of(roots[0])}: warning: after decoding: {reason}",
              file=sys.stderr)
    return sentence.relabeled(decoded.heads, decoded.labels), decoded


def run(args):
    check_output(args.output, [args.input], allow_input=True)
    moved = left = bad = 0
    with open_output(args.output, binary=True) as out, progress(args.input) as bar:
        for sentence, usable in sentences(args.input, args):
            if not usable:
                out.write(sentence.raw)
            else:
                text, decoded = decode_sentence(sentence, args.on_error, args.multiple_roots)
                out.write(text)
                if decoded is not None:
                    moved += len(decoded.moved)
                    left += len(decoded.left)
                    bad += len(decoded.bad)
            bar.update()
    if left or bad:
        print(f"semiparse deprojectivize: {moved} arcs moved back, {left} encoded arcs left where they "
              f"were (no word fits the label, or a cycle), {bad} bad labels left as they are", file=sys.stderr)
    return 0
