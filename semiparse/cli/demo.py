"""``semiparse demo``: the main job on a sample the project generates itself.

Writes a small CoNLL-U treebank of random (often non-projective) trees with
comments and labels, then runs what a treebank preparer runs on real data:
statistics and exact counts of optimal projectivizations (``count``), optimal
projectivization (``projectivize``), and a check that every output tree is
projective and keeps the optimal number of gold edges.
"""
import tempfile
from pathlib import Path

from semiparse._support.seeds import seeded
from semiparse.cli import int_range

MAX_SENTENCES, MAX_LENGTH = 100_000, 200  # a demo is small; counting is cubic in the length
LABELS = ("nsubj", "obj", "obl", "advmod", "amod", "det", "case", "conj", "cc", "punct")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "demo", help="generate a small treebank, then count and projectivize it")
    p.add_argument("--sentences", type=int_range(1, MAX_SENTENCES), default=200,
                   help=f"number of sentences, 1 to {MAX_SENTENCES} (default 200)")
    p.add_argument("--max-length", type=int_range(1, MAX_LENGTH), default=25,
                   help=f"longest sentence in words, 1 to {MAX_LENGTH} (default 25)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("-o", "--out-dir", type=Path, default=None,
                   help="where to write sample.conllu and its projectivization "
                        "(default: a temporary directory)")
    p.set_defaults(func=run)
    return p


def random_tree(n, rng, moves=0.3):
    """A random tree over n words with one word attached to the root: a
    random projective tree, then (with probability ``moves`` each, up to
    twice) a word re-attached to a random non-descendant, which usually
    makes it non-projective -- roughly like real treebanks."""
    heads = [-1] * (n + 1)

    def build(lo, hi):  # root of a random projective subtree covering lo..hi
        root = rng.randint(lo, hi)
        for a, b in ((lo, root - 1), (root + 1, hi)):
            while a <= b:
                end = rng.randint(a, b)
                heads[build(a, end)] = root
                a = end + 1
        return root

    heads[build(1, n)] = 0
    for _ in range(2):
        if n > 2 and rng.random() < moves:
            d = rng.randint(1, n)
            if heads[d] != 0:
                below = {d}
                for x in range(1, n + 1):  # descendants of d
                    path = [x]
                    while path[-1] not in (0, d):
                        path.append(heads[path[-1]])
                    if path[-1] == d:
                        below.update(path)
                heads[d] = rng.choice([x for x in range(1, n + 1) if x not in below])
    return heads


def sample_conllu(sentences, max_length, seed):
    """CoNLL-U text of random trees (one root word each, as in UD)."""
    rng = seeded(seed)
    blocks = []
    for s in range(sentences):
        n = rng.randint(1, max_length)
        heads = random_tree(n, rng)
        lines = [f"# sent_id = demo-{s + 1}", f"# text = {' '.join(f'w{d}' for d in range(1, n + 1))}"]
        for d in range(1, n + 1):
            label = "root" if heads[d] == 0 else rng.choice(LABELS)
            lines.append(f"{d}\tw{d}\tw{d}\tX\t_\t_\t{heads[d]}\t{label}\t_\t_")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


def run(args):
    from semiparse.cli import UserError, main as cli
    from semiparse.treebank.conllu import read_conllu
    from semiparse.treebank.projectivity import count_optimal_projectivizations, is_projective

    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.out_dir or Path(tmp)
        if out_dir.exists() and not out_dir.is_dir():  # mkdir would say only "File exists"
            raise UserError(f"{out_dir}: not a directory: -o names the directory to write "
                            "sample.conllu and its projectivization in")
        out_dir.mkdir(parents=True, exist_ok=True)
        sample = out_dir / "sample.conllu"
        projective = out_dir / "sample.projective.conllu"
        for path in (sample, projective):  # both are read back: a FIFO would block
            if path.exists() and not path.is_file():
                raise UserError(f"{path}: not a regular file: the demo writes it and reads it back")
        sample.write_text(sample_conllu(args.sentences, args.max_length, args.seed))
        print(f"wrote {args.sentences} random trees to {sample}\n")
        print("$ semiparse count sample.conllu")
        status = cli(["count", str(sample)])
        print("\n$ semiparse projectivize sample.conllu -o sample.projective.conllu")
        status = status or cli(["projectivize", str(sample), "-o", str(projective)])
        if status:
            return status
        kept = total = 0
        for before, after in zip(read_conllu(sample), read_conllu(projective)):
            gold, new = before.heads, after.heads
            assert is_projective(new), "projectivize wrote a non-projective tree"
            score = sum(1 for d in range(1, len(gold)) if gold[d] == new[d])
            assert score == count_optimal_projectivizations(gold)[0], "non-optimal tree"
            kept += score
            total += len(gold) - 1
        print(f"checked: every output tree is projective and optimal; "
              f"{kept}/{total} gold edges kept ({100 * kept / total:.2f}%)")
    return 0
