"""Experiments anyone can rerun: ``python -m semiparse.experiments NAME``.

Each experiment repeats the set-up of a table of a paper with semiparse's
trainers on the shared treebanks and writes ``PREFIX.md`` (the table, headed
by the exact command, the commit and the sha256 of every data file read) and
``PREFIX.json`` (the same and every run's scores).  ``--limit N --epochs 1
--seeds 1`` is a smoke run of seconds.  See ``docs/experiments/README.md``.
"""
import argparse
import importlib
import inspect
import os
import signal
import sys

from semiparse.experiments.common import command_line, run
from semiparse.neural import check_device
from semiparse.resources import data_root

# name -> module (imported when run)
EXPERIMENTS = {
    "nonprojective-training": "nonprojective_training",
    "oracle-comparison": "oracle_comparison",
    "calibration": "calibration",
    "beam-global": "beam_global",
    "exploration": "exploration",
    "constituency": "constituency",
    "encoded-training": "encoded_training",
    "partial-training": "partial_training",
    "biaffine-crf": "biaffine_crf",
    "neural-accuracy": "neural_accuracy",
    "neural-nonprojective": "neural_nonprojective",
    "neural-oracles": "neural_oracles",
    "neural-systems": "neural_systems",
    "peers": "peers",
    "nonprojective-systems": "nonprojective_systems",
}

# The modules of experiments that train torch networks on the CPU only (their
# runs take no device): --device is checked, and only cpu is taken
CPU_NETWORKS = ("biaffine_crf", "peers")


def experiment(name):
    """The module of an experiment."""
    return importlib.import_module(f"{__name__}.{EXPERIMENTS[name]}")


def _positive(text):
    """An argparse type: an integer >= 1 (its name would show in argparse's
    own message, so every refusal is this one's)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, not {text!r}")
    return value


def build_parser():
    p = argparse.ArgumentParser(prog="python -m semiparse.experiments", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", metavar="NAME", choices=list(EXPERIMENTS),
                   help="the experiment (--list shows them)")
    p.add_argument("--list", action="store_true", help="list the experiments and their defaults")
    p.add_argument("--data", help="the shared data directory, holding ud/ and ptb/ "
                   "(default: $SEMIPARSE_DATA, else ../shared/data)")
    p.add_argument("--seeds", type=int, nargs="+", help="training seeds (default: the experiment's)")
    p.add_argument("--epochs", type=_positive, help="training epochs (default: the experiment's)")
    p.add_argument("--languages", nargs="+", metavar="LANG", help="treebanks (default: the experiment's)")
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="transition systems (default: the experiment's)")
    p.add_argument("--variants", nargs="+", metavar="VARIANT",
                   help="only these of the experiment's variants (default: all; --list shows them)")
    p.add_argument("--limit", type=_positive, metavar="N", help="only the first N sentences of each file")
    p.add_argument("--iterations", type=_positive, metavar="N",
                   help="training iterations of UDPipe 1 (peers only; default: the experiment's)")
    p.add_argument("--device", help="torch device of a neural experiment's runs: cpu (default) or "
                   "cuda[:N]; the oracle runs on the CPU")
    p.add_argument("--jobs", type=_positive, default=1, help="parallel training runs (default 1)")
    p.add_argument("--out", metavar="PREFIX", help="write PREFIX.md and PREFIX.json (default: NAME)")
    return p


def listing():
    lines = []
    for name in EXPERIMENTS:
        module = experiment(name)
        d = module.DEFAULTS
        lines.append(f"{name:24s}{module.SUMMARY}")
        lines.append(f"{'':24s}defaults: --epochs {d['epochs']} --seeds {' '.join(map(str, d['seeds']))} "
                     f"--languages {' '.join(d['languages'])} --systems {' '.join(d['systems'])}"
                     + (f" --iterations {d['iterations']}" if "iterations" in d else ""))
        if hasattr(module, "VARIANTS"):
            lines.append(f"{'':24s}variants: {', '.join(map(repr, module.VARIANTS))}")
    return "\n".join(lines)


def settings_for(module, args):
    """The experiment's settings: its defaults overridden by the options given."""
    d = module.DEFAULTS
    settings = {
        "data": args.data or str(data_root()),
        "epochs": args.epochs or d["epochs"],
        "seeds": args.seeds or d["seeds"],
        "languages": args.languages or d["languages"],
        "systems": args.systems or d["systems"],
        "limit": args.limit,
    }
    if "iterations" in d:
        settings["iterations"] = args.iterations or d["iterations"]
    elif args.iterations:
        raise ValueError("--iterations: this experiment trains no UDPipe model")
    choices = [("languages", module.LANGUAGES), ("systems", module.SYSTEMS)]
    if hasattr(module, "VARIANTS"):
        settings["variants"] = args.variants or list(module.VARIANTS)
        choices.append(("variants", module.VARIANTS))
    elif args.variants:
        raise ValueError("this experiment has no variants to choose from")
    if "device" in inspect.signature(module.run_job).parameters:
        settings["device"] = args.device or "cpu"
        try:
            check_device(settings["device"])
        except ValueError as exc:
            raise ValueError(f"--device: {exc}") from None
    elif args.device and module.__name__.rpartition(".")[2] in CPU_NETWORKS:
        try:
            check_device(args.device)
        except ValueError as exc:
            raise ValueError(f"--device: {exc}") from None
        if args.device != "cpu":
            raise ValueError(f"--device {args.device}: this experiment trains its networks on the "
                             f"CPU only (--device cpu, or no --device)")
    elif args.device:
        raise ValueError("--device: this experiment trains no neural parser")
    for key, allowed in choices:
        wrong = [v for v in settings[key] if v not in allowed]
        if wrong:
            raise ValueError(f"--{key}: {wrong[0]!r} is not one of {', '.join(map(repr, allowed))}")
    for key in ("seeds", "languages", "systems", "variants"):
        twice = [v for i, v in enumerate(settings.get(key, ())) if v in settings[key][:i]]
        if twice:  # a repeated run would count twice in the means
            raise ValueError(f"--{key}: {twice[0]!r} is given twice")
    return settings


def main(argv=None):
    """Run the command line; return the exit status (2 and one line on bad input)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        print(listing())
        return 0
    if args.name is None:
        parser.error("give an experiment NAME or --list")
    try:
        if args.out is not None and (not os.path.basename(args.out).strip(".") or os.path.isdir(args.out)):
            raise ValueError(f"--out {args.out}: a prefix names the files PREFIX.md and PREFIX.json, "
                             f"e.g. {os.path.join(args.out, args.name)}")
        module = experiment(args.name)
        run(module, args.name, settings_for(module, args), command_line(argv), args.out or args.name,
            jobs=args.jobs)
    except (ValueError, OSError) as exc:
        print(f"semiparse experiments {args.name}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the files keep the jobs done
        return 128 + signal.SIGINT
    return 0
