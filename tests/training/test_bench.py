"""The training throughput benchmark: a real (tiny) run, its figures, and a load that always stops."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from fowlplay.envs.runtime.threads import passive_threads
from fowlplay.evaluation.benchmark.training import (
    BENCH_IMITATE,
    competing_load,
    default_config,
    format_rows,
    loaded_shares,
    training_decisions_per_second,
)
from fowlplay.training.config import load_config

#: A run of 128 decisions that takes a second or two.
#: The settings columns a row of `training_decisions_per_second` carries.
SETTINGS = {"vec_env": "batched", "n_envs": 2, "torch_threads": 1, "net_arch": [16], "n_epochs": 1}

TINY = {"n_envs": 2, "ppo.n_steps": 64, "ppo.batch_size": 64, "ppo.n_epochs": 1, "ppo.net_arch": [16]}


def test_a_tiny_run_reports_its_rate_and_settings():
    row = training_decisions_per_second("chicken_v1", decisions=128, overrides=TINY)
    assert row["decisions"] == 128 and not row["cut"]
    assert row["decisions_per_s"] == pytest.approx(row["decisions"] / row["seconds"])
    assert row["config"] == str(default_config("chicken_v1"))
    assert (row["vec_env"], row["n_envs"], row["net_arch"], row["load"]) == ("batched", 2, [16], 0)
    assert "| chicken_v1 |" in format_rows([row])


def test_a_benchmark_run_imitates_a_few_hundred_decisions_unless_told(monkeypatch):
    """Fowl's config imitates 100,000 baseline decisions (minutes) before the first update, which
    no rate counts: the bench imitates BENCH_IMITATE of them, keeping `jax.imitate_kl` and so its
    cost in the epochs; a `--set jax.imitate` of the caller's own stands."""
    from fowlplay.training import train as train_module

    seen = []

    def fake_train(config, overwrite, verbose):
        seen.append(config.jax)
        return SimpleNamespace(timesteps=64, seconds=1.0, compile_seconds=0.5, stopped_by_time=False)

    monkeypatch.setattr(train_module, "train", fake_train)
    assert load_config(default_config("murder_most_fowl_v0")).jax.imitate == 100_000 > BENCH_IMITATE
    for overrides in ({}, {"jax.imitate": 2_000}, {"jax.imitate": 0, "jax.imitate_kl": 0}):
        training_decisions_per_second(
            "murder_most_fowl_v0", decisions=64, overrides={"trainer": "jax", **overrides}
        )
    assert [(j.imitate, j.imitate_kl) for j in seen] == [(BENCH_IMITATE, 0.2), (2_000, 0.2), (0, 0.0)]


def test_the_competing_load_runs_inside_the_block_and_stops_after():
    with pytest.raises(KeyError), competing_load(2) as busy:
        assert len(busy) == 2 and all(process.poll() is None for process in busy)
        raise KeyError("an error inside the block")
    assert all(process.poll() is not None for process in busy)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads process states from /proc")
def test_the_competing_load_stops_by_itself_when_the_bench_is_killed(tmp_path):
    # A bench killed with SIGKILL runs no cleanup; its busy loops (in sessions of their own) must
    # still not outlive it. A broken twin that runs `while True: pass` would spin on forever.
    pids_file = tmp_path / "pids"
    bench = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from fowlplay.evaluation.benchmark.training import competing_load\n"
            "with competing_load(2) as busy:\n"
            "    open(sys.argv[1], 'w').write(' '.join(str(p.pid) for p in busy))\n"
            "    time.sleep(60)\n",
            str(pids_file),
        ]
    )
    deadline = time.monotonic() + 30
    while not (pids_file.exists() and pids_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    loops = [int(pid) for pid in pids_file.read_text().split()]
    assert len(loops) == 2 and all(_alive(pid) for pid in loops)
    bench.kill()
    bench.wait()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in loops) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in loops), "a busy loop outlived the killed bench"


def _alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie, exited but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_bad_requests_are_refused():
    with pytest.raises(ValueError, match="unknown game"):
        training_decisions_per_second("no_such_game_v0")
    with pytest.raises(ValueError, match="decisions"):
        training_decisions_per_second("chicken_v1", decisions=0)
    with pytest.raises(ValueError, match="trains murder_most_fowl_v0, not chicken_v1"):
        training_decisions_per_second("chicken_v1", config_path=default_config("murder_most_fowl_v0"))


def test_loaded_rates_are_reported_as_a_share_of_the_same_games_idle_rate():
    rows = [
        {"game": "chicken_v1", "load": 0, "decisions_per_s": 1000.0},
        {"game": "chicken_v1", "load": 2, "decisions_per_s": 700.0},
        {"game": "murray_frog_v0", "load": 2, "decisions_per_s": 500.0},  # no idle twin: no share
    ]
    assert loaded_shares(rows) == {("chicken_v1", "", 2): pytest.approx(0.7)}
    assert "| 70% |" in format_rows([{**r, "decisions": 64, "cut": False, **SETTINGS} for r in rows[:2]])


def test_openmp_is_asked_to_sleep_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    passive_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    passive_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_configs_are_found_without_the_checkout_or_named_in_a_clear_error(tmp_path, monkeypatch, capsys):
    """An installed package has no configs/ beside its code: ./configs, then --config-dir, find them."""
    from fowlplay.evaluation.benchmark import training as bench

    monkeypatch.setattr(bench, "CONFIG_DIR", tmp_path / "site-packages" / "configs")  # as installed
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="--config-dir"):
        default_config("chicken_v1")
    with pytest.raises(SystemExit):
        bench.main(["--games", "chicken_v1"])
    assert "no training config chicken_v1.yaml" in capsys.readouterr().err
    mine = tmp_path / "my-configs"
    mine.mkdir()
    (mine / "chicken_v1.yaml").write_text("game: chicken_v1\n")
    assert default_config("chicken_v1", mine) == mine / "chicken_v1.yaml"
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "chicken_v1.yaml").write_text("game: chicken_v1\n")
    assert default_config("chicken_v1") == tmp_path / "configs" / "chicken_v1.yaml"


def test_fowlplay_bench_training_refuses_a_config_dir_without_the_configs(tmp_path, capsys):
    from fowlplay.evaluation.benchmark.cli import main

    with pytest.raises(SystemExit):
        main(["--games", "chicken_v1", "--training", "--config-dir", str(tmp_path), "--no-reference"])
    assert "no training config chicken_v1.yaml in " + str(tmp_path) in capsys.readouterr().err


def fake_checkout(root, layout: str):
    """A checkout whose train() fails with a marker naming its layout: proof of whose code ran."""
    package = root / "training"
    package.mkdir(parents=True)
    (root / "envs").mkdir()
    (root / "configs").mkdir()
    (root / "configs" / "chicken_v1.yaml").write_text("game: chicken_v1\n")
    if layout == "namespace":
        (root / "setup.cfg").write_text("[options]\npackage_dir =\n    fowlplay.training = training\n")
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text("def load_config(path, overrides):\n    return (path, overrides)\n")
    (package / "train.py").write_text(
        f"def train(config, overwrite, verbose):\n    raise SystemExit('fake {layout} checkout ran')\n"
    )
    return root


@pytest.mark.parametrize("layout", ["namespace", "top"])
def test_another_checkout_trains_with_its_own_code(tmp_path, layout):
    from fowlplay.evaluation.benchmark.training import checkout_decisions_per_second, checkout_layout

    root = fake_checkout(tmp_path / "tree", layout)
    assert checkout_layout(root) == layout
    with pytest.raises(RuntimeError, match=f"fake {layout} checkout ran"):
        checkout_decisions_per_second(root, "chicken_v1", decisions=1)


def test_this_checkout_measured_as_another_gives_a_real_row():
    from pathlib import Path

    from fowlplay.evaluation.benchmark.training import checkout_decisions_per_second

    here = Path(__file__).resolve().parents[2]
    row = checkout_decisions_per_second(here, "chicken_v1", decisions=128, overrides=dict(TINY))
    assert row["decisions"] == 128 and not row["cut"] and row["cpu_seconds"] > 0
    assert row["decisions_per_s"] == pytest.approx(row["decisions"] / row["seconds"])
    assert (row["vec_env"], row["n_envs"], row["net_arch"], row["load"]) == ("batched", 2, [16], 0)


def test_a_checkout_whose_run_fails_ends_in_an_error_not_a_traceback(tmp_path, capsys):
    from fowlplay.evaluation.benchmark.training import main

    root = fake_checkout(tmp_path / "tree", "top")
    argv = ["--games", "chicken_v1", "--loads", "0", "--decisions", "128", "--checkout", f"old:{root}"]
    assert main([*argv, "--variant", "tiny:" + ";".join(f"{k}={v}" for k, v in TINY.items())]) == 1
    out, err = capsys.readouterr()
    assert "| chicken_v1 | tiny | 0 | 128 |" in out  # this checkout's rows are kept
    assert "error: --checkout old:" in err and "fake top checkout ran" in err
    assert "Traceback (most recent call last)" not in err.split("failed:")[0]


def test_a_folder_that_is_no_checkout_is_refused(tmp_path, capsys):
    from fowlplay.evaluation.benchmark.training import main

    with pytest.raises(SystemExit):
        main(["--games", "chicken_v1", "--checkout", f"old:{tmp_path}"])
    assert "is not a fowlplay checkout" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--games", "chicken_v1", "--checkout", str(tmp_path)])
    assert "--checkout takes LABEL:FOLDER" in capsys.readouterr().err
    fake_checkout(tmp_path / "tree", "top")
    with pytest.raises(SystemExit):
        main(["--games", "murray_frog_v0", "--checkout", f"old:{tmp_path / 'tree'}"])
    assert "no training config configs/murray_frog_v0.yaml" in capsys.readouterr().err
