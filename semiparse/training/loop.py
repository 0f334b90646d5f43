"""The epoch loop every trainer shares.

:func:`epochs` shuffles the training sentences with the run's generator once
per epoch (the one use of the generator outside the exploration step, so a
seed gives the same order, and the same run, as it always has), cuts them
into minibatches where asked, and gives each epoch as an :class:`Epoch`: the
progress bar over its items, and its counts (correct predictions, steps,
sentences abandoned at dead ends, and where a search oracle ran past its
budget).  What a trainer does with an item, and
what it records after an epoch (dev scores, checkpoints, model selection),
stays its own.
"""
import warnings

from semiparse.errors import DeadEndWarning

# The most configurations the exact search of a completion of kind search
# (the swap systems) may expand for one training configuration: past it the
# configuration has no oracle answer, and its sentence is left for the rest
# of the epoch and counted (never trained on an estimate).  On the
# non-projective sentences of the Gothic and Hungarian dev sets, 0.6-1.8%
# of the calls along training-like walks run past it (docs/oracles.md).
SEARCH_BUDGET = 20_000


def bar_off(progress):
    """tqdm's ``disable`` for a trainer's progress bar (``progress``: one
    was asked for): None, which tqdm takes for a bar on a terminal only, so
    that a log file or CI gets the one line per epoch the trainers log, not
    the bar's carriage-return updates (about 1 MB a run)."""
    return None if progress else True


class Epoch:
    """One epoch: iterate over it for its items (through the progress bar);
    :meth:`count` the steps of each, :meth:`dead` the items abandoned at a
    dead end.  ``number`` counts from 0."""

    def __init__(self, number, items, bar):
        self.number, self.items, self._bar = number, items, bar
        self.correct = self.total = self.dead_ends = self.over_budget = 0
        self.dead_end = None  # one of the dead-end configurations, for messages

    def __iter__(self):
        """The items, through the progress bar, which closes after the last."""
        yield from self._bar
        self._bar.close()

    def count(self, correct, total):
        self.correct += correct
        self.total += total

    @property
    def accuracy(self):
        """The percentage of correct predictions among the steps counted."""
        return 100.0 * self.correct / max(self.total, 1)

    def dead(self, n=1, where=None):
        """Count ``n`` sentences abandoned at a dead end (``where``: one of
        their configurations, described)."""
        self.dead_ends += n
        self.dead_end = self.dead_end or where

    def unanswered(self, n=1):
        """Count ``n`` sentences left at a configuration whose oracle search ran
        past :data:`SEARCH_BUDGET`."""
        self.over_budget += n

    def show(self, **postfix):
        """Numbers to show on the progress bar."""
        self._bar.set_postfix(**postfix)

    def check_learnt(self, sentences, message):
        """ValueError(``message``) where every one of the ``sentences`` reached
        a dead end: the epoch learnt nothing."""
        if self.dead_ends == sentences:   # a sentence left past the budget learnt its first moves
            raise ValueError(message)


def epochs(n_epochs, order, rng, *, first=0, batch_size=None, progress=True, unit="sent"):
    """The epochs ``first .. n_epochs - 1`` of a run, each an :class:`Epoch`.

    ``order``: the training items' indices, shuffled in place by
    ``rng.shuffle`` at the start of every epoch (a resumed run passes the
    order it stopped with); with ``batch_size``, an epoch's items are the
    consecutive minibatches of that order.  ``progress``: a progress bar
    (:func:`bar_off`) counting ``unit``\\ s."""
    from tqdm import tqdm

    for number in range(first, n_epochs):
        rng.shuffle(order)
        items = order if batch_size is None else [order[k:k + batch_size]
                                                  for k in range(0, len(order), batch_size)]
        bar = tqdm(items, desc=f"epoch {number + 1}/{n_epochs}", unit=unit, leave=False,
                   disable=bar_off(progress))
        yield Epoch(number, items, bar)


def log_record(log, record):
    """One epoch's record as the trainers log it: ``key=value``, floats to two places."""
    log(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in record.items()))


def note_over_budget(sentences, budget, log):
    """Report through ``log`` the ``sentences`` (counted once per epoch) that
    were left where the search oracle ran past ``budget`` configurations;
    nothing where there were none.  Called from a trainer's ``run``."""
    if sentences:
        log(f"note: {sentences} training sentence(s), counted once per epoch, were left at a "
            f"configuration whose exact oracle search ran past {budget} configurations "
            f"(their moves before it were trained on)")


def warn_dead_ends(message, log, log_given):
    """Report the run's dead ends through ``log`` (``warning: ...``), or as a
    :class:`DeadEndWarning` pointing at the trainer's caller where no log
    was given.  Called from a trainer's ``run``."""
    if log_given:
        log(f"warning: {message}")
    else:
        warnings.warn(message, DeadEndWarning, stacklevel=3)
