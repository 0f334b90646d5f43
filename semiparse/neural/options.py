"""The neural parser's settings: network sizes and training options, checked once.

Defaults follow Kiperwasser and Goldberg 2016 (word 100, UPOS 25, two BiLSTM
layers of 125 units per direction, an MLP of 100 hidden units, word dropout
alpha 0.25, Adam); the character encoder and the label MLP on the edge are
this package's; the gold morphology (FEATS 25, LEMMA 100), dropout 0.33 and
30 epochs are what the shared treebanks' experiments support (docs/neural.md,
"Settings for accuracy").
"""
import math
import re
from dataclasses import asdict, dataclass, fields

LOSSES = ("hinge", "nll")
# Sizes beyond any parser's (Kiperwasser and Goldberg 2016: 125 units, two
# layers): larger ones ran out of memory inside torch, or hung building layers.
MAX_DIM, MAX_LAYERS, MAX_THREADS = 4096, 32, 1024
NONPROJ = ("oracle", "projectivize", "encode", "subset")
ORACLES = ("static", "nondet", "dynamic")


def check_device_name(device):
    """ValueError unless ``device`` names one torch is asked for here: ``cpu``
    or ``cuda[:N]`` (whether torch has it: :func:`semiparse.neural.check_device`)."""
    if not isinstance(device, str) or not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        raise ValueError(f"device must be cpu or cuda[:N], not {device!r}")


def check_threads(threads):
    """ValueError unless ``threads`` (torch's CPU threads, ``--threads``) is
    from 1 to :data:`MAX_THREADS`."""
    if not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"--threads must be from 1 to {MAX_THREADS}, got {threads}")


def _named(field):
    """A field and its command-line option, for messages."""
    return f"{field} (--{field.replace('_', '-')})"


@dataclass
class Options:
    """Sizes of the network (stored in the model) and the training run's settings."""

    word_dim: int = 100
    char_dim: int = 24           # character embedding; 0: no character encoder
    char_hidden: int = 50        # character BiLSTM, per direction
    upos_dim: int = 25
    xpos_dim: int = 0            # 0: XPOS not used
    feats_dim: int = 25          # 0: FEATS not used
    lemma_dim: int = 100         # 0: LEMMA not used
    lstm_dim: int = 125          # sentence BiLSTM, per direction
    lstm_layers: int = 2
    hidden_dim: int = 100        # transition MLP
    label_hidden_dim: int = 100  # label MLP on the edge (head and dependent vectors)
    word_dropout: float = 0.25   # alpha of Kiperwasser and Goldberg: drop w with alpha / (count(w) + alpha)
    dropout: float = 0.33        # on the BiLSTM's input, between its layers and on its output (0: none)
    features: tuple = ()         # configuration positions (semiparse.neural.features); () = the system's default
    loss: str = "hinge"
    oracle: str = "dynamic"
    nonproj: str = "projectivize"
    epochs: int = 30
    batch_size: int = 8          # sentences per Adam step (docs/neural.md: 32 undertrains small treebanks)
    lr: float = 1e-3
    seed: int = 0                # any integer (torch is seeded with seed mod 2**64)
    explore_after: int = 1       # dynamic oracle: epochs before the model's own mistakes are followed
    explore_p: float = 0.9       # ... and the probability of following one
    device: str = "cpu"
    oracle_threads: int = 1      # threads of each step's scores_batch call (1: the fastest measured, docs/neural.md)

    def __post_init__(self):
        if isinstance(self.features, str):
            raise ValueError("features must be a sequence of position names (see "
                             "semiparse.neural.features.parse_positions)")
        self.features = tuple(self.features)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{_named(f.name)} must be an integer, got {value!r}")
            if f.type is float and (isinstance(value, bool) or not isinstance(value, (int, float))
                                    or not math.isfinite(value)):
                raise ValueError(f"{_named(f.name)} must be a finite number, got {value!r}")
        checks = [(name, lambda v: v >= 1, ">= 1") for name in (
            "word_dim", "char_hidden", "lstm_dim", "lstm_layers", "hidden_dim", "label_hidden_dim",
            "epochs", "batch_size", "oracle_threads")]
        checks += [(name, lambda v: v <= MAX_DIM, f"at most {MAX_DIM}") for name in (
            "word_dim", "char_dim", "char_hidden", "upos_dim", "xpos_dim", "feats_dim",
            "lemma_dim", "lstm_dim", "hidden_dim", "label_hidden_dim")]
        checks += [("lstm_layers", lambda v: v <= MAX_LAYERS, f"at most {MAX_LAYERS}"),
                   ("oracle_threads", lambda v: v <= MAX_THREADS, f"at most {MAX_THREADS}")]
        checks += [(name, lambda v: v >= 0, ">= 0") for name in (
            "char_dim", "upos_dim", "xpos_dim", "feats_dim", "lemma_dim", "explore_after", "word_dropout")]
        checks += [("lr", lambda v: v > 0, "> 0"), ("explore_p", lambda v: 0 <= v <= 1, "in [0, 1]"),
                   ("dropout", lambda v: 0 <= v < 1, "in [0, 1)")]
        for name, test, wording in checks:
            if not test(getattr(self, name)):
                raise ValueError(f"{_named(name)} must be {wording}, got {getattr(self, name)!r}")
        for name, allowed in (("loss", LOSSES), ("oracle", ORACLES), ("nonproj", NONPROJ)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{_named(name)} must be one of {', '.join(allowed)}, "
                                 f"not {getattr(self, name)!r}")
        check_device_name(self.device)

    def to_dict(self):
        out = asdict(self)
        out["features"] = list(self.features)
        return out

    @classmethod
    def from_dict(cls, data):
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown options {', '.join(sorted(unknown))}")
        return cls(**data)
