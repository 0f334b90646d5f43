"""What every experiment shares: the data files, provenance, running the jobs, writing the tables.

An experiment module defines ``TITLE``, ``SUMMARY`` (one line for ``--list``),
``DEFAULTS`` (``epochs``, ``seeds``, ``languages``, ``systems``), the
``LANGUAGES`` and ``SYSTEMS`` it accepts, optionally ``VARIANTS`` (the
names ``--variants`` chooses from, in table order), ``POS_TAGS`` (gold or predicted,
for the header), ``files(settings)`` (the data files it reads, relative to
the data directory), ``jobs(settings)`` (picklable job descriptions),
``run_job(job)`` (a module-level function returning a dict of results) and
``table(results, settings)`` (the Markdown lines of its table).
"""
import contextlib
import functools
import hashlib
import json
import multiprocessing
import shlex
import signal
import statistics
import subprocess
import time
from pathlib import Path

from semiparse import __version__
from semiparse.treebank.outputs import check_output, open_output

# The shared UD treebanks: language code -> (folder, file prefix).
LANGUAGES = {
    "el": ("UD_Greek-GDT", "el_gdt"),
    "got": ("UD_Gothic-PROIEL", "got_proiel"),
    "hu": ("UD_Hungarian-Szeged", "hu_szeged"),
}

# What the dependency trainers see at test time (semiparse/perceptron/features.py reads
# the UPOS column of the file being parsed; semiparse has no tagger).
GOLD_UPOS = "gold UPOS tags at training and test time (the UPOS column of the CoNLL-U files; semiparse has no tagger)"




def ud_file(lang, part):
    """The path of a UD treebank's ``train`` or ``test`` file, relative to the data directory."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGUAGES)}")
    folder, prefix = LANGUAGES[lang]
    return f"ud/{folder}/{prefix}-ud-{part}.conllu"


def ud_files(settings):
    """The train and test files of the settings' treebanks."""
    return [ud_file(lang, part) for lang in settings["languages"] for part in ("train", "test")]


def ud_jobs(settings, variants):
    """One ``(data, lang, system, variant, seed, epochs, limit)`` per run,
    seed-major: an interrupted run still has complete tables for the first
    seeds.  Only the ``variants`` the settings choose (``--variants``) run."""
    chosen = settings.get("variants")
    variants = [v for v in variants if chosen is None or v in chosen]
    return [(settings["data"], lang, system, variant, seed, settings["epochs"], settings["limit"])
            for seed in settings["seeds"] for lang in settings["languages"]
            for system in settings["systems"] for variant in variants]


def read_ud(data, lang, part, limit):
    """The trees of a UD file, only the first ``limit`` if given."""
    trees = _read_trees(Path(data) / ud_file(lang, part))
    return trees[:limit] if limit else trees


def read_parts(data, lang, limit, parts=("train", "test")):
    """The trees of each part (``train``, ``dev``, ``test``) of a UD treebank, by :func:`read_ud`."""
    return [read_ud(data, lang, part, limit) for part in parts]


@functools.lru_cache(maxsize=8)
def _read_trees(path):
    """A treebank read once per process: the runs of an experiment share it (the
    trainers do not change the trees they are given)."""
    from semiparse.perceptron import read_trees

    return read_trees(path)


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksums(data, relative_paths):
    """``{relative path: sha256}`` of the data files; a missing one is a ``ValueError``."""
    out = {}
    for rel in relative_paths:
        path = Path(data) / rel
        if not path.is_file():
            raise ValueError(f"{path}: data file not found (expected the shared data under --data "
                             "or $SEMIPARSE_DATA)")
        out[rel] = sha256(path)
    return out


def _git(*args):
    here = Path(__file__).resolve().parent
    return subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True, check=True).stdout


def provenance():
    """``(commit, text)``: the checkout's commit (``None`` outside a git checkout
    that tracks this package) and the line the tables print."""
    try:
        _git("ls-files", "--error-unmatch", "common.py")  # the package is tracked here
        commit = _git("rev-parse", "HEAD").strip()
        dirty = _git("status", "--porcelain", "--untracked-files=no").strip()
    except (OSError, subprocess.CalledProcessError):
        return None, f"semiparse {__version__} (not a git checkout)"
    return commit, f"`{commit}`" + (" with uncommitted changes" if dirty else "")


def select(results, **fields):
    """The results whose entries equal ``fields`` (the runs of one table cell)."""
    return [r for r in results if all(r[k] == v for k, v in fields.items())]


def job_fields(job, key):
    """The fields that name a :func:`ud_jobs` job's run in its result:
    language, system, the variant under ``key`` (None: not recorded), seed
    and epochs."""
    _, lang, system, variant, seed, epochs, _ = job
    return {"lang": lang, "system": system, **({key: variant} if key else {}), "seed": seed,
            "epochs": epochs}


def timed(train):
    """``(train(), the CPU seconds it took)``, to a tenth of a second."""
    start = time.process_time()
    out = train()
    return out, round(time.process_time() - start, 1)


def table_rows(results, settings, key=None, variants=(None,)):
    """``(lang, system, variant, runs)`` of each table row that has runs, in
    table order: the settings' languages, their systems, then ``variants``
    (values of the results' field ``key``; without a key, one row per
    language and system)."""
    for lang in settings["languages"]:
        for system in settings["systems"]:
            for variant in variants:
                runs = select(results, lang=lang, system=system, **({key: variant} if key else {}))
                if runs:
                    yield lang, system, variant, runs


def markdown_table(caption, columns, rows):
    """A table's lines: its caption, a blank line, the header of ``columns``
    and a line per row (a sequence of cells)."""
    return [caption, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns),
            *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)]


def cpu_seconds(runs):
    """The mean training CPU seconds per run, as a table cell."""
    return f"{sum(r['train_cpu_seconds'] for r in runs) / len(runs):.0f}"


def mean_sd(values):
    """``"mean ± sd"`` (sd 0 for a single value)."""
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.2f} ± {sd:.2f}"


def header(module, settings, command, commit_text, sums):
    """The lines at the top of every table: what was run, on what, from which code."""
    limit = f", only the first {settings['limit']} sentences of each training and test set" if settings["limit"] else ""
    lines = [
        f"# {module.TITLE}", "",
        f"Command: `{command}`", "",
        f"Commit: {commit_text}", "",
        f"Scale: {settings['epochs']} epoch(s), seeds {' '.join(map(str, settings['seeds']))}{limit}.", "",
        *([f"Torch device: {settings['device']} (the oracle runs on the CPU).", ""]
          if settings.get("device", "cpu") != "cpu" else []),
        f"POS tags: {module.POS_TAGS}.", "",
        "Data (sha256, paths relative to the data directory):", "",
    ]
    lines += [f"- `{rel}` {digest}" for rel, digest in sums.items()]
    return lines + [""]


def run(module, name, settings, command, out, jobs=1, echo=print):
    """Run every job of the experiment, rewriting ``out``.md / .json after each
    (an interrupted run keeps complete rows for the jobs done; files of an
    earlier run stay until the first job is done), and return the JSON
    document.  Both outputs are checked before any work."""
    for path in (f"{out}.json", f"{out}.md"):
        check_output(path)
    sums = checksums(settings["data"], module.files(settings))
    commit, commit_text = provenance()
    document = {
        "experiment": name, "command": command, "commit": commit, "version": __version__,
        "settings": {k: v for k, v in settings.items() if k != "data"},
        "pos_tags": module.POS_TAGS, "data": sums, "results": [],
    }
    todo = module.jobs(settings)
    run_job = (functools.partial(module.run_job, device=settings["device"]) if "device" in settings
               else module.run_job)
    results = document["results"]

    def write():
        with open_output(f"{out}.json") as stream:
            stream.write(json.dumps(document, indent=1) + "\n")
        lines = header(module, settings, command, commit_text, sums) + module.table(results, settings)
        with open_output(f"{out}.md") as stream:
            stream.write("\n".join(lines) + "\n")

    with contextlib.ExitStack() as stack:
        if jobs == 1:
            done = map(run_job, todo)
        else:  # Ctrl-C is the parent's to handle: workers ignore it, and leaving
            # the pool terminates them, so that an interrupted run stops at once
            pool = stack.enter_context(multiprocessing.Pool(
                jobs, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN)))
            done = pool.imap(run_job, todo)
        for result in done:
            results.append(result)
            echo(json.dumps(result))
            write()
    if not results:  # no job at all: the files still say what was run
        write()
    return document


def command_line(argv):
    """The command as a user would type it again."""
    return "python -m semiparse.experiments " + shlex.join(argv)
