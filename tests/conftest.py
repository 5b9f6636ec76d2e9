"""Suite-wide set-up: the tests must exercise this checkout's code, not another installed copy, and
the programs they start must hear Ctrl-C."""

import os
import signal
from pathlib import Path

import pytest


def pytest_configure(config):
    """Stop at once when `fowlplay.envs` resolves outside the repository under test; share JAX's
    compiled programs between the suite's processes."""
    _share_jax_compiles(Path(config.rootpath))
    import fowlplay.envs

    root = Path(config.rootpath).resolve()
    loaded = Path(fowlplay.envs.__file__).resolve()
    if root not in loaded.parents:
        raise pytest.UsageError(
            f"fowlplay.envs is imported from {loaded.parent}, not from this checkout ({root}); "
            "install this checkout (pip install -e .) or put a folder holding fowlplay/envs -> envs "
            "first on PYTHONPATH"
        )


def _share_jax_compiles(root: Path) -> None:
    """Point JAX's persistent compilation cache at `.pytest_cache/jax-compiles` (unless the caller
    chose one), through the environment, so that jax is not imported here.

    The twins' alignment suites compile each game's step once per shape in a process, but xdist
    hands one module's tests to both workers, and the training, bench and docs tests start
    subprocesses that compile the same twins again; with the cache, a program compiled once is read
    back by the others. A cached program is the same executable (JAX keys it by the program, the
    compile options and the versions), so the tests hold the same code either way.
    """
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(root / ".pytest_cache" / "jax-compiles"))
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")


def pytest_sessionstart(session):
    """Let the programs the tests start receive SIGINT, even when the suite itself ignores it.

    A shell without job control starts a background command (`make test &`) with SIGINT ignored, and
    an ignored signal stays ignored across exec: Python would then never raise KeyboardInterrupt in
    the Ctrl-C tests' subprocesses. A handled signal is reset to the default at exec instead."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _stop_handlers_restored():
    """Put SIGINT's and SIGTERM's handlers back after every test.

    A command's stop path ignores further signals for the rest of its process (a second Ctrl-C must
    not cut its clean-up short). Run in-process by a test, that left the xdist worker ignoring them,
    and every later test on that worker whose subprocess was to hear Ctrl-C inherited SIG_IGN: a web
    server that never stopped, a prompt that read end-of-input instead of the interrupt."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in before.items():
        if handler is not None and signal.getsignal(signum) is not handler:
            signal.signal(signum, handler)
