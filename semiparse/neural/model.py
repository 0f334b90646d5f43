"""The network and its losses: encoder, transition MLP, label MLP on the edge.

* transitions: the encoder vectors of the feature positions (a learned
  vector where a position is empty), concatenated, through an MLP with one
  tanh hidden layer to one unlabelled score per transition of the system
  (Kiperwasser and Goldberg 2016);
* labels: an MLP with one tanh hidden layer over the head's and the
  dependent's vectors of the edge a transition adds, one score per label.
  The label does not change which transitions are legal or optimal, so the
  edges are labelled after the transitions are chosen.

Losses, per configuration (``legal`` and ``optimal`` boolean masks over the
transitions, ``optimal`` within ``legal`` and not empty):

* ``hinge`` (Kiperwasser and Goldberg 2016): ``max(0, 1 - max_{t optimal}
  s_t + max_{t legal, not optimal} s_t)``, 0 if every legal transition is
  optimal; for labels the same margin between the gold label and the best
  other label;
* ``nll`` (Goldberg 2013): ``-log sum_{t optimal} softmax_legal(s)_t``, the
  log-likelihood of the set of optimal transitions; for labels the
  cross-entropy of the gold label.
"""
import torch
from torch import nn

from semiparse.neural.encoder import Encoder


class Network(nn.Module):
    """Encoder, the "empty" vector, the transition MLP and the label MLP."""

    def __init__(self, options, vocab, n_features, n_transitions):
        super().__init__()
        self.encoder = Encoder(options, vocab)
        dim = self.encoder.dim
        self.empty = nn.Parameter(torch.randn(dim) * 0.1)
        self.transitions = nn.Sequential(nn.Linear(n_features * dim, options.hidden_dim), nn.Tanh(),
                                         nn.Linear(options.hidden_dim, n_transitions))
        self.labels = nn.Sequential(nn.Linear(2 * dim, options.label_hidden_dim), nn.Tanh(),
                                    nn.Linear(options.label_hidden_dim, len(vocab.labels)))

    @property
    def device(self):
        return self.empty.device

    def encode(self, sentences):
        """``(H, starts)``: the encoder's rows with the empty vector as the last
        row (its index is ``len(H) - 1``), and each sentence's first row."""
        vectors, starts = self.encoder(sentences)
        return torch.cat([vectors, self.empty[None]], dim=0), starts

    def transition_scores(self, H, rows):
        """Scores ``(len(rows), T)`` from an int64 array of feature rows of H."""
        index = torch.as_tensor(rows, device=H.device)
        return self.transitions(H[index].reshape(len(rows), -1))

    def label_scores(self, H, heads, deps):
        """Scores ``(len(heads), L)`` of the edges ``H[heads[i]] -> H[deps[i]]``."""
        heads = torch.as_tensor(heads, device=H.device, dtype=torch.long)
        deps = torch.as_tensor(deps, device=H.device, dtype=torch.long)
        return self.labels(torch.cat([H[heads], H[deps]], dim=1))


def transition_loss(kind, scores, legal, optimal):
    """Per-row losses (see the module doc) for boolean masks of ``scores``' shape."""
    if kind == "nll":
        return (torch.logsumexp(scores.masked_fill(~legal, -torch.inf), dim=1)
                - torch.logsumexp(scores.masked_fill(~optimal, -torch.inf), dim=1))
    best = scores.masked_fill(~optimal, -torch.inf).max(dim=1).values
    wrong = legal & ~optimal
    has_wrong = wrong.any(dim=1)
    worst = scores.masked_fill(~wrong, -torch.inf).max(dim=1).values
    margin = torch.relu(1 - best + torch.where(has_wrong, worst, best.detach()))
    return torch.where(has_wrong, margin, torch.zeros_like(margin))


def label_loss(kind, scores, gold):
    """Per-edge losses of label ``scores`` ``(E, L)`` against gold label ids ``(E,)``."""
    gold = torch.as_tensor(gold, device=scores.device, dtype=torch.long)
    if kind == "nll":
        return nn.functional.cross_entropy(scores, gold, reduction="none")
    right = scores.gather(1, gold[:, None])[:, 0]
    others = scores.scatter(1, gold[:, None], -torch.inf).max(dim=1).values
    return torch.relu(1 - right + others)
