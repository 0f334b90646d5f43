"""A minimal greedy constituent parser trained with the static or dynamic oracle.

An averaged perceptron (the dependency trainer's weights,
:class:`~semiparse.perceptron.string_weights.StringWeights`) over the top-down or
in-order system (the set-up of
Fernández-González and Gómez-Rodríguez 2018, with sparse features instead of
their neural scorer): classes are Shift, Reduce, Finish and NT-X for every
phrasal label of the training trees; features are the labels, spans, edge
words and tags of the top three stack items, the next two words and tags and
the previous transition.  Training with ``oracle="static"`` follows the
canonical sequence; with ``"dynamic"`` the model's best optimal transition is
the target and, after ``explore_after`` epochs, a wrong prediction is
followed with probability ``explore_p`` (exploration).

Neither system bounds unary chains, so the parser allows at most
``MAX_UNARY`` in a row (top-down: consecutive NTs; in-order: NT-X directly
followed by Reduce, counted since the last Shift); when every optimal
transition is beyond that bound, training follows the oracle without an
update.
"""
import numpy as np

from semiparse._support.seeds import seeded
from semiparse.transitions.constituent.oracle import Gold, oracle as dynamic_oracle
from semiparse.transitions.constituent.systems import FINISH, NT, REDUCE, SHIFT, Open, system as get_system
from semiparse.perceptron.string_weights import StringWeights
from semiparse.training.explore import Exploration
from semiparse.training.loop import epochs as epoch_loop

MAX_UNARY = 4


class Parser:
    """Averaged-perceptron weights over the transitions of one system."""

    def __init__(self, system, labels):
        self.system = get_system(system)
        self.classes = [SHIFT, REDUCE] + ([FINISH] if "FI" in self.system.kinds else []) + [NT(x) for x in labels]
        self.index = {t: k for k, t in enumerate(self.classes)}
        self.weights = StringWeights(len(self.classes))
        self.updates = 1  # the averaging clock: one tick per update

    def features(self, c, leaves, last):
        """The weight keys of the features of configuration ``c``."""
        return self.weights.keys(features(c, leaves, last))

    def scores(self, keys):
        return self.weights.scores(keys)

    def update(self, keys, good, bad):
        self.weights.update(keys, good, bad, self.updates)
        self.updates += 1

    def average(self):
        """Replace the weights by their average over the updates (done once, after training)."""
        self.weights.average(self.updates)

    def allowed(self, c, history=None):
        """Class indices legal in ``c`` and, given the ``history``, within the unary-chain bound."""
        kinds = {t.kind for t in self.system._legal_all(c)}
        if history is not None and history.unary >= MAX_UNARY:
            bounded = kinds - {"NT"}
            if self.system.name == "in_order" and history.last is not None and history.last.kind == "NT":
                bounded.discard("RE")
            kinds = bounded or kinds  # a state where only NT is legal (in-order [word], buffer left)
        return [k for k, t in enumerate(self.classes) if t.kind in kinds]

    def parse(self, leaves):
        """The tree over ``leaves`` ((tag, word) pairs) by greedy decoding."""
        c, state = self.system.initial(len(leaves)), _History()
        while not self.system._terminal(c):
            scores = self.scores(self.features(c, leaves, state.last))
            allowed = self.allowed(c, state)
            t = self.classes[max(allowed, key=scores.__getitem__)]
            c = state.step(self.system, c, t)
        return self.system.tree(c, leaves)


class _History:
    """The previous transition and the current run of unary-chain steps."""

    def __init__(self):
        self.last, self.unary = None, 0

    def step(self, system, c, t):
        if system.name == "top_down":
            self.unary = self.unary + 1 if t.kind == "NT" else 0
        elif t.kind == "RE" and self.last is not None and self.last.kind == "NT":
            self.unary += 1
        elif t.kind == "SH":
            self.unary = 0
        self.last = t
        return system._step(c, t)


def _item(c, k, leaves):
    """Atoms of the k-th stack item from the top."""
    if k >= len(c.stack):
        return "-", "-", "-"
    s = c.stack[-1 - k]
    if type(s) is Open:
        return f"({s.label}", leaves[s.start][1] if s.start < len(leaves) else "-", "-"
    label = s.label or leaves[s.l][0]
    return label, leaves[s.l][1], leaves[s.r - 1][1]


def features(c, leaves, last):
    """The feature strings of configuration ``c``."""
    s0, s1, s2 = (_item(c, k, leaves) for k in range(3))
    b = [leaves[j] if j < len(leaves) else ("-", "-") for j in (c.i, c.i + 1)]
    last = str(last)
    return [
        "bias", f"s0l={s0[0]}", f"s0f={s0[1]}", f"s0e={s0[2]}", f"s0lf={s0[0]}|{s0[1]}",
        f"s1l={s1[0]}", f"s1f={s1[1]}", f"s2l={s2[0]}", f"s0s1={s0[0]}|{s1[0]}",
        f"s0s1s2={s0[0]}|{s1[0]}|{s2[0]}", f"b0w={b[0][1]}", f"b0t={b[0][0]}", f"b1t={b[1][0]}",
        f"b0tb1t={b[0][0]}|{b[1][0]}", f"s0b0t={s0[0]}|{b[0][0]}", f"s0s1b0t={s0[0]}|{s1[0]}|{b[0][0]}",
        f"last={last}", f"last_s0={last}|{s0[0]}", f"last_b0t={last}|{b[0][0]}",
        f"open={min(len(c.open_nts), 5)}", f"done={c.i == c.n}|{s0[0]}",
    ]


def train(trees, system, oracle="dynamic", epochs=5, seed=0, explore_after=1, explore_p=0.9):
    """A :class:`Parser` trained on ``trees`` (a list of :class:`Tree`)."""
    if oracle not in ("static", "dynamic"):
        raise ValueError(f"oracle must be 'static' or 'dynamic', not {oracle!r}")
    if not trees:
        raise ValueError("no training trees given")
    golds = [Gold(t) for t in trees]
    parser = Parser(system, sorted({x for g in golds for x in g.labels}))
    dyn = dynamic_oracle(parser.system.name) if oracle == "dynamic" else None
    rng = seeded(seed)
    exploration = Exploration(explore_p, rng)
    for epoch in epoch_loop(epochs, list(range(len(golds))), rng, progress=False):
        exploration.on = epoch.number >= explore_after
        for k in epoch:
            if dyn is None:
                _static_sentence(parser, golds[k])
            else:
                _dynamic_sentence(parser, golds[k], dyn, exploration)
    parser.average()
    return parser


def _static_sentence(parser, gold):
    c, state = parser.system.initial(gold.n), _History()
    for t in parser.system.static_oracle(gold.tree):
        feats = parser.features(c, gold.leaves, state.last)
        scores = parser.scores(feats)
        good = parser.index[t]
        guess = max(parser.allowed(c), key=scores.__getitem__)  # the gold sequence ignores the bound
        if guess != good:
            parser.update(feats, good, guess)
        c = state.step(parser.system, c, t)


def _dynamic_sentence(parser, gold, dyn, exploration):
    c, state = parser.system.initial(gold.n), _History()
    legal = np.zeros(len(parser.classes), dtype=bool)
    while not parser.system._terminal(c):
        allowed = parser.allowed(c, state)
        optimal = [parser.index[t] for t in dyn.optimal(c, gold) if t in parser.index]
        good = [k for k in optimal if k in allowed]
        if not good:  # only beyond the unary bound: follow the oracle
            c = state.step(parser.system, c, parser.classes[optimal[0]])
            continue
        feats = parser.features(c, gold.leaves, state.last)
        legal[:] = False
        legal[allowed] = True
        step = exploration.step(parser.scores(feats), legal, good)
        if not step.right:
            parser.update(feats, step.best, step.predicted)
        c = state.step(parser.system, c, parser.classes[step.follow])
