"""The grammar oracle in C (``_grammar_rows.pyx``): against the Python grammar
path and the exhaustive search, with the buffer reduced to its critical nodes
where a system declares it, in single calls and in batches."""
import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semiparse
from semiparse.heads import no_crossing
from semiparse.testing.checking import check
from semiparse.testing.strategies import computations, gold_trees
from semiparse.transitions import load_system
from semiparse.transitions.runtime._configuration import kernel_scores
from semiparse.transitions.oracles._grammar_rows import grammar_kernel
from semiparse.transitions.oracles.gold import Gold
from semiparse.transitions.oracles.grammar_method import grammar_scores

from support import SYSTEMS as SYSTEMS_FILES

SHIPPED = sorted(p.stem for p in semiparse.resources.data_dir("systems").glob("*.toml"))
DECLARED = [name for name in SHIPPED if load_system(name).grammar is not None]
REDUCED = [name for name in DECLARED if load_system(name).completion_spec.critical_buffer]


def test_every_declared_system_has_the_kernel_and_the_reduction_is_declared_where_exact():
    assert DECLARED and all(grammar_kernel(load_system(n)) is not None for n in DECLARED)
    # arc-swift's buffer front takes edges to nodes deep in the stack: the
    # buffer cannot be reduced to its critical nodes (see the next test)
    assert "arc_standard_root_end" in REDUCED and "arc_eager_root_end" in REDUCED
    assert not any(name.startswith("arc_swift") for name in REDUCED)


@pytest.mark.parametrize("name", DECLARED)
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_the_kernel_agrees_with_the_python_grammar_path(name, data):
    """Up to 12 words (beyond the exhaustive search's reach), projective or
    not, complete or partial trees; the Python path never reduces the buffer."""
    system = load_system(name)
    heads = data.draw(gold_trees(1, 12, partial=True))
    partial = -1 in heads[1:]
    oracle = semiparse.oracle(system, method="grammar")
    c = data.draw(computations(system, len(heads) - 1, heads, oracle, partial=partial))
    got = oracle.scores(c.stack, c.buffer, heads, c.arcs, partial=partial)
    gold = Gold(heads, partial=True)
    assert got == grammar_scores(system, gold, c.stack, c.buffer, c.arcs, "none")


@pytest.mark.parametrize("name", REDUCED)
def test_the_reduced_buffer_agrees_with_the_exhaustive_search(name):
    """Projective gold trees only: the reduction applies to them."""
    [result] = check(name, ["none"], examples=600, max_n=9, seed=11)
    assert result.mismatch is None, result.mismatch.describe("grammar")


def test_check_refuses_a_wrong_critical_buffer_declaration(tmp_path):
    """arc-swift with critical_buffer = true: check finds a configuration
    where the reduced string overestimates."""
    text = (SYSTEMS_FILES / "arc_swift2.toml").read_text()
    line = 'grammar = "arc_swift2.grammar"\n'
    assert line in text
    (tmp_path / "arc_swift2.grammar").write_text((SYSTEMS_FILES / "arc_swift2.grammar").read_text())
    path = tmp_path / "arc_swift2.toml"
    path.write_text(text.replace(line, line + "critical_buffer = true\n"))
    [result] = check(str(path), ["none"], examples=600, max_n=7, seed=0)
    assert result.mismatch is not None
    assert no_crossing(result.mismatch.heads)


@pytest.mark.parametrize("name", ["arc_standard_root_end", "arc_eager_root_end", "arc_swift2"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_batch_rows_equal_single_calls_along_computations(name, data):
    """The rows of a batch (one computation per gold tree, scored from the
    last configuration to the first with the memo) equal single calls."""
    system = semiparse.system(name)
    oracle = system.oracle()
    configs, golds = _computations(system, data, 10)
    rows = oracle.scores_batch(configs, golds, n_jobs=data.draw(st.integers(1, 4)))
    for row, config, heads in zip(rows, configs, golds):
        _row_equals_single(oracle, row, oracle.scores(config, heads))


def _computations(system, data, max_words):
    """The configurations of 1-3 random computations, each on a gold tree
    (a tuple) of at most ``max_words`` words, and their gold trees."""
    configs, golds = [], []
    for _ in range(data.draw(st.integers(1, 3))):
        heads = tuple(data.draw(gold_trees(1, max_words)))
        config = system.initial(len(heads) - 1)
        while not config.is_final():
            configs.append(config)
            golds.append(heads)
            legal = config.legal()
            config = config.apply(legal[data.draw(st.integers(0, len(legal) - 1))])
    return configs, golds


def _row_equals_single(oracle, row, single):
    """A scores_batch row says what a scores call says, -inf elsewhere."""
    assert {t: v for t, v in zip(oracle.transitions, row) if t in single} == single
    assert all(v == float("-inf") for t, v in zip(oracle.transitions, row) if t not in single)


@pytest.mark.parametrize("name", ["arc_standard", "arc_hybrid", "arc_standard_root_end",
                                  "arc_eager_root_end"])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_works_kept_between_calls_give_the_rows_of_a_fresh_oracle(name, data):
    """scores_batch keeps each tuple's C work, memo included, from one call to
    the next: configurations scored over several calls in any order (as a
    lockstep training loop scores them, one step at a time) get the rows of
    single calls to another oracle; projective and non-projective trees."""
    system = semiparse.system(name)
    oracle, fresh = system.oracle(), system.oracle()
    configs, golds = _computations(system, data, 9)
    order = data.draw(st.permutations(range(len(configs))))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(configs)), max_size=4))))
    for lo, hi in zip([0, *cuts], [*cuts, len(configs)]):
        piece = order[lo:hi]
        rows = oracle.scores_batch([configs[i] for i in piece], [golds[i] for i in piece],
                                   n_jobs=data.draw(st.integers(1, 4)))
        for i, row in zip(piece, rows):
            _row_equals_single(oracle, row, fresh.scores(configs[i], golds[i]))


@pytest.mark.parametrize("name", DECLARED)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_columns_kept_from_the_last_string_never_change_a_row(name, data):
    """A work's chart keeps the columns of the prefix a string shares with
    the last one filled: configurations of one gold tree scored in any order
    through one oracle (its work and chart kept between calls, grown and
    freed as strings lengthen), or through one work whose chart limit
    changes between rows (charts kept, freed at the end of a row, or freed
    when the limit is lowered), get the rows of the Python grammar path,
    which fills each chart anew.  Up to 40 words; complete or partial trees."""
    system = semiparse.system(name)
    oracle = system.oracle(method="grammar")
    heads = tuple(data.draw(gold_trees(1, data.draw(st.sampled_from([8, 40])), partial=True)))
    partial = -1 in heads[1:]
    kernel = grammar_kernel(system.definition)
    work, columns = kernel.gold_type(heads), np.arange(len(kernel.columns), dtype=np.intc)
    configs = []
    for _ in range(data.draw(st.integers(1, 3))):
        config = system.initial(len(heads) - 1)
        while not config.is_final():
            configs.append(config)
            legal = config.legal()
            config = config.apply(legal[data.draw(st.integers(0, len(legal) - 1))])
    picked = data.draw(st.lists(st.sampled_from(configs), min_size=1, max_size=12))
    gold = Gold(heads, partial=True)
    inner = load_system(name)
    for config in picked:
        expected = grammar_scores(inner, gold, config.stack, config.buffer, config.arcs, "none")
        assert oracle.scores(config, heads, partial=partial) == expected
        work.chart_limit = data.draw(st.sampled_from([0, 1 << 12, 1 << 18, 1 << 24]))
        assert kernel_scores(system.machine, kernel, work, columns, len(heads) - 1, config.stack,
                             config.buffer, config.arcs) == expected


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_buffer_reduction_kept_from_the_last_call_is_the_one_of_a_fresh_work(data):
    """A work reuses the marks of its last buffer reduction when the buffer
    is the same: a sequence of buffers (any nodes, any order, often of one
    length) read through one work reduces each as a fresh work does."""
    heads = tuple(data.draw(gold_trees(1, 10, partial=True)))
    make = grammar_kernel(load_system("arc_standard_root_end")).gold_type
    work, n = make(heads), len(heads) - 1
    for _ in range(data.draw(st.integers(1, 8))):
        nodes = data.draw(st.permutations(range(n + 1)))
        size = data.draw(st.integers(0, n + 1))
        stack, buffer = sorted(nodes[size:]), nodes[:size]
        assert work.buffer_kept(stack, buffer) == make(heads).buffer_kept(stack, buffer)


def test_a_list_of_heads_is_read_anew_at_every_call():
    """Only a tuple's work is kept: a list changed in place between two calls
    is scored as it is now."""
    system = semiparse.system("arc_standard_root_end")
    oracle, fresh = system.oracle(), system.oracle()
    heads = [-1, 2, 0, 2, 3]
    config = system.initial(4).apply("shift").apply("shift")   # left_arc or right_arc: 2 -> 1 or 1 -> 2
    first = oracle.scores_batch([config], [heads])
    heads[:] = [-1, 0, 1, 2, 3]
    second = oracle.scores_batch([config], [heads])
    _row_equals_single(oracle, second[0], fresh.scores(config, tuple(heads)))
    assert not np.array_equal(first, second)


def test_cache_clear_drops_the_kept_works_and_the_rows_stay():
    """What benchmarks rely on to time a first call: after cache_clear the
    oracle keeps no work, checked tree or memo, and scores the same."""
    system = semiparse.system("arc_standard_root_end")
    oracle = system.oracle()
    heads = (-1, 2, 0, 4, 2, 6, 4, 6)
    config, configs = system.initial(7), []
    while not config.is_final():
        configs.append(config)
        config = config.apply(sorted(oracle.optimal(config, heads))[0])
    first = oracle.scores_batch(configs, [heads] * len(configs))
    [kept] = oracle._kept_trees[False].values()
    work = kept.rows[1]
    assert kept.heads is heads and work.parses > 0
    oracle.cache_clear()
    assert not any(oracle._kept_trees.values()) and oracle._fn is None
    assert np.array_equal(oracle.scores_batch(configs, [heads] * len(configs)), first)
    [again] = oracle._kept_trees[False].values()
    assert again.rows[1] is not work and again.rows[1].parses == work.parses


def test_an_oracle_keeps_at_most_kept_trees_tuples():
    """Many gold tuples in one call, or over several, never leave more than
    KEPT_TREES entries (each may hold a chart), and the rows stay right."""
    from semiparse.transitions.oracles.oracle import KEPT_TREES

    system = semiparse.system("arc_standard_root_end")
    oracle, fresh = system.oracle(), system.oracle()
    # distinct objects (a tuple made from a list is new), two contents
    trees = [tuple([-1, 2, 0, 2] if k % 2 else [-1, 0, 1, 2]) for k in range(KEPT_TREES + 40)]
    assert len({id(t) for t in trees}) == len(trees)
    configs = [system.initial(3).apply("shift")] * len(trees)
    for _ in range(2):
        rows = oracle.scores_batch(configs, trees)
        assert len(oracle._kept_trees[False]) <= KEPT_TREES
    for row, heads in zip(rows, trees):
        _row_equals_single(oracle, row, fresh.scores(configs[0], heads))


def test_the_works_of_a_batch_and_those_kept_share_the_chart_budget(monkeypatch):
    """A work keeps its chart between rows up to its limit: the works of a
    scores_batch call get an equal share of KEPT_CHARTS among its gold
    trees, and the works kept once the call gives them back an equal share
    among all kept (never below MIN_KEPT_CHART); the one work of single
    calls keeps up to SINGLE_CALL_CHART."""
    module = importlib.import_module("semiparse.transitions.oracles.oracle")
    in_call = []
    fill_rows = module.fill_rows

    def watched(configs, golds, machine, prepare, *rest):
        def prepared(heads, i):
            entry, n = prepare(heads, i)
            in_call.append(entry[1].chart_limit)
            return entry, n
        return fill_rows(configs, golds, machine, prepared, *rest)

    monkeypatch.setattr(module, "fill_rows", watched)
    system = semiparse.system("arc_swift2")
    oracle = system.oracle()
    config = system.initial(3).apply("shift")
    for count in (1, 4, 300):
        trees = [tuple([-1, 2, 0, 2]) for _ in range(count)]
        in_call.clear()
        oracle.scores_batch([config] * count, trees)
        assert in_call == [max(module.MIN_KEPT_CHART, module.KEPT_CHARTS // count)] * count
        kept = list(oracle._kept_trees[False].values())
        assert kept and {k.watch.chart_limit for k in kept} == {
            max(module.MIN_KEPT_CHART, module.KEPT_CHARTS // len(kept))}
    oracle.scores(config, (-1, 2, 0, 2))
    work = next(c.cell_contents for c in oracle._fn.__closure__
                if type(c.cell_contents).__name__ == "GrammarGold")
    assert work.chart_limit == module.SINGLE_CALL_CHART


@pytest.mark.parametrize("value", [1.5, True, -1, 2 ** 64, None, "1024"])
def test_a_chart_limit_that_is_not_a_number_of_bytes_is_a_value_error(value):
    kernel = grammar_kernel(load_system("arc_swift2"))
    work = kernel.gold_type((-1, 0, 1))
    with pytest.raises(ValueError, match="chart_limit must be a number of bytes"):
        work.chart_limit = value
    work.chart_limit = np.int64(1 << 20)   # numpy's integers are integers
    assert work.chart_limit == 1 << 20


def test_fill_rows_checks_each_kernel_against_the_columns_it_is_given():
    """Column arrays are checked once per (kernel, array): an array shared by
    a kernel with more columns is refused, not read past its end."""
    from semiparse.transitions.runtime._configuration import fill_rows
    from semiparse.transitions.runtime._machine import machine_for

    system = semiparse.system("arc_standard_root_end")
    small = grammar_kernel(system.definition)
    large = grammar_kernel(load_system("arc_eager_root_end"))
    columns = np.arange(3, dtype=np.intc)
    first, second = (-1, 0, 1), (-1, 2, 0)
    entries = {first: small, second: large}

    def prepare(heads, i):
        kernel = entries[heads]
        return (kernel, kernel.gold_type(heads), 0, columns), 2

    configs = [system.initial(2), system.initial(2)]
    out = np.empty((2, 3))
    with pytest.raises(ValueError, match="at most 64 columns, each mapped"):
        fill_rows(configs, [first, second], machine_for(system.definition), prepare,
                  lambda config, i: None, out)


@pytest.mark.parametrize("name", ["arc_swift2", "arc_standard_root_end"])
def test_strings_parsed_reversed_by_the_mirrored_grammar_give_the_rows_of_the_python_path(name):
    """A row whose configuration's string has the longer buffer part is
    parsed reversed, by the mirrored grammar; along computations of random
    trees (complete and partial) both directions occur, one work keeping its
    chart throughout, and every row is the Python grammar path's."""
    system = semiparse.system(name)
    kernel, machine = grammar_kernel(system.definition), system.machine
    columns = np.arange(len(kernel.columns), dtype=np.intc)
    rng = np.random.default_rng(3)
    parses = reversed_parses = 0
    for n, hidden in ((3, 0), (9, 0), (16, 0), (12, 4)):
        heads, placed = [-1] * (n + 1), [0]
        for d in rng.permutation(np.arange(1, n + 1)):   # a random tree, any shape
            heads[d] = int(rng.choice(placed))
            placed.append(int(d))
        for d in rng.choice(np.arange(1, n + 1), hidden, replace=False):   # unknown heads
            heads[d] = -1
        heads = tuple(heads)
        work, gold = kernel.gold_type(heads), Gold(heads, partial=True)
        config = system.initial(n)
        while not config.is_final():
            got = kernel_scores(machine, kernel, work, columns, n, config.stack, config.buffer,
                                config.arcs)
            assert got == grammar_scores(system.definition, gold, config.stack, config.buffer,
                                         config.arcs, "none")
            legal = config.legal()
            config = config.apply(legal[int(rng.integers(0, len(legal)))])
        parses, reversed_parses = parses + work.parses, reversed_parses + work.parses_reversed
    assert 0 < reversed_parses < parses


def test_the_memo_saves_the_parse_of_the_successor_a_computation_took():
    """Scored from the last configuration of a computation to the first, each
    configuration's successor on the computation has its value remembered:
    one parse fewer per configuration than its legal transitions."""
    system = semiparse.system("arc_standard_root_end")
    heads = (-1, 2, 0, 4, 2, 6, 4, 6)
    oracle = system.oracle()
    config, configs = system.initial(7), []
    while not config.is_final():
        configs.append(config)
        config = config.apply(sorted(oracle.optimal(config, heads))[0])
    kernel = grammar_kernel(system.definition)
    machine = system.machine
    columns = np.arange(len(kernel.columns), dtype=np.intc)
    cold, warm = kernel.gold_type(heads), kernel.gold_type(heads)
    for c in reversed(configs):
        one = kernel_scores(machine, kernel, warm, columns, 7, c.stack, c.buffer, c.arcs)
        assert one == oracle.scores(c, heads)
    legal = sum(len(c.legal()) for c in configs)
    assert warm.parses <= legal - (len(configs) - 1)
    for c in configs:   # from the first: no successor was scored before
        kernel_scores(machine, kernel, cold, columns, 7, c.stack, c.buffer, c.arcs)
    assert cold.parses > warm.parses


def test_check_suggests_the_declaration_where_the_reduction_agrees():
    """A user's root-at-end arc-standard without critical_buffer passes, and
    check advises declaring it; arc-swift passes without the advice (its
    buffer cannot be reduced), also when the check itself is short (the
    trial of the declaration once took a quarter of the examples, and
    arc-swift k <= 3 first differs on sentences of 6 words: the advice was
    wrong), and a system that declares it gets none."""
    [user] = check(str(SYSTEMS_FILES / "arc_standard_root_end.toml"), ["none"], examples=200)
    assert user.ok and "critical_buffer = true" in user.hint
    [swift] = check("arc_swift3", ["none"], examples=100)
    assert swift.ok and swift.hint is None
    [shipped] = check("arc_standard_root_end", ["none"], examples=100)
    assert shipped.ok and shipped.hint is None


OUT_OF_MEMORY = """
import resource
import semiparse
system = semiparse.system("arc_swift2")
oracle = system.oracle()
n = 150
heads = (-1, 0) + tuple(range(1, n))   # a chain, and no critical_buffer: a chart of 152 positions
config = system.initial(n)
oracle.scores(system.initial(3), (-1, 0, 1, 2))
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (4 << 20), resource.RLIM_INFINITY))
for call in (lambda: oracle.scores(config, heads), lambda: oracle.scores_batch([config], [heads]),
             lambda: oracle.scores_batch([config], [list(heads)])):
    try:
        call()
        print("no error")
    except MemoryError as exc:
        print("MemoryError:", exc)
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
print("memory back:", oracle.scores(config, heads) == system.oracle().scores(config, heads))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc to size the limit")
def test_a_chart_that_does_not_fit_in_memory_is_a_memory_error_not_a_wrong_row(tmp_path):
    """Under an address-space limit (this process's own, in a child) the
    chart of a long string cannot be allocated: single calls and batches
    raise MemoryError instead of scoring the transition -inf (a batch
    whose gold tree is a list once did).  Once memory is back, the same
    oracle answers as a fresh one (single calls kept raising: the work kept
    for the tree kept its out-of-memory mark)."""
    done = subprocess.run([sys.executable, "-c", OUT_OF_MEMORY], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # not the checkout: the installed package
    assert done.stdout.splitlines() == ["MemoryError: the oracle's chart does not fit in memory"] * 3 + [
        "memory back: True"], done.stdout + done.stderr


def _two_rows():
    """One scores_batch call on two threads."""
    system = semiparse.system("arc_standard_root_end")
    config = system.initial(4).apply("shift").apply("shift")
    return system.oracle().scores_batch([config, config], [(-1, 2, 0, 2, 3), (-1, 0, 1, 2, 3)],
                                        n_jobs=2).tolist()


def _rows_to(queue):
    queue.put(_two_rows())


def test_threads_work_in_a_forked_child():
    """The thread pools kept between scores_batch calls are the parent's
    only: a child forked after the parent used one makes its own (a pool
    whose threads did not survive the fork would never run its tasks)."""
    import multiprocessing

    expected = _two_rows()   # the parent's pool of two threads exists now
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_rows_to, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=60) == expected
    finally:
        child.join(timeout=60)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0


ONE_ORACLE_ON_THREADS = """
import random, sys, threading
import semiparse
name = sys.argv[1]
system, oracle = semiparse.system(name), semiparse.oracle(name)
rng, work = random.Random(1), []
for _ in range(12):
    n = rng.randrange(2, 10)
    heads, placed = [-1] + [0] * n, [0]
    for w in rng.sample(range(1, n + 1), n):
        heads[w] = rng.choice(placed)
        placed.append(w)
    config = system.initial(n)
    while not config.is_final():
        work.append((config, tuple(heads)))
        config = config.apply(rng.choice(config.legal()))
expected = [semiparse.oracle(name).scores(c, g) for c, g in work]
wrong = []
def calls(k):
    r = random.Random(k)
    for _ in range(1500):
        i = r.randrange(len(work))
        if oracle.scores(*work[i]) != expected[i]:
            wrong.append(i)
threads = [threading.Thread(target=calls, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("wrong", len(wrong))
"""


@pytest.mark.parametrize("name", ["arc_swift2", "arc_hybrid"])
def test_one_oracle_called_from_threads_answers_right(tmp_path, name):
    """scores keeps its gold tree and the C kernel's work between calls:
    calls on four threads with different gold trees got each other's
    answers, then corrupted the heap (a crash), where they now take turns."""
    done = subprocess.run([sys.executable, "-c", ONE_ORACLE_ON_THREADS, name], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.split() == ["wrong", "0"], done.stdout + done.stderr
