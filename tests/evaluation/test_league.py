"""The reference ladder, its Bradley–Terry Elo, and `fowlplay-league` with a stand-in trainer."""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.evaluation import ladder, league
from fowlplay.evaluation.agents import parse_spec


# ----- the ladder ---------------------------------------------------------------------------------
def test_the_ladder_is_versioned_and_names_four_agents_for_every_game():
    assert isinstance(ladder.LADDER_VERSION, str) and ladder.LADDER_VERSION
    assert set(ladder.ISMCTS_BUDGETS) == set(envs.ENV_NAMES)
    for game, (low, high) in ladder.ISMCTS_BUDGETS.items():
        assert 1 <= low < high
        specs = ladder.ladder_specs(game)
        assert specs == ["random", "baseline", f"ismcts:{low}", f"ismcts:{high}"]
        assert specs[0] == ladder.ANCHOR
        assert [parse_spec(s).kind for s in specs] == ["random", "baseline", "ismcts", "ismcts"]


def _game(match: int, a: str, b: str, winner: str | None) -> dict:
    """A games.jsonl row of a 2-player game (None: a draw)."""
    returns = [0.0, 0.0] if winner is None else ([1.0, -1.0] if winner == a else [-1.0, 1.0])
    return {"match": match, "seats": [a, b], "returns": returns}


def _synthetic(p: dict[tuple[str, str], float], matches: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for (a, b), win in p.items():
        for m in range(matches):
            rows.append(_game(m, a, b, a if rng.random() < win else b))
    return rows


def test_elo_is_anchored_at_random_exactly_and_recovers_a_known_order():
    labels = ["random", "weak", "strong"]
    win = {("weak", "random"): 0.7, ("strong", "random"): 0.9, ("strong", "weak"): 0.75}
    rows = _synthetic(win, matches=200)
    table = {r["agent"]: r for r in ladder.elo_ratings(rows, labels, matches=200, samples=50)}
    assert table["random"]["elo"] == 0.0
    assert table["random"]["elo_lo"] == 0.0 and table["random"]["elo_hi"] == 0.0
    assert 0 < table["weak"]["elo"] < table["strong"]["elo"]
    for r in table.values():
        assert r["elo_lo"] <= r["elo"] <= r["elo_hi"]
    # P = 0.7 is 147 Elo; 200 games put the estimate well within 100 of it.
    assert abs(table["weak"]["elo"] - 147) < 100


def test_elo_refuses_a_table_without_the_anchor():
    with pytest.raises(ValueError, match="anchored at 'random'"):
        ladder.elo_ratings([_game(0, "a", "b", "a")], ["a", "b"], matches=1)


# ----- the league, with a stand-in trainer --------------------------------------------------------
@pytest.fixture
def fake_trainer(monkeypatch):
    """Replaces the fowlplay-train subprocess: writes an untrained tiny checkpoint, or fails as
    fowlplay-train does for a trainer it does not know. Records every command it was given."""
    pytest.importorskip("sb3_contrib")
    from fowlplay.training.checkpoint import make_metadata, save_checkpoint
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    calls = []

    def run(command, log: Path, timeout):
        calls.append(command)
        args = dict(itertools.pairwise(command))
        if "--set" in args and args["--set"].startswith("trainer=") and args["--set"] != "trainer=ppo":
            log.write_text("fowlplay-train: error: configs/chicken_v1.yaml: unknown key 'trainer'\n")
            return 2
        out, budget, seed = Path(args["--out"]), int(args["--total-timesteps"]), int(args["--seed"])
        vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
        model = MaskablePPO(
            "MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]}, seed=seed
        )
        # Seed 1 stands for a run the max_minutes safety net stopped early.
        steps = budget // 2 if seed == 1 else budget
        save_checkpoint(
            model, out / "final", make_metadata(envs.make("chicken_v1"), {}, seed, steps, "final")
        )
        log.write_text("done\n")
        return 0

    monkeypatch.setattr(league, "run_training", run)
    # The search rungs roll out whole games per simulation: too slow for a unit test.
    monkeypatch.setattr(league, "ladder_specs", lambda game: ["random", "baseline"])
    return calls


def _config(**changes) -> league.LeagueConfig:
    data = {
        "game": "chicken_v1",
        "train_config": "configs/chicken_v1.yaml",
        "decisions": 1000,
        "max_minutes": 1,
        "seeds": [0, 1],
        "algorithms": [{"name": "ppo", "trainer": "ppo"}, {"name": "mystery", "trainer": "mystery"}],
        "evaluation": {"matches": 2, "seed": 0, "bootstrap": 20},
    }
    data.update(changes)
    return league.parse_config(data, "chicken_v1")


def test_league_writes_a_leaderboard_and_reports_an_unknown_trainer(fake_trainer, tmp_path):
    summary = league.run_league(_config(), tmp_path, log=lambda *_: None, command="fowlplay-league ...")
    for name in ("leaderboard.md", "leaderboard.csv", "algorithms.csv", "league.json", "ratings.png"):
        assert (tmp_path / name).exists(), name
    rated = {e["agent"]: e for e in summary["entries"]}
    assert set(rated) == {"random", "baseline", "ppo-s0", "ppo-s1"}
    assert rated["random"]["elo"] == 0.0
    assert rated["ppo-s1"]["cut_short"] and not rated["ppo-s0"]["cut_short"]
    errors = {(e["entry"], e["stage"]) for e in summary["errors"]}
    assert errors == {("mystery-s0", "training"), ("mystery-s1", "training")}
    text = (tmp_path / "leaderboard.md").read_text()
    assert (
        "unknown key 'trainer'" in text
        and f"Ladder version {ladder.LADDER_VERSION}" in text
        and "(cut short)" in text
    )
    ppo = next(a for a in summary["algorithms"] if a["algorithm"] == "ppo")
    assert ppo["seeds_rated"] == 2 and ppo["cut_short"] == 1
    assert ppo["elo_min"] <= ppo["elo_mean"] <= ppo["elo_max"]
    # every pair of the 4 agents played its own duplicate evaluation
    assert len(list((tmp_path / "eval").iterdir())) == 6
    assert summary["redeal_failures"] == {} and "fell back" not in text  # no search rung here
    fell_back = {**summary, "redeal_failures": {"ismcts:5": {"failures": 2, "decisions": 9}}}
    text = league.markdown(fell_back, "fowlplay-league ...")
    assert (
        "## Searches that fell back\n\n- ismcts:5 found no re-deal of the hidden cards at 2 of its 9" in text
    )


def test_a_rerun_skips_finished_trainings_and_games_and_rates_the_same(fake_trainer, tmp_path):
    config = _config(algorithms=[{"name": "ppo"}])
    first = league.run_league(config, tmp_path, log=lambda *_: None)
    trained = len(fake_trainer)
    lines = []
    second = league.run_league(config, tmp_path, log=lines.append)
    assert len(fake_trainer) == trained  # no training ran again
    evaluations = [line for line in lines if " vs " in line]
    assert evaluations and all("0 played" in line for line in evaluations)
    assert json.dumps(first["entries"], sort_keys=True) == json.dumps(second["entries"], sort_keys=True)


def test_train_workers_run_trainings_side_by_side_and_rate_the_same(fake_trainer, monkeypatch, tmp_path):
    one_by_one = league.run_league(_config(), tmp_path / "one", log=lambda *_: None)
    trained = league.run_training
    # The first two trainings must be running at once: each waits for the other (10 s at most).
    both = threading.Barrier(2, timeout=10)
    started = []
    # The stand-in trains in this process, where torch's seed is global: one at a time after the meeting.
    one_torch = threading.Lock()

    def run(command, log: Path, timeout):
        started.append(command)
        if len(started) <= 2:
            both.wait()
        with one_torch:
            return trained(command, log, timeout)

    monkeypatch.setattr(league, "run_training", run)
    # Like print, this log writes a line's text and its end apart; with a pause between them the
    # other training's line would fall in between unless the league writes one line at a time.
    written: list[str] = []

    def log(line):
        written.append(line)
        time.sleep(0.2)
        written.append("\n")

    side_by_side = league.run_league(_config(), tmp_path / "two", log=log, train_workers=2)
    assert len(started) == 4 and not both.broken
    lines = "".join(written).splitlines()
    assert lines and all(line.count(f"{league.PROG}:") == 1 for line in lines), lines
    assert [t["status"] for t in side_by_side["trainings"]] == [t["status"] for t in one_by_one["trainings"]]
    assert [(t["algorithm"], t["seed"]) for t in side_by_side["trainings"]] == [
        (a, s) for a in ("ppo", "mystery") for s in (0, 1)
    ]
    assert json.dumps(one_by_one["entries"], sort_keys=True) == json.dumps(
        side_by_side["entries"], sort_keys=True
    )


#: A stand-in training run: ready at once, and on SIGINT or SIGTERM it "saves" (0.2 s), says which
#: signal it got and exits as fowlplay-train does.
STOPPABLE_RUN = r"""
import pathlib, signal, sys, time
mark = pathlib.Path(sys.argv[1])
def stop(signum, frame):
    time.sleep(0.2)
    mark.with_suffix(".saved").write_text(str(signum))
    sys.exit(128 + signum)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
mark.with_suffix(".ready").write_text("")
time.sleep(60)
"""


def test_a_stop_reaches_every_run_side_by_side_waits_for_them_and_starts_no_other(tmp_path):
    def job(k: int):
        run = tmp_path / f"run{k}"
        return lambda: {
            "status": league.run_training(
                [sys.executable, "-c", STOPPABLE_RUN, str(run)], run.with_suffix(".log"), None
            )
        }

    def stop_when_two_run():
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("*.ready"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C to the league alone: it must pass it on

    threading.Thread(target=stop_when_two_run, daemon=True).start()
    begun = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        league.run_jobs([job(k) for k in range(3)], workers=2)
    assert time.monotonic() - begun < 25  # not the runs' 60 s
    saved = sorted(tmp_path.glob("*.saved"))
    assert [p.name for p in saved] == ["run0.saved", "run1.saved"]
    assert all(p.read_text() == str(int(signal.SIGINT)) for p in saved)
    assert not (tmp_path / "run2.ready").exists() and not (tmp_path / "run2.log").exists()
    # The next league starts its jobs again.
    assert league.run_jobs([lambda: {"k": 0}, lambda: {"k": 1}], workers=2) == [{"k": 0}, {"k": 1}]


def test_train_command_names_the_trainer_budget_and_overrides(tmp_path):
    config = _config()
    algorithm = league.Algorithm("wide", "psro", {"ppo.net_arch": [64, 64]})
    command = league.train_command(config, algorithm, 3, tmp_path)
    text = " ".join(command)
    assert "--set trainer=psro" in text and "--set ppo.net_arch=[64, 64]" in text
    assert "--total-timesteps 1000" in text and "--seed 3" in text and "--max-minutes 1" in text
    assert "trainer=" not in " ".join(league.train_command(config, league.Algorithm("ppo"), 0, tmp_path))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"seeds": [0, 0]}, "distinct"),
        ({"algorithms": [{"name": "a/b"}]}, "letters"),
        ({"budget": 3}, "unknown keys"),
        ({"game": "murray_frog_v0"}, "--game says chicken_v1"),
    ],
)
def test_a_config_mistake_is_named(change, message):
    with pytest.raises(league.LeagueConfigError, match=message):
        _config(**change)


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_every_game_has_a_league_config_with_three_families(game):
    root = Path(__file__).resolve().parents[2]
    config = league.load_config(root / "configs" / "league" / f"{game}.yaml", game)
    assert {a.trainer for a in config.algorithms} >= {"ppo", "psro", "dqn"}
    assert len(config.seeds) >= 3
    assert (root / config.train_config).exists()


def test_a_partial_league_says_which_rungs_and_algorithms_it_left_out(fake_trainer, tmp_path):
    summary = league.run_league(
        _config(), tmp_path, log=lambda *_: None, rungs=["random"], algorithms=["ppo"]
    )
    assert summary["ladder"] == ["random"] and summary["ladder_left_out"] == ["baseline"]
    assert {a["algorithm"] for a in summary["algorithms"]} == {"ppo"} and not summary["errors"]
    assert "**Partial ladder**: the rungs baseline were left out" in (tmp_path / "leaderboard.md").read_text()
    with pytest.raises(league.LeagueConfigError, match="random"):
        league.run_league(_config(), tmp_path, log=lambda *_: None, rungs=["baseline"])
    with pytest.raises(league.LeagueConfigError, match="algorithms of the config"):
        league.run_league(_config(), tmp_path, log=lambda *_: None, algorithms=["nope"])


def test_a_budget_from_the_command_line_is_recorded_and_a_resume_with_another_is_refused(
    fake_trainer, tmp_path
):
    config = _config(algorithms=[{"name": "ppo"}])
    summary = league.run_league(config, tmp_path, log=lambda *_: None, decisions=600, seeds=[2], matches=1)
    assert [c[c.index("--total-timesteps") + 1] for c in fake_trainer] == ["600"]
    assert summary["decisions"] == 600 and summary["config_decisions"] == 1000
    assert summary["seeds"] == [2] and summary["config_seeds"] == [0, 1]
    assert {e["agent"] for e in summary["entries"]} == {"random", "baseline", "ppo-s2"}
    assert json.loads((tmp_path / "train" / "ppo" / "seed2.json").read_text())["decisions"] == 600
    text = (tmp_path / "leaderboard.md").read_text()
    assert "600 decisions per run, set by `--decisions` (the league config says 1,000); safety cap" in text
    assert "seeds [2], set by `--seeds` (the league config says [0, 1])" in text
    assert "1 duplicate matches per pair, set by `--matches` (the league config says 2)" in text
    # the same budget resumes; another one is refused before anything trains
    trained = len(fake_trainer)
    league.run_league(config, tmp_path, log=lambda *_: None, decisions=600, seeds=[2])
    assert len(fake_trainer) == trained
    with pytest.raises(league.LeagueConfigError, match=r"trained to 600 decisions.*--decisions 600"):
        league.run_league(config, tmp_path, log=lambda *_: None)
    # a league written before budget.json existed is checked against its training records
    (tmp_path / league.BUDGET_FILE).unlink()
    with pytest.raises(league.LeagueConfigError, match=r"seed2\.json"):
        league.run_league(config, tmp_path, log=lambda *_: None, decisions=700, seeds=[2])
    assert len(fake_trainer) == trained


@pytest.mark.parametrize(
    "decisions, seeds, message",
    [(0, None, "--decisions"), (None, [1, 1], "--seeds"), (None, [-1], "--seeds")],
)
def test_a_bad_budget_override_is_named(decisions, seeds, message):
    with pytest.raises(league.LeagueConfigError, match=message):
        league.override_budget(_config(), decisions, seeds)
    with pytest.raises(league.LeagueConfigError, match="--matches"):
        league.override_budget(_config(), matches=0)


def test_the_command_line_passes_the_budget_and_names_it(monkeypatch, tmp_path):
    seen = {}

    def run(config, out, *args, **kwargs):
        seen.update(kwargs, config=config)
        return {"algorithms": [], "errors": []}

    monkeypatch.setattr(league, "run_league", run)
    root = Path(__file__).resolve().parents[2]
    argv = ["--game", "chicken_v1", "--config", str(root / "configs/league/chicken_v1.yaml")]
    assert (
        league.main(
            [*argv, "--out", str(tmp_path), "--decisions", "5000", "--seeds", "3", "4", "--matches", "7"]
        )
        == 0
    )
    assert seen["decisions"] == 5000 and seen["seeds"] == [3, 4] and seen["matches"] == 7
    assert seen["command"].endswith("--decisions 5000 --seeds 3 4 --matches 7")
    assert seen["train_workers"] == 1
    assert league.main([*argv, "--out", str(tmp_path), "--train-workers", "2"]) == 0
    assert seen["train_workers"] == 2


def test_train_workers_below_one_is_refused(capsys, tmp_path):
    root = Path(__file__).resolve().parents[2]
    argv = ["--game", "chicken_v1", "--config", str(root / "configs/league/chicken_v1.yaml")]
    with pytest.raises(SystemExit) as exit_:
        league.main([*argv, "--out", str(tmp_path), "--train-workers", "0"])
    assert exit_.value.code == 2 and "--train-workers must be >= 1" in capsys.readouterr().err


def stand_in_exploit(monkeypatch, score_of) -> list[tuple[str, int]]:
    """Replace fowlplay-exploit in the league's subprocess runs: each run writes an exploit.json
    scoring `score_of(run folder of the checkpoint, best-response seed)`, won by the probe
    `probe:pass` from 0.5 up and by the best response below; returns the (folder, seed) of every
    run, in order. Training runs go on as they were."""
    train = league.run_training
    exploited: list[tuple[str, int]] = []

    def run(command, log: Path, timeout):
        if "fowlplay.evaluation.exploit" not in command:
            return train(command, log, timeout)
        args = dict(itertools.pairwise(command))
        assert args["--rungs"] == "none"  # two players: the league's pairs scored every rung already
        seed = int(args.get("--seed", 0))
        exploited.append((args["--agent"].rsplit("/", 1)[1], seed))
        out = Path(args["--out"])
        out.mkdir(parents=True)
        score = score_of(*exploited[-1])
        record = {"score": score, "score_lo": score - 0.1, "score_hi": score + 0.1, "seed": seed}
        record.update(format=2, best="probe:pass" if score >= 0.5 else "best_response")
        record.update(
            total_timesteps_requested=int(args["--total-timesteps"]), matches=int(args["--matches"])
        )
        (out / "exploit.json").write_text(json.dumps(record))
        return 0

    monkeypatch.setattr(league, "run_training", run)
    return exploited


def test_exploit_from_the_command_line_rates_every_checkpoint_and_refuses_another_budget(
    fake_trainer, monkeypatch, tmp_path
):
    exploited = stand_in_exploit(monkeypatch, lambda run, seed: 0.25 if run == "seed0" else 0.75)
    config = _config(algorithms=[{"name": "ppo"}])
    assert config.exploit is None
    summary = league.run_league(config, tmp_path, log=lambda *_: None, exploit=(500, 3))
    assert sorted(exploited) == [("seed0", 0), ("seed1", 0)]
    rated = {e["agent"]: e for e in summary["entries"]}
    assert "exploit" not in rated["baseline"]
    text = (tmp_path / "leaderboard.md").read_text()
    assert "500 learner decisions, 3 duplicate matches" in text and "every trivial probe" in text
    assert "every ladder rung" in text
    # The published figure: the maximum of fowlplay-exploit's estimate and, at two players, the
    # rung that scores best against the checkpoint in the league's own pairs, named.
    for label, estimate, by in (("ppo-s0", 0.25, "best_response"), ("ppo-s1", 0.75, "probe:pass")):
        e = rated[label]
        rung = e["rung_name"]
        assert e["rung"] == pytest.approx(1.0 - e[f"vs_{rung}"])
        assert e["rung"] == max(1.0 - e[f"vs_{o}"] for o in summary["ladder"])
        assert e["exploit"] == max(estimate, e["rung"]) and e["exploit_by_seed"] == [estimate]
        if e["rung"] > estimate:
            assert e["exploit_best"] == f"rung:{rung}" and e["exploit_lo"] == e["rung_lo"]
            assert f"{e['exploit']:.3f} [{e['rung_lo']:.3f}, {e['rung_hi']:.3f}] rung:{rung} |" in text
        else:
            assert e["exploit_best"] == by and f"{estimate:.3f} [{estimate - 0.1:.3f}, " in text
    ppo = summary["algorithms"][0]
    assert ppo["exploit_mean"] == pytest.approx((rated["ppo-s0"]["exploit"] + rated["ppo-s1"]["exploit"]) / 2)
    assert "| decisions | exploit | strongest rung |" in text and f" {rated['ppo-s0']['rung_name']} |" in text
    assert ppo["rung_mean"] == pytest.approx((rated["ppo-s0"]["rung"] + rated["ppo-s1"]["rung"]) / 2)
    # A rerun at the same budget trains and estimates nothing again; another budget is refused.
    league.run_league(config, tmp_path, log=lambda *_: None, exploit=(500, 3))
    assert len(exploited) == 2
    other = league.run_league(config, tmp_path, log=lambda *_: None, exploit=(600, 3))
    assert len(exploited) == 2
    messages = [e["message"] for e in other["errors"] if e["stage"] == "exploit"]
    assert len(messages) == 2 and all("made with 500 timesteps and 3 matches" in m for m in messages)


def test_the_strongest_rung_against_a_checkpoint_is_named_with_its_mirrored_score():
    entry = {"vs_random": 0.9, "vs_random_lo": 0.8, "vs_random_hi": 1.0}
    entry.update({"vs_baseline": 0.3, "vs_baseline_lo": 0.2, "vs_baseline_hi": 0.45})
    entry.update({"vs_ismcts:5": math.nan, "vs_ismcts:5_lo": math.nan, "vs_ismcts:5_hi": math.nan})
    rung = league._strongest_rung(entry, ["random", "baseline", "ismcts:5"])
    assert rung["rung_name"] == "baseline"
    assert (rung["rung"], rung["rung_lo"], rung["rung_hi"]) == pytest.approx((0.7, 0.55, 0.8))
    assert league._strongest_rung({}, ["random"]) == {}


@pytest.mark.parametrize("exploit", [(0, 3), (100, 0), (100, 3, 0), (100,), (100, 3, 2, 1)])
def test_a_bad_exploit_budget_is_named(exploit):
    with pytest.raises(league.LeagueConfigError, match=r"--exploit must be two or three integers >= 1"):
        league.override_budget(_config(), exploit=exploit)


@pytest.mark.parametrize("seeds", [0, True, "2"])
def test_a_bad_number_of_best_responses_is_named(seeds):
    with pytest.raises(league.LeagueConfigError, match=r"exploit: seeds \(best responses per checkpoint\)"):
        _config(exploit={"total_timesteps": 100, "matches": 3, "seeds": seeds})


def test_several_best_responses_per_checkpoint_keep_the_strongest(fake_trainer, monkeypatch, tmp_path):
    """`exploit: seeds: 2` (or `--exploit N M 2`): two best responses per checkpoint; the leaderboard
    shows the higher score with its interval, and each seed's score; a seed added later trains only it."""
    scores = {("seed0", 0): 0.25, ("seed0", 1): 0.40, ("seed1", 0): 0.75, ("seed1", 1): 0.50}
    exploited = stand_in_exploit(monkeypatch, lambda run, seed: scores[(run, seed)])
    config = _config(algorithms=[{"name": "ppo"}])
    league.run_league(config, tmp_path, log=lambda *_: None, exploit=(500, 3))
    assert sorted(exploited) == [("seed0", 0), ("seed1", 0)]
    summary = league.run_league(config, tmp_path, log=lambda *_: None, exploit=(500, 3, 2))
    assert sorted(exploited) == [("seed0", 0), ("seed0", 1), ("seed1", 0), ("seed1", 1)]
    assert (tmp_path / "exploit" / "ppo-s0-seed1" / "exploit.json").exists()
    rated = {e["agent"]: e for e in summary["entries"]}
    s0, s1 = rated["ppo-s0"], rated["ppo-s1"]  # each published figure: the best seed's, or a rung's above it
    assert s0["exploit_by_seed"] == [0.25, 0.40] and s0["exploit"] == max(0.40, s0["rung"])
    assert s1["exploit_by_seed"] == [0.75, 0.50] and s1["exploit"] == max(0.75, s1["rung"])
    if s0["exploit"] == 0.40:
        assert s0["exploit_lo"] == pytest.approx(0.30) and s0["exploit_best"] == "best_response"
    assert summary["algorithms"][0]["exploit_mean"] == pytest.approx((s0["exploit"] + s1["exploit"]) / 2)
    assert summary["exploit"] == {"total_timesteps": 500, "matches": 3, "seeds": 2}
    text = (tmp_path / "leaderboard.md").read_text()
    assert "2 fresh MaskablePPO best responses per checkpoint" in text and "seeds 0-1" in text
    assert " (0.250, 0.400) |" in text and " (0.750, 0.500) |" in text
    # leaderboard.csv: the rungs have no training or exploit columns and no agent scores itself, yet
    # every value sits under its own column (an earlier version took the first row's keys as header).
    with open(tmp_path / "leaderboard.csv", newline="") as handle:
        rows = {row["agent"]: row for row in csv.DictReader(handle)}
    scored = {key for entry in summary["entries"] for key in entry if key.startswith("vs_")}
    assert {"vs_random", "vs_baseline"} <= scored
    for entry in summary["entries"]:
        row = rows[entry["agent"]]
        assert float(row["elo"]) == pytest.approx(entry["elo"], abs=1e-5)
        for key in (*scored, "exploit", "decisions"):
            assert (row[key] == "") == (key not in entry), (entry["agent"], key)
            if key in entry:
                assert float(row[key]) == pytest.approx(entry[key], abs=1e-5), (entry["agent"], key)
    # Nothing is estimated again; a result whose recorded seed is not its folder's is refused.
    league.run_league(config, tmp_path, log=lambda *_: None, exploit=(500, 3, 2))
    assert len(exploited) == 4
    record = tmp_path / "exploit" / "ppo-s1-seed1" / "exploit.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "seed": 0}))
    other = league.run_league(config, tmp_path, log=lambda *_: None, exploit=(500, 3, 2))
    messages = [e["message"] for e in other["errors"] if e["stage"] == "exploit"]
    assert len(messages) == 1 and "made with seed 0" in messages[0]


def test_the_command_line_passes_best_response_seeds(monkeypatch, tmp_path):
    seen = {}

    def run(config, out, *args, **kwargs):
        seen.update(kwargs)
        return {"algorithms": [], "errors": []}

    monkeypatch.setattr(league, "run_league", run)
    root = Path(__file__).resolve().parents[2]
    argv = ["--game", "chicken_v1", "--config", str(root / "configs/league/chicken_v1.yaml")]
    assert league.main([*argv, "--out", str(tmp_path), "--exploit", "5000", "20", "3"]) == 0
    assert seen["exploit"] == (5000, 20, 3) and seen["command"].endswith("--exploit 5000 20 3")


def test_without_exploit_the_leaderboard_says_it_was_not_estimated(fake_trainer, tmp_path):
    league.run_league(_config(algorithms=[{"name": "ppo"}]), tmp_path, log=lambda *_: None)
    assert "Exploitability not estimated" in (tmp_path / "leaderboard.md").read_text()
