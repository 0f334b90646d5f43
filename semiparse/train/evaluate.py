"""Evaluation: attachment scores, the CoNLL 2018 shared task metrics and the
calibration table of Goldberg 2013 (Table 4).

Punctuation is what UD tags ``PUNCT``.  Scores are percentages over words;
a system file must hold the same sentences and words as the gold file.  The
CoNLL 2018 metrics come from the task's own scorer, kept unchanged in
``semiparse/_vendor``.
"""
import io

import numpy as np

from ..oracles.api import System

PUNCT_TAGS = frozenset({"PUNCT"})
STEPS_KEY = "semiparse_steps"
SYSTEM_KEY = "semiparse_system"


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


class ScorerRefused(ValueError):
    """The official CoNLL 2018 scorer refuses a system file that semiparse
    reads (e.g. a sentence with several words attached to the root)."""


def conll18_scores(gold_path, system_path):
    """The CoNLL 2018 shared task metrics (UAS, LAS, CLAS, MLAS, BLEX) of a
    system file, by the official scorer: for each metric (lower case) its F1,
    precision and recall in percent and its correct / gold / system counts.

    Files are read as that scorer reads them (words aligned through the
    text, multiword tokens included; empty nodes ignored), except that a
    missing blank line at the end is tolerated.  Its errors become
    ``ValueError`` naming the file (:class:`ScorerRefused` for the system
    file)."""
    from .._vendor import conll18_ud_eval as scorer

    loaded = []
    for path in (gold_path, system_path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not text.endswith("\n\n"):
            text = text.rstrip("\n") + "\n\n"
        try:
            loaded.append(scorer.load_conllu(io.StringIO(text)))
        except scorer.UDError as exc:
            error = ScorerRefused if path == system_path else ValueError
            raise error(f"{path}: {_one_line(exc)}") from None
    try:
        result = scorer.evaluate(*loaded)
    except scorer.UDError as exc:
        raise ValueError(f"{system_path}: against {gold_path}: {_one_line(exc)}") from None
    return {
        name.lower(): {
            "f1": 100.0 * result[name].f1, "precision": 100.0 * result[name].precision,
            "recall": 100.0 * result[name].recall, "correct": result[name].correct,
            "gold": result[name].gold_total, "system": result[name].system_total,
        }
        for name in CONLL18_METRICS
    }


def _one_line(exc):
    return " ".join(str(exc).split("\n"))


def align(gold_trees, system_trees):
    """Check that two files hold the same sentences and words (FILE:LINE on mismatch)."""
    if len(gold_trees) != len(system_trees):
        raise ValueError(
            f"{system_trees[0].source.file if system_trees else 'system'}: "
            f"{len(system_trees)} sentences, but the gold file has {len(gold_trees)}"
        )
    for g, s in zip(gold_trees, system_trees):
        if g.forms != s.forms:
            raise ValueError(f"{s.where}: words differ from the gold sentence at {g.where}")
        if s.heads is None:
            raise ValueError(f"{s.where}: the system output has no complete tree")


def steps_comment(system, steps):
    """The comment lines that record a parse's decisions and their probabilities."""
    body = " ".join(f"{name}={p:.4f}" for name, p in steps)
    return f"# {SYSTEM_KEY} = {system}\n# {STEPS_KEY} = {body}\n"


def _read_steps(tree):
    """(system, [(move, label, probability)], FILE:LINE of the steps comment)
    from a sentence's comment lines, or None.  A step whose probability is
    not a number in [0, 1] is a ``FILE:LINE: reason`` error."""
    system, steps, where = None, None, None
    for index, line in enumerate(tree.source.lines):
        if line.startswith(f"# {SYSTEM_KEY} = "):
            system = line.split("=", 1)[1].strip()
        elif line.startswith(f"# {STEPS_KEY} ="):
            where = f"{tree.source.file}:{tree.source.first_line + index}"
            steps = []
            for entry in line.split("=", 1)[1].split():
                name, _, prob = entry.rpartition("=")
                move, _, label = name.partition(":")
                try:
                    p = float(prob)
                except ValueError:
                    p = None
                if not name or p is None or not 0.0 <= p <= 1.0:  # also rejects NaN
                    raise ValueError(f"{where}: bad step {entry!r} in {STEPS_KEY}: "
                                     "expected MOVE[:LABEL]=PROBABILITY with a probability in [0, 1]")
                steps.append((move, label or None, p))
    if system is None or steps is None:
        return None
    return system, steps, where


def calibration(gold_trees, system_trees, bins=10, oracle_factory=None, system=None):
    """Goldberg 2013, Table 4: the parser's probability for each action it took,
    binned into ``bins`` equal-width bins, with the share of correct actions.

    An action is correct when the dynamic oracle rates its move optimal in
    the configuration reached by the parser's own earlier actions, and, if it
    adds a gold arc, its label is the gold one.  Returns a list of
    ``(low, high, count, n_correct)``.

    ``system`` is the parser's transition system (a name, a system file,
    ``module:attr`` or a system object), whose name must be the one the
    output records; by default the recorded name, a shipped or registered
    system.
    """
    import semiparse

    factory = oracle_factory or semiparse.oracle
    given = None if system is None else System(system)
    systems, oracles = {}, {}
    counts = np.zeros(bins, dtype=np.int64)
    correct = np.zeros(bins, dtype=np.int64)
    for gold, out in zip(gold_trees, system_trees):
        recorded = _read_steps(out)
        if recorded is None:
            raise ValueError(
                f"{out.where}: no '{STEPS_KEY}' comment: parse with an rda model "
                "and 'semiparse parse --probabilities'"
            )
        name, steps, where = recorded
        if given is not None:
            if name != given.name:
                raise ValueError(f"{out.where}: the parse was made with system {name!r}, not "
                                 f"{given.name!r} ({SYSTEM_KEY})")
            systems[name] = given
        elif name not in systems:
            try:
                systems[name] = System(name)
            except ValueError:
                raise ValueError(f"{out.where}: unknown system {name!r} in {SYSTEM_KEY}: name "
                                 f"its system file with --system") from None
        if name not in oracles:
            oracles[name] = factory(systems[name].definition)
        state = systems[name].initial(len(gold))
        machine = state.machine
        for move, label, p in steps:
            try:
                code = machine.code(move)
            except ValueError:
                code = None
            if code is None or not state.valid(code):
                raise ValueError(f"{where}: step {move!r} is not a valid move of {name} here")
            optimal = oracles[name].optimal(state, list(gold.heads))
            ok = move in optimal
            arc = state.arc(code)
            if ok and arc is not None and gold.heads[arc[1]] == arc[0]:
                ok = label == gold.labels[arc[1]]
            b = min(int(p * bins), bins - 1)
            counts[b] += 1
            correct[b] += ok
            state.do(code, 0)
    return [(i / bins, (i + 1) / bins, int(counts[i]), int(correct[i])) for i in range(bins)]


def format_scores(scores):
    """Text of :func:`attachment_scores`, and of ``scores["conll18"]`` (from
    :func:`conll18_scores`) when present (None: the scorer refused the file)."""
    text = (
        f"UAS {scores['uas']:.2f}  LAS {scores['las']:.2f}  ({scores['words']} words)\n"
        f"without punctuation: UAS {scores['uas_nopunct']:.2f}  LAS {scores['las_nopunct']:.2f}  "
        f"({scores['words_nopunct']} words)"
    )
    if scores.get("conll18") is not None:
        text += "\nCoNLL 2018 shared task (F1): " + "  ".join(
            f"{name} {scores['conll18'][name.lower()]['f1']:.2f}" for name in CONLL18_METRICS
        )
    return text


def format_calibration(table):
    lines = ["bin        count  accuracy"]
    for low, high, count, ok in table:
        acc = f"{100.0 * ok / count:6.1f}%" if count else "      -"
        lines.append(f"{low:.1f}-{high:.1f}  {count:8d}  {acc}")
    return "\n".join(lines)
