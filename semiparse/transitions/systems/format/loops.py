"""Transition systems whose transitions can loop (e.g. a ``shift`` and an
``unshift`` that undo each other): a parser following them would run forever,
so a declared system is refused when its file is loaded.

:func:`find_loop` first looks for a proof of termination, a potential that
every transition strictly decreases; it is cheap and accepts the usual
systems.  Without one it searches the configurations reachable for short
sentences for a cycle.  A system it neither proves nor refutes is accepted
(the exhaustive search of ``semiparse check`` still reports a loop where it
meets one).
"""
import itertools

from semiparse.transitions.systems.format.rules import headed_places, may_have_head

_WEIGHTS = range(4)  # weights tried for each term of the potential
_MAX_N = 4  # longest sentence searched for a cycle
_MAX_STATES = 200_000  # configurations searched per sentence length at most


def find_loop(system):
    """``(transitions, (stack, buffer, arcs))``: transitions that, applied in
    turn from that configuration, come back to it, the first one declared
    first among them; or None if every computation of ``system`` provably
    ends or no cycle was found for sentences of up to 4 words.

    The proof reads a declared system's compiled rules (``_rules``); the
    search uses only :meth:`initial` and :meth:`successors` of the
    interface, so it serves any :class:`TransitionSystem`.  Configurations
    are compared in full, arcs included: :meth:`search_key` may leave out
    heads (of buffer nodes) that a requirement can still look at.
    """
    if _terminates(getattr(system, "_rules", ())):
        return None
    order = {t: i for i, t in enumerate(system.transitions)}
    for n in range(_MAX_N + 1):
        cycle = _shortest_cycle(system, n)
        if cycle is not None:
            names, configs = cycle
            k = min(range(len(names)), key=lambda i: order.get(names[i], len(order)))
            return names[k:] + names[:k], configs[k]
    return None


def loop_advice(system, names):
    """What to do about the loop of the transitions ``names`` (from
    :func:`find_loop`), as a clause to append to the refusal, or ``""``:
    where one of them moves a stack node back into the buffer, an unshift
    (whose paper stops it by a flag the format lacks) is pointed to the fused
    moves of ``systems/arc_eager_single_root.toml``, and a swap (whose
    termination rests on the order of the sentence) to what the format
    cannot express."""
    rules = {r.name: r for r in getattr(system, "_rules", ())}
    for name in dict.fromkeys(names):
        r = rules.get(name)
        back = [i for i in r.buffer_after if i < r.ns] if r is not None else []
        if not back:
            continue
        x = r.names[back[0]]
        kept = list(r.stack_after + r.buffer_after)
        if kept != sorted(kept):
            return (f"; transition {name} moves {x} back into the buffer out of the sentence's "
                    f"order, as swap does: a swap system ends only by a condition on that order "
                    f"(Nivre 2009: s1 before s0 in the sentence), which require states as "
                    f"\"s1 < s0\" (systems/arc_standard_swap.toml)")
        return (f"; transition {name} moves {x} from the stack back into the buffer, as an "
                f"unshift does, and the format has no flag (the unshift of Nivre and "
                f"Fernández-González 2014 sets one that forbids shift): fuse the unshift with "
                f"each move that may follow it into one transition, as "
                f"systems/arc_eager_single_root.toml does (unshift_left_arc, unshift_right_arc, "
                f"unshift_reduce, each requiring \"buffer empty\"; docs/systems.md)")
    return ""


def _terminates(rules):
    """Whether every computation provably ends: some triple (nodes on the
    stack and buffer, minus the inversions of their sentence order, a
    potential ``a * len(buffer) + b * len(stack) + c * (number of headless
    positions)`` with ``a, b, c`` in :data:`_WEIGHTS`) strictly decreases,
    in lexicographic order, with every rule.  Each part is bounded, so no
    computation is infinite.  Where a rule brings words set aside back onto
    the stack (``rules.RESTORE``), the length of the buffer comes first.

    The stack (bottom first) followed by the buffer (front first) is a
    sequence whose named part is one block, in pattern order.  A rule that
    drops a named node lowers the first part.  One that keeps its nodes
    only permutes the block, leaving the inversions with the rest as they
    were; where each pair it reorders has a required sentence order (``X <
    Y``), the change of the inversions is known: a swap (``s1 < s0``, s1 put
    back behind s0) adds one.  A rule that keeps the block as it is must
    lower the potential: the changes of the lengths are fixed by its
    patterns, and an edge removes a headless position only if its dependent
    surely had no head (:func:`~semiparse.transitions.systems.format.rules.may_have_head`;
    an edge into a headed node overwrites its head and makes no progress).
    False without rules (a system not declared as rewrites: nothing to prove
    it from)."""
    if not rules:
        return False
    if any(r.restore for r in rules):
        # A restore lengthens the stack with the words set aside: first the
        # buffer, which no rule lengthens and each restore shortens, then the
        # triple over the rules that keep the buffer's length.
        if any(len(r.buffer_after) > r.nb for r in rules):
            return False
        rules = [r for r in rules if len(r.buffer_after) == r.nb]
        if any(r.restore for r in rules):
            return False
        if not rules:
            return True
    places = headed_places(rules)
    changes = []
    for r in rules:
        kept = list(r.stack_after + r.buffer_after)
        if len(kept) < r.ns + r.nb:
            continue  # fewer nodes
        gained = _inversions_gained(r, kept)
        if gained is None or (gained <= 0 and kept != sorted(kept)):
            return False  # reorders nodes without a known gain of inversions
        if gained > 0:
            continue
        gained_head = r.edge is not None and not may_have_head(r, r.edge[1], places)
        changes.append((len(r.buffer_after) - r.nb, len(r.stack_after) - r.ns,
                        -1 if gained_head else 0))
    return any(all(a * db + b * ds + c * dh < 0 for db, ds, dh in changes)
               for a, b, c in itertools.product(_WEIGHTS, repeat=3))


def _inversions_gained(rule, kept):
    """How many more inversions of the sentence order the block of named
    nodes has after ``rule`` (``kept``: the names in their order after it),
    or None where a pair it reorders has no required order."""
    gained = 0
    for x, i in enumerate(kept):
        for j in kept[x + 1:]:
            if i < j:
                continue  # i stays in front of j
            # j was in front of i and is now behind it
            if (j, i) in rule.before:
                gained += 1
            elif (i, j) in rule.before:
                gained -= 1
            else:
                return None
    return gained


def _shortest_cycle(system, n):
    """``(transitions, configurations)`` of the shortest cycle a depth-first
    search from ``initial(n)`` meets (configurations[i] is the one
    transitions[i] applies to), or None.  The search stops after
    :data:`_MAX_STATES` configurations."""
    start = tuple(system.initial(n))
    path, moves = [start], []  # moves[i] leads from path[i] to path[i + 1]
    on_path, done = {start: 0}, set()
    todo = [iter(system.successors(*start))]
    best = None
    while todo:
        step = next(todo[-1], None)
        if step is None:
            todo.pop()
            config = path.pop()
            del on_path[config]
            done.add(config)
            if moves:
                moves.pop()
            continue
        name, stack, buffer, arcs, _ = step
        after = (stack, buffer, arcs)
        if after in on_path:
            i = on_path[after]
            if best is None or len(path) - i < len(best[0]):
                best = (moves[i:] + [name], path[i:])
        elif after not in done and len(on_path) + len(done) < _MAX_STATES:
            on_path[after] = len(path)
            path.append(after)
            moves.append(name)
            todo.append(iter(system.successors(*after)))
    return best
