"""The calibration table of Goldberg 2013 (Table 4): how often a parser's
actions of each probability are correct, by the dynamic oracle.

A parse made with ``semiparse parse --probabilities`` (an RDA model) records
its system and each step's probability in two comments of its sentence
(:func:`steps_metadata`); :func:`calibration` replays them against the gold
trees.
"""
import numpy as np

from semiparse.transitions import oracle
from semiparse.transitions.systems.compiled import System

STEPS_KEY = "semiparse_steps"
SYSTEM_KEY = "semiparse_system"


def steps_metadata(system, steps):
    """The comments (``{key: value}``, for
    :meth:`~semiparse.treebank.conllu.Sentence.relabeled`) that record a parse's
    decisions and their probabilities."""
    return {SYSTEM_KEY: system, STEPS_KEY: " ".join(f"{name}={p:.4f}" for name, p in steps)}


def _read_steps(tree):
    """(system, [(move, label, probability)], FILE:LINE of the steps comment)
    from a sentence's comment lines, or None.  A step whose probability is
    not a number in [0, 1], or a second comment of either key, is a
    ``FILE:LINE: reason`` error."""
    system, steps, where, seen = None, None, None, {}
    for index, line in enumerate(tree.source.lines):
        if tree.source.first_line + index == 1:
            line = line.removeprefix("\ufeff")
        key = next((k for k in (SYSTEM_KEY, STEPS_KEY) if line.startswith(f"# {k} =")), None)
        if key is None:
            continue
        here = f"{tree.source.file}:{tree.source.first_line + index}"
        if key in seen:
            raise ValueError(f"{here}: a second '{key}' comment in this sentence "
                             f"(the first is at {seen[key]})")
        seen[key] = here
        if key == SYSTEM_KEY:
            system = line.split("=", 1)[1].strip()
        else:
            where = here
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
    factory = oracle_factory or oracle
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
        if not state.is_final():
            raise ValueError(f"{where}: the parse is not finished after the {len(steps)} steps in "
                             f"{STEPS_KEY} (truncated?): every decision must be recorded")
    return [(i / bins, (i + 1) / bins, int(counts[i]), int(correct[i])) for i in range(bins)]


def format_calibration(table):
    lines = ["bin        count  accuracy"]
    for low, high, count, ok in table:
        acc = f"{100.0 * ok / count:6.1f}%" if count else "      -"
        lines.append(f"{low:.1f}-{high:.1f}  {count:8d}  {acc}")
    return "\n".join(lines)
