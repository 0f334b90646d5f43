"""Every Python example of README.md and docs/*.md runs as written.

The ```python blocks of one page run in order in one namespace, from a
temporary folder that holds the files the examples name (``train.conllu``,
``dev.conllu``, ``test.conllu``, ``in.conllu`` from a shared UD treebank,
``wsj_sample_combined.mrg`` from the PTB sample).  A block of ``>>>`` lines
is a doctest: its printed results must match.  A block that is not an
example (a signature, a fragment of a user's loop) is preceded by
``<!-- docs-test: skip: REASON -->``, and the reason is required.
"""
import doctest
import re
import shutil
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
BLOCK = re.compile(r"(?:^<!-- docs-test: (?P<mark>[^\n]*?) -->\n)?^```python\n(?P<code>.*?)^```",
                   re.S | re.M)
SENTENCES = {"train.conllu": 20, "dev.conllu": 10, "test.conllu": 10, "in.conllu": 10}


def blocks(page):
    """``(line, mark, code)`` of each ```python block of ``page``."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start("code")) + 1, m.group("mark"), m.group("code"))
            for m in BLOCK.finditer(text)]


def _first_sentences(source, count):
    text = source.read_text(encoding="utf-8")
    return "".join(block + "\n\n" for block in text.split("\n\n")[:count] if block.strip())


@contextmanager
def one_torch_thread(page):
    """torch on one CPU thread while a page that uses it runs, its setting
    given back after.  The tests share the machine (``pytest -n 2`` on two
    cores), and torch's default of a thread per core is slower there by
    far: the neural page's training took minutes instead of seconds.  The
    examples themselves run as written."""
    text = page.read_text()
    torch = None
    if "torch" in text or "semiparse.neural" in text:
        try:
            import torch
        except ModuleNotFoundError:
            pass
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture
def workdir(tmp_path, shared_data, monkeypatch):
    source = sorted((shared_data / "ud").glob("UD_Greek-GDT/*-dev.conllu"))[0]
    for name, count in SENTENCES.items():
        (tmp_path / name).write_text(_first_sentences(source, count), encoding="utf-8")
    ptb = shared_data / "ptb" / "wsj_sample_combined.mrg"
    if ptb.exists():
        shutil.copy(ptb, tmp_path / ptb.name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_skipped_block_says_why():
    for page in PAGES:
        for line, mark, _ in blocks(page):
            if mark is not None:
                assert re.fullmatch(r"skip: \S.*", mark), f"{page.name}:{line}: {mark!r}"


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_the_examples_of_a_page_run(page, workdir, capsys):
    with one_torch_thread(page):
        run_page(page)


def run_page(page):
    namespace = {"__name__": "__docs__"}
    for line, mark, code in blocks(page):
        if mark is not None:
            continue
        where = f"{page.name}:{line}"
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # the docs show today's names
            if code.lstrip().startswith(">>>"):
                test = doctest.DocTestParser().get_doctest(code, namespace, where, str(page), line)
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
                runner.run(test, out=lambda text: pytest.fail(f"{where}: {text}"),
                           clear_globs=False)
                namespace.update(test.globs)  # (a copy) the page's later blocks see its names
            else:
                try:
                    exec(compile(code, where, "exec"), namespace)
                except Exception as exc:  # noqa: BLE001 (the failing example is the report)
                    pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
