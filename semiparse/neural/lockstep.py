"""Lockstep training and batched greedy decoding.

A minibatch of sentences advances together: at each step one forward pass
scores the unfinished configurations of all of them and one
``oracle.scores_batch`` call gives their oracle rows; each configuration then
takes one transition (:class:`Policy`).  The losses of all steps are summed
and the caller back-propagates once per minibatch.

:func:`sentence_loss` computes the same loss one sentence and one
configuration at a time with one ``oracle.scores`` call per configuration,
as UUParser does (de Lhoneux, Stymne and Nivre 2017): the reference that the lockstep
loss must equal (tests/neural/test_neural.py) and the baseline of ``semiparse bench
neural``.
"""
import time
from dataclasses import dataclass

import numpy as np
import torch

from semiparse.transitions.systems.format.limits import loop_error, max_steps
from semiparse.transitions.oracles.static import static_rank
from semiparse.neural.model import label_loss, transition_loss
from semiparse.errors import OverBudget
from semiparse.training.explore import Exploration
from semiparse.training.loop import SEARCH_BUDGET
from semiparse.training.single_root import forbidden, root_children, single_root

# The longest sentence whose initial configuration, scored -inf throughout by
# the oracle, the exhaustive search checks: a dead end of the system, or a
# grammar that does not describe it (TrainingOracle.dead_end)
EXHAUSTIVE_MAX = 7


class Transitions:
    """A system's transitions as the network's output columns (the oracle's
    column order) and their machine codes."""

    def __init__(self, system):
        self.system = system
        self.names = tuple(system.oracle().transitions)
        self.codes = [system.machine.code(name) for name in self.names]
        self._column = {code: i for i, code in enumerate(self.codes)}

    def __len__(self):
        return len(self.names)

    def viable(self, configs, viability):
        """Boolean ``(len(configs), T)``: which transitions leave a final
        configuration reachable (:class:`~semiparse.transitions.oracles.viability.Viability`)."""
        column = {name: i for i, name in enumerate(self.names)}
        out = np.zeros((len(configs), len(self.names)), dtype=bool)
        for i, c in enumerate(configs):
            for name in viability.names(c.stack, c.buffer, c.arcs, c.n):
                out[i, column[name]] = True
        return out

    def legal(self, configs):
        """Boolean ``(len(configs), T)``: which transitions apply."""
        out = np.zeros((len(configs), len(self.names)), dtype=bool)
        for i, config in enumerate(configs):
            for code in config.legal_codes():
                out[i, self._column[code]] = True
        return out

    def single_root(self, configs, allowed):
        """``allowed`` (boolean ``(len(configs), T)``, changed in place and
        returned) without the transitions that the single-root rule forbids
        (:func:`semiparse.training.single_root.forbidden`: an edge from the
        root while another word than its dependent has no head)."""
        for i, k in zip(*np.nonzero(allowed)):
            if forbidden(configs[i], self.codes[k]):
                allowed[i, k] = False
        return allowed


class TrainingOracle:
    """The oracle rows of configurations and their optimal transitions:
    ``dynamic`` and ``nondet`` take every transition of maximal sigma,
    ``static`` only the first of them in the system's static order (the
    canonical computation, docs/oracles.md).  ``method`` is the oracle's
    (``semiparse.oracle``; e.g. ``exhaustive`` for a system without a
    completion grammar); ``threads``: those of each ``scores_batch`` call.
    ``seconds`` adds up the time spent in the oracle."""

    def __init__(self, system, transitions, kind, method="auto", threads=1):
        budget = SEARCH_BUDGET if system.definition.completion_kind == "search" else None
        self.oracle = system.oracle(method=method, max_states=budget)
        self.transitions = transitions
        self.kind = kind
        self.threads = threads
        self.seconds = 0.0
        self._dead = {}  # n -> whether the initial configuration of n words is a dead end
        rank = static_rank(system.definition)
        order = sorted(range(len(transitions)), key=lambda i: rank(transitions.names[i]))
        self._order = np.empty(len(transitions))
        self._order[order] = np.arange(len(transitions))

    def _misdescribed(self, config, why):
        return ValueError(f"{self.oracle.system.name}: the oracle scores every transition -inf "
                          f"in the configuration {describe(config)}, which is not final: {why}, "
                          f"so the completion grammar does not describe the system's moves "
                          f"(semiparse check on its system file says where)")

    def dead_end(self, config, heads):
        """True for an initial configuration that the oracle scores -inf
        throughout (the sentence's words ``heads``) where it is a dead end of
        the system: no transition applies, or, for up to
        :data:`EXHAUSTIVE_MAX` words, the exhaustive search finds no final
        configuration either (a longer one is taken to be).  Where the search
        does, the grammar is at fault: a ValueError saying so."""
        if not config.legal_codes():
            return True
        if config.n > EXHAUSTIVE_MAX:
            return True
        dead = self._dead.get(config.n)  # whether initial(n) is one does not depend on the tree
        if dead is None:
            start = time.perf_counter()
            scores = self.oracle.scores_exhaustive(config, heads)
            self.seconds += time.perf_counter() - start
            dead = self._dead[config.n] = not any(v > -np.inf for v in scores.values())
        if not dead:
            raise self._misdescribed(config, "the exhaustive search reaches a final "
                                             "configuration from it")
        return True

    def rows(self, configs, golds):
        """sigma ``(len(configs), T)`` by one ``scores_batch`` call (-inf: not legal)."""
        start = time.perf_counter()
        sigma = self.oracle.scores_batch(configs, golds, n_jobs=self.threads)
        self.seconds += time.perf_counter() - start
        return sigma

    def row(self, config, gold):
        """sigma ``(1, T)`` of one configuration by one ``scores`` call."""
        start = time.perf_counter()
        try:
            scores = self.oracle.scores(config, gold)
        except OverBudget:   # the search ran past its budget: no answer (a NaN row)
            return np.full((1, len(self.transitions)), np.nan)
        finally:
            self.seconds += time.perf_counter() - start
        out = np.full((1, len(self.transitions)), -np.inf)
        for i, name in enumerate(self.transitions.names):
            if name in scores:
                out[0, i] = scores[name]
        return out

    def optimal(self, sigma, configs):
        """Boolean mask of the optimal transitions of each row of ``configs``
        (not final, not initial: :func:`dead_ends` takes those).  A row with
        none is a ValueError: the oracle scored the transition into it above
        -inf, so a final configuration was reachable, and it now says none
        is: the completion grammar does not describe the system's moves."""
        best = sigma.max(axis=1, keepdims=True)
        if not np.isfinite(best).all():
            config = configs[int(np.flatnonzero(~np.isfinite(best[:, 0]))[0])]
            raise self._misdescribed(config, "it scored the transition into it above -inf")
        optimal = sigma == best
        if self.kind == "static":
            first = np.where(optimal, self._order, np.inf).argmin(axis=1)
            optimal = np.zeros_like(optimal)
            optimal[np.arange(len(first)), first] = True
        return optimal


class Policy(Exploration):
    """Which transition a training configuration takes: the model's best
    optimal transition, or with exploration (``dynamic`` after
    ``explore_after`` epochs: :attr:`explore`) its prediction when that is
    not optimal, with probability ``explore_p`` -- never a transition the
    oracle scores -inf.  The exploration step of every trainer
    (:class:`~semiparse.training.explore.Exploration`), over a batch's rows."""

    def __init__(self, kind, explore_p, rng):
        super().__init__(explore_p, rng)
        self.kind, self.explore_p = kind, explore_p

    @property
    def explore(self):
        return self.on

    @explore.setter
    def explore(self, value):
        self.on = value

    def choose(self, scores, legal, optimal, sigma):
        """``(columns to follow, whether each prediction was optimal)``."""
        return self.rows(scores, legal, optimal, np.isfinite(sigma))


@dataclass
class Example:
    """A training sentence: its ids (:meth:`Vocab.sentence`), gold heads as
    one tuple (so the oracle prepares the tree once), gold label ids."""

    ids: dict
    heads: tuple
    labels: list
    n: int


def describe(config):
    """A configuration for messages: its stack and buffer."""
    return f"stack {list(config.stack)}, buffer {list(config.buffer)}"


@dataclass
class Losses:
    """The summed loss of some sentences and what it came from;
    ``dead_ends``: the sentences left out because their initial
    configuration is a dead end, ``dead_end`` one of those configurations
    (:func:`describe`), or None; ``over_budget``: the sentences left where
    the search oracle ran past its budget (a NaN row, no answer)."""

    loss: torch.Tensor
    configurations: int
    correct: int
    edges: int
    dead_ends: int = 0
    dead_end: str = None
    over_budget: int = 0


class _Run:
    """What the lockstep pass and the sentence loop share: scoring
    configurations, choosing their transitions, the edges to label, and the
    loss.

    ``deferred`` (the lockstep pass): each step scores its configurations
    without building a graph, only to choose their transitions, and the loss
    is computed at the end by one transition-MLP pass over the feature rows
    of every step -- the same function of the same weights, so the same loss
    and gradients, with one gather and one MLP in the backward pass instead
    of one per step.  Otherwise (the sentence loop) each configuration's loss
    is built when it is scored, as UUParser does."""

    def __init__(self, net, transitions, oracle, reader, policy, loss, trace, deferred):
        self.net, self.transitions, self.oracle = net, transitions, oracle
        self.reader, self.policy, self.loss_kind, self.trace = reader, policy, loss, trace
        self.deferred = deferred
        self.losses, self.rows, self.legal, self.optimal = [], [], [], []
        self.heads, self.deps, self.gold = [], [], []
        self.configurations = self.correct = self.dead_ends = self.over_budget = 0
        self.dead_end = None

    def drop_unanswered(self, sigma):
        """Which rows of ``sigma`` the oracle answered, as a boolean mask; a
        NaN row (its search ran past the budget) leaves its sentence, counted."""
        answered = ~np.isnan(sigma).any(axis=1)
        self.over_budget += int((~answered).sum())
        return answered

    def drop_dead_ends(self, configs, examples, sigma):
        """Which of ``configs`` (initial configurations of ``examples``, with
        the oracle rows ``sigma``) are not dead ends of the system
        (:meth:`TrainingOracle.dead_end`), as a boolean mask; the others are
        counted, and left out."""
        dead = ~np.isfinite(sigma.max(axis=1))
        for i in np.flatnonzero(dead):
            self.oracle.dead_end(configs[i], examples[i].heads)
            self.dead_ends += 1
            self.dead_end = self.dead_end or describe(configs[i])
        return ~dead

    def _loss(self, H, rows, legal, optimal):
        scores = self.net.transition_scores(H, rows)
        device = scores.device
        loss = transition_loss(self.loss_kind, scores, torch.as_tensor(legal, device=device),
                               torch.as_tensor(optimal, device=device)).sum()
        return scores, loss

    def step(self, H, configs, starts, examples, sigma):
        legal = self.transitions.legal(configs)
        optimal = self.oracle.optimal(sigma, configs)
        rows = self.reader.rows(configs, starts, len(H) - 1)
        if self.deferred:
            with torch.no_grad():
                scores = self.net.transition_scores(H, rows)
            self.rows.append(rows)
            self.legal.append(legal)
            self.optimal.append(optimal)
        else:
            scores, loss = self._loss(H, rows, legal, optimal)
            self.losses.append(loss)
        follow, right = self.policy.choose(scores.detach().cpu().numpy(), legal, optimal, sigma)
        if self.trace is not None:
            self.trace(configs, sigma, follow)
        self.configurations += len(configs)
        self.correct += int(right.sum())
        for config, start, example, column in zip(configs, starts, examples, follow):
            code = self.transitions.codes[column]
            arc = config.arc(code)
            if arc is not None:
                h, d = arc
                if example.heads[d] == h and example.labels[d] >= 0:
                    self.heads.append(start + h)
                    self.deps.append(start + d)
                    self.gold.append(example.labels[d])
            config.do(code)

    def result(self, H):
        if self.rows:
            self.losses.append(self._loss(H, np.concatenate(self.rows), np.concatenate(self.legal),
                                          np.concatenate(self.optimal))[1])
        total = torch.stack(self.losses).sum() if self.losses else H.sum() * 0
        if self.gold:
            scores = self.net.label_scores(H, self.heads, self.deps)
            total = total + label_loss(self.loss_kind, scores, self.gold).sum()
        return Losses(total, self.configurations, self.correct, len(self.gold), self.dead_ends,
                      self.dead_end, self.over_budget)


def lockstep_loss(net, examples, transitions, oracle, reader, policy, loss="hinge", trace=None):
    """The summed loss of a minibatch, its sentences advanced in lockstep:
    one encoder pass, then per step one transition-MLP pass (no graph) and
    one ``scores_batch`` call over all unfinished configurations to choose
    their transitions; then one transition-MLP pass over the configurations
    of every step and one label-MLP pass over the gold edges followed for
    the loss.  ``trace(configs, sigma, followed_columns)``, if given, sees
    every step (for tests).  A sentence whose initial configuration is a
    dead end of the system is left out (:attr:`Losses.dead_ends`)."""
    run = _Run(net, transitions, oracle, reader, policy, loss, trace, deferred=True)
    H, starts = net.encode([e.ids for e in examples])
    configs = [transitions.system.initial(e.n) for e in examples]
    active = [i for i, c in enumerate(configs) if not c.is_final()]
    steps = 0
    while active:
        now = [configs[i] for i in active]
        sigma = oracle.rows(now, [examples[i].heads for i in active])
        answered = run.drop_unanswered(sigma)
        if not answered.all():
            active, sigma = [i for i, ok in zip(active, answered) if ok], sigma[answered]
            now = [configs[i] for i in active]
            if not active:
                break
        if steps == 0:
            live = run.drop_dead_ends(now, [examples[i] for i in active], sigma)
            if not live.all():
                active, sigma = [i for i, ok in zip(active, live) if ok], sigma[live]
                now = [configs[i] for i in active]
                if not active:
                    break
        run.step(H, now, [starts[i] for i in active], [examples[i] for i in active], sigma)
        steps += 1
        active = [i for i in active if not configs[i].is_final()]
        _check_steps(transitions, [examples[i].n for i in active], steps)
    return run.result(H)


def _check_steps(transitions, lengths, steps):
    """The ValueError of a loop (:func:`~semiparse.transitions.systems.format.limits.max_steps`)
    where a sentence of one of ``lengths`` words is still unfinished after
    ``steps`` transitions."""
    for n in lengths:
        if steps >= max_steps(n):
            raise loop_error(transitions.system.name, n)


def sentence_loss(net, example, transitions, oracle, reader, policy, loss="hinge", trace=None):
    """The loss of one sentence, one configuration at a time with one
    ``oracle.scores`` call each (the baseline the lockstep pass replaces)."""
    run = _Run(net, transitions, oracle, reader, policy, loss, trace, deferred=False)
    H, starts = net.encode([example.ids])
    config = transitions.system.initial(example.n)
    steps = 0
    while not config.is_final():
        _check_steps(transitions, [example.n], steps)
        sigma = oracle.row(config, example.heads)
        if not run.drop_unanswered(sigma).all():
            break
        if steps == 0 and not run.drop_dead_ends([config], [example], sigma).all():
            break
        run.step(H, [config], starts, [example], sigma)
        steps += 1
    return run.result(H)


def parse_batch(net, sentences, transitions, reader, viability=None, rule=False, root_label=None):
    """Greedy decoding of many sentences in lockstep: legal transitions only,
    and with ``viability`` (a :class:`~semiparse.transitions.oracles.viability.Viability`)
    only those after which a final configuration stays reachable; with
    ``rule``, only those the single-root rule allows
    (:mod:`semiparse.training.single_root`: the root takes a child only as
    the last edge).

    With ``root_label`` (a label id), a parse left with several words
    attached to the root or without a head is repaired
    (:func:`~semiparse.training.single_root.single_root`): the root keeps the
    one whose edge from the root the label MLP gives the highest
    log-probability of ``root_label``, and the others are attached to it,
    each with its best label other than ``root_label``.

    ``sentences``: ids of each (:meth:`Vocab.sentence`).  Returns, per
    sentence, ``(heads, labels, finished)``: the head of each position 0..n
    (-1 for none: position 0, and words a system leaves headless), the label
    id of each edge (-1 for none), and whether the parse ended in a final
    configuration -- False at a dead end (a configuration that is not final
    and has no legal transition, which some declared systems have) or after
    :func:`~semiparse.transitions.systems.format.limits.max_steps` transitions (in a system
    whose moves can loop), where that sentence stops."""
    was_training = net.training
    net.eval()
    try:
        with torch.no_grad():
            H, starts = net.encode(sentences)
            configs = [transitions.system.initial(len(s["words"]) - 1) for s in sentences]
            finished = [True] * len(configs)
            active = [i for i, c in enumerate(configs) if not c.is_final()]
            steps = 0
            while active:
                looping = [i for i in active if steps >= max_steps(configs[i].n)]
                for i in looping:  # the model's moves loop: the sentence stops
                    finished[i] = False
                active = [i for i in active if i not in looping]
                if not active:
                    break
                steps += 1
                legal = transitions.legal([configs[i] for i in active])
                if viability is not None:
                    legal &= transitions.viable([configs[i] for i in active], viability)
                if rule:
                    transitions.single_root([configs[i] for i in active], legal)
                for k in np.flatnonzero(~legal.any(axis=1)):
                    finished[active[k]] = False
                live = legal.any(axis=1)
                active, legal = [i for i, ok in zip(active, live) if ok], legal[live]
                if not active:
                    break
                now = [configs[i] for i in active]
                scores = net.transition_scores(H, reader.rows(now, [starts[i] for i in active],
                                                              len(H) - 1))
                best = np.where(legal, scores.cpu().numpy(), -np.inf).argmax(axis=1)
                for config, column in zip(now, best):
                    config.do(transitions.codes[column])
                active = [i for i in active if not configs[i].is_final()]
            arcs = [list(c.arcs) for c in configs]
            moved = [()] * len(arcs)
            if root_label is not None:
                moved = _one_root(net, H, starts, arcs, root_label)
            edges = [(i, h, d) for i, a in enumerate(arcs) for d, h in enumerate(a) if h >= 0]
            labels = [[-1] * len(a) for a in arcs]
            if edges:
                scores = net.label_scores(H, [starts[i] + h for i, h, _ in edges],
                                          [starts[i] + d for i, _, d in edges])
                if any(moved) and scores.shape[1] > 1:  # the root label is the root child's
                    rows = [k for k, (i, _, d) in enumerate(edges) if d in moved[i]]
                    scores[rows, root_label] = -np.inf
                chosen = scores.argmax(dim=1).tolist()
                k = 0
                for i, a in enumerate(arcs):
                    for d, h in enumerate(a):
                        if h >= 0:
                            labels[i][d] = chosen[k]
                            k += 1
            return list(zip(arcs, labels, finished))
    finally:
        net.train(was_training)


def _one_root(net, H, starts, arcs, root_label):
    """Repair, in place, each of ``arcs`` (a sentence's heads, ``-1`` for
    none) with more than one word attached to the root or headless (see
    :func:`parse_batch`); returns per sentence the set of the words moved.
    The kept word keeps its head (-1: the parser attaches it with the root
    label)."""
    moved = [()] * len(arcs)
    pairs = [(i, d) for i, a in enumerate(arcs) if len(root_children(a)) > 1
             for d in root_children(a)]
    if not pairs:
        return moved
    scores = torch.log_softmax(net.label_scores(H, [starts[i] for i, _ in pairs],
                                                [starts[i] + d for i, d in pairs]), dim=1)
    scores = scores[:, root_label].tolist()
    by_sentence = {}
    for (i, d), score in zip(pairs, scores):
        by_sentence.setdefault(i, {})[d] = score
    for i, found in by_sentence.items():
        before = arcs[i]
        arcs[i], out = single_root(before, found)
        for d in found:
            if d not in out and before[d] < 0:
                arcs[i][d] = -1
        moved[i] = frozenset(out)
    return moved
