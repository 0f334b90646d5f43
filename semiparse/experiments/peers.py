"""UDPipe 1 as a peer: its parser and semiparse's default neural parser,
trained on the same files and scored by the same scorer.

UDPipe 1 (Straka, Hajič and Straková 2016) parses with Parsito (Straka et
al. 2015), a greedy transition parser with a feed-forward network.  It is
trained here through its Python package (``ufal.udpipe``, the ``peers``
extra) on a UD treebank's training file with the dev file as its heldout
data (early stopping keeps the iteration with the best heldout LAS), gold
tokens and tags (tokenizer and tagger ``none``: only the parser is
trained), in two set-ups: its projective (arc-standard) system with its
dynamic oracle, and its swap system with its static lazy oracle, form,
UPOS and FEATS embedded (dimensions 50, 20, 20), ``--iterations``
iterations.  Beside it, semiparse's BiLSTM parser (Kiperwasser and Goldberg
2016) is trained as a user trains it, ``semiparse train TRAIN --model
bilstm --dev DEV`` with no tuning flag (run in this process through the
command line's own parser, so that its defaults are the command's), for
``--epochs`` epochs and each of ``--seeds``; ``--systems`` may name
transition systems to pass as ``--system`` beside the default.

Both parse the test file (the dev file of a treebank without one) with
gold tokens and tags, and every output is written the same way (the gold
file with HEAD and DEPREL replaced) and scored by the official CoNLL 2018
scorer as ``semiparse evaluate`` runs it: LAS and UAS, and each parser's
training CPU time, its parsing speed (sentences per CPU second of the
parse calls alone), and LAS/UAS by gold universal relation and by gold
dependency length.  Both run on one CPU thread (UDPipe 1 has one; torch is
set to one, as in every experiment here).  UDPipe 1 has no seed option
and trains deterministically, so each of its set-ups runs once per
treebank.
"""
import contextlib
import functools
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from semiparse.experiments.common import LANGUAGES, markdown_table, mean_sd, read_ud, select, ud_file
from semiparse.experiments.neural_common import score_test_set

TITLE = "UDPipe 1 against semiparse's default BiLSTM parser: the same files, the same scorer"
SUMMARY = ("UDPipe 1's projective and swap parsers vs `semiparse train --model bilstm`: CoNLL 2018 "
           "LAS/UAS, CPU, speed, per relation and length")
POS_TAGS = ("gold tokens, UPOS, XPOS, FEATS and LEMMA as the files have them, at training and "
            "test time (neither parser tags; the columns each one reads are said below)")
VARIANTS = ("udpipe-projective", "udpipe-swap", "semiparse-bilstm")
# "default": semiparse train without --system; the others are passed as --system
SYSTEMS = ("default", "arc_standard", "arc_hybrid", "arc_eager")
ITERATIONS = 20  # UDPipe 1's, as run for the comparison of issue 43

# UDPipe 1's parser options by set-up; UDPIPE_OPTIONS is added to both
# (the tests make the networks tiny through it, as SEMIPARSE_FLAGS does
# semiparse's: both are recorded in every result)
UDPIPE_SYSTEMS = {
    "udpipe-projective": {"transition_system": "projective", "transition_oracle": "dynamic"},
    "udpipe-swap": {"transition_system": "swap", "transition_oracle": "static_lazy"},
}
UDPIPE_OPTIONS = {"embedding_upostag": 20, "embedding_feats": 20, "embedding_form": 50,
                  "embedding_lemma": 0}
SEMIPARSE_FLAGS = ()

NAMES = {"udpipe-projective": "UDPipe 1, projective, dynamic oracle",
         "udpipe-swap": "UDPipe 1, swap, static lazy oracle",
         "semiparse-bilstm": "semiparse BiLSTM"}

MISSING_UDPIPE = ('UDPipe 1 (the Python package ufal.udpipe) is not installed: pip install '
                  '"semiparse[peers]" (from a checkout: pip install ".[peers]")')
MISSING_TORCH = ('the semiparse BiLSTM parser needs PyTorch: pip install "semiparse[neural]" '
                 '(from a checkout: pip install ".[neural]")')

# gold dependency lengths |head - dependent| in the breakdown (None: no upper end)
LENGTHS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 10), (11, None))


def _cli_train_parser():
    """The argument parser of ``semiparse train`` (its defaults are what a user gets)."""
    import argparse

    from semiparse.cli import train

    parser = argparse.ArgumentParser(prog="semiparse")
    train.add_parser(parser.add_subparsers())
    return parser


def _default_epochs():
    """The epochs ``semiparse train --model bilstm`` runs without ``--epochs``."""
    from semiparse.neural.options import Options

    return Options().epochs


DEFAULTS = {"epochs": _default_epochs(),
            "seeds": [1, 2, 3], "languages": list(LANGUAGES), "systems": ["default"],
            "iterations": ITERATIONS}


def scored_part(data, lang):
    """``test``, or ``dev`` where the treebank has no test file."""
    return "test" if (Path(data) / ud_file(lang, "test")).is_file() else "dev"


def files(settings):
    return [ud_file(lang, part) for lang in settings["languages"]
            for part in dict.fromkeys(("train", "dev", scored_part(settings["data"], lang)))]


def _check_installed(variants):
    """ValueError (one line) where a chosen parser's package is missing."""
    if any(v.startswith("udpipe") for v in variants):
        try:
            import ufal.udpipe  # noqa: F401
        except ImportError:
            raise ValueError(MISSING_UDPIPE) from None
    if "semiparse-bilstm" in variants:
        try:
            import torch  # noqa: F401
        except ImportError:
            raise ValueError(MISSING_TORCH) from None


def jobs(settings):
    """Language by language: each UDPipe 1 set-up once (it has no seed),
    then semiparse's runs, seed-major.  Missing packages are refused here,
    before any run and any output."""
    variants = [v for v in VARIANTS if v in settings["variants"]]
    _check_installed(variants)
    out = []
    for lang in settings["languages"]:
        base = {"data": settings["data"], "lang": lang, "limit": settings["limit"]}
        for variant in variants:
            if variant.startswith("udpipe"):
                out.append({**base, "parser": variant, "system": None, "seed": None,
                            "iterations": settings["iterations"]})
            else:
                out += [{**base, "parser": variant, "system": system, "seed": seed,
                         "epochs": settings["epochs"]}
                        for seed in settings["seeds"] for system in settings["systems"]]
    return out


def run_job(job):
    data, lang, limit = job["data"], job["lang"], job["limit"]
    part = scored_part(data, lang)
    trees = {p: read_ud(data, lang, p, limit) for p in ("train", "dev", part)}
    with tempfile.TemporaryDirectory(prefix="semiparse-peers-") as tmp:
        paths = {p: _conllu(data, lang, p, limit, trees[p], tmp) for p in trees}
        train = _train_udpipe if job["parser"].startswith("udpipe") else _train_semiparse
        run = train(job, paths, os.path.join(tmp, "model"))
        predicted, parse_cpu, parse_wall = run.pop("parse")(paths[part], trees[part])
    test = trees[part]
    return {
        **{k: job[k] for k in ("lang", "parser", "system", "seed") if k in job},
        **({"epochs": job["epochs"]} if "epochs" in job else {"iterations": job["iterations"]}),
        "test_part": part, "train_sentences": len(trees["train"]), "dev_sentences": len(trees["dev"]),
        "test_sentences": len(test), **run,
        "parse_cpu_seconds": round(parse_cpu, 3), "parse_wall_seconds": round(parse_wall, 3),
        "sentences_per_cpu_second": round(len(test) / max(parse_cpu, 1e-9), 1),
        **score_test_set(test, predicted), **breakdowns(test, predicted),
    }


def _conllu(data, lang, part, limit, trees, tmp):
    """The path of a part as the parsers read it: the shared file, or its
    first ``limit`` sentences written to ``tmp``."""
    if not limit:
        return str(Path(data) / ud_file(lang, part))
    path = os.path.join(tmp, f"{part}.conllu")
    with open(path, "wb") as stream:
        for tree in trees:
            stream.write(tree.source.raw)
    return path


def _clock():
    return time.process_time(), time.perf_counter()


def _since(start):
    cpu, wall = _clock()
    return cpu - start[0], wall - start[1]


# -- UDPipe 1 -------------------------------------------------------------------------------------

def udpipe_options(variant, iterations):
    """UDPipe 1's parser option string for a set-up."""
    options = {**UDPIPE_SYSTEMS[variant], "iterations": iterations, **UDPIPE_OPTIONS}
    return ";".join(f"{key}={value}" for key, value in options.items())


def _udpipe_sentences(path):
    """The sentences of a CoNLL-U file as UDPipe 1 reads them, in a Python
    list: iterating over its own vector (``Sentences``) gives copies, and
    parsing those would leave the sentences kept unparsed."""
    from ufal.udpipe import InputFormat, ProcessingError, Sentence

    reader = InputFormat.newConlluInputFormat()
    with open(path, encoding="utf-8") as stream:
        reader.setText(stream.read())
    error, out, sentence = ProcessingError(), [], Sentence()
    while reader.nextSentence(sentence, error):
        out.append(sentence)
        sentence = Sentence()
    if error.occurred():
        raise ValueError(f"{path}: UDPipe 1 cannot read it: {error.message}")
    return out


def _udpipe_vector(sentences):
    from ufal.udpipe import Sentences

    vector = Sentences()
    for sentence in sentences:
        vector.push_back(sentence)
    return vector


@contextlib.contextmanager
def _stderr_into(path):
    """File descriptor 2 (where UDPipe 1 writes its training log) into ``path``."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "wb") as stream:
            os.dup2(stream.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _train_udpipe(job, paths, model_path):
    from ufal.udpipe import ProcessingError, Trainer

    options = udpipe_options(job["parser"], job["iterations"])
    train, dev = (_udpipe_vector(_udpipe_sentences(paths[part])) for part in ("train", "dev"))
    error, log = ProcessingError(), model_path + ".log"
    start = _clock()
    with _stderr_into(log):
        model = Trainer.train("morphodita_parsito", train, dev, "none", "none", options, error)
    cpu, wall = _since(start)
    text = Path(log).read_text(encoding="utf-8", errors="replace")
    if error.occurred() or not model:
        raise ValueError(f"UDPipe 1 training failed: {error.message or text.strip()[-500:]}")
    with open(model_path, "wb") as stream:
        stream.write(model if isinstance(model, bytes) else model.encode("utf-8", "surrogateescape"))
    best = re.search(r"choosing network from iteration (\d+)", text)
    return {"trainer": f'ufal.udpipe Trainer.train("morphodita_parsito", TRAIN, DEV, "none", "none", '
                       f'"{options}")',
            "train_cpu_seconds": round(cpu, 1), "train_wall_seconds": round(wall, 1),
            "best_epoch": int(best.group(1)) if best else None,
            "dev_las": [float(x) for x in re.findall(r"heldout UAS [\d.]+%, LAS ([\d.]+)%", text)],
            "parse": functools.partial(_parse_udpipe, model_path)}


def _parse_udpipe(model_path, path, test):
    """``(heads, labels)`` of each sentence of ``path`` by the model, and the
    CPU and wall seconds of the parse calls."""
    from ufal.udpipe import Model, ProcessingError

    model = Model.load(model_path)
    if model is None:
        raise ValueError(f"UDPipe 1 cannot load the model it trained ({model_path})")
    sentences, error = _udpipe_sentences(path), ProcessingError()
    for sentence in sentences:
        sentence.unlinkAllNodes()  # the gold HEAD and DEPREL are not the parser's
    start = _clock()
    for sentence in sentences:
        if not model.parse(sentence, Model.DEFAULT, error):
            raise ValueError(f"UDPipe 1 cannot parse {path}: {error.message}")
    cpu, wall = _since(start)
    predicted = []
    for tree, sentence in zip(test, sentences, strict=True):
        words = list(sentence.words)[1:]  # words[0] is the root
        if len(words) != len(tree):
            raise ValueError(f"{tree.where}: UDPipe 1 read {len(words)} words, semiparse {len(tree)}")
        predicted.append(([-1] + [w.head for w in words], [None] + [w.deprel for w in words]))
    return predicted, cpu, wall


# -- semiparse ------------------------------------------------------------------------------------

def semiparse_argv(paths, model_path, epochs, seed, system):
    """``semiparse train``'s arguments for a run: the default BiLSTM parser,
    with the run's epochs and seed (and ``--system`` unless ``default``)."""
    return ["train", paths["train"], "--model", "bilstm", "--dev", paths["dev"], "--epochs", str(epochs),
            "--seed", str(seed), *([] if system == "default" else ["--system", system]),
            *SEMIPARSE_FLAGS, "--quiet", "-o", model_path]


def _train_semiparse(job, paths, model_path):
    import semiparse.neural

    argv = semiparse_argv(paths, model_path, job["epochs"], job["seed"], job["system"])
    args = _cli_train_parser().parse_args(argv)
    with semiparse.neural.cpu_threads(1):
        start = _clock()
        status = args.func(args)
        cpu, wall = _since(start)
    if status:
        raise ValueError(f"semiparse train ended with status {status}")
    model = semiparse.neural.load(model_path)
    shown = ["semiparse", *argv]
    shown[2], shown[6], shown[-1] = "TRAIN", "DEV", "MODEL"
    return {"trainer": " ".join(shown), "cli_system": args.system, "options": model.options.to_dict(),
            "train_cpu_seconds": round(cpu, 1), "train_wall_seconds": round(wall, 1),
            "best_epoch": model.meta.get("best_epoch"),
            "dev_las": [round(r["las"], 2) for r in model.meta.get("history", []) if "las" in r],
            "parse": functools.partial(_parse_semiparse, model)}


def _parse_semiparse(model, path, test):
    """The same for semiparse's model, decoded as ``semiparse parse`` decodes
    (its batches, one torch thread)."""
    from semiparse.cli.parse import neural_parses

    start = _clock()
    parses = list(neural_parses(model, test))
    cpu, wall = _since(start)
    return [(heads, labels) for heads, labels, _, _ in parses], cpu, wall


# -- scores ---------------------------------------------------------------------------------------

def _bin_name(low, high):
    return str(low) if low == high else f"{low}+" if high is None else f"{low}-{high}"


def length_bin(dependent, head):
    """The breakdown's name for a gold dependency: ``root``, or its length's bin."""
    if head == 0:
        return "root"
    n = abs(dependent - head)
    return next(_bin_name(low, high) for low, high in LENGTHS
                if n >= low and (high is None or n <= high))


def length_bins():
    """The bins of the breakdown, in table order."""
    return ["root", *(_bin_name(low, high) for low, high in LENGTHS)]


def breakdowns(test, predicted):
    """``relations``: for each gold universal relation (DEPREL without its
    subtype, as the CoNLL 2018 scorer compares them), ``[gold words, with
    the gold head, with the gold head and relation, words the parser gave
    the relation]``; ``lengths``: the first three for each gold dependency
    length bin."""
    relations, lengths = {}, {}
    for tree, (heads, labels) in zip(test, predicted, strict=True):
        for d in range(1, len(tree) + 1):
            gold = tree.labels[d].split(":")[0]
            uh = heads[d] == tree.heads[d]
            lh = uh and labels[d].split(":")[0] == gold
            for table, key in ((relations, gold), (lengths, length_bin(d, tree.heads[d]))):
                counts = table.setdefault(key, [0, 0, 0, 0] if table is relations else [0, 0, 0])
                counts[0] += 1
                counts[1] += uh
                counts[2] += lh
            relations.setdefault(labels[d].split(":")[0], [0, 0, 0, 0])[3] += 1
    return {"relations": dict(sorted(relations.items())), "lengths": lengths}


# -- the table ------------------------------------------------------------------------------------

def _rows(results, settings, lang):
    """``(name, runs)`` of each table row of a language that has runs."""
    for variant in VARIANTS:
        if variant.startswith("udpipe"):
            runs = select(results, lang=lang, parser=variant)
            if runs:
                yield NAMES[variant], runs
        else:
            for system in settings["systems"]:
                runs = select(results, lang=lang, parser=variant, system=system)
                if runs:
                    yield NAMES[variant] + ("" if system == "default" else f", --system {system}"), runs


def _pooled(runs, key, name):
    """The counts of one breakdown entry summed over a row's runs (the same
    test set, so this is the mean over seeds)."""
    counts = [r[key].get(name) for r in runs]
    if any(c is None for c in counts):
        return None
    return [sum(c[i] for c in counts) for i in range(len(counts[0]))]


def _percent(counts):
    if counts is None or not counts[0]:
        return "-"
    return f"{100 * counts[1] / counts[0]:.1f} / {100 * counts[2] / counts[0]:.1f}"


def _cell(runs, key):
    """A score over a row's runs: the value of a single run, else mean ± sd."""
    values = [r[key] for r in runs]
    return f"{values[0]:.2f}" if len(values) == 1 else mean_sd(values)


def _scorer(runs):
    notes = sorted({r["scorer"] for r in runs})
    return "; ".join(notes)


def table(results, settings):
    lines = markdown_table(
        f"Test set (the dev set where a treebank has none), gold tokens and tags; LAS and UAS by "
        f"the CoNLL 2018 scorer (every word, the universal part of DEPREL), mean ± standard "
        f"deviation over semiparse's seeds (UDPipe 1 has no seed: one run); `--limit` cuts the "
        f"dev set too.  UDPipe 1: {settings['iterations']} iterations, the one with the best dev "
        f"LAS kept; semiparse: {settings['epochs']} epochs, the epoch with the best dev LAS "
        f"kept.  Train CPU: seconds of training (dev scoring included) on one thread; parse: "
        f"sentences per CPU second of the parse calls (no reading, loading or writing).  Several "
        f"roots: test sentences with more than one word on the root (the scorer refuses those "
        f"files; then the scores are counted as it would count them).",
        ["language", "parser", "seeds", "LAS", "UAS", "LAS no punct", "several roots",
         "best epoch (iteration)", "train CPU s", "parse sent/CPU s", "scorer"],
        [[lang, name, " ".join(str(r["seed"]) for r in runs) if runs[0]["seed"] is not None else "-",
          _cell(runs, "las"), _cell(runs, "uas"), _cell(runs, "las_nopunct"),
          " ".join(str(r["multiroot_sentences"]) for r in runs),
          " ".join(str(r["best_epoch"]) for r in runs),
          f"{sum(r['train_cpu_seconds'] for r in runs) / len(runs):.1f}",
          f"{sum(r['sentences_per_cpu_second'] for r in runs) / len(runs):.0f}", _scorer(runs)]
         for lang in settings["languages"] for name, runs in _rows(results, settings, lang)])
    sizes = [f"{lang} {r['train_sentences']} / {r['dev_sentences']} / {r['test_sentences']} "
             f"({r['test_part']})"
             for lang in settings["languages"] for r in select(results, lang=lang)[:1]]
    lines += ["", f"Sizes (sentences, train / dev / scored): {'; '.join(sizes)}.", "",
              "How each parser was trained (TRAIN, DEV: the treebank's files; MODEL: a temporary "
              "file):", ""]
    seen = set()
    for r in results:
        key = re.sub(r"--seed \S+", "--seed SEED", r["trainer"])
        if key not in seen:
            seen.add(key)
            lines.append(f"- {NAMES[r['parser']]}: `{key}`")
    default = next((r for r in results if r.get("system") == "default"), None)
    lines += ["", "UDPipe 1 embeds FORM, UPOS and FEATS (`embedding_form`, `embedding_upostag`, "
              "`embedding_feats`) and the relations of words already attached, and keeps a single "
              "root (its `single_root=1` default)."]
    if default is not None:
        options = default["options"]
        used = ", ".join(f"{k} {options[k]}" for k in ("word_dim", "char_dim", "upos_dim", "xpos_dim",
                                                      "feats_dim", "lemma_dim") if k in options)
        lines.append(f"semiparse's defaults, as `semiparse train --model bilstm` chose them (a "
                     f"dimension 0: the column is not read): {used}; system {default['cli_system']}, "
                     f"oracle {options.get('oracle')}, non-projective training trees: "
                     f"{options.get('nonproj')}.")
    lines.append("")
    for lang in settings["languages"]:
        rows = list(_rows(results, settings, lang))
        if not rows:
            continue
        names = [name for name, _ in rows]
        gold = {}
        for _, runs in rows:
            for rel, counts in runs[0]["relations"].items():
                if counts[0]:
                    gold[rel] = counts[0]
        lines += markdown_table(
            f"## {lang}: UAS / LAS by gold relation\n\nOn the test words whose gold relation (its "
            f"universal part) is the row's; words: their number in the test set.",
            ["relation", "words", *names],
            [[rel, n, *(_percent(_pooled(runs, "relations", rel)) for _, runs in rows)]
             for rel, n in sorted(gold.items(), key=lambda item: (-item[1], item[0]))])
        lines.append("")
        lengths = [b for b in length_bins() if any(b in runs[0]["lengths"] for _, runs in rows)]
        lines += markdown_table(
            f"## {lang}: UAS / LAS by gold dependency length\n\nOn the test words whose gold head is "
            f"the root, or that many words away.",
            ["length", "words", *names],
            [[b, next(runs[0]["lengths"][b][0] for _, runs in rows if b in runs[0]["lengths"]),
              *(_percent(_pooled(runs, "lengths", b)) for _, runs in rows)] for b in lengths])
        lines.append("")
    return lines
