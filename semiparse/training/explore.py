"""The exploration step of training with a dynamic oracle.

Goldberg and Nivre (2012, 2013): in each configuration the model's best
optimal transition is the update target; the parser follows it, or, with
exploration on (after some epochs), follows the model's own prediction when
that is not optimal, with probability ``p``.  Goldberg (2013) explores by
sampling the next transition from the model's distribution instead
(``sample=True``, the RDA trainer).  Exploring never enters a dead end: a
transition that the oracle scores -inf (not *viable*: no final configuration
is reachable after it) is never followed.

The scoring and the update are the parser's: :meth:`Exploration.step` takes
one configuration's class scores, legal classes and optimal classes (the
perceptron, RDA, and the constituent parser), :meth:`Exploration.rows` the
rows of a lockstep batch (the neural trainer).  Both draw from the run's
generator only where the rule needs a draw, in the same order, so that a
seed gives the same run.
"""
from dataclasses import dataclass

import numpy as np


@dataclass
class Step:
    """One configuration's choice: the class ``follow``\\ ed, the model's
    prediction (best legal class), its best optimal class (the update's
    target), and whether the prediction is optimal."""

    follow: int
    predicted: int
    best: int
    right: bool


class Exploration:
    """Which transition a training configuration takes.

    ``p``: the probability of following a wrong prediction; ``rng``: the
    run's generator (``random()``); ``sample``: explore by sampling from the
    model's distribution (the scores are probabilities) rather than by
    following its prediction.  :attr:`on` says whether this epoch explores
    (the trainers set it: the dynamic oracle, from epoch ``explore_after``
    on); while it is off the best optimal class is followed."""

    def __init__(self, p, rng, sample=False):
        self.p, self.rng, self.sample = p, rng, sample
        self.on = False

    def _wanders(self):
        """Whether a wrong, viable prediction is followed (one draw)."""
        return self.rng.random() < self.p

    def step(self, scores, legal, optimal, viable=None):
        """The :class:`Step` of one configuration.

        ``scores``: per class; ``legal``: a mask of the legal classes;
        ``optimal``: the optimal classes, a non-empty list (of legal
        classes), best first among equal scores; ``viable``: None (every
        legal class is viable) or a function giving the mask of the viable
        classes, called only when exploring needs it."""
        masked = np.where(legal, scores, -np.inf)
        predicted = int(np.argmax(masked))
        best = optimal[int(np.argmax(masked[optimal]))]
        right = predicted in optimal
        follow = best
        if self.on:
            if self.sample:
                follow = self._sampled(scores, viable, best)
            elif not right and (viable is None or viable()[predicted]) and self._wanders():
                follow = predicted
        return Step(follow, predicted, best, right)

    def _sampled(self, p, viable, best):
        """A class drawn from the probabilities ``p`` over the viable classes
        (``best`` if none of them has any)."""
        q = p if viable is None else np.where(viable(), p, 0.0)
        drawn = int(np.searchsorted(np.cumsum(q), self.rng.random() * q.sum()))
        drawn = min(drawn, len(q) - 1)
        return drawn if q[drawn] > 0 else best

    def rows(self, scores, legal, optimal, viable):
        """:meth:`step` for the rows of a batch at once: ``scores``,
        ``legal``, ``optimal`` and ``viable`` are ``(rows, classes)`` arrays
        (masks but the scores; ties go to the first class).  Returns ``(the
        classes followed, whether each prediction was optimal)``."""
        rows = np.arange(len(scores))
        predicted = np.where(legal, scores, -np.inf).argmax(axis=1)
        follow = np.where(optimal, scores, -np.inf).argmax(axis=1)
        right = optimal[rows, predicted]
        if self.on:
            for i in np.flatnonzero(~right & viable[rows, predicted]):
                if self._wanders():
                    follow[i] = predicted[i]
        return follow, right
