"""Exactly one word attached to the root: the decoding constraint and the repair.

Universal Dependencies requires every sentence to have exactly one word
whose head is the root (HEAD 0), and the official CoNLL 2018 scorer refuses a
whole file in which one sentence has more ("There are 2 roots in a
sentence").  The transition systems do not: arc-standard's root takes any
number of children, arc-eager leaves headless words that the parsers attach
to the root.  The parsers (``semiparse parse --root single``, the default;
``root="single"`` of :meth:`semiparse.perceptron.Model.parse` and
:meth:`semiparse.neural.parser.NeuralModel.parse`) therefore give every
sentence exactly one root child, in one of two ways:

* **Constrained decoding**, where it is exact.  The rule (:func:`forbidden`):
  a transition whose edge has the root as its head applies only when its
  dependent is the last word without a head, so the root takes one child,
  as the last edge.  For arc-standard and arc-hybrid (the root at the stack
  bottom, final with only the root on the stack and the buffer empty) that
  is when the buffer is empty and the stack holds the root and one word;
  with swap the same; for arc-hybrid with the root at the end of the buffer,
  when the root is the buffer front and one word is left on the stack.  In
  those systems the rule allows exactly the moves after which a final
  configuration with one root child stays reachable: a word the root takes
  earlier leaves the stack, so the words still headless can only go to the
  root too.  Greedy decoding (and the perceptron's beam) then takes the
  model's best move among those at each step, and never gets stuck.  The
  rule costs nothing until the root could take a child.
* **A repair after decoding** (:func:`single_root`) for the other systems
  (arc-eager, whose root may take a child early and then more, or leave
  headless words; arc-standard with the root at the end, where shifting the
  root onto two words already forces two root children; LR-spine): the root
  keeps the child the model scored best, and the others are attached to that
  child.  The result is a tree (each moved word keeps its subtree, under a
  word outside it), possibly non-projective.

Which one a system gets is decided once per system definition
(:func:`exact`): for every sentence of up to :data:`CHECKED_WORDS` words, the
configurations reachable under the rule are enumerated, and the rule must
allow exactly the moves after which a final configuration with one root
child is reachable.  A user's system file is checked the same way.  Where a
longer sentence should still end with another number of root children
(never for the shipped systems: the argument above holds for any length, and
the tests check up to 6 words), the repair runs after the constrained
decoding as well, so the output always has one root child.

``root="any"`` keeps the parse as the model made it, for treebanks that allow
several root children.
"""
import threading

ROOT_MODES = ("single", "any")
# Sentences of up to this many words are enumerated by exact(): a few
# thousand configurations for the shipped systems (milliseconds).
CHECKED_WORDS = 4

_exact = {}
_lock = threading.Lock()


def check_root(root):
    """ValueError unless ``root`` is one of :data:`ROOT_MODES`."""
    if not isinstance(root, str) or root not in ROOT_MODES:
        raise ValueError(f"root must be one of {', '.join(map(repr, ROOT_MODES))}, got {root!r}")
    return root


def root_children(heads):
    """The words (1..n) that end up attached to the root: head 0, or no head
    (-1: the parsers attach those to the root)."""
    return [d for d in range(1, len(heads)) if heads[d] <= 0]


def headless(arcs):
    """How many words (1..n) of ``arcs`` have no head yet."""
    return sum(1 for h in arcs[1:] if h < 0)


def forbidden(config, code):
    """Whether the rule forbids the legal move ``code`` in ``config`` (a
    configuration of the compiled runtime): its edge has the root as head and
    another word than its dependent still has no head."""
    arc = config.arc(code)
    return arc is not None and arc[0] == 0 and headless(config.arcs) > 1


def exact(system, words=CHECKED_WORDS):
    """Whether decoding under the rule (:func:`forbidden`) is exact for
    ``system`` (a definition, with a compiled machine): for every sentence of
    1 to ``words`` words, the rule allows, in every configuration it can
    reach, exactly the legal moves after which a final configuration with one
    root child (:func:`root_children`) is reachable, and the initial
    configuration can reach one.  Computed once per definition (its sha256)
    and kept; False for a system whose moves loop or that has no machine."""
    from semiparse.transitions.systems.loading import definition_sha256

    key = (getattr(system, "name", None), definition_sha256(system), type(system).__name__, words)
    if key[1] is None:
        key = key + (id(system),)
    with _lock:
        found = _exact.get(key)
    if found is None:
        found = all(_exact_for(system, n) for n in range(1, words + 1))
        with _lock:
            _exact[key] = found
    return found


def _exact_for(system, n):
    """:func:`exact` for sentences of ``n`` words."""
    from semiparse.transitions.runtime._configuration import Configuration
    from semiparse.transitions.runtime._machine import machine_for

    try:
        start = Configuration.initial(machine_for(system), n)
    except (ValueError, TypeError):  # no compiled machine
        return False
    key = _key(start)
    configs, moves = {key: start}, {}
    todo = [start]
    while todo:  # every reachable configuration and its moves
        config = todo.pop()
        out = moves[_key(config)] = []
        for code in config.legal_codes():
            after = config.copy()
            after.do(code)
            k = _key(after)
            if k not in configs:
                configs[k] = after
                todo.append(after)
            out.append((forbidden(config, code), k))
    good = _good(configs, moves)
    if good is None or not good[key]:
        return False
    seen, todo = {key}, [key]
    while todo:  # the configurations the rule reaches: it allows exactly the good moves
        k = todo.pop()
        for ruled_out, after in moves[k]:
            if ruled_out == good[after]:
                return False
            if not ruled_out and after not in seen:
                seen.add(after)
                todo.append(after)
    return True


def _key(config):
    return config.stack, config.buffer, config.arcs


def _good(configs, moves):
    """Per configuration, whether a final configuration with one root child
    is reachable from it; None if the moves go round a loop."""
    good, state = {}, {}
    for first in configs:
        if first in good:
            continue
        path = [(first, iter(moves[first]))]
        state[first] = 1
        while path:
            k, rest = path[-1]
            if configs[k].is_final():
                good[k] = len(root_children(k[2])) == 1
                state[k] = 2
                path.pop()
                continue
            pushed = False
            for _, after in rest:
                if state.get(after) == 1:
                    return None  # a loop
                if after not in good:
                    state[after] = 1
                    path.append((after, iter(moves[after])))
                    pushed = True
                    break
            if not pushed:
                good[k] = any(good[after] for _, after in moves[k])
                state[k] = 2
                path.pop()
    return good


def subtree_sizes(heads):
    """Per position, the number of words its subtree holds (itself
    included; ``heads`` a tree, ``-1`` or ``0`` for a root child)."""
    sizes = [1] * len(heads)
    sizes[0] = len(heads) - 1
    for d in range(1, len(heads)):
        h, steps = heads[d], 0
        while h > 0 and steps < len(heads):
            sizes[h] += 1
            h, steps = heads[h], steps + 1
    return sizes


def single_root(heads, scores):
    """``(heads, moved)``: the tree ``heads`` (position 0 the root, ``-1`` or
    ``0`` for a word attached to the root) with exactly one root child: the
    root child ``d`` of the highest ``scores[d]`` (the first of equal ones)
    keeps the root as head, and every other root child is attached to it
    (``moved``, in order).  Each moved word takes its subtree along under a
    word outside it, so the result is a tree; the kept child's head is 0
    (also where it was -1).  A tree with one root child whose head is 0
    comes back unchanged (a new list), and so does a sentence without
    words."""
    heads = list(heads)
    children = root_children(heads)
    if not children:
        return heads, []
    best = max(children, key=lambda d: scores[d])
    if heads[best] < 0:
        heads[best] = 0
    moved = [d for d in children if d != best]
    for d in moved:
        heads[d] = best
    return heads, moved
