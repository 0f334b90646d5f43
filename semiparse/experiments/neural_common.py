"""What the neural experiments share: one dev-selected training run of the
neural parser (or of the perceptron, for comparison) scored on a test set.

Every run trains on a UD training set, keeps the epoch with the best dev LAS
(``semiparse.neural``; for the perceptron, the same selection), and
scores the test set twice: LAS/UAS by the official CoNLL 2018 scorer (as
``semiparse evaluate`` computes them: every word, labels without subtypes)
and LAS/UAS without punctuation (the perceptron experiments' scores).
Torch uses one thread per run (``--jobs`` runs in parallel).
"""
import functools
import os
import tempfile

from semiparse.resources import data_dir
from semiparse.experiments.common import job_fields, mean_sd, read_parts, timed, ud_file

# shipped systems by name; the root-at-end system (Ballesteros and Nivre 2013)
# is read from its declaration file, as a user's system file is
SYSTEM_FILES = {"arc_standard_root_end": str(data_dir("systems") / "arc_standard_root_end.toml")}


PARTS = ("train", "dev", "test")  # what every run reads


def ud_files_with_dev(settings):
    """The train, dev and test files of the settings' treebanks."""
    return [ud_file(lang, part) for lang in settings["languages"] for part in PARTS]


def system_spec(name):
    """What the trainers are given for a system name: the name, or the path of its file."""
    return SYSTEM_FILES.get(name, name)


def counted_scores(test, predicted):
    """LAS/UAS as the CoNLL 2018 scorer counts them on gold words: the share
    of words with the gold head and the gold universal relation (the label
    without its ``:`` subtype), and the share with the gold head; and the
    number of sentences with several words attached to the root."""
    words = uh = lh = multiroot = 0
    for tree, (heads, labels) in zip(test, predicted):
        multiroot += sum(heads[d] == 0 for d in range(1, len(tree) + 1)) > 1
        for d in range(1, len(tree) + 1):
            words += 1
            if heads[d] == tree.heads[d]:
                uh += 1
                lh += labels[d].split(":")[0] == tree.labels[d].split(":")[0]
    return {"las": 100.0 * lh / words, "uas": 100.0 * uh / words, "multiroot_sentences": multiroot}


def score_test_set(test, predicted):
    """Test LAS/UAS by the official CoNLL 2018 scorer (``las``, ``uas``;
    ``scorer`` is ``"conll18"``) and without punctuation (``las_nopunct``,
    ``uas_nopunct``).  The scorer refuses a sentence with several words
    attached to the root, which arc-eager (its words left on the stack) and
    root-at-end systems output; then :func:`counted_scores` gives them
    (``scorer`` says why)."""
    from semiparse.treebank.scoring import ScorerRefused, attachment_scores, conll18_scores

    scores = attachment_scores(test, predicted)
    result = {**counted_scores(test, predicted), "scorer": "conll18"}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "system.conllu")
        with open(path, "wb") as stream:
            for tree, (heads, labels) in zip(test, predicted):
                stream.write(tree.source.relabeled(heads, labels))
        try:
            official = conll18_scores(test, path)
        except ScorerRefused as exc:
            result["scorer"] = f"refused ({str(exc).split(': ', 1)[-1]}): counted here"
        else:
            result.update(las=official["las"]["f1"], uas=official["uas"]["f1"])
    return {**result, "las_nopunct": scores["las_nopunct"], "uas_nopunct": scores["uas_nopunct"],
            "words": scores["words"]}


def neural_run(data, lang, system, seed, epochs, limit, **options):
    """Train the neural parser (``options``: :class:`semiparse.neural.options.Options`
    fields) with dev selection; its test scores, training size and time."""
    import torch

    from semiparse import neural

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train, dev, test = read_parts(data, lang, limit, PARTS)
        model, seconds = timed(lambda: neural.train(train, system=system_spec(system), dev=dev,
                                                    epochs=epochs, seed=seed, **options))
        predicted = neural.parse_sentences(model, test)
    finally:
        torch.set_num_threads(threads)
    return {"train_tokens": model.meta["train_tokens"], "best_epoch": model.meta["best_epoch"],
            "train_cpu_seconds": seconds,
            **score_test_set(test, predicted)}


def job_result(job, key, run=neural_run, **options):
    """The result of a :func:`~semiparse.experiments.common.ud_jobs` job: its
    fields (the variant under ``key``, None: not recorded) and the scores of
    ``run`` (:func:`neural_run` or :func:`perceptron_run`) with ``options``."""
    data, lang, system, _, seed, epochs, limit = job
    return {**job_fields(job, key), **run(data, lang, system, seed, epochs, limit, **options)}


def perceptron_run(data, lang, system, seed, epochs, limit, oracle, nonproj):
    """The greedy averaged perceptron under the same selection and scores."""
    train, dev, test = read_parts(data, lang, limit, PARTS)
    trainer = _selected_trainer()(system=system_spec(system), oracle=oracle, epochs=epochs, seed=seed,
                                 progress=False)
    model, seconds = timed(lambda: trainer.run(train, dev=dev, nonproj=nonproj))
    predicted = [model.parse(tree)[:2] for tree in test]
    return {"train_tokens": model.meta["train_tokens"], "best_epoch": trainer.best_epoch,
            "train_cpu_seconds": seconds, **score_test_set(test, predicted)}


@functools.lru_cache(maxsize=None)
def _selected_trainer():
    """The trainer class of :func:`perceptron_run` (defined on first use: the
    perceptron trainer is imported only by the runs that need it)."""
    from semiparse.perceptron import Trainer

    class Selected(Trainer):
        """The perceptron's :class:`~semiparse.perceptron.Trainer`, returning the
        averaged weights of the epoch with the best dev LAS (the first of
        equals) instead of the last epoch's: the trainer scores a copy of the
        averaged weights on the dev set after each epoch, and this keeps the
        best copy."""

        def run(self, trees, dev=None, nonproj="projectivize"):
            self._best = (-1.0, None, None)  # (dev LAS, epoch, weights)
            self._pending = None  # the copy the last epoch was scored with
            model = super().run(trees, dev=dev, nonproj=nonproj)
            self._keep_best()
            _, self.best_epoch, best = self._best
            if best is not None:
                model.weights = best.weights
            return model

        def _keep_best(self):
            if self._pending is not None and self.history and self.history[-1].get("las", -1.0) > self._best[0]:
                self._best = (self.history[-1]["las"], self.history[-1]["epoch"], self._pending)
            self._pending = None

        def _finished(self, model, copy=False):
            out = super()._finished(model, copy=copy)
            if copy:
                self._keep_best()
                self._pending = out
            return out

    return Selected


def cell(rows, key):
    """``mean ± sd`` of a score over a table cell's runs."""
    return mean_sd([r[key] for r in rows])


SCORE_COLUMNS = ["LAS", "UAS", "LAS no punct", "UAS no punct"]


def score_cells(runs):
    """The cells of :data:`SCORE_COLUMNS`: the test scores over a row's runs."""
    return [cell(runs, key) for key in ("las", "uas", "las_nopunct", "uas_nopunct")]


def best_epochs(runs):
    """The epoch each run kept, as a table cell."""
    return " ".join(str(r["best_epoch"]) for r in runs)
