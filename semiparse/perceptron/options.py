"""The perceptron trainers' settings: one option object per training method.

:class:`~semiparse.perceptron.trainer.Trainer` takes the system, the oracle, the
epochs and the seed, and one of :class:`PerceptronOptions`,
:class:`RDAOptions` or :class:`BeamOptions` for what only that method uses.
Each object checks its settings when it is made, with a one-line error
naming the setting and its command-line option: a NaN or a negative rate
would otherwise train an empty or broken model without complaint.
"""
from dataclasses import dataclass

import numpy as np

TRAINERS = ("perceptron", "rda", "beam-early", "beam-maxv")
RESTARTS = ("none", "positive", "negative")
UPDATES = ("early", "maxv")

# field: (name in messages, command-line option, integer (else a finite real), range test, wording)
SETTINGS = {
    "epochs": ("epochs", "--epochs", True, lambda v: v >= 1, " >= 1"),
    "seed": ("seed", "--seed", True, lambda v: True, ""),
    "size": ("beam", "--beam", True, lambda v: v >= 1, " >= 1"),
    "explore_after": ("explore_after", "--explore-after", True, lambda v: v >= 0, " >= 0"),
    "explore_p": ("explore_p", "--explore-p", False, lambda v: 0 <= v <= 1, " in [0, 1]"),
    "rho": ("rho", "--rho", False, lambda v: v >= 0, " >= 0"),
    "alpha": ("alpha", "--alpha", False, lambda v: v > 0, " > 0"),
    "lam": ("lam", "--l1", False, lambda v: v >= 0, " >= 0"),
}


def check_settings(**values):
    """Raise ValueError naming the first setting out of its range (keys of
    :data:`SETTINGS`; ``lam`` may be None, its default being computed)."""
    for key, value in values.items():
        if key == "lam" and value is None:
            continue
        name, option, integer, in_range, wording = SETTINGS[key]
        whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        real = isinstance(value, (float, np.floating)) and np.isfinite(value)
        if not (whole or (real and not integer)) or not in_range(value):
            kind = "an integer" if integer else "a finite number"
            raise ValueError(f"{name} ({option}) must be {kind}{wording}, got {value!r}")


def _check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


@dataclass(frozen=True)
class PerceptronOptions:
    """The greedy averaged perceptron (Goldberg et al. 2014, Algorithm 2).

    With the dynamic oracle, from epoch ``explore_after`` on, a wrong
    prediction is followed with probability ``explore_p`` (exploration)."""

    explore_after: int = 1
    explore_p: float = 0.9

    name = "perceptron"

    def __post_init__(self):
        check_settings(explore_after=self.explore_after, explore_p=self.explore_p)


@dataclass(frozen=True)
class RDAOptions:
    """The probabilistic model trained with AdaGrad-RDA and L1 (Goldberg 2013).

    ``rho`` the ridge, ``alpha`` the learning rate, ``lam`` the L1 penalty
    (None: 1 / (20 |D|) for |D| training words); with the dynamic oracle the
    next move is sampled from the model from epoch ``explore_after`` on."""

    explore_after: int = 1
    rho: float = 0.01
    alpha: float = 1.0
    lam: float = None

    name = "rda"

    def __post_init__(self):
        check_settings(explore_after=self.explore_after, rho=self.rho, alpha=self.alpha,
                       lam=self.lam)


@dataclass(frozen=True)
class BeamOptions:
    """Global beam training (Aufrant et al. 2017): beam ``size``, ``update``
    ``"early"`` or ``"maxv"`` (max-violation), and where decoding resumes
    after an update: ``restart`` ``"positive"`` (c+), ``"negative"`` (c-, to
    explore; dynamic oracle only) or ``"none"`` (the next sentence)."""

    size: int = 8
    update: str = "early"
    restart: str = "positive"

    def __post_init__(self):
        check_settings(size=self.size)
        _check_choice("update", self.update, UPDATES)
        _check_choice("restart", self.restart, RESTARTS)

    @property
    def name(self):
        return f"beam-{self.update}"


def check_restart(restart, oracle):
    """Raise ValueError if the restart needs another oracle: ``negative``
    explores, which only the dynamic oracle does."""
    if restart == "negative" and oracle != "dynamic":
        raise ValueError("--restart negative explores wrong configurations: it needs --oracle dynamic")


def options_for(trainer="perceptron", explore_after=1, explore_p=0.9, beam=8, restart="positive",
                rho=0.01, alpha=1.0, lam=None, oracle="dynamic"):
    """The option object of the method named ``trainer`` (one of
    :data:`TRAINERS`) from the command line's flat settings.  Every setting is
    checked, also those the method does not use, so that a bad ``--beam`` is
    refused with ``--trainer rda`` as with a beam trainer, and ``--restart
    negative`` with another ``oracle`` than ``dynamic``."""
    _check_choice("trainer", trainer, TRAINERS)
    _check_choice("restart", restart, RESTARTS)
    check_settings(size=beam, explore_after=explore_after, explore_p=explore_p, rho=rho,
                   alpha=alpha, lam=lam)
    check_restart(restart, oracle)
    if trainer == "perceptron":
        return PerceptronOptions(explore_after, explore_p)
    if trainer == "rda":
        return RDAOptions(explore_after, rho, alpha, lam)
    return BeamOptions(beam, trainer[len("beam-"):], restart)
