"""What the command-line tools share: argument types, one-line warnings, a stoppable body, OS errors,
and the name a printed command runs by."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from fowlplay.envs.runtime.files import WriteError
from fowlplay.envs.runtime.stopping import exit_status, ignore_further_stops, sigterm_stops


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer from `low` (to `high`, when given), or a message naming the range."""

    def parse(text: str) -> int:
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {value}")
        return value

    return parse


@contextlib.contextmanager
def one_line_warnings(prog: str) -> Iterator[None]:
    """Print warnings as one line, `<prog>: warning: <message>`, on stderr (no file and line)."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        print(f"{prog}: warning: {message}", file=sys.stderr, flush=True)

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


def run_stoppable(prog: str, body: Callable[[], int], said: Callable[[KeyboardInterrupt], str]) -> int:
    """Run a command's `body` with one-line warnings, SIGTERM taking the Ctrl-C path.

    A stop prints `<prog>: <said(stop)>` as one line and returns 130 after Ctrl-C, 143 after
    SIGTERM; `said` tells what was kept (start it with `stopped(stop)`).
    """
    with sigterm_stops():
        try:
            with one_line_warnings(prog):
                return body()
        except KeyboardInterrupt as stop:
            ignore_further_stops()  # a second signal changes nothing now
            print(f"\n{prog}: {said(stop)}", file=sys.stderr)
            return exit_status(stop)


def disk_full(exc: OSError) -> bool:
    """Whether an OSError means no space is left (a full disk or an exhausted quota)."""
    return exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def os_error_text(exc: OSError, fallback: Path | str | None = None) -> str:
    """'<what went wrong>: <the path>' for an OSError (its own message when it names the file)."""
    if isinstance(exc, WriteError) or (exc.strerror is None and exc.filename is None and exc.args):
        return str(exc)  # its own message names what happened
    return f"{exc.strerror or exc}: {exc.filename or fallback}"


def print_all(text: str) -> int:
    """Print `text` on stdout; when the reader stops early (`| head`), end quietly with status 0."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        # Python flushes stdout again at exit and would complain a second time: send it nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def invoked_as(prog: str) -> str:
    """`prog` as a command this user can run again: the path they ran it by (`.venv/bin/fowlplay-train`
    after `make demo`, where the bare name is not on PATH), else the bare name. The bare name is kept
    when it finds the same program, and when this process is not `prog` (a test, `python -m`).
    Unquoted: `shlex.join` or `shlex.quote` it into a command line."""
    typed = sys.argv[0] if sys.argv else ""
    if os.path.basename(typed) != prog or os.path.dirname(typed) == "":
        return prog
    found = shutil.which(prog)
    try:
        if found is not None and os.path.samefile(found, typed):
            return prog
    except OSError:
        pass
    return typed
