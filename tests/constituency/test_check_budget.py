"""The constituent check's budget: the exhaustive search stops past
``max_states`` states, an example stopped so is counted as skipped (never as
a pass), and ``semiparse check top_down|in_order`` finishes in a bounded
memory without the PTB sample (random trees only)."""
import os
import resource
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiparse.cli._constituent_check import run as run_check
from semiparse.transitions.constituent.exhaustive import OverBudget, Search, min_loss
from semiparse.transitions.constituent.systems import NT, REDUCE, SHIFT, system
from semiparse.treebank.brackets import constituents, read_ptb, tree
from semiparse.testing import constituent_checking as checking

# The example on which ``check --all`` ran for half an hour: five words, 13
# gold constituents in unary chains, and a walk whose wrong NTs leave a
# minimum loss past 5.  Iterative deepening visits about six times more
# states per unit of the bound (4 000, 12 000, 62 000, 347 000 for bounds
# 1 to 4), and the memo keeps every one.
BLOW_UP = "(C (C (C (T w0) (A (T w1)))) (B (B (A (B (C (B (T w2))) (B (B (T w3))))) (A (T w4)))))"
BLOW_UP_PATH = [NT("C"), NT("C"), NT("C"), SHIFT, NT("A"), NT("B"), SHIFT, REDUCE, REDUCE, NT("A")]
BLOW_UP_WALK = [(True, 18), (True, 33), (True, 14), (True, 45), (True, 20), (False, 37), (True, 11),
                (True, 39), (True, 30), (False, 19), (True, 19), (True, 16), (True, 36), (False, 19)]


@pytest.fixture(scope="module")
def ptb(shared_data):
    return read_ptb(shared_data / "ptb" / "wsj_sample_combined.mrg")


@pytest.fixture
def ptb_read_once(ptb, monkeypatch):
    """The constituent check reads the PTB sample for its gold trees at each
    call (2 to 5 s): here it gets this module's copy of the same file."""
    read = checking.ptb_trees
    monkeypatch.setattr(checking, "ptb_trees", lambda path=None: ptb if path is None else read(path))


def blow_up_configuration():
    td = system("top_down")
    c = td.initial(5)
    for t in BLOW_UP_PATH:
        c = td.apply(c, t)
    return c


def test_the_search_stops_past_its_budget():
    search = Search("top_down", tree(BLOW_UP), max_states=20_000)
    with pytest.raises(OverBudget, match="past 20000 states"):
        search.loss(blow_up_configuration())
    assert search.states == 20_001 and len(search.memo) <= 20_000
    # spent: the next question stops at once
    with pytest.raises(OverBudget):
        search.loss(system("top_down").initial(5))
    assert search.states == 20_002


def test_the_walk_of_the_blow_up_is_stopped_and_says_how_far_it_got():
    with pytest.raises(OverBudget) as stopped:
        checking.check_walk("top_down", tree(BLOW_UP), BLOW_UP_WALK, max_states=50_000)
    # the configurations before the one past the budget were checked
    assert stopped.value.checked == len(BLOW_UP_PATH)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "9"])
def test_a_bad_budget_is_refused(bad):
    with pytest.raises(ValueError, match="max_states must be a positive integer or None"):
        Search("in_order", tree(BLOW_UP), max_states=bad)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_budget_does_not_change_an_answer_it_gives(data):
    """Within the budget the answer is the unbounded search's."""
    name = data.draw(st.sampled_from(["top_down", "in_order"]))
    t = data.draw(checking.random_trees(4))
    transitions = system(name)
    c = transitions.initial(len(t))
    for k in data.draw(st.lists(st.integers(0, 20), max_size=6)):
        if transitions.is_final(c):
            break
        legal = [NT(x) if move.kind == "NT" else move for move in transitions.legal(c)
                 for x in (("A", "B") if move.kind == "NT" else (None,))]
        c = transitions.apply(c, legal[k % len(legal)])
    bounded = Search(name, t, max_states=checking.MAX_STATES)
    assert bounded.loss(c) == min_loss(name, c, t)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_generated_trees_respect_their_bounds(data):
    """What the check draws: 1..max_n words, labels A B C, at most two
    phrasal nodes over one span, so at most 2 (2n - 1) constituents."""
    max_n = data.draw(st.integers(1, 9))
    t = data.draw(checking.random_trees(max_n))
    n = len(t)
    assert 1 <= n <= max_n
    spans = Counter((l, r) for _, l, r in constituents(t))
    assert max(spans.values()) <= 2
    assert len(constituents(t)) <= 2 * (2 * n - 1)
    assert {label for label, _, _ in constituents(t)} <= set(checking.LABELS)


def test_skipped_examples_are_counted_and_not_passes(capsys, ptb_read_once):
    result = checking.check("in_order", examples=20, max_n=5, seed=1, max_states=40)
    assert result.ok and result.skipped > 0 and result.max_states == 40
    assert result.passed + result.skipped == result.calls == 20
    # the CLI says how many, and fails when more than a quarter were skipped
    assert run_check("in_order", examples=20, max_n=5, seed=1, max_states=40) == 1
    out = capsys.readouterr().out
    assert f"skipped: {result.skipped} over budget (exhaustive search past 40 states)" in out
    assert "FAIL" in out and "proves too little" in out


def test_the_default_budget_skips_nothing_on_short_sentences(capsys, ptb_read_once):
    assert run_check("top_down", examples=40, max_n=4, seed=5) == 0
    out = capsys.readouterr().out
    assert "oracle == exhaustive search on 40 examples" in out
    assert "skipped: 0 over budget" in out


def _limit_memory():
    limit = 3 * 1024 ** 3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["top_down", "in_order"])
def test_the_command_finishes_without_the_ptb_sample_in_bounded_memory(tmp_path, name):
    env = dict(os.environ, SEMIPARSE_DATA=str(tmp_path), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "semiparse", "check", name, "--examples", "60"],
                          env=env, capture_output=True, text=True, timeout=400,
                          preexec_fn=_limit_memory, cwd=tmp_path)  # the installed package
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PTB sample not found" in done.stdout
    assert "oracle == exhaustive search on" in done.stdout and "skipped:" in done.stdout


BLOW_UP_SEARCH = f"""
import resource
from semiparse.testing.constituent_checking import MAX_STATES
from semiparse.transitions.constituent.exhaustive import OverBudget, Search
from semiparse.transitions.constituent.systems import NT, REDUCE, SHIFT, system
from semiparse.treebank.brackets import tree

td = system("top_down")
c = td.initial(5)
for t in [NT("C"), NT("C"), NT("C"), SHIFT, NT("A"), NT("B"), SHIFT, REDUCE, REDUCE, NT("A")]:
    c = td.apply(c, t)
search = Search("top_down", tree({BLOW_UP!r}), max_states=MAX_STATES)
try:
    search.loss(c)
except OverBudget as stopped:
    print(stopped, "memo", len(search.memo))
print("peak MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.slow
def test_the_default_budget_stops_the_blow_up_in_bounded_memory(tmp_path):
    """The issue's example with the check's budget, under a memory limit
    (the unbounded search filled gigabytes there): it stops with OverBudget."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", BLOW_UP_SEARCH], env=env, capture_output=True,
                          text=True, timeout=300, preexec_fn=_limit_memory,
                          cwd=tmp_path)  # the installed package, not the checkout
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"exhaustive search stopped past {checking.MAX_STATES} states" in done.stdout
    memo = int(done.stdout.split("memo ")[1].split()[0])
    assert memo <= checking.MAX_STATES
    assert int(done.stdout.split("peak MB ")[1]) < 1024
