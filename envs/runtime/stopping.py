"""How every fowlplay command stops on a signal.

Ctrl-C (SIGINT) and SIGTERM (what `kill`, `timeout`, `docker stop` and batch schedulers send) take
the same path in every command: what was done is kept, the command says how to continue, and the
exit status is the one shells report for the signal (130 and 143).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

#: The signals that stop a command after keeping what it did.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: Set once a command has begun to stop: `sigterm_stops` then restores no handler on its way out.
_stopping = threading.Event()


class Stop(KeyboardInterrupt):
    """A stop signal (SIGINT or SIGTERM); a KeyboardInterrupt, so every Ctrl-C path handles it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(stop: BaseException) -> int:
    """The signal behind a stop: its `signum` if it carries one, else SIGINT (a plain Ctrl-C)."""
    return getattr(stop, "signum", signal.SIGINT)


def exit_status(stop: BaseException) -> int:
    """130 after Ctrl-C, 143 after SIGTERM: 128 + the signal, as shells report it."""
    return 128 + signal_of(stop)


def stopped(stop: BaseException) -> str:
    """'interrupted' after Ctrl-C, 'stopped by SIGTERM' after SIGTERM: how a command says it."""
    signum = signal_of(stop)
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """Inside, SIGTERM raises `Stop(SIGTERM)` where Ctrl-C raises KeyboardInterrupt.

    Without it Python dies of SIGTERM at once, skipping the command's clean-up and its message.
    After the first SIGTERM every further one is ignored, to the end of the process, so none can
    cut that clean-up short or change the exit status. Handlers can only be set from the main
    thread; elsewhere this changes nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _stopping.clear()

    def handle(signum: int, frame: object) -> None:
        ignore_further_stops(signal.SIGTERM)
        raise Stop(signum)

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        # A stop handled inside (by the trainer's own handlers, say) leaves SIGTERM ignored: a second
        # one arriving after the message must not kill the command with the default action (-15).
        # None: a handler set outside Python, which cannot be restored.
        if not _stopping.is_set() and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def ignore_further_stops(*signals: int) -> None:
    """A command has begun to stop: ignore `signals` (Ctrl-C and SIGTERM unless named) to the end of
    the process (from the main thread), so that a second signal changes neither the clean-up nor
    the exit status, and `sigterm_stops` restores no handler on its way out."""
    _stopping.set()
    if threading.current_thread() is threading.main_thread():
        for signum in signals or STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


@contextlib.contextmanager
def further_stops_ignored(active: bool = True) -> Iterator[None]:
    """While `active` (and in the main thread), ignore Ctrl-C and SIGTERM: a second signal must not
    cut short the clean-up of the first; the previous handlers are back afterwards."""
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if handler is not None:  # None: a handler set outside Python, which cannot be restored
                signal.signal(signum, handler)
