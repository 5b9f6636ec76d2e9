"""What the evaluation pool's own threads raise: dropped after a stop, reported as usual otherwise."""

import threading

import pytest
from fowlplay.evaluation.matches import _pool_thread_errors_held


def _fail_in(name: str) -> None:
    def body() -> None:
        raise EOFError(name)

    thread = threading.Thread(target=body, name=name)
    thread.start()
    thread.join()


def test_a_pool_thread_failure_is_dropped_after_a_stop_and_reported_without_one(monkeypatch):
    reported = []
    monkeypatch.setattr(threading, "excepthook", lambda args: reported.append(str(args.exc_value)))
    with pytest.raises(KeyboardInterrupt), _pool_thread_errors_held():
        _fail_in("Thread-1 (_handle_workers)")
        assert reported == []  # held while the pool runs
        raise KeyboardInterrupt
    assert reported == []
    with _pool_thread_errors_held():
        _fail_in("Thread-2 (_handle_workers)")
        _fail_in("a thread of the game")  # not the pool's: reported at once
        assert reported == ["a thread of the game"]
    assert reported == ["a thread of the game", "Thread-2 (_handle_workers)"]
    _fail_in("after")
    assert reported[-1] == "after"  # the hook before is back
