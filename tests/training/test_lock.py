"""One writer per output folder (`training.lock`): a second run into a held folder is refused naming
the holder, a lock left by a run that is gone is taken over out loud, and every command takes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fowlplay.envs.runtime import lock
from fowlplay.envs.runtime.lock import LOCK_NAME, FolderBusyError, StaleLockWarning, hold_folder

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def holder(tmp_path):
    """Start another process that holds the lock of a folder until the test ends; yields (folder, pid)."""
    folder = tmp_path / "out"
    ready = tmp_path / "ready"
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from fowlplay.envs.runtime.lock import hold_folder
        with hold_folder({str(folder)!r}, "fowlplay-eval --out elsewhere (the first run)"):
            Path({str(ready)!r}).touch()
            time.sleep(120)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert process.poll() is None, "the holding process died"
            assert time.monotonic() < deadline, "the holding process did not take the lock"
            time.sleep(0.05)
        yield folder, process.pid
    finally:
        process.kill()
        process.wait()


def test_a_second_writer_is_refused_naming_the_holder(holder):
    folder, pid = holder
    with pytest.raises(FolderBusyError) as refused:
        lock.acquire(folder)
    message = str(refused.value)
    assert f"pid {pid} on " in message and "(fowlplay-eval --out elsewhere (the first run))" in message
    assert "being written by another run" in message and "\n" not in message
    assert not lock.holds(folder)


def test_a_lock_whose_process_is_gone_is_taken_over_with_a_warning(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    # What a killed run leaves: the file naming it, with nobody holding its flock.
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(gone.stdout)
    left = {"pid": dead_pid, "host": "here", "command": "fowlplay-train --out out", "started": "yesterday"}
    (folder / LOCK_NAME).write_text(json.dumps(left))
    with pytest.warns(StaleLockWarning, match=rf"left locked by a run that is gone \(pid {dead_pid} on here"):
        lock.acquire(folder)
    try:
        assert lock.holds(folder)
        assert json.loads((folder / LOCK_NAME).read_text())["pid"] == os.getpid()
    finally:
        lock.release(folder)
    assert not (folder / LOCK_NAME).exists()


def test_the_same_process_may_nest_and_the_last_release_removes_the_lock(tmp_path):
    folder = tmp_path / "new" / "out"
    with hold_folder(folder, "outer"):
        with hold_folder(folder, "inner (an exploit's scoring inside its estimate)"):
            assert json.loads((folder / LOCK_NAME).read_text())["command"] == "outer"
        assert (folder / LOCK_NAME).exists() and lock.holds(folder)
        (folder / "games.jsonl").write_text("")
    assert not (folder / LOCK_NAME).exists() and (folder / "games.jsonl").exists()
    # A folder the lock made, that nothing was written to (the run failed at once), goes with it.
    with hold_folder(tmp_path / "failed"):
        pass
    assert not (tmp_path / "failed").exists()


def test_a_link_or_pipe_in_place_of_the_lock_file_is_refused(tmp_path):
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / LOCK_NAME).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FolderBusyError, match="is a symbolic link, not a lock file"):
        lock.acquire(linked)
    assert not (tmp_path / "elsewhere").exists()
    piped = tmp_path / "piped"
    piped.mkdir()
    os.mkfifo(piped / LOCK_NAME)
    with pytest.raises(FolderBusyError, match="not a regular file"):
        lock.acquire(piped)


def test_every_command_refuses_a_held_folder_in_one_line(holder, capsys):
    from fowlplay.evaluation import cli as eval_cli
    from fowlplay.evaluation import exploit, league
    from fowlplay.training import cli as train_cli

    folder, pid = holder
    said = f"is being written by another run: pid {pid}"
    argv = ["--game", "chicken_v1", "--agents", "random", "baseline", "--matches", "1", "--out", str(folder)]
    assert eval_cli.main([*argv, "--workers", "1", "--no-progress"]) == 1
    config = str(ROOT / "configs" / "chicken_v1.yaml")
    assert train_cli.main(["--config", config, "--out", str(folder), "--overwrite", "--no-progress"]) == 1
    exploit_argv = ["--game", "chicken_v1", "--agent", "random", "--total-timesteps", "64", "--matches", "1"]
    assert exploit.main([*exploit_argv, "--out", str(folder)]) == 1
    league_config = str(ROOT / "configs" / "league" / "chicken_v1.yaml")
    assert league.main(["--game", "chicken_v1", "--config", league_config, "--out", str(folder)]) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 4 and all(said in line for line in lines), err
    assert "Traceback" not in err
    assert sorted(p.name for p in folder.iterdir()) == [LOCK_NAME]  # nothing was written
