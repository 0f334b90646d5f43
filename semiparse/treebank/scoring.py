"""Scoring dependency parses: attachment scores and the CoNLL 2018 shared
task metrics (the calibration table of Goldberg 2013 is
:mod:`semiparse.perceptron.calibration`: it needs the oracle).

Punctuation is what UD tags ``PUNCT``.  Scores are percentages over words;
a system file must hold the same sentences and words as the gold file.  The
CoNLL 2018 metrics come from the task's own scorer, kept unchanged in
``semiparse/_vendor``.
"""
import io
import re
import sys
import threading
import unicodedata

import numpy as np

from semiparse.treebank import conllu
from semiparse.errors import ScorerRefused

PUNCT_TAGS = frozenset({"PUNCT"})


def attachment_scores(gold_trees, predicted):
    """UAS / LAS with and without punctuation (percent) and word counts.

    ``predicted`` is a list of ``(heads, labels)`` aligned with ``gold_trees``.
    """
    if len(gold_trees) != len(predicted):
        raise ValueError(f"{len(gold_trees)} gold sentences but {len(predicted)} predicted")
    counts = np.zeros(6, dtype=np.int64)  # words, uh, lh, words-np, uh-np, lh-np
    for tree, (heads, labels) in zip(gold_trees, predicted):
        if len(heads) != len(tree) + 1:
            raise ValueError(f"{tree.where}: {len(heads) - 1} predicted heads for {len(tree)} words")
        for d in range(1, len(tree) + 1):
            uh = heads[d] == tree.heads[d]
            lh = uh and labels[d] == tree.labels[d]
            punct = tree.tags[d] in PUNCT_TAGS
            counts[:3] += (1, uh, lh)
            if not punct:
                counts[3:] += (1, uh, lh)
    pct = lambda a, b: 100.0 * a / b if b else 0.0
    return {
        "uas": pct(counts[1], counts[0]), "las": pct(counts[2], counts[0]),
        "uas_nopunct": pct(counts[4], counts[3]), "las_nopunct": pct(counts[5], counts[3]),
        "words": int(counts[0]), "words_nopunct": int(counts[3]),
    }


CONLL18_METRICS = ("UAS", "LAS", "CLAS", "MLAS", "BLEX")
RECURSION_MARGIN = 1000  # frames below the scorer's recursion
STACK_BYTES, FRAME_BYTES, MAX_STACK_BYTES = 16 << 20, 1 << 10, 1 << 30  # its thread's stack


def conll18_scores(gold, system):
    """The CoNLL 2018 shared task metrics (UAS, LAS, CLAS, MLAS, BLEX) of a
    system file, by the official scorer: for each metric (lower case) its F1,
    precision and recall in percent and its correct / gold / system counts.

    ``gold`` and ``system``: the trees read from each file
    (:func:`~semiparse.treebank.data.read_trees`; each file is read once), or
    paths.  The scorer sees a file as semiparse reads it: the word and
    multiword token lines of each sentence, one blank line after each.
    Comments, a byte order mark, line-ending conventions, extra or
    whitespace-only blank lines, blocks of comments alone and empty nodes
    (which the scorer ignores, but takes for words inside a multiword
    token's range), which the scorer alone would refuse or misread, are
    left out.  It runs in a
    thread whose stack and recursion limit fit its recursive walk up the
    longest sentence's head chains.  What it refuses is a ``ValueError``
    ``FILE:LINE: reason`` (the line in that file; :class:`ScorerRefused` for
    the system file); files whose texts differ are named both."""
    from semiparse._vendor import conll18_ud_eval as scorer
    from semiparse.treebank.data import read_trees

    loaded, read = [], []
    for trees, error in ((gold, ValueError), (system, ScorerRefused)):
        trees = trees if isinstance(trees, list) else read_trees(trees)
        sentences = [_word_lines(tree) for tree in trees if len(tree)]
        read.append((trees[0].source.file, sentences))
        text = "".join(f"{line}\n" for sentence in sentences for _, line in sentence + [(0, "")])
        depth = max(len(tree) for tree in trees)
        try:
            loaded.append(_deep(lambda: scorer.load_conllu(io.StringIO(text)), depth))
        except Exception as exc:  # the scorer's own checks, or an input it cannot handle
            raise error(_where(read[-1], exc, scorer.UDError)) from None
    try:
        result = scorer.evaluate(*loaded)
    except Exception as exc:
        (gold_name, gold_words), (system_name, system_words) = read
        lines = next(((g[0][0], s[0][0]) for g, s in zip(gold_words, system_words)
                      if _token_text(g) != _token_text(s)), None)
        where = (f"{system_name}: against {gold_name}" if lines is None
                 else f"{system_name}:{lines[1]}: against {gold_name}:{lines[0]}")
        raise ValueError(f"{where}: {_reason(exc, scorer.UDError)}") from None
    return {
        name.lower(): {
            "f1": 100.0 * result[name].f1, "precision": 100.0 * result[name].precision,
            "recall": 100.0 * result[name].recall, "correct": result[name].correct,
            "gold": result[name].gold_total, "system": result[name].system_total,
        }
        for name in CONLL18_METRICS
    }


def _word_lines(tree):
    """``[(line number, text)]``: a sentence's lines as the scorer is given
    them (see :func:`conll18_scores`)."""
    source, lines = tree.source, []
    for number, line in enumerate(source.raw.splitlines(), source.first_line):
        if number == 1 and line.startswith(conllu.BOM):
            line = line[3:]
        if line.strip() and not line.startswith(b"#") and b"." not in line.split(b"\t", 1)[0]:
            lines.append((number, line.decode("utf-8", "surrogateescape")))
    return lines


def _token_text(lines):
    """The characters of a sentence's tokens (:func:`_word_lines`), as the
    scorer compares two files' texts: the FORM of each multiword token and of
    each word outside one, without spaces."""
    chars, covered = [], 0
    for _, line in lines:
        token_id, form = line.split("\t", 2)[:2]
        if covered:
            covered -= 1
        else:
            chars.append(form)
            first, _, last = token_id.partition("-")
            covered = int(last) - int(first) + 1 if last else 0
    return "".join(c for c in "".join(chars) if unicodedata.category(c) != "Zs")


def _deep(func, depth):
    """``func()`` run in a thread with room for ``depth`` nested Python calls
    (a stack and recursion limit to fit), its exception raised here."""
    outcome = {}

    def target():
        try:
            outcome["value"] = func()
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    worker = threading.Thread(target=target, name="conll18-scorer", daemon=True)
    sys.setrecursionlimit(max(limit, depth + RECURSION_MARGIN))
    try:
        threading.stack_size(min(max(stack, STACK_BYTES + depth * FRAME_BYTES), MAX_STACK_BYTES))
        try:
            worker.start()
        finally:  # only this thread gets the large stack
            threading.stack_size(stack)
        worker.join()
    finally:
        sys.setrecursionlimit(limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _where(read, exc, known):
    """``FILE:LINE: reason`` of a scorer error, its ``at line N`` (a line of
    the text it was given) turned into the line of the file ``read``
    (``(name, sentences)`` as :func:`conll18_scores` holds them)."""
    name, sentences = read
    reason = _reason(exc, known)
    match = re.search(r" at line (\d+)", reason)
    if match is None:
        return f"{name}: {reason}"
    # each sentence's lines and the blank line after it (named by its first word)
    lines = [number for sentence in sentences for number, _ in sentence + [sentence[0]]]
    line = lines[min(int(match.group(1)), len(lines)) - 1]
    return f"{name}:{line}: {reason[:match.start()]}{reason[match.end():]}"


def _reason(exc, known):
    """The scorer's message on one line (with the exception's type when it
    is not one of the scorer's own checks)."""
    text = " ".join(str(exc).split("\n"))
    return text if isinstance(exc, known) else f"the scorer fails with {type(exc).__name__}: {text}"


def align(gold_trees, system_trees):
    """Check that two files hold the same sentences and words (FILE:LINE on mismatch)."""
    for g, s in zip(gold_trees, system_trees):
        if g.forms != s.forms:
            raise ValueError(f"{s.where}: words differ from the gold sentence at {g.where}")
        if s.heads is None:
            raise ValueError(f"{s.where}: the system output has no complete tree")
    if len(system_trees) > len(gold_trees):
        raise ValueError(f"{system_trees[len(gold_trees)].where}: sentence {len(gold_trees) + 1}, "
                         f"but the gold file has {len(gold_trees)}")
    if len(system_trees) < len(gold_trees):
        last = system_trees[-1].source
        raise ValueError(f"{last.file}:{last.first_line + len(last.raw.splitlines()) - 1}: the file ends "
                         f"after {len(system_trees)} sentences, but the gold file has {len(gold_trees)} "
                         f"(the next at {gold_trees[len(system_trees)].where})")


def format_scores(scores):
    """Text of :func:`attachment_scores`, and of ``scores["conll18"]`` (from
    :func:`conll18_scores`) when present (None: the scorer refused the file)."""
    text = (
        f"full DEPREL: UAS {scores['uas']:.2f}  LAS {scores['las']:.2f}  ({scores['words']} words)\n"
        f"full DEPREL, without punctuation: UAS {scores['uas_nopunct']:.2f}  "
        f"LAS {scores['las_nopunct']:.2f}  ({scores['words_nopunct']} words)"
    )
    if scores.get("conll18") is not None:
        text += "\nCoNLL 2018 shared task (F1, universal DEPREL: the official scores): " + "  ".join(
            f"{name} {scores['conll18'][name.lower()]['f1']:.2f}" for name in CONLL18_METRICS
        )
    return text
