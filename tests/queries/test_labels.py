"""Every query with labelled weights, and every query in batches: labelled
marginals and max-marginals against brute force, ``parse`` with labels,
batches equal single calls, both ways of computing expectations agree."""
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings

import semiparse
from semiparse import semiring as sr
from semiparse.chart.engine import parse_labelled
from semiparse.chart.labels import reduce_labels

from brute_force import labelled_derivations, log_partition
from support import REPO, labelled_cases

NEG_INF = float("-inf")


def _brute_label_marginals(derivations, shape):
    mu, best = np.zeros(shape), np.full(shape, NEG_INF)
    log_z = log_partition(derivations)
    for score, heads, labels in derivations:
        for d in range(1, len(heads)):
            mu[heads[d], d, labels[d]] += math.exp(score - log_z)
            best[heads[d], d, labels[d]] = max(best[heads[d], d, labels[d]], score)
    return mu, best


@settings(max_examples=80)
@given(case=labelled_cases(max_len=5))
def test_labelled_marginals_and_max_marginals_equal_brute_force(case):
    g, terms, w, _ = case
    derivations = labelled_derivations(g, terms, w)
    if not derivations:
        for query in (semiparse.marginals, semiparse.max_marginals):
            with pytest.raises(ValueError, match="no tree"):
                query(g, terms, w)
        return
    mu, best = _brute_label_marginals(derivations, w.shape)
    for engine in ("auto", "python"):
        assert np.allclose(semiparse.marginals(g, terms, w, engine=engine), mu, atol=1e-9)
        got = semiparse.max_marginals(g, terms, w, engine=engine)
        assert np.array_equal(np.isinf(got), np.isinf(best))
        assert np.allclose(got[np.isfinite(best)], best[np.isfinite(best)], atol=1e-9)


@settings(max_examples=60)
@given(case=labelled_cases(max_len=5))
def test_parse_takes_labelled_weights(case):
    g, terms, w, _ = case
    for semiring in ("boolean", "counting", "maxplus", "viterbi", "log"):
        got, expected = semiparse.parse(g, terms, w, semiring), parse_labelled(g, terms, w, semiring)
        assert got.value == expected.value or (got.value != got.value and expected.value != expected.value)
        assert (got.heads, getattr(got, "labels", None)) == (expected.heads, expected.labels)
    derivations = labelled_derivations(g, terms, w)
    viterbi = semiparse.parse(g, terms, w, "viterbi")
    if derivations:
        top = max(score for score, _, _ in derivations)
        assert math.isclose(viterbi.value, top, abs_tol=1e-9)
        assert (top, viterbi.heads, viterbi.labels) in [(s, h, l) for s, h, l in derivations]
    with pytest.raises(ValueError, match="labelled weights support the semirings"):
        semiparse.parse(g, terms, w, "kbest", k=2)


def _batch(rng, n_items=5, labels=2):
    g = semiparse.load_grammar("projective")
    items = []
    for _ in range(n_items):
        n1 = int(rng.integers(2, 8))
        shape = (n1, n1, labels) if labels else (n1, n1)
        items.append(("s" * n1, rng.normal(size=shape)))
    return g, items


@pytest.mark.parametrize("labels", [0, 3])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_batches_of_every_query_equal_single_calls(labels, n_jobs):
    rng = np.random.default_rng(labels + 10 * n_jobs)
    g, items = _batch(rng, labels=labels)
    for query in (semiparse.marginals, semiparse.max_marginals, semiparse.entropy):
        batch = query(g, items, n_jobs=n_jobs)
        assert len(batch) == len(items)
        for got, (terms, w) in zip(batch, items):
            assert np.array_equal(got, query(g, terms, w))
    values = [rng.normal(size=w.shape[:2]) for _, w in items]
    triples = [(t, w, v) for (t, w), v in zip(items, values)]
    assert semiparse.expected(g, triples, n_jobs=n_jobs) == [
        semiparse.expected(g, t, w, v) for t, w, v in triples]
    draws = semiparse.sample(g, items, rng=random.Random(7), k=2)
    one_by_one = random.Random(7)
    assert draws == [semiparse.sample(g, t, w, rng=one_by_one, k=2) for t, w in items]
    parsed = semiparse.parse(g, items, semiring="viterbi", n_jobs=n_jobs)
    assert [(p.value, p.heads, getattr(p, "labels", None)) for p in parsed] == [
        (p.value, p.heads, getattr(p, "labels", None))
        for p in (semiparse.parse(g, t, w, "viterbi") for t, w in items)]


def test_batch_errors_name_the_item():
    g, items = _batch(np.random.default_rng(0), labels=0)
    bad = items[:1] + [(items[1][0], np.full_like(items[1][1], np.nan))]
    for query in (semiparse.entropy, semiparse.marginals, semiparse.sample):
        with pytest.raises(ValueError, match="batch item 1: .*NaN"):
            query(g, bad)
    with pytest.raises(ValueError, match="batch item 1: expected a .terminals, weights, values. triple"):
        semiparse.expected(g, [items[0] + (np.zeros_like(items[0][1]),), items[1]])
    with pytest.raises(ValueError, match="needs values"):
        semiparse.expected(g, *items[0])


@settings(max_examples=40)
@given(case=labelled_cases(max_len=5))
def test_expectations_by_marginals_equal_the_expectation_semiring(case):
    """The queries (edge marginals) and the expectation semiring in the
    generic engine, over the labels reduced to their log-sum-exp and their
    means under the label posterior, give the same numbers."""
    g, terms, w, values = case
    if not labelled_derivations(g, terms, w):
        return
    labels = reduce_labels(w)
    mean_values = labels.mean(values)
    mean_scores = labels.mean(np.where(w > NEG_INF, w, 0.0))
    log_z, expected = semiparse.parse(g, terms, labels.logsumexp, sr.Expectation(mean_values)).value
    _, score = semiparse.parse(g, terms, labels.logsumexp, sr.Expectation(mean_scores)).value
    fast = (semiparse.entropy(g, terms, w), semiparse.expected(g, terms, w, values))
    slow = (max(log_z - score, 0.0), expected)
    assert all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(fast, slow))


def test_the_crf_example_of_the_docs_trains(capsys):
    """docs/engine.md's CRF example runs and raises the log-likelihood."""

    text = (REPO / "docs" / "engine.md").read_text(encoding="utf-8")
    section = text[text.index("### Example: a first-order projective CRF"):]
    start = section.index("```python\n") + len("```python\n")
    code = section[start:section.index("```\n", start)]
    namespace = {}
    exec(compile(code, "docs/engine.md", "exec"), namespace)  # asserts the likelihood rose
    assert namespace["accuracy"] > 0.6
    assert "log-likelihood -426.5 -> -186.6" in capsys.readouterr().out


def test_entropy_and_expectations_of_300_words_with_scores_of_50_are_finite():
    rng = np.random.default_rng(3)
    w = rng.uniform(-50, 50, size=(301, 301))
    entropy = semiparse.entropy("projective", "s" * 301, w)
    gold = np.zeros((301, 301))
    gold[0, 1:] = 1.0
    expected = semiparse.expected("projective", "s" * 301, w, gold)
    assert math.isfinite(entropy) and entropy >= 0.0
    assert math.isfinite(expected) and 0.0 <= expected <= 300.0
    labelled = np.stack([w, w - 3.0], axis=2)  # two labels: entropy grows by each edge's label entropy
    assert semiparse.entropy("projective", "s" * 301, labelled) > entropy
