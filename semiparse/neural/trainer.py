"""Training runs of the neural parser: epochs of lockstep minibatches, dev-set
model selection (best LAS), seeds, progress bars, checkpoints to resume from.

Non-projective training trees (``Options.nonproj``), as for the perceptron
(:func:`semiparse.training.trees.prepare`): ``oracle`` keeps them (the dynamic oracle
is exact for any gold tree), ``projectivize`` replaces them by an optimal
projectivization, ``encode`` does the same and records in their labels how
to undo it (``semiparse.treebank.encoding``, the ``head`` encoding; parses are
decoded), ``subset`` drops them.
"""
import copy
import math
import time

import torch

from semiparse._support.seeds import seeded
from semiparse.treebank.scoring import attachment_scores
from semiparse.training.loop import epochs, log_record, note_over_budget, warn_dead_ends
from semiparse.training.trees import check_heads, prepare, root_label
from semiparse.neural import check_device
from semiparse.neural.lockstep import Example, Policy, TrainingOracle, lockstep_loss
from semiparse.neural.options import Options
from semiparse.neural.parser import NeuralModel, neural_system
from semiparse.neural.vocab import Vocab

# Why a tree with unknown heads is refused (the perceptron trainers take them)
COMPLETE_ONLY = "the neural trainer reads complete trees"


def training_trees(trees, nonproj, oracle, log=None, builds_any_tree=False):
    """The training trees after the ``nonproj`` policy (a new list);
    ``builds_any_tree``: the system builds non-projective trees, so its
    static oracle (the first optimal move) follows them as they are."""
    if nonproj != "encode":
        return prepare(trees, {"subset": "skip"}.get(nonproj, nonproj), oracle, log,
                       partial_hint=COMPLETE_ONLY, builds_any_tree=builds_any_tree)
    from semiparse.treebank.encoding import EncodingError, encode
    from semiparse.treebank.projectivity import is_projective, projectivize

    if not trees:
        raise ValueError("no training trees given")
    check_heads(trees, partial_hint=COMPLETE_ONLY)
    out, n_nonproj = [], 0
    for tree in trees:
        if is_projective(tree.heads):
            out.append(tree)
            continue
        n_nonproj += 1
        heads = list(projectivize(tuple(tree.heads), tie_break="closest"))
        try:
            labels = encode(tree.heads, heads, tree.labels, "head")
        except EncodingError as exc:
            where = tree.source.file if tree.source is not None else "<tree>"
            raise ValueError(f"{where}:{tree.line_of(exc.word)}: {exc.reason}") from None
        out.append(type(tree)(tree.forms, tree.tags, heads, labels, tree.source))
    if log:
        log(f"{len(trees)} training trees, {n_nonproj} non-projective (projectivized, encoded)")
    return out


class NeuralTrainer:
    """One training run; :meth:`run` returns the :class:`NeuralModel` of the
    epoch with the best dev LAS (the last epoch without dev trees).

    ``checkpoint``: a file written after every epoch (the model so far, the
    optimizer, the random states and the history) from which ``resume``
    continues a run that stopped; the options, the training trees and the
    dev trees must be the same."""

    def __init__(self, system="arc_standard", options=None, progress=True, log=None,
                 checkpoint=None, resume=None):
        self.options = options if options is not None else Options()
        self.system = neural_system(system)  # checked before any data is read
        o = self.options
        self.any_tree = self.system.definition.completion_kind in ("search", "spanning")
        if o.nonproj == "oracle" and o.oracle == "static" and not self.any_tree:
            raise ValueError(f"the static oracle needs projective trees ({self.system.name} "
                             f"builds no other): use --nonproj projectivize, encode or subset")
        check_device(self.options.device)
        self.progress = progress
        self.log = log or (lambda message: None)
        self._log_given = log is not None
        self.checkpoint, self.resume = checkpoint, resume
        self.model = self.oracle = None
        self.history = []
        self.dead_ends = 0  # sentences left out at dead ends, counted once per epoch
        self.over_budget = 0  # sentences left where the search oracle ran past its budget

    def examples(self, model, trees):
        index = model.label_index
        return [Example(model.vocab.sentence(t), tuple(t.heads),
                        [-1] + [index[l] for l in t.labels[1:]], len(t)) for t in trees]

    def run(self, trees, dev=None):
        from semiparse.neural import io

        o = self.options
        torch.manual_seed(o.seed % 2**64)  # torch's 64 bits (where it maps a negative seed the same)
        rng = seeded(o.seed)
        given, trees = trees, training_trees(trees, o.nonproj, o.oracle, self.log, self.any_tree)
        train_record, dev_record = io.data_record(given), io.data_record(dev)
        meta = {"oracle": o.oracle, "nonproj": o.nonproj, "root_label": root_label(trees),
                "train_sentences": len(trees), "train_tokens": sum(len(t) for t in trees)}
        model = self.model = NeuralModel(self.system, Vocab.build(trees), o, meta).to(o.device)
        optimizer = torch.optim.Adam(model.net.parameters(), lr=o.lr)
        first, best = 0, (-1.0, None)
        examples = self.examples(model, trees)
        order = list(range(len(examples)))
        if self.resume is not None:
            first, best, order = io.restore_checkpoint(self.resume, model, optimizer, rng,
                                                       self.history, len(examples), train_record,
                                                       dev_record)
            self.log(f"resuming {self.resume} after epoch {first}")
        self.oracle = TrainingOracle(model.api, model.transitions, o.oracle, threads=o.oracle_threads)
        policy = Policy(o.oracle, o.explore_p, rng)
        for epoch in epochs(o.epochs, order, rng, first=first, batch_size=o.batch_size,
                            progress=self.progress, unit="batch"):
            policy.explore = o.oracle == "dynamic" and epoch.number >= o.explore_after
            total = 0
            start, oracle_start = time.perf_counter(), self.oracle.seconds
            model.net.train()
            for batch in epoch:
                optimizer.zero_grad()
                losses = lockstep_loss(model.net, [examples[i] for i in batch], model.transitions,
                                       self.oracle, model.reader, policy, o.loss)
                loss = float(losses.loss.detach())
                (losses.loss / len(batch)).backward()
                try:
                    optimizer.step()
                except RuntimeError as exc:   # a step beyond what a float holds
                    if "overflow" not in str(exc):
                        raise
                    loss = math.inf
                _check_finite(model.net, loss, epoch.number)
                total += loss
                epoch.count(losses.correct, losses.configurations)
                epoch.dead(losses.dead_ends, losses.dead_end)
                epoch.unanswered(losses.over_budget)
                epoch.show(loss=f"{total / max(epoch.total, 1):.4f}", acc=f"{epoch.accuracy:.2f}")
            epoch.check_learnt(len(order), f"{model.system}: every training sentence "
                               f"({epoch.dead_ends}) reached a dead end, a configuration from "
                               f"which no final one is reachable, e.g. {epoch.dead_end} (the "
                               f"initial configuration): nothing was learnt (semiparse check on "
                               f"the system's file shows such configurations)")
            record = {"epoch": epoch.number + 1, "loss": total / max(epoch.total, 1),
                      "train_accuracy": epoch.accuracy,
                      "seconds": time.perf_counter() - start,
                      "oracle_seconds": self.oracle.seconds - oracle_start}
            if epoch.dead_ends:
                record["dead_ends"] = epoch.dead_ends
                self.dead_ends += epoch.dead_ends
            if epoch.over_budget:
                record["over_budget"] = epoch.over_budget
                self.over_budget += epoch.over_budget
            if dev is not None:
                record.update(attachment_scores(dev, model.parse(dev)))
            score = record.get("las", epoch.number)
            if score > best[0]:
                best = (score, copy.deepcopy(model.net.state_dict()))
                record["best"] = True
            self.history.append(record)
            log_record(self.log, record)
            if self.checkpoint is not None:
                io.save_checkpoint(self.checkpoint, model, optimizer, epoch.number + 1, best, rng, order,
                                   self.history, train_record, dev_record)
        if best[1] is not None:
            model.net.load_state_dict(best[1])
        model.meta["history"] = self.history
        model.meta["best_epoch"] = next((r["epoch"] for r in reversed(self.history) if r.get("best")),
                                        None)
        note_over_budget(self.over_budget, self.oracle.oracle.max_states, self.log)
        if self.dead_ends:
            message = (f"{self.dead_ends} training sentence(s), counted once per epoch, started "
                       f"in a dead end of {model.system} (a configuration that is not final, "
                       f"from which no final configuration is reachable) and were left out")
            warn_dead_ends(message, self.log, self._log_given)
        return model


def _check_finite(net, loss, epoch):
    """ValueError where a step left the loss or a weight NaN or infinite: the
    run has diverged, and a model of such weights would be saved, then
    refused by every loader.  One reduction over all weights, read once (on a
    GPU, one synchronization a step, not one per weight tensor)."""
    if math.isfinite(loss) and bool(torch.stack([torch.isfinite(p).all()
                                                 for p in net.parameters()]).all()):
        return
    what = f"the loss is {loss}" if not math.isfinite(loss) else "a weight is not finite"
    raise ValueError(f"training diverged in epoch {epoch + 1}: {what} (a smaller --lr may "
                     f"help); no model was saved")
