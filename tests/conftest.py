"""Suite-wide guard: the tests must exercise this checkout's code, not another installed copy."""

from pathlib import Path

import pytest


def pytest_configure(config):
    """Stop at once when `fowlplay.envs` resolves outside the repository under test."""
    import fowlplay.envs

    root = Path(config.rootpath).resolve()
    loaded = Path(fowlplay.envs.__file__).resolve()
    if root not in loaded.parents:
        raise pytest.UsageError(
            f"fowlplay.envs is imported from {loaded.parent}, not from this checkout ({root}); "
            "install this checkout (pip install -e .) or put a folder holding fowlplay/envs -> envs "
            "first on PYTHONPATH"
        )
