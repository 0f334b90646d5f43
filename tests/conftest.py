"""Shared fixtures: the shared treebanks are found through SEMIPARSE_DATA.

The default is ``../shared/data`` next to the checkout.  Outside CI a missing
data directory skips the tests that need it; in CI (``CI`` set) it fails them,
because a test suite that silently skips its real-data checks proves nothing.
"""
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]

# In CI the examples are derived from each test alone (derandomize): a run
# is reproducible and a red CI is never a roll of the dice; the search for new
# inputs happens in every run outside CI, where the seed is random.
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True,
    derandomize=True,
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def data_dir():
    return Path(os.environ.get("SEMIPARSE_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data():
    """Path of the shared data directory (``ud/`` and ``ptb/`` below it)."""
    path = data_dir()
    if not (path / "ud").is_dir():
        message = f"shared data not found at {path} (set SEMIPARSE_DATA)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def ud_files(shared_data):
    """Every shared UD CoNLL-U file, sorted."""
    files = sorted((shared_data / "ud").glob("*/*.conllu"))
    assert files, f"no .conllu files under {shared_data / 'ud'}"
    return files
