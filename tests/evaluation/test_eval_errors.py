"""fowlplay-eval: every mistake is one line, a resume never mixes two models, Ctrl-C and a full
disk keep what was played."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fowlplay import envs
from fowlplay.evaluation import matches
from fowlplay.evaluation.cli import main
from fowlplay.training.checkpoint import make_metadata, save_checkpoint

ROOT = Path(__file__).resolve().parents[2]


def save_model(stem: Path, seed: int, timesteps: int, kind: str = "final") -> None:
    """An untrained tiny Chicken checkpoint (its weights depend on `seed`)."""
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
    model = MaskablePPO(
        "MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]}, seed=seed
    )
    metadata = make_metadata(envs.make("chicken_v1"), {}, seed=seed, timesteps=timesteps, kind=kind)
    save_checkpoint(model, stem, metadata)


def evaluate(out: Path, *agents: str, matches: int = 1) -> int:
    argv = ["--game", "chicken_v1", "--agents", *agents, "--matches", str(matches), "--out", str(out)]
    return main([*argv, "--workers", "1", "--bootstrap", "10", "--no-progress"])


def one_line_error(capsys, status: int, code: int) -> str:
    assert status == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("fowlplay-eval: error: ") and "\n" not in err, err
    return err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seed", "-1"], "argument --seed: must be an integer >= 0, got -1"),
        (["--bootstrap", "0"], "argument --bootstrap: must be an integer >= 1, got 0"),
        (["--matches", "ten"], "argument --matches: must be an integer >= 1, got 'ten'"),
        (["--players", "3", "--seating", "combinations"], "seating 'combinations' needs at least 3 agents"),
        (["--option", "target=[1,"], "the value is not plain YAML"),
        (
            ["--option", "target=!!python/object/apply:os.getcwd []"],
            "tags such as !!python/... are never run",
        ),
    ],
)
def test_argument_mistakes_are_clear_errors(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["--game", "chicken_v1", "--agents", "random", "baseline", "--out", str(tmp_path / "e"), *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "e").exists()


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    out = tmp_path / "results.txt"
    out.write_text("mine")
    with pytest.raises(SystemExit):
        evaluate(out, "random", "baseline")
    assert f"--out {out} is a file; give a directory" in capsys.readouterr().err
    assert out.read_text() == "mine"


def test_corrupt_lines_in_games_jsonl_name_the_file_and_line(tmp_path, capsys):
    out = tmp_path / "e"
    assert evaluate(out, "random", "baseline", matches=2) == 0
    games = out / "games.jsonl"
    lines = games.read_bytes().splitlines()
    for bad in (b"{not json", b'{"run": "x"}', b"\xff\xfe binary", b"[1, 2]"):
        games.write_bytes(b"\n".join([lines[0], bad, *lines[2:]]) + b"\n")
        err = one_line_error(capsys, evaluate(out, "random", "baseline", matches=2), 2)
        assert f"{games} line 2 is not a game record" in err and "delete that line" in err


def test_a_full_disk_keeps_the_games_played_and_resumes(tmp_path, capsys, monkeypatch):
    out = tmp_path / "e"
    real_dumps = json.dumps
    calls = {"rows": 0}

    def dumps(obj, *args, **kwargs):
        if isinstance(obj, dict) and "deal_seed" in obj:
            calls["rows"] += 1
            if calls["rows"] == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_dumps(obj, *args, **kwargs)

    monkeypatch.setattr(matches.json, "dumps", dumps)
    err = one_line_error(capsys, evaluate(out, "random", "baseline", matches=3), 1)
    assert f"cannot write {out / 'games.jsonl'}: No space left on device" in err
    assert "run the same command again to resume" in err
    assert len((out / "games.jsonl").read_text().splitlines()) == 2
    monkeypatch.setattr(matches.json, "dumps", real_dumps)
    assert evaluate(out, "random", "baseline", matches=3) == 0
    assert json.loads((out / "summary.json").read_text())["timing"]["games_resumed"] == 2


def test_a_replaced_checkpoint_is_never_mixed_into_a_resumed_evaluation(tmp_path, capsys):
    run = tmp_path / "run"
    save_model(run / "final", seed=0, timesteps=100)
    out = tmp_path / "e"
    assert evaluate(out, f"ppo={run}", "random") == 0
    summary = json.loads((out / "summary.json").read_text())
    first = summary["config"]["agents"][0]["model"]
    assert first["file"] == str((run / "final.npz").resolve()) and first["timesteps"] == 100
    capsys.readouterr()
    save_model(run / "final", seed=1, timesteps=100)  # new weights at the same path
    err = one_line_error(capsys, evaluate(out, f"ppo={run}", "random", matches=2), 2)
    assert "was written by a different evaluation" in err
    assert (
        f"agent 'ppo' played {first['file']} (weights sha256 {first['weights_sha256'][:12]}, 100 timesteps)"
        in err
    )
    assert "now it is" in err and err.count("weights sha256") == 2


def test_a_run_that_trained_further_is_a_different_model(tmp_path, capsys):
    run = tmp_path / "run"
    save_model(run / "checkpoints" / "step_100", seed=0, timesteps=100, kind="periodic")
    out = tmp_path / "e"
    assert evaluate(out, f"ppo={run}", "random") == 0
    save_model(run / "final", seed=0, timesteps=200)  # training went on and finished
    err = one_line_error(capsys, evaluate(out, f"ppo={run}", "random", matches=2), 2)
    assert "step_100.npz" in err and "100 timesteps" in err and "final.npz" in err and "200 timesteps" in err


def test_a_damaged_final_json_is_an_error_and_a_missing_one_is_said_out_loud(tmp_path, capsys):
    run = tmp_path / "run"
    save_model(run / "checkpoints" / "step_100", seed=0, timesteps=100, kind="periodic")
    save_model(run / "final", seed=1, timesteps=200)
    (run / "final.json").write_text('{"game": ')
    err = one_line_error(capsys, evaluate(tmp_path / "e", str(run), "random"), 2)
    assert f"checkpoint metadata {run / 'final.json'} is corrupt" in err
    (run / "final.json").unlink()
    assert evaluate(tmp_path / "e2", str(run), "random") == 0
    err = capsys.readouterr().err
    assert f"fowlplay-eval: warning: {run / 'final'} has no final.json" in err
    assert "using the older complete checkpoint" in err and "step_100 (100 timesteps)" in err


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm", "sigterm-group"])
def test_ctrl_c_or_sigterm_keeps_the_games_played_and_says_how_to_resume(tmp_path, stop):
    out = tmp_path / "e"
    command = [
        sys.executable,
        "-m",
        "fowlplay.evaluation.cli",
        "--game",
        "chicken_v1",
        "--agents",
        "random",
        "baseline",
    ]
    command += ["--matches", "5000", "--workers", "2", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        # A guard against a hang, not a speed test: a busy 2-core machine may take a minute to start.
        deadline = time.monotonic() + 300
        games = out / "games.jsonl"
        while not (games.exists() and len(games.read_bytes().splitlines()) >= 20):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "no games within 300 s"
            time.sleep(0.1)
        if stop == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the workers get it too
            time.sleep(0.05)
            os.killpg(proc.pid, signal.SIGINT)
        elif stop == "sigterm":
            proc.terminate()  # `kill PID` or `timeout`: the evaluation's process alone
            time.sleep(0.05)
            proc.terminate()
        else:
            # `docker stop`, a batch scheduler: the whole group, whose forkserver must outlive it
            # (it did not: the pool's thread died with a traceback replacing the killed workers).
            os.killpg(proc.pid, signal.SIGTERM)
            time.sleep(0.05)
            os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
        while _group_alive(proc.pid):  # its pool's workers go with it
            assert time.monotonic() < deadline, "the evaluation's workers outlived it"
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == (130 if stop == "ctrl-c" else 143) and "Traceback" not in err, err
    (line,) = [line for line in err.splitlines() if line.strip()]
    saved = len(games.read_text().splitlines())
    said = "interrupted" if stop == "ctrl-c" else "stopped by SIGTERM"
    assert line == (
        f"fowlplay-eval: {said}; {saved} of 10000 games are saved in {games}. "
        "Run the same command again to resume."
    )


def test_an_out_that_cannot_be_made_is_one_line_without_disk_advice(tmp_path, capsys):
    (tmp_path / "a-file").write_text("mine")
    out = tmp_path / "a-file" / "eval"  # like --out /proc/nope: the folder cannot be created
    err = one_line_error(capsys, evaluate(out, "random", "baseline"), 1)
    assert f"cannot write {out}: Not a directory" in err and "free some space" not in err


def test_a_stop_after_the_last_game_says_every_game_is_saved(tmp_path, capsys, monkeypatch):
    from fowlplay.evaluation import tournament

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "_write_figures", stop)  # Ctrl-C while the report is written
    out = tmp_path / "e"
    assert evaluate(out, "random", "baseline", matches=2) == 130
    err = capsys.readouterr().err.strip()
    assert err == (
        f"fowlplay-eval: interrupted after the last game: all 4 games are saved in {out / 'games.jsonl'}, "
        "but not every figure was written. Run the same command again to write them."
    )
    monkeypatch.undo()
    assert evaluate(out, "random", "baseline", matches=2) == 0
    assert json.loads((out / "summary.json").read_text())["timing"]["games_played"] == 0


def test_a_stop_before_any_game_of_a_resumed_evaluation_keeps_the_earlier_ones(tmp_path, capsys, monkeypatch):
    out = tmp_path / "e"
    assert evaluate(out, "random", "baseline", matches=2) == 0
    capsys.readouterr()

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(matches.EvalConfig, "resolve_agents", stop)
    assert evaluate(out, "random", "baseline", matches=3) == 130
    err = capsys.readouterr().err.strip()
    assert err == (
        f"fowlplay-eval: interrupted before any game was played; the 4 games saved earlier in "
        f"{out / 'games.jsonl'} are kept. Run the same command again to resume."
    )


@pytest.mark.parametrize("spec", ["", "  ", "me="])
def test_an_empty_agent_spec_is_refused(tmp_path, capsys, spec):
    with pytest.raises(SystemExit) as exit_info:
        evaluate(tmp_path / "e", spec, "random")
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err
    assert f"agent spec {spec!r} " in err and (
        "is empty" in err or "names no agent after its label 'me'" in err
    )
    assert not (tmp_path / "e").exists()


def test_a_games_file_that_is_no_regular_file_or_holds_odd_rows_is_one_line(tmp_path, capsys):
    out = tmp_path / "e"
    assert evaluate(out, "random", "baseline", matches=2) == 0
    games = out / "games.jsonl"
    lines = games.read_bytes().splitlines()
    row = json.loads(lines[1])
    odd = {
        b"[" * 100_000 + b"]" * 100_000: "nests too deep",
        json.dumps({**row, "match": "two"}).encode(): "its 'match' is not a count",
        json.dumps({**row, "returns": [1e308, "x"]}).encode(): "holds something other than finite numbers",
        json.dumps({**row, "seats": "ab"}).encode(): "its 'seats' is not a list of agent labels",
        json.dumps(row).encode().replace(b'"returns": [', b'"returns": [1e999, '): "out of range",
    }
    capsys.readouterr()
    for line, words in odd.items():
        games.write_bytes(b"\n".join([lines[0], line, *lines[2:]]) + b"\n")
        err = one_line_error(capsys, evaluate(out, "random", "baseline", matches=2), 2)
        assert f"{games} line 2 is not a game record" in err and words in err, err
    games.unlink()
    games.symlink_to("/dev/zero")
    err = one_line_error(capsys, evaluate(out, "random", "baseline", matches=2), 2)
    # A link out of --out (here to a device) is refused before what it names is looked at.
    assert f"{games} leads outside" in err, err


# ----- fowlplay-league: a bad config or folder is one line ------------------------------------------
LEAGUE = """\
game: chicken_v1
players: 2
train_config: {train_config}
decisions: 64
seeds: [0]
algorithms:
  - name: broken
    trainer: no-such-trainer
evaluation:
  matches: 1
  bootstrap: 10
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("matches: 1", "matches: abc"), "evaluation: matches must be an integer >= 1; got 'abc'"),
        (("bootstrap: 10", "bootstrap: [1]"), "evaluation: bootstrap must be an integer >= 1; got [1]"),
        (("players: 2", "players: two"), "players must be an integer >= 1; got 'two'"),
        (("players: 2", "players: 9"), "players: chicken_v1 supports 2-4 players; got num_players=9"),
        (("evaluation:\n", "evaluation: [1]\nunused:\n"), "unknown keys ['unused']"),
        (("seeds: [0]", "seeds: [0]\nexploit: [1, 2]"), "exploit must be a mapping"),
        (None, "is not a YAML text file (it is not UTF-8 text)"),  # a binary file given as the config
    ],
)
def test_league_config_mistakes_are_one_line(tmp_path, capsys, change, message):
    from fowlplay.evaluation import league

    path = tmp_path / "league.yaml"
    text = LEAGUE.format(train_config=ROOT / "configs" / "chicken_v1.yaml")
    path.write_bytes(b"\xff\xfe\x00\x01" if change is None else text.replace(*change).encode())
    assert league.main(["--game", "chicken_v1", "--config", str(path), "--out", str(tmp_path / "l")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fowlplay-league: error: ") and "\n" not in err and message in err, err


def test_a_league_into_a_file_or_with_nothing_left_to_rate_is_one_line(tmp_path, capsys):
    from fowlplay.evaluation import league

    path = tmp_path / "league.yaml"
    path.write_text(LEAGUE.format(train_config=ROOT / "configs" / "chicken_v1.yaml"))
    (tmp_path / "a-file").write_text("mine")
    with pytest.raises(SystemExit) as exit_info:
        league.main(["--game", "chicken_v1", "--config", str(path), "--out", str(tmp_path / "a-file")])
    assert exit_info.value.code == 2
    assert "--out" in capsys.readouterr().err and (tmp_path / "a-file").read_text() == "mine"
    # Every training fails (no such trainer) and only one rung plays: nothing to rate.
    argv = ["--game", "chicken_v1", "--config", str(path), "--out", str(tmp_path / "l"), "--rungs", "random"]
    assert league.main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        "fowlplay-league: error: nothing to rate: only ['random'] could play, since no trained checkpoint "
        "is left (every training or evaluation failed; --rungs left one rung)"
    )
    assert "broken-s0 (training): training failed (exit status 2)" in err
