"""SIGTERM takes every command's Ctrl-C path (`fowlplay.envs.runtime.stopping`), and the league passes a
stop on to the training run it waits on, which saves before it exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fowlplay.envs.runtime.stopping import (
    Stop,
    exit_status,
    further_stops_ignored,
    sigterm_stops,
    stopped,
)
from fowlplay.evaluation import league


def _terminate_self_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    return timer


@pytest.fixture(autouse=True)
def sigterm_handler_kept():
    """These tests change the suite's own handlers (a command ignores Ctrl-C once stopping): put
    them back, or every later test's subprocess would inherit SIGINT ignored."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield before[signal.SIGTERM]
    for signum, handler in before.items():
        signal.signal(signum, handler)


def test_sigterm_raises_stop_inside_and_is_ignored_after():
    with pytest.raises(Stop) as stop, sigterm_stops():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises in the main thread before this ends
    assert stop.value.signum == signal.SIGTERM and isinstance(stop.value, KeyboardInterrupt)
    assert exit_status(stop.value) == 143 and stopped(stop.value) == "stopped by SIGTERM"
    # The command is on its way out: a second SIGTERM must not kill it before it exits with 143.
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN


def test_without_a_signal_the_old_handler_is_back_after(sigterm_handler_kept):
    with sigterm_stops():
        assert signal.getsignal(signal.SIGTERM) is not sigterm_handler_kept
    assert signal.getsignal(signal.SIGTERM) is sigterm_handler_kept


def test_a_plain_ctrl_c_reads_as_interrupted():
    assert exit_status(KeyboardInterrupt()) == 130 and stopped(KeyboardInterrupt()) == "interrupted"
    assert exit_status(Stop(signal.SIGINT)) == 130


def test_a_second_sigterm_cannot_cut_the_clean_up_of_the_first_short():
    cleaned = []
    with pytest.raises(Stop), sigterm_stops():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # ignored: the clean-up below still runs
            time.sleep(0.1)
            cleaned.append(True)
    assert cleaned == [True]


def test_further_stops_are_ignored_only_inside():
    before = signal.getsignal(signal.SIGINT)
    with further_stops_ignored():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)
    assert signal.getsignal(signal.SIGINT) is before


# A stand-in training run: on SIGTERM it takes a second to "save a checkpoint", then exits 143.
SLOW_SAVER = """
import signal, sys, time
def save(signum, frame):
    time.sleep(1.0)
    open(sys.argv[1], "w").write("saved")
    sys.exit(143)
signal.signal(signal.SIGTERM, save)
open(sys.argv[2], "w").write("ready")
time.sleep(120)
"""


def _wait_for(path, seconds=60.0):
    deadline = time.monotonic() + seconds  # a guard against a hang on a busy machine, not a speed test
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


@pytest.mark.parametrize("broken", [False, True])
def test_the_league_passes_sigterm_on_and_waits_for_the_run_to_save(tmp_path, broken):
    saved, ready = tmp_path / "saved", tmp_path / "ready"
    command = [sys.executable, "-c", SLOW_SAVER, str(saved), str(ready)]

    def run_and_kill(cmd, log, timeout):
        """The broken twin: what `subprocess.run` does on Ctrl-C (0.25 s, then SIGKILL)."""
        with log.open("w") as handle:
            return subprocess.run(cmd, stdout=handle, stderr=subprocess.STDOUT, timeout=timeout).returncode

    run = run_and_kill if broken else league.run_training
    watcher = threading.Thread(target=lambda: (_wait_for(ready), os.kill(os.getpid(), signal.SIGTERM)))
    watcher.start()
    with pytest.raises(Stop), sigterm_stops():
        run(command, tmp_path / "train.log", None)
    watcher.join()
    if broken:
        time.sleep(1.5)
        assert not saved.exists()  # killed before it could save: what the fix prevents
    else:
        assert saved.read_text() == "saved"


def test_the_league_command_says_it_was_stopped_by_sigterm(monkeypatch, tmp_path, capsys):
    def run(*args, **kwargs):
        raise Stop(signal.SIGTERM)

    monkeypatch.setattr(league, "run_league", run)
    config = Path(__file__).resolve().parents[2] / "configs/league/chicken_v1.yaml"
    status = league.main(["--game", "chicken_v1", "--config", str(config), "--out", str(tmp_path / "l")])
    assert status == 143
    assert capsys.readouterr().err.strip() == (
        "fowlplay-league: stopped by SIGTERM; run the same command again to resume"
    )
