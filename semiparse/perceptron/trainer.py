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

Each method's settings are one option object (:mod:`semiparse.train.options`).

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
from collections import Counter

import numpy as np

from semiparse._seeds import seeded
from semiparse.heads import check_tree
from semiparse.transitions import oracle
from semiparse.transitions.oracles.static import static_choice, static_rank
from semiparse.treebank.partial import check_partial_tree
from semiparse.train import _core
from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.systems.loading import load_system
from semiparse.transitions.oracles.methods import system_methods
from semiparse.train.model import Model
from semiparse.train.options import (BeamOptions, PerceptronOptions, RDAOptions, check_restart,
                                     check_settings, options_for)
from semiparse.train.evaluate import attachment_scores
from semiparse.errors import DeadEndWarning

ORACLES = ("static", "nondet", "dynamic")
NONPROJ = ("skip", "projectivize", "oracle")
# What a training tree whose only fault is unknown heads (-1) is told (check_heads)
PARTIAL_HINT = "train on partial trees with partial=True"


def bar_off(progress):
    """tqdm's ``disable`` for a trainer's progress bar (``progress``: one
    was asked for): None, which tqdm takes for a bar on a terminal only, so
    that a log file or CI gets the one line per epoch the trainers log, not
    the bar's carriage-return updates (about 1 MB a run)."""
    return None if progress else True


class DynamicOracle:
    """The project's dynamic oracle (:func:`semiparse.oracle`) as sets of move
    codes; ``partial``: gold trees may have unknown heads (-1), and sigma
    counts the known gold edges."""

    def __init__(self, system, partial=False):
        self.system, self.partial = system, partial
        self.oracle = oracle(system)
        self.needs_arcs = self.oracle.system.needs_arcs
        self._sentence = self._heads = None
        self.viable = frozenset()  # names the last call scored above -inf

    def optimal_names(self, state, sent):
        """The transitions of maximal score; none in a dead end, where no
        transition leads to a final configuration (no score is finite)."""
        if sent is not self._sentence:  # the oracle keys its per-tree cache on a tuple
            self._sentence, self._heads = sent, tuple(sent.heads.tolist())
        scores = self.oracle.scores(state.stack, state.buffer, self._heads,
                                    state.arcs if self.needs_arcs else None, partial=self.partial)
        self.viable = frozenset(t for t, v in scores.items() if v > -math.inf)
        top = max(scores.values(), default=-math.inf)
        return {t for t, v in scores.items() if v == top} if top > -math.inf else set()

    def optimal(self, state, sent):
        return {state.machine.code(name) for name in self.optimal_names(state, sent)}


class _DeadEnd(Exception):
    """The configuration being trained on is a dead end."""


class StaticOracle:
    """The canonical computation (:mod:`semiparse.transitions.oracles.static`): in each
    configuration the first optimal move in the system's static order.

    Training with it follows that computation, so the moves of each sentence
    are computed once (one dynamic-oracle call per step) and replayed in later
    epochs; a configuration off the recorded path (told by its step number
    and fingerprint) asks the dynamic oracle again.
    """

    def __init__(self, system):
        self.dynamic = DynamicOracle(system)
        self.rank = static_rank(self.dynamic.oracle.system)
        self._paths = {}

    def move(self, state, sent):
        """The canonical move code at state, or -1 if there is none (final)."""
        name = static_choice(self.rank, self.dynamic.optimal_names(state, sent))
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


def check_heads(trees, partial=False, partial_hint=PARTIAL_HINT):
    """ValueError naming the first of ``trees`` whose heads are not a tree (a
    partial tree with ``partial``): its index, FILE:LINE and sent_id; where
    unknown heads (-1) are all that is wrong, it adds ``partial_hint`` (by
    default the perceptron trainers' ``partial=True``)."""
    for i, tree in enumerate(trees):
        try:
            (check_partial_tree if partial else check_tree)(tree.heads)
        except ValueError as exc:
            hint = (f"; -1 is an unknown head: {partial_hint}"
                    if not partial and _is_partial_tree(tree.heads) else "")
            raise ValueError(f"{_tree_name(tree, i)}: {exc}{hint}") from None


def _is_partial_tree(heads):
    try:
        check_partial_tree(heads)
    except ValueError:
        return False
    return True


def _tree_name(tree, index):
    """``training tree INDEX``, with its FILE:LINE and sent_id where known."""
    if tree.source is None:
        return f"training tree {index}"
    ids = [c.split("=", 1)[1].strip() for c in tree.source.comments()
           if c.startswith("# sent_id") and "=" in c]
    return f"training tree {index} ({tree.where}" + (f", sent_id {ids[0]}" if ids else "") + ")"


def prepare(trees, nonproj, oracle, log=None, partial=False, partial_hint=PARTIAL_HINT):
    """The training trees after the ``--nonproj`` policy (new list; heads may
    change).  With ``partial``, a tree with unknown heads (-1) is kept as it
    is, whatever the policy: the dynamic oracle is exact for it, projective
    or not, and counts its known edges.  Heads that are not a tree are a
    ValueError naming the tree (:func:`check_heads`, with ``partial_hint``)."""
    from semiparse.treebank.projectivity import is_projective, projectivize

    if nonproj not in NONPROJ:
        raise ValueError(f"nonproj must be one of {', '.join(NONPROJ)}, not {nonproj!r}")
    if nonproj == "oracle" and oracle == "static":
        raise ValueError("the static oracle needs projective trees: use --nonproj skip or projectivize")
    if partial and oracle == "static":
        raise ValueError("the static oracle needs complete trees: use --oracle dynamic or nondet "
                         "with --partial")
    if not trees:
        raise ValueError("no training trees given")
    check_heads(trees, partial, partial_hint)
    out, n_nonproj, n_partial = [], 0, 0
    for tree in trees:
        if partial and any(h < 0 for h in tree.heads[1:]):
            n_partial += 1
            out.append(tree)
            continue
        if is_projective(tree.heads):
            out.append(tree)
            continue
        n_nonproj += 1
        if nonproj == "skip":
            continue
        if nonproj == "projectivize":
            heads = projectivize(tuple(tree.heads), tie_break="closest")
            tree = type(tree)(tree.forms, tree.tags, list(heads), tree.labels, tree.source)
        out.append(tree)
    if log:
        action = {"skip": "skipped", "projectivize": "projectivized", "oracle": "kept"}[nonproj]
        log(f"{len(trees)} training trees, {n_nonproj} non-projective ({action})"
            + (f", {n_partial} partial (kept)" if partial else ""))
    if not out:
        # the policy is skip (subset for the neural trainer); every trainer projectivizes
        raise ValueError("no training trees left: all are non-projective and skipped (--nonproj "
                         "projectivize keeps them)")
    return out


def known_labels(trees):
    """The labels of the training words, counted: in a partial tree the
    DEPREL ``_`` of a word whose head is unknown says that its label is
    unknown too, so it is no label to learn (a known head's ``_`` is one:
    unlabelled treebanks round-trip).  ValueError if there are none."""
    labels = Counter(t.labels[d] for t in trees for d in range(1, len(t) + 1)
                     if t.heads[d] >= 0 or t.labels[d] != "_")
    if not labels:
        raise ValueError("no word of the training trees has a known head or label: nothing "
                         "to learn" if any(len(t) for t in trees)
                         else "the training trees have no words")
    return labels


def root_label(trees):
    """The label parses give the words they attach to the root
    (:attr:`Model.root_label`): the most common label of the training words
    whose head is 0; where no head 0 is known (partial trees), ``root`` (UD's)
    if a training word has it, else the most common of :func:`known_labels`."""
    roots = Counter(t.labels[d] for t in trees for d in range(1, len(t) + 1) if t.heads[d] == 0)
    if not roots:
        roots = known_labels(trees)
        if "root" in roots:
            return "root"
    return roots.most_common(1)[0][0]


class Trainer:
    """One training run; :meth:`run` returns the finished :class:`Model`.

    ``system``: a name, TOML path, ``module:attr`` or system object;
    ``oracle``: one of :data:`ORACLES`; ``options``: the training method and
    its settings, :class:`PerceptronOptions` (default), :class:`RDAOptions`
    or :class:`BeamOptions` (:mod:`semiparse.train.options`).
    """

    def __init__(self, system="arc_standard", oracle="dynamic", options=None, epochs=10, seed=0,
                 *, progress=True, log=None, **settings):
        if isinstance(options, str) or settings:  # the keywords of the previous signature
            warnings.warn("Trainer's trainer=, beam=, explore_after=, explore_p=, rho=, alpha=, "
                          "lam= and restart= are PerceptronOptions, RDAOptions and BeamOptions "
                          "(semiparse.train.options); the keywords will be removed in the next "
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
        if system.grammar is None and not system_methods(system):
            # Oracle says so only at the first gold tree, after the data was read
            derived = " (the static oracle is derived from it)" if oracle == "static" else ""
            why = getattr(system, "not_split", None)
            raise ValueError(f"transition system {system.name!r} has no dynamic oracle to train "
                             f"with{derived}: it has neither a completion grammar nor a "
                             f"registered oracle method"
                             + (f", and no split grammar can describe it: {why}" if why else
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
        self.oracle = None
        self.history = []
        self.dead_ends = 0  # sentences abandoned at dead ends (see the module's doc)

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
        moves = self.oracle.optimal(state, sent)
        if not moves:
            raise _DeadEnd
        return moves

    def _viable(self, model):
        """Per class, whether the last :meth:`_optimal` call (the dynamic
        oracle's, which exploration uses) scored its move above -inf: from
        there a final configuration is reachable."""
        return model.classes_with_moves(self.oracle.viable)

    # -- main loop -----------------------------------------------------------

    def run(self, trees, dev=None, nonproj="projectivize", partial=False):
        """Train on ``trees`` (:class:`~semiparse.train.data.Tree`); ``dev``
        for model selection; ``nonproj`` the policy for non-projective trees;
        ``partial``: trees may have unknown heads (-1), trained on with the
        dynamic oracle, which counts their known edges."""
        from tqdm import tqdm

        if nonproj == "oracle" and self.spine:
            raise ValueError("the LR-spine oracle is exact for projective trees only: "
                             "use --nonproj skip or projectivize")
        if partial and self.spine:
            raise ValueError("the LR-spine oracle is exact for complete trees only: "
                             "--partial needs a declared system")
        trees = prepare(trees, nonproj, self.oracle_name, self.log, partial)
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
        self.oracle = (StaticOracle(self.system) if self.oracle_name == "static"
                       else DynamicOracle(self.system, partial))
        sents = [model.sentence(t) for t in trees]
        self.t = 1.0  # perceptron clock (number of examples seen), for averaging
        order = list(range(len(sents)))
        for epoch in range(self.epochs):
            self.rng.shuffle(order)
            bar = tqdm(order, desc=f"epoch {epoch + 1}/{self.epochs}", unit="sent", leave=False,
                       disable=bar_off(self.progress))
            correct = total = dead_ends = 0
            cpu = time.process_time()
            for k, i in enumerate(bar):
                try:
                    if isinstance(options, PerceptronOptions):
                        c, n = self._perceptron_sentence(model, sents[i], epoch)
                    elif isinstance(options, RDAOptions):
                        c, n = self._rda_sentence(model, sents[i], epoch)
                    else:
                        c, n = self._beam_sentence(model, sents[i], epoch)
                except _DeadEnd:
                    dead_ends += 1
                    continue
                correct += c
                total += n
                if k % 50 == 0:
                    bar.set_postfix(acc=f"{100.0 * correct / max(total, 1):.2f}")
            bar.close()
            if dead_ends == len(order):
                raise ValueError(f"{self.system.name}: every training sentence ({dead_ends}) "
                                 f"reached a dead end, a configuration from which no final one "
                                 f"is reachable: nothing was learnt (semiparse check on the "
                                 f"system's file shows such a configuration)")
            record = {"epoch": epoch + 1, "train_accuracy": 100.0 * correct / max(total, 1),
                      "cpu_seconds": time.process_time() - cpu}
            if dead_ends:
                record["dead_ends"] = dead_ends
                self.dead_ends += dead_ends
            if dev is not None:
                snapshot = self._finished(model, copy=True)
                record.update(evaluate_model(snapshot, dev))
                if snapshot.dead_ends:
                    record["dev_dead_ends"] = snapshot.dead_ends
            self.history.append(record)
            self.log(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                              for k, v in record.items()))
        self._finished(model)
        model.meta["history"] = self.history
        if self.dead_ends:
            self._warn(f"{self.dead_ends} training sentence(s), counted once per epoch, "
                       f"reached a dead end of {self.system.name} (a configuration that is not "
                       f"final, from which no final configuration is reachable) and were "
                       f"abandoned for that epoch")
        return model

    def _warn(self, message):
        """Report through ``log``, or as a :class:`DeadEndWarning` without one."""
        if self._log_given:
            self.log(f"warning: {message}")
        else:
            warnings.warn(message, DeadEndWarning, stacklevel=3)

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

    def _greedy_start(self, model, sent, epoch):
        """The initial state of ``sent``, buffers for the classes' scores and
        validity, and whether this epoch explores (the dynamic oracle, from
        epoch ``explore_after`` on)."""
        C = len(model.classes)
        explore = self.oracle_name == "dynamic" and epoch >= self.options.explore_after
        return model.state(sent), np.empty(C), np.empty(C, dtype=np.uint8), explore

    def _perceptron_sentence(self, model, sent, epoch):
        state, scores, valid, explore = self._greedy_start(model, sent, epoch)
        correct = steps = 0
        weights, templates, cls_move = model.weights, model.templates, model.cls_move
        while not state.is_final():
            feats = _core.step_scores(state, weights, templates, cls_move, scores, valid)
            masked = np.where(valid, scores, -np.inf)
            predicted = int(np.argmax(masked))
            moves = self._optimal(state, sent)
            gold = self._gold_classes(model, state, moves, sent)
            if not gold:
                self._beyond_model(model, state, moves, sent)
                continue
            best_gold = gold[int(np.argmax(masked[gold]))]
            steps += 1
            if predicted in gold:
                correct += 1
            else:
                weights.perceptron_step(feats, best_gold, predicted, self.t)
            self.t += 1
            if (explore and predicted not in gold and self._viable(model)[predicted]
                    and self.rng.random() < self.options.explore_p):
                model.apply(state, predicted)
            else:
                model.apply(state, best_gold)
        return correct, steps

    # -- probabilistic (Goldberg 2013, Algorithms 2 and 3) ----------------------

    def _rda_sentence(self, model, sent, epoch):
        state, scores, valid, sample = self._greedy_start(model, sent, epoch)
        C = len(scores)
        correct = steps = 0
        weights = model.weights
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
            predicted = int(np.argmax(p))
            correct += predicted in gold
            if sample:
                q = np.where(self._viable(model), p, 0.0)  # never into a dead end
                nxt = int(np.searchsorted(np.cumsum(q), self.rng.random() * q.sum()))
                nxt = min(nxt, C - 1)
                if not q[nxt] > 0:
                    nxt = gold[int(np.argmax(p[gold]))]
            else:
                nxt = gold[int(np.argmax(p[gold]))]
            model.apply(state, nxt)
        return correct, steps

    # -- global beam training (Aufrant et al. 2017) ----------------------------

    def _beam_sentence(self, model, sent, epoch):
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
