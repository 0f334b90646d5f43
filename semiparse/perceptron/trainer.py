"""Training loops: greedy perceptron, probabilistic (AdaGrad-RDA) and beam.

* ``perceptron`` -- Goldberg et al. 2014, Algorithm 2: averaged perceptron; the update goes
  from the predicted class towards the best-scoring correct class.
* ``rda`` -- Goldberg 2013, Algorithms 2-3: multi-label log-likelihood (the
  probability of the *set* of correct classes) optimised with AdaGrad-RDA and
  L1 regularisation; exploration by sampling from the model.
* ``beam-early`` / ``beam-maxv`` -- Aufrant et al. 2017: global perceptron for beam
  search, early update or max-violation, where a configuration is correct
  when it was reached by zero-cost transitions only (CORRECT(c'|c), from the
  dynamic oracle, or from the static sequence for ``--oracle static``), with
  the restart strategy (decoding resumes from c+ or, to explore, from c-).

Each method's settings are one option object (:mod:`semiparse.perceptron.options`).
The epoch loop and the exploration step are every trainer's
(:mod:`semiparse.training`); the scoring (the C feature templates) and the
updates are this module's.

Oracles: ``static`` follows the canonical gold sequence (projective trees
only); ``nondet`` takes the dynamic oracle's set of optimal moves but always
follows one of them; ``dynamic`` also explores (follows the model's own
prediction with probability ``explore_p`` after ``explore_after`` epochs for
the perceptron, samples after ``explore_after`` epochs for RDA).

Exploring never enters a dead end of a declared system (a configuration
that is not final and from which no final configuration is reachable): it
follows the model's move only where the dynamic oracle scores it above
-inf, which it does exactly when a final configuration stays reachable.
Should a configuration still have no optimal move (an oracle that is not
exact for the system, or the beam's wrong configurations), the sentence is
abandoned for that epoch: the updates made on it so far stay, the epoch and
the run go on, and the dead ends are counted (each epoch's record, and a
warning at the end).
"""
import math
import time
import warnings

import numpy as np

from semiparse._support.seeds import seeded
from semiparse.transitions import oracle
from semiparse.transitions.oracles.static import static_choice, static_rank
from semiparse.transitions.oracles.swap_static import SYSTEMS as SWAP_SYSTEMS, SwapStatic
from semiparse.perceptron import _core
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.systems.loading import load_system
from semiparse.transitions.oracles.methods import system_methods
from semiparse.perceptron.model import Model
from semiparse.perceptron.options import (BeamOptions, PerceptronOptions, RDAOptions, check_restart,
                                          check_settings, options_for)
from semiparse.treebank.scoring import attachment_scores
from semiparse.training.explore import Exploration
from semiparse.errors import OverBudget
from semiparse.training.loop import (SEARCH_BUDGET, epochs, log_record, note_over_budget,
                                     warn_dead_ends)
from semiparse.training.trees import NONPROJ, known_labels, prepare, root_label

ORACLES = ("static", "nondet", "dynamic")


class _DeadEnd(Exception):
    """The configuration being trained on is a dead end (no optimal move):
    the sentence is abandoned for the epoch, and counted (:meth:`Epoch.dead`)."""


class _Unanswered(Exception):
    """The search oracle ran past its budget on the configuration being
    trained on: the sentence is left for the epoch, and counted
    (:meth:`Epoch.unanswered`)."""


def oracle_moves(dynamic, state, heads, partial=False):
    """``(optimal, viable)``: the names of the transitions of maximal sigma in
    ``state`` by the dynamic oracle ``dynamic`` (:func:`semiparse.oracle`),
    none in a dead end, where no transition leads to a final configuration
    (no score is finite); and of those it scores above -inf, after which a
    final configuration stays reachable.  ``heads``: the gold heads as a
    tuple (the oracle keys its per-tree cache on it); ``partial``: they may
    be unknown (-1), and sigma counts the known gold edges."""
    scores = dynamic.scores(state.stack, state.buffer, heads,
                            state.arcs if dynamic.system.needs_arcs else None, partial=partial)
    viable = frozenset(t for t, v in scores.items() if v > -math.inf)
    top = max(scores.values(), default=-math.inf)
    return ({t for t, v in scores.items() if v == top} if top > -math.inf else set()), viable


def gold_heads(sent):
    """A sentence's gold heads as the tuple the oracle takes."""
    return tuple(sent.heads.tolist())


class StaticOracle:
    """The canonical computation (:mod:`semiparse.transitions.oracles.static`): in each
    configuration the first optimal move in the system's static order; for
    the shipped swap systems, their own static oracles instead
    (:mod:`semiparse.transitions.oracles.swap_static`: the lazy one of Nivre,
    Kuhlmann and Hall 2009 for ``arc_standard_swap``, UUParser's set-up).

    Training with it follows that computation, so the moves of each sentence
    are computed once (one dynamic-oracle call per step) and replayed in later
    epochs; a configuration off the recorded path (told by its step number
    and fingerprint) asks the dynamic oracle again.
    """

    def __init__(self, system):
        self.dynamic = oracle(system)
        self.rank = static_rank(self.dynamic.system)
        self._paths, self._heads = {}, {}
        definition = self.dynamic.system
        self._swap = {} if (definition.name in SWAP_SYSTEMS
                            and getattr(definition, "shipped", False)) else None

    def move(self, state, sent):
        """The canonical move code at state, or -1 if there is none (final)."""
        heads = self._heads.get(sent)
        if heads is None:
            heads = self._heads[sent] = gold_heads(sent)
        if self._swap is not None:
            static = self._swap.get(sent)
            if static is None:
                static = self._swap[sent] = SwapStatic(self.dynamic.system.name, heads)
            name = static.move(state.stack, state.buffer, state.arcs)
            return -1 if name is None else state.machine.code(name)
        name = static_choice(self.rank, oracle_moves(self.dynamic, state, heads)[0])
        return -1 if name is None else state.machine.code(name)

    def optimal(self, state, sent):
        path = self._paths.get(sent)
        if path is None:
            path = self._paths[sent] = self._path(state.machine, sent)
        i = state.steps
        if i < len(path[1]) and path[0][i] == state.fingerprint():
            return {int(path[1][i])}
        move = self.move(state, sent)
        return {move} if move >= 0 else set()

    def _path(self, machine, sent):
        """(fingerprints, moves) of the canonical computation of sent."""
        state = _core.State(sent, machine)
        prints, moves = [], []
        while not state.is_final():
            move = self.move(state, sent)
            if move < 0:
                break
            prints.append(state.fingerprint())
            moves.append(move)
            state.do(move, 0)
        return np.array(prints, dtype=np.uint64), np.array(moves, dtype=np.int32)


class Trainer:
    """One training run; :meth:`run` returns the finished :class:`Model`.

    ``system``: a name, TOML path, ``module:attr`` or system object;
    ``oracle``: one of :data:`ORACLES`; ``options``: the training method and
    its settings, :class:`PerceptronOptions` (default), :class:`RDAOptions`
    or :class:`BeamOptions` (:mod:`semiparse.perceptron.options`).
    """

    def __init__(self, system="arc_standard", oracle="dynamic", options=None, epochs=10, seed=0,
                 *, progress=True, log=None, **settings):
        if isinstance(options, str) or settings:  # the keywords of the previous signature
            warnings.warn("Trainer's trainer=, beam=, explore_after=, explore_p=, rho=, alpha=, "
                          "lam= and restart= are PerceptronOptions, RDAOptions and BeamOptions "
                          "(semiparse.perceptron.options); the keywords will be removed in the next "
                          "release", DeprecationWarning, stacklevel=2)
            if isinstance(options, str):
                settings["trainer"] = options
            options = options_for(oracle=oracle, **settings)
        options = PerceptronOptions() if options is None else options
        if not isinstance(options, (PerceptronOptions, RDAOptions, BeamOptions)):
            raise ValueError(f"options must be PerceptronOptions, RDAOptions or BeamOptions, "
                             f"not {type(options).__name__}")
        system = load_system(system)  # a name, a TOML path, module:attr or a system
        spine = machine_for(system).spine
        if oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {', '.join(ORACLES)}, not {oracle!r}")
        if isinstance(options, BeamOptions) and spine:
            raise ValueError("the beam trainers support the systems declared as stack/buffer "
                             "rewrites, not LR-spine")
        if (system.grammar is None and system.completion_kind not in ("search", "spanning")
                and not system_methods(system)):
            # Oracle says so only at the first gold tree, after the data was read
            derived = " (the static oracle is derived from it)" if oracle == "static" else ""
            why = getattr(system, "not_split", None)
            raise ValueError(f"transition system {system.name!r} has no dynamic oracle to train "
                             f"with{derived}: it has neither a completion grammar nor a "
                             f"registered oracle method"
                             + (f", and no split grammar can describe it: {why} (declare "
                                f"kind = \"search\" in its [completion] table)" if why else
                                "; declare one in its [completion] table "
                                "(docs/oracle-tutorial.md)"))
        check_restart(getattr(options, "restart", None), oracle)
        check_settings(epochs=epochs, seed=seed)
        self.system, self.spine = system, spine
        self.oracle_name, self.options = oracle, options
        self.epochs, self.seed = int(epochs), int(seed)  # numpy's ints too, as JSON keeps them
        self.progress, self.log = progress, log or (lambda message: None)
        self._log_given = log is not None
        self.rng = seeded(seed)
        self.oracle = self.static = None  # the dynamic oracle; the canonical computation
        self.partial = False
        self._heads, self._viable_names = {}, frozenset()
        self.history = []
        self.dead_ends = 0  # sentences abandoned at dead ends (see the module's doc)
        self.over_budget = 0  # sentences left where the search oracle ran past its budget

    @property
    def trainer(self):
        """The method's name, one of :data:`TRAINERS` (recorded in the model)."""
        return self.options.name

    # -- helpers -------------------------------------------------------------

    def _gold_classes(self, model, state, moves, sent):
        """Correct classes: optimal moves, with the gold label when the arc is gold
        (LR-spine moves deeper than the model's spine depth have no class)."""
        out = []
        heads, labels = sent.heads, sent.labels
        for move in moves:
            if move not in model.classes_of_move:
                continue
            arc = state.arc(move)
            if arc is not None and heads[arc[1]] == arc[0] and labels[arc[1]] >= 0:
                name = model.machine.name(move)
                out.append(model.class_of[(name, model.labels[labels[arc[1]]])])
            else:
                out.extend(model.classes_of_move[move])
        return out

    def _beyond_model(self, model, state, moves, sent):
        """Follow an optimal move the model has no class for (LR-spine, deep spines)."""
        move = min(moves)
        arc = state.arc(move)
        label = sent.labels[arc[1]] if arc is not None and sent.heads[arc[1]] == arc[0] else 0
        state.do(move, max(label, 0))

    def _optimal(self, state, sent):
        """The optimal move codes; :class:`_DeadEnd` where there are none."""
        if self.static is not None:
            moves = self.static.optimal(state, sent)
        else:
            try:
                names, self._viable_names = oracle_moves(self.oracle, state, self._heads[sent],
                                                         self.partial)
            except OverBudget:
                raise _Unanswered from None
            moves = {state.machine.code(name) for name in names}
        if not moves:
            raise _DeadEnd
        return moves

    def _viable(self, model):
        """Per class, whether the last :meth:`_optimal` call (the dynamic
        oracle's, which exploration uses) scored its move above -inf: from
        there a final configuration is reachable."""
        return model.classes_with_moves(self._viable_names)

    # -- main loop -----------------------------------------------------------

    def run(self, trees, dev=None, nonproj="projectivize", partial=False):
        """Train on ``trees`` (:class:`~semiparse.treebank.data.Tree`); ``dev``
        for model selection; ``nonproj`` the policy for non-projective trees;
        ``partial``: trees may have unknown heads (-1), trained on with the
        dynamic oracle, which counts their known edges."""
        if nonproj == "oracle" and self.spine:
            raise ValueError("the LR-spine oracle is exact for projective trees only: "
                             "use --nonproj skip or projectivize")
        if partial and self.spine:
            raise ValueError("the LR-spine oracle is exact for complete trees only: "
                             "--partial needs a declared system")
        trees = prepare(trees, nonproj, self.oracle_name, self.log, partial,
                        builds_any_tree=self.system.completion_kind in ("search", "spanning"))
        labels = sorted(known_labels(trees))
        n_tokens = sum(len(t) for t in trees)
        options = self.options
        model = Model(self.system, labels, rda=isinstance(options, RDAOptions),
                      beam=options.size if isinstance(options, BeamOptions) else 1,
                      meta={"trainer": self.trainer, "oracle": self.oracle_name, "nonproj": nonproj,
                            "epochs": self.epochs, "seed": self.seed, "train_tokens": n_tokens,
                            "root_label": root_label(trees), "partial": partial})
        if isinstance(options, RDAOptions):
            w = model.weights
            w.rho, w.alpha = options.rho, options.alpha
            w.lam = options.lam if options.lam is not None else 1.0 / (20 * n_tokens)
        if self.oracle_name == "static":
            self.static = StaticOracle(self.system)
        else:
            budget = SEARCH_BUDGET if self.system.completion_kind == "search" else None
            self.oracle, self.partial = oracle(self.system, max_states=budget), partial
        sents = [model.sentence(t) for t in trees]
        self._heads = {s: gold_heads(s) for s in sents}
        self.t = 1.0  # perceptron clock (number of examples seen), for averaging
        sentence = {PerceptronOptions: self._perceptron_sentence, RDAOptions: self._rda_sentence,
                    BeamOptions: self._beam_sentence}[type(options)]
        # Goldberg and Nivre's exploration for the perceptron, Goldberg 2013's sampling for RDA
        self.exploration = Exploration(getattr(options, "explore_p", 0.0), self.rng,
                                       sample=isinstance(options, RDAOptions))
        order = list(range(len(sents)))
        for epoch in epochs(self.epochs, order, self.rng, progress=self.progress):
            self.exploration.on = (self.oracle_name == "dynamic"
                                   and epoch.number >= getattr(options, "explore_after", 0))
            cpu = time.process_time()
            for k, i in enumerate(epoch):
                try:
                    epoch.count(*sentence(model, sents[i]))
                except _DeadEnd:
                    epoch.dead()
                    continue
                except _Unanswered:
                    epoch.unanswered()
                    continue
                if k % 50 == 0:
                    epoch.show(acc=f"{epoch.accuracy:.2f}")
            epoch.check_learnt(len(order), f"{self.system.name}: every training sentence "
                               f"({epoch.dead_ends}) reached a dead end, a configuration from "
                               f"which no final one is reachable: nothing was learnt (semiparse "
                               f"check on the system's file shows such a configuration)")
            record = {"epoch": epoch.number + 1, "train_accuracy": epoch.accuracy,
                      "cpu_seconds": time.process_time() - cpu}
            if epoch.dead_ends:
                record["dead_ends"] = epoch.dead_ends
                self.dead_ends += epoch.dead_ends
            if epoch.over_budget:
                record["over_budget"] = epoch.over_budget
                self.over_budget += epoch.over_budget
            if dev is not None:
                snapshot = self._finished(model, copy=True)
                record.update(evaluate_model(snapshot, dev))
                if snapshot.dead_ends:
                    record["dev_dead_ends"] = snapshot.dead_ends
            self.history.append(record)
            log_record(self.log, record)
        self._finished(model)
        model.meta["history"] = self.history
        note_over_budget(self.over_budget, getattr(self.oracle, "max_states", None), self.log)
        if self.dead_ends:
            warn_dead_ends(f"{self.dead_ends} training sentence(s), counted once per epoch, "
                           f"reached a dead end of {self.system.name} (a configuration that is "
                           f"not final, from which no final configuration is reachable) and "
                           f"were abandoned for that epoch", self.log, self._log_given)
        return model

    def _finished(self, model, copy=False):
        """Final weights (averaged / RDA solution), in place or on a copy."""
        if copy:
            clone = Model(model.transition_system, model.labels, model.template_strings, beam=model.beam,
                          meta=model.meta)
            clone.weights = model.weights.snapshot(self.t)
            return clone
        model.weights.finalize(self.t)
        return model

    # -- greedy perceptron (Goldberg et al. 2014, Algorithm 2) -----------------

    def _greedy_start(self, model, sent):
        """The initial state of ``sent``, and buffers for the classes' scores
        and validity."""
        C = len(model.classes)
        return model.state(sent), np.empty(C), np.empty(C, dtype=np.uint8)

    def _perceptron_sentence(self, model, sent):
        state, scores, valid = self._greedy_start(model, sent)
        correct = steps = 0
        weights, templates, cls_move = model.weights, model.templates, model.cls_move
        viable = lambda: self._viable(model)
        while not state.is_final():
            feats = _core.step_scores(state, weights, templates, cls_move, scores, valid)
            moves = self._optimal(state, sent)
            gold = self._gold_classes(model, state, moves, sent)
            if not gold:
                self._beyond_model(model, state, moves, sent)
                continue
            step = self.exploration.step(scores, valid, gold, viable)
            steps += 1
            if step.right:
                correct += 1
            else:
                weights.perceptron_step(feats, step.best, step.predicted, self.t)
            self.t += 1
            model.apply(state, step.follow)
        return correct, steps

    # -- probabilistic (Goldberg 2013, Algorithms 2 and 3) ----------------------

    def _rda_sentence(self, model, sent):
        state, scores, valid = self._greedy_start(model, sent)
        C = len(scores)
        correct = steps = 0
        weights = model.weights
        viable = lambda: self._viable(model)
        while not state.is_final():
            feats = _core.step_scores(state, weights, model.templates, model.cls_move, scores, valid)
            moves = self._optimal(state, sent)
            p = model.probabilities(scores, valid.astype(bool))
            gold = self._gold_classes(model, state, moves, sent)
            if not gold:
                self._beyond_model(model, state, moves, sent)
                continue
            f = np.zeros(C)
            f[gold] = p[gold] / p[gold].sum() if p[gold].sum() > 0 else 1.0 / len(gold)
            weights.rda_update(feats, f - p)
            steps += 1
            step = self.exploration.step(p, valid, gold, viable)  # samples when exploring
            correct += step.right
            model.apply(state, step.follow)
        return correct, steps

    # -- global beam training (Aufrant et al. 2017) ----------------------------

    def _beam_sentence(self, model, sent):
        """Update on one sentence; with restart, until the sentence is parsed."""
        state = model.state(sent)
        maxv = self.options.update == "maxv"
        correct = steps = 0
        while True:
            positive, negative, n_steps, agreed = self._beam_oracle(model, sent, state, maxv)
            steps += n_steps
            correct += agreed
            if negative is None:  # the best final configuration is correct
                return correct, steps
            self._global_update(model, positive, negative)
            if self.options.restart == "none":
                return correct, steps
            state = (positive if self.options.restart == "positive" else negative).state
            if state.is_final():
                return correct, steps

    def _expand(self, model, item, scores, valid, need_oracle, sent):
        """Successors of a beam item: (score, item, class, feats, is_correct)."""
        state = item.state
        feats = _core.step_scores(state, model.weights, model.templates, model.cls_move, scores, valid)
        gold = set()
        if item.correct and need_oracle:
            gold = set(self._gold_classes(model, state, self._optimal(state, sent), sent))
        return [(item.score + scores[c], item, int(c), feats, c in gold) for c in np.flatnonzero(valid)]

    def _beam_oracle(self, model, sent, start, maxv):
        """Aufrant et al. 2017, Algorithm 2 (early update) or its max-violation variant.

        Returns (c+, c-, steps, steps where the beam's best was correct);
        c- is None when no update is needed.
        """
        C = len(model.classes)
        scores = np.empty(C)
        valid = np.empty(C, dtype=np.uint8)
        beam = [_Item(start, 0.0, True, None)]
        gold = beam[0]  # best correct configuration so far (max-violation)
        worst = None    # (violation, c+, c-)
        steps = agreed = 0
        while not all(item.state.is_final() for item in beam):
            candidates = []
            for item in beam:
                if item.state.is_final():
                    candidates.append((item.score, item, -1, None, item.correct))
                else:
                    candidates.extend(self._expand(model, item, scores, valid, True, sent))
            if not candidates:  # only wrong configurations can reach a dead end
                if maxv and worst is not None:  # the gold path fell off: its update stands
                    return worst[1], worst[2], steps, agreed
                raise _DeadEnd
            candidates.sort(key=lambda x: -x[0])
            top = candidates[: self.options.size]
            steps += 1
            if any(c[4] for c in top):
                beam = [_Item.make(model, c) for c in top]
                gold = next(i for i in beam if i.correct)
                agreed += beam[0].correct
                if maxv and not beam[0].correct:
                    v = beam[0].score - gold.score
                    if worst is None or v > worst[0]:
                        worst = (v, gold, beam[0])
                continue
            if not maxv:  # early update: the correct configurations fell off the beam
                best_correct = next((c for c in candidates if c[4]), None)
                positive = _Item.make(model, best_correct) if best_correct else gold
                return positive, _Item.make(model, top[0]), steps, agreed
            # max-violation: keep decoding; the gold path follows its best correct move
            beam = [_Item.make(model, c) for c in top]
            best_correct = next((c for c in candidates if c[4]), None)
            if best_correct is not None:
                gold = _Item.make(model, best_correct)
            elif not gold.state.is_final():
                succ = [c for c in self._expand(model, gold, scores, valid, True, sent) if c[4]]
                gold = _Item.make(model, max(succ, key=lambda x: x[0]))
            v = beam[0].score - gold.score
            if worst is None or v > worst[0]:
                worst = (v, gold, beam[0])
        if beam[0].correct:
            return beam[0], None, steps, agreed
        if maxv and worst is not None:
            return worst[1], worst[2], steps, agreed
        return gold, beam[0], steps, agreed

    def _global_update(self, model, positive, negative):
        for item, delta in ((positive, 1.0), (negative, -1.0)):
            node = item
            while node.parent is not None:
                model.weights.perceptron_update(node.feats, node.cls, delta, self.t)
                node = node.parent
        self.t += 1


class _Item:
    """A beam item: configuration, path score, CORRECT flag and back-pointer."""

    __slots__ = ("state", "score", "correct", "parent", "feats", "cls")

    def __init__(self, state, score, correct, parent, feats=None, cls=-1):
        self.state, self.score, self.correct = state, score, correct
        self.parent, self.feats, self.cls = parent, feats, cls

    @staticmethod
    def make(model, candidate):
        score, parent, cls, feats, correct = candidate
        if cls < 0:
            return parent
        state = parent.state.copy()
        model.apply(state, cls)
        return _Item(state, score, correct, parent, feats, cls)


def evaluate_model(model, trees, beam=None):
    """UAS/LAS (with and without punctuation) of a model on gold trees."""
    predicted = [model.parse(tree, beam=beam)[:2] for tree in trees]
    return attachment_scores(trees, predicted)
