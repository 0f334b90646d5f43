"""A trained neural parser: its system, vocabularies, options and network."""
import numpy as np
import torch

from semiparse.transitions.systems.compiled import System
from semiparse.transitions.oracles.viability import Viability
from semiparse.perceptron.model import unseen_labels
from semiparse.neural.features import FeatureReader, default_positions
from semiparse.neural.lockstep import Transitions, parse_batch
from semiparse.neural.model import Network
from semiparse.training import single_root


def neural_system(spec):
    """The :class:`semiparse.transitions.systems.compiled.System` of ``spec`` (a name, file,
    ``module:attr`` or definition); ValueError for one the parser cannot
    use (transition families, as LR-spine's, have no fixed output columns)."""
    system = spec if isinstance(spec, System) else System(spec)
    if any(t.endswith("_K") for t in system.transitions):
        raise ValueError(f"the neural parser needs a system with a fixed set of transitions; "
                         f"{system.name} has families {', '.join(system.transitions)}")
    return system


class NeuralModel:
    """The parser of ``semiparse train --model bilstm``: a transition system
    (any declared one with a fixed set of transitions), the vocabularies, the
    options, and the network.  ``meta`` holds ``root_label`` (given to
    words a system leaves headless), ``nonproj`` and the training history."""

    def __init__(self, system, vocab, options, meta=None):
        self.api = neural_system(system)
        self.transition_system = self.api.definition
        self.system = self.api.name
        self.vocab, self.options = vocab, options
        self.labels = vocab.labels
        self.label_index = vocab.label_index
        self.meta = dict(meta or {})
        if not self.labels:
            raise ValueError("its vocab has no labels")
        self.root_label = self.meta.get("root_label", self.labels[0])
        if self.root_label not in self.label_index:
            raise ValueError(f"root label {self.root_label!r} is not among the labels")
        self.positions = options.features or default_positions(self.transition_system)
        self.reader = FeatureReader(self.positions)
        self.transitions = Transitions(self.api)
        self.net = Network(options, vocab, len(self.reader), len(self.transitions))
        self.dead_ends = 0  # sentences whose greedy parse reached a dead end (see parse)
        self._viability = None

    def unseen_labels(self, tree):
        """``FILE:LINE: ...`` messages for annotated labels the model cannot
        predict: those of a model trained with ``--nonproj encode`` are its
        labels decoded (``nmod`` for ``nmod||obj``), as its parses are."""
        from semiparse.treebank.encoding import parse_label

        known = set(self.labels)
        if self.meta.get("nonproj") == "encode":
            known = set()
            for label in self.labels:
                try:
                    known.add(parse_label(label).base)
                except ValueError:  # decoding leaves it as it is
                    known.add(label)
        return unseen_labels(tree, known)

    def to(self, device):
        """Put the network on ``device`` (``cpu`` or ``cuda[:N]``; ValueError
        for one torch does not find)."""
        from semiparse.neural import check_device

        check_device(str(device))
        self.net.to(torch.device(device))
        return self

    def parse(self, trees, batch_size=64, with_dead_ends=False, root="single"):
        """``(heads, labels)`` of each tree (:class:`semiparse.treebank.data.Tree`):
        ``heads[0] == -1``, ``labels[0] is None``.  The words left without a
        head are attached to the root with ``root_label`` (arc-eager leaves on
        the stack), so the output is always a tree.

        ``root="single"`` (the default) gives each sentence exactly one word
        attached to the root, as Universal Dependencies requires and the
        CoNLL 2018 scorer checks (:mod:`semiparse.training.single_root`): for
        a system where it is exact (:meth:`single_root_exact`: arc-standard,
        arc-hybrid, their swap versions, ...) the decoder lets the root take a
        child only as the last edge, when every other word has a head; for
        the others (arc-eager, ...) the parse is repaired after decoding: the
        root keeps the child to which the label MLP gives the highest
        probability of ``root_label`` on the edge from the root, and its
        other children are attached to that word, each labelled with its
        best label other than ``root_label``.  ``root="any"`` keeps the parse
        as the model made it, for treebanks that allow several root
        children.

        A sentence whose greedy
        parse reaches a dead end (a configuration that is not final and from
        which no final one is reachable, which some declared systems have) is
        parsed again with the viable transitions only, as the perceptron's
        (:meth:`semiparse.perceptron.Model.parse`); :attr:`dead_ends` counts them
        (``with_dead_ends``: each parse is ``(heads, labels, whether it
        reached one)``).  A model trained with ``--nonproj encode`` decodes
        its labels (``semiparse.treebank.encoding``)."""
        from semiparse.treebank.encoding import decode

        if (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                or batch_size < 1):
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        single = single_root.check_root(root) == "single"
        one_root = {"rule": single and self.single_root_exact(),
                    "root_label": self.label_index[self.root_label] if single else None}
        out = []
        for first in range(0, len(trees), batch_size):
            chunk = trees[first:first + batch_size]
            ids = [self.vocab.sentence(t) for t in chunk]
            parses = list(parse_batch(self.net, ids, self.transitions, self.reader, **one_root))
            stuck = [i for i, (_, _, finished) in enumerate(parses) if not finished]
            if stuck:  # again, keeping to the transitions that can still finish
                if self._viability is None:
                    self._viability = Viability(self.transition_system)
                try:
                    again = parse_batch(self.net, [ids[i] for i in stuck], self.transitions,
                                        self.reader, self._viability, **one_root)
                except ValueError:  # no oracle method applies: the trees are finished as they are
                    again = [parses[i] for i in stuck]
                for i, (arcs, label_ids, _) in zip(stuck, again):
                    parses[i] = (arcs, label_ids, False)
            for arcs, label_ids, finished in parses:
                self.dead_ends += not finished
                heads = [-1] + [h if h >= 0 else 0 for h in arcs[1:]]
                labels = [None] + [self.labels[l] if l >= 0 else self.root_label
                                   for l in label_ids[1:]]
                if self.meta.get("nonproj") == "encode":
                    decoded = decode(heads, labels, strict=False)
                    heads, labels = list(decoded.heads), list(decoded.labels)
                out.append((heads, labels, not finished) if with_dead_ends else (heads, labels))
        return out

    def single_root_exact(self):
        """Whether single-root decoding constrains this model's system exactly
        (:func:`semiparse.training.single_root.exact`; else parses are
        repaired)."""
        return single_root.exact(self.transition_system)

    def finite(self):
        """Whether every weight is a finite number."""
        return all(bool(torch.isfinite(p).all()) for p in self.net.state_dict().values()
                   if p.is_floating_point())

    def n_parameters(self):
        return int(sum(np.prod(p.shape) for p in self.net.parameters()))
