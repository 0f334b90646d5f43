"""The Cython parser core against the Python transition systems and brute force.

- the Cython state follows ``semiparse.transitions.load_system`` step by step on
  random transition sequences (legal moves, configuration, arcs, finality);
- every hashed feature equals a pure-Python re-computation from the Python
  configuration (slots, children, valency, label sets, distance, the hash);
- the weight table (perceptron averaging, RDA) against dense numpy versions.
"""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.perceptron import _core
from semiparse.perceptron.features import ZHANG_NIVRE, compile_templates
from semiparse.transitions import load_system
from semiparse.transitions.runtime._machine import machine_for

SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager", "lr_spine")
M64 = (1 << 64) - 1


# -- a pure-Python reference of the feature extractor -------------------------

def mix(h, v):
    h ^= (v + 0x9E3779B97F4A7C15 + ((h << 6) & M64) + (h >> 2)) & M64
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & M64
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & M64
    h ^= h >> 31
    return h


def reference_slots(stack, buffer, arcs):
    def children(x):
        deps = sorted(d for d in range(len(arcs)) if arcs[d] == x)
        left = [d for d in deps if d < x]
        right = [d for d in deps if d > x]
        return ((left[0] if left else -1), (left[1] if len(left) > 1 else -1),
                (right[-1] if right else -1), (right[-2] if len(right) > 1 else -1))

    get = lambda xs, i: xs[i] if -len(xs) <= i < len(xs) else -1
    s0, s1, s2 = get(stack, -1), get(stack, -2), get(stack, -3)
    b0, b1, b2 = get(buffer, 0), get(buffer, 1), get(buffer, 2)
    s0h = arcs[s0] if s0 >= 0 else -1
    s0h2 = arcs[s0h] if s0h >= 0 else -1
    none4 = (-1, -1, -1, -1)
    l1, l2, r1, r2 = children(s0) if s0 >= 0 else none4
    t1, t2, u1, u2 = children(s1) if s1 >= 0 else none4
    bl1, bl2, _, _ = children(b0) if b0 >= 0 else none4
    return {"s0": s0, "s1": s1, "s2": s2, "b0": b0, "b1": b1, "b2": b2, "s0h": s0h, "s0h2": s0h2,
            "s0l": l1, "s0l2": l2, "s0r": r1, "s0r2": r2, "s1l": t1, "s1r": u1, "s1l2": t2,
            "s1r2": u2, "b0l": bl1, "b0l2": bl2}


def reference_features(stack, buffer, arcs, labels, words, tags):
    slots = reference_slots(stack, buffer, arcs)

    def attr(slot, a):
        i = slots[slot]
        if i < 0:
            return -1
        deps = [d for d in range(len(arcs)) if arcs[d] == i]
        if a == "w":
            return words[i]
        if a == "p":
            return tags[i]
        if a == "l":
            return labels[i]
        if a in ("vl", "vr"):
            return sum(1 for d in deps if (d < i) == (a == "vl"))
        if a in ("sl", "sr"):
            mask = 0
            for d in deps:
                if (d < i) == (a == "sl"):
                    mask |= 1 << (labels[d] & 63)
            return mask
        s0 = slots["s0"]
        if s0 < 0:
            return -1
        d = abs(i - s0)
        return d if d < 5 else (5 if d < 10 else 10)

    out = []
    for t, template in enumerate(ZHANG_NIVRE):
        h = mix(0x1234567 + t, t)
        for atom in template.split():
            slot, a = _split_atom(atom)
            h = mix(h, (attr(slot, a) + 2) & M64)
        out.append(h | 1)
    return out


def _split_atom(atom):
    for slot in sorted(_core.SLOTS, key=len, reverse=True):
        if atom.startswith(slot) and atom[len(slot):] in _core.ATTRIBUTES:
            return slot, atom[len(slot):]
    raise AssertionError(atom)


TEMPLATES = compile_templates()


@settings(max_examples=60)
@given(system=st.sampled_from(SYSTEMS), n=st.integers(1, 8),
       choices=st.lists(st.integers(0, 1000), min_size=40, max_size=40), seed=st.integers(0, 10**6))
def test_core_state_follows_python_system_and_features_match_reference(system, n, choices, seed):
    rng = random.Random(seed)
    words = [rng.randrange(-5, 5) for _ in range(n + 1)]
    tags = [rng.randrange(0, 3) for _ in range(n + 1)]
    sent = _core.Sentence(words, tags, [-1] * (n + 1), [-1] * (n + 1))
    machine = machine_for(system)
    state = _core.State(sent, machine)
    py = load_system(system)
    stack, buffer, arcs = py.initial(n)
    labels = [-1] * (n + 1)
    for choice in choices:
        assert state.is_final() == py.is_final(stack, buffer, arcs)
        assert state.stack == stack and state.buffer == buffer
        assert state.arcs == arcs and state.labels == tuple(labels)
        assert list(state.features(TEMPLATES)) == reference_features(
            stack, buffer, arcs, labels, words, tags)
        legal = sorted(py.legal(stack, buffer, arcs))
        codes = range(4 * (n + 2))  # LR-spine: K up to n + 1
        mine = sorted(machine.name(m) for m in codes
                      if (system == "lr_spine" or m < 4) and state.valid(m))
        assert mine == legal
        if state.is_final():
            assert not legal
            break
        name = legal[choice % len(legal)]
        label = choice % 70  # label sets wrap at 64
        arc = state.arc(machine.code(name))
        stack, buffer, arcs, edge = py.apply(stack, buffer, arcs, name)
        assert arc == edge
        if edge is not None:
            labels[edge[1]] = label
        state.do(machine.code(name), label)
        for root in stack:
            left, right = _py_spines(root, arcs)
            assert state.spine(root, "left") == list(left)
            assert state.spine(root, "right") == list(right)


def _py_spines(root, arcs):
    from semiparse.transitions.systems.lr_spine import spines

    return spines(root, arcs)


@settings(max_examples=30)
@given(n_classes=st.integers(1, 6), seed=st.integers(0, 10**6))
def test_weights_perceptron_average_and_rda_match_dense_reference(n_classes, seed):
    rng = np.random.default_rng(seed)
    keys = (rng.integers(1, 40, size=12).astype(np.uint64) * np.uint64(2654435761)) | np.uint64(1)
    vocab = {int(k): i for i, k in enumerate(sorted(set(int(k) for k in keys)))}
    dense_w = np.zeros((len(vocab), n_classes))
    dense_u = np.zeros_like(dense_w)
    perceptron = _core.Weights(n_classes)
    t = 1.0
    for _ in range(20):
        feats = np.ascontiguousarray(rng.choice(keys, size=3))
        cls = int(rng.integers(n_classes))
        delta = float(rng.choice([-1.0, 1.0]))
        perceptron.perceptron_update(feats, cls, delta, t)
        for f in feats:
            dense_w[vocab[int(f)], cls] += delta
            dense_u[vocab[int(f)], cls] += t * delta
        probe = np.ascontiguousarray(rng.choice(keys, size=4))
        expect = sum(dense_w[vocab[int(f)]] for f in probe)
        assert np.allclose(perceptron.scores(probe), expect)
        t += 1
    average = perceptron.snapshot(t)
    perceptron.finalize(t)
    ref = dense_w - dense_u / t
    for k, i in vocab.items():
        probe = np.array([k], dtype=np.uint64)
        assert np.allclose(perceptron.scores(probe), ref[i])
        assert np.allclose(average.scores(probe), ref[i])

    # AdaGrad-RDA (Goldberg 2013, Algorithm 2): w = alpha * shrink(g, j lambda) / sqrt(G + rho)
    rda = _core.Weights(n_classes, True)
    rda.alpha, rda.rho, rda.lam = 0.7, 0.01, 0.05
    g = np.zeros((len(vocab), n_classes))
    G = np.zeros_like(g)
    for j in range(15):
        feats = np.ascontiguousarray(np.unique(rng.choice(keys, size=3)))
        direction = rng.normal(size=n_classes)
        rda.rda_update(feats, direction)
        for f in feats:
            g[vocab[int(f)]] += direction
            G[vocab[int(f)]] += direction ** 2
        thr = (j + 1) * rda.lam
        w = np.where(np.abs(g) > thr, g - np.sign(g) * thr, 0.0) * 0.7 / np.sqrt(G + 0.01)
        for k, i in vocab.items():
            assert np.allclose(rda.scores(np.array([k], dtype=np.uint64)), w[i])
        assert rda.n_nonzero() == np.count_nonzero(w)


def test_templates_reject_bad_atoms():
    with pytest.raises(ValueError, match="bad feature atom"):
        compile_templates(["s0w s9p"])
    with pytest.raises(ValueError, match="empty"):
        compile_templates([""])
