"""fowlplay.envs.checks: correct envs pass, and each broken twin fails with the right check named.

Our four games pass it in tests/envs/test_contract.py (at larger budgets); here the toolkit itself is
held to a correct small env, broken twins of it (tests/envs/broken_envs.py), PettingZoo's own
classic games, a policy that ignores its mask, and the command line's exit codes.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.checks import (
    CHECK_NAMES,
    CONVENTION_CHECKS,
    FAIL,
    PASS,
    SKIPPED,
    CheckReport,
    TargetError,
    check_aec_env,
    resolve_target,
)
from fowlplay.evaluation.check_cli import check_policy

from tests.envs import broken_envs

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "tests.envs.broken_envs"
#: Small budgets: the twins are tiny and each defect shows within a few games.
FAST = {"games": 4, "exact_decisions": 16, "hidden_samples": 8, "api_cycles": 50}
CLONE_AND_HIDDEN = {"clone_independent", "no_leak", "redeal_changes_hidden"}
#: The fresh-process check costs a Python start-up; it runs where it matters (the correct env,
#: the twin that uses the global generator, the command line).
SUBPROCESS = "reset_seed_across_processes"


@functools.cache
def twin_report(factory: str) -> CheckReport:
    """The toolkit's report on a broken twin (computed once per test session)."""
    skip = () if factory == "global_random" else (SUBPROCESS,)
    return check_aec_env(f"{BROKEN}:{factory}", **FAST, skip=skip)


def test_a_correct_env_passes_every_check():
    report = check_aec_env(f"{BROKEN}:toy", **FAST)
    assert report.ok, report.table()
    assert [r.name for r in report.results] == list(CHECK_NAMES)
    assert {r.status for r in report.results} == {PASS}, report.table()
    assert "on clones" in report["mask_exact"].message


def test_a_correct_env_without_clone_is_checked_on_replays_and_skips_the_hidden_checks():
    report = check_aec_env(f"{BROKEN}:toy_no_clone", **FAST, skip=[SUBPROCESS])
    assert report.ok, report.table()
    assert {r.name for r in report.results if r.status == SKIPPED} == CLONE_AND_HIDDEN | {SUBPROCESS}
    assert "on replays from the same seed" in report["mask_exact"].message


def test_a_callable_and_its_players_are_accepted_and_the_callable_found_by_name():
    report = check_aec_env(broken_envs.toy, players=3, **FAST)
    assert report.ok, report.table()
    assert report.target == f"{BROKEN}:toy"
    assert report["reset_seed_across_processes"].status == PASS
    local = check_aec_env(lambda **kw: broken_envs.ToyEnv(**kw), games=1, exact_decisions=1)
    assert local["reset_seed_across_processes"].status == SKIPPED
    assert "module:callable" in local["reset_seed_across_processes"].message


#: broken twin -> (checks that must fail, checks that may fail with them). Only these fail.
BROKEN_CASES = {
    "mask_hides_legal": ({"mask_exact"}, set()),
    "mask_hides_legal_no_clone": ({"mask_exact"}, set()),
    "mask_offers_illegal": ({"mask_exact"}, set()),
    # PettingZoo's tests step masked-legal samples too; when one is the refused action, they crash
    "mask_offers_illegal_raising": ({"mask_exact"}, {"pettingzoo_api", "pettingzoo_seed"}),
    "waiting_has_legal": ({"waiting_masks_zero"}, set()),
    "acting_no_legal": ({"acting_has_legal"}, set()),
    # gymnasium's Discrete.sample(mask), which PettingZoo's tests call, asserts an int8 mask of n entries
    "wrong_mask_dtype": ({"mask_shape_dtype", "pettingzoo_api", "pettingzoo_seed"}, set()),
    "wrong_mask_shape": ({"mask_shape_dtype", "pettingzoo_api", "pettingzoo_seed"}, set()),
    "global_random": ({"reset_seed_fixes_game", "reset_seed_across_processes", "pettingzoo_seed"}, set()),
    "leaks_hand": ({"no_leak"}, set()),
    "vacuous_redeal": ({"redeal_changes_hidden"}, set()),
    # a fold the mask hides, accepted at any time, silently losing: a rules bug, not an illegal-move rule
    "silent_fold": ({"mask_exact"}, set()),
    # without a mask PettingZoo's tests sample any action, and the game refuses some
    "flat_observation": ({"dict_convention"}, {"pettingzoo_api", "pettingzoo_seed"}),
}


@pytest.mark.parametrize("factory", list(BROKEN_CASES))
def test_each_broken_twin_fails_the_check_that_names_its_defect(factory):
    must, may = BROKEN_CASES[factory]
    report = twin_report(factory)
    failed = set(report.failed)
    assert not report.ok
    assert must <= failed <= must | may, report.table()
    for name in must:
        result = report[name]
        assert result.status == FAIL and result.message
        if name in ("mask_exact", "waiting_masks_zero", "acting_has_legal", "mask_shape_dtype", "no_leak"):
            assert {"seed", "step", "agent"} <= set(result.evidence), result


def test_pettingzoos_tests_alone_miss_what_the_mask_checks_catch():
    """The issue's claim: api_test and seed_test pass a lying mask, a waiting agent with legal
    actions and a leaking observation; the toolkit fails each of them."""
    for factory in ("mask_hides_legal", "waiting_has_legal", "leaks_hand"):
        report = twin_report(factory)
        assert report["pettingzoo_api"].status == PASS
        assert report["pettingzoo_seed"].status == PASS
        assert not report.ok


def test_mask_exact_evidence_points_at_a_real_lie():
    report = twin_report("mask_hides_legal")
    evidence = report["mask_exact"].evidence
    assert evidence["action"] == broken_envs.STOP
    assert "masked out but step accepted" in report["mask_exact"].message


def test_a_silent_loss_fails_and_an_announced_one_is_refused_by_name():
    """A masked-out action that ends the game with the actor losing counts as PettingZoo's
    illegal-move rule only when the env says so; each way of saying it is named in the message."""
    silent = twin_report("silent_fold")["mask_exact"]
    assert silent.evidence["action"] == broken_envs.FOLD
    assert "silent loss" in silent.message and "without announcing an illegal move" in silent.message
    announced = twin_report("announced_fold")
    assert announced.ok, announced.table()
    result = announced["mask_exact"]
    assert "PettingZoo's illegal-move warning" in result.message
    assert result.data["refusals"]["PettingZoo's illegal-move warning"] > 0
    lose = check_aec_env(f"{BROKEN}:toy", **FAST, env_kwargs={"illegal_action": "lose"}, skip=[SUBPROCESS])
    assert lose.ok, lose.table()
    assert "step set info key 'illegal_action'" in lose["mask_exact"].message
    assert "step raised ValueError" in twin_report("leaks_hand")["mask_exact"].message


def test_checks_beyond_pettingzoos_api_are_reported_as_fowlplay_conventions():
    """PettingZoo's Leduc shows a waiting player its legal actions: a fowlplay convention fails, not the API."""
    pytest.importorskip("rlcard")
    report = check_aec_env("pettingzoo.classic.leduc_holdem_v4:env", **FAST, skip=[SUBPROCESS])
    assert report.failed == ["waiting_masks_zero"], report.table()
    assert report["waiting_masks_zero"].convention and not report["mask_exact"].convention
    assert report.api_ok and not report.ok
    table = report.table()
    heading = table.index("fowlplay conventions, beyond PettingZoo's API")
    assert table.index("FAIL    waiting_masks_zero") > heading > table.index("PASS    mask_exact")
    assert table.splitlines()[-1].endswith(
        "(PettingZoo's API: OK; fowlplay conventions: failed waiting_masks_zero)"
    )
    assert "PettingZoo's illegal-move warning" in report["mask_exact"].message
    assert {r.name for r in report.results if r.convention} == set(CONVENTION_CHECKS)
    assert json.loads(report.to_json())["api_ok"] is True


def test_a_non_convention_env_is_told_what_the_convention_is():
    report = twin_report("flat_observation")
    message = report["dict_convention"].message
    assert "'observation'" in message and "'action_mask'" in message and "skipped" in message
    for name in ("mask_shape_dtype", "acting_has_legal", "waiting_masks_zero", "mask_exact"):
        assert report[name].status == SKIPPED


@pytest.mark.parametrize("name", ["tictactoe_v3", "connect_four_v3"])
def test_pettingzoo_classic_games_pass_on_replays(name):
    """TerminateIllegalWrapper ends the game with the actor at -1: the toolkit counts that as refused."""
    pytest.importorskip("pettingzoo.classic")
    report = check_aec_env(f"pettingzoo.classic.{name}:env", **FAST, skip=[SUBPROCESS])
    assert report.ok, report.table()
    assert report["mask_exact"].status == PASS and "replays" in report["mask_exact"].message
    assert report["rewards"].data["zero_sum"]
    skipped = {r.name for r in report.results if r.status == SKIPPED}
    assert skipped == CLONE_AND_HIDDEN | {
        "seeds_differ",
        SUBPROCESS,
    }  # no chance events, no hidden information


def test_report_serialises_to_json_and_a_table():
    report = twin_report("leaks_hand")
    data = json.loads(report.to_json())
    assert data["ok"] is False and data["target"] == f"{BROKEN}:leaks_hand"
    by_name = {r["name"]: r for r in data["results"]}
    assert by_name["no_leak"]["status"] == FAIL and "seed" in by_name["no_leak"]["evidence"]
    table = report.table()
    assert (
        "FAIL    no_leak" in table
        and "evidence: seed=" in table
        and table.splitlines()[-1].startswith("FAILED")
    )
    assert isinstance(CheckReport("x", {}).ok, bool)


def test_bad_targets_and_budgets_are_clear_errors():
    with pytest.raises(TargetError, match="neither MODULE:CALLABLE"):
        check_aec_env("not a target")
    with pytest.raises(TargetError, match="does not import"):
        check_aec_env("no_such_module_here:env")
    with pytest.raises(TargetError, match="no attribute"):
        check_aec_env(f"{BROKEN}:no_such_factory")
    with pytest.raises(TargetError, match="num_players"):
        check_aec_env("chicken_v1", players=9)
    with pytest.raises(ValueError, match="games"):
        check_aec_env(f"{BROKEN}:toy", games=0)
    with pytest.raises(ValueError, match="unknown checks"):
        check_aec_env(f"{BROKEN}:toy", skip=["no_such_check"])


# ----- policies -------------------------------------------------------------------------------------


def test_an_unmasked_policy_shows_violations_and_masked_ones_none():
    bad = check_policy("chicken_v1", f"{BROKEN}:unmasked_policy", decisions=300)
    assert bad.violations > 0 and not bad.ok
    assert {"seed", "step", "agent", "action", "legal"} <= set(bad.first_violation)
    assert bad.first_violation["action"] not in bad.first_violation["legal"]
    good = check_policy("chicken_v1", f"{BROKEN}:masked_policy", decisions=300)
    assert good.violations == 0 and good.ok and good.decisions == 300
    for spec in ("random", "baseline"):
        report = check_policy("chicken_v1", spec, decisions=300, players=3)
        assert report.ok and report.violations == 0 and not report.probabilities


def test_probability_on_masked_out_actions_is_measured():
    leaky = check_policy("murder_she_crows_v1", f"{BROKEN}:uniform_probabilities", decisions=200)
    assert leaky.probabilities and leaky.masked_probability_mean > 0.1 and not leaky.ok
    tight = check_policy("murder_she_crows_v1", f"{BROKEN}:masked_probabilities", decisions=200)
    assert tight.probabilities and tight.masked_probability_max == 0.0 and tight.violations == 0 and tight.ok


def test_policy_on_an_env_without_the_lose_option_abandons_a_violating_game():
    pytest.importorskip("pettingzoo.classic")
    report = check_policy("pettingzoo.classic.tictactoe_v3:env", f"{BROKEN}:unmasked_policy", decisions=100)
    assert report.violations > 0 and report.decisions == 100


def test_a_checkpoint_policy_respects_its_mask(tmp_path):
    pytest.importorskip("sb3_contrib")
    from fowlplay.training.checkpoint import make_metadata, save_checkpoint
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
    model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]}, seed=0)
    metadata = make_metadata(envs.make("chicken_v1"), {"note": "test"}, seed=0, timesteps=0, kind="final")
    save_checkpoint(model, tmp_path / "run" / "final", metadata)
    report = check_policy("chicken_v1", f"ckpt:{tmp_path / 'run'}", decisions=200)
    assert report.probabilities and report.ok and report.violations == 0
    assert report.masked_probability_max == 0.0


# ----- the command line -----------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(ROOT / ".dev"), str(ROOT), *(p for p in sys.path if p)])
    return subprocess.run(
        [sys.executable, "-m", "fowlplay.evaluation.check_cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
    )


def test_cli_exit_codes(tmp_path):
    ok = _cli(f"{BROKEN}:toy", "--games", "2", "--exact-decisions", "4")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "OK:" in ok.stdout
    out = tmp_path / "report.json"
    failed = _cli(f"{BROKEN}:waiting_has_legal", "--games", "2", "--json", str(out))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "FAIL    waiting_masks_zero" in failed.stdout
    assert json.loads(out.read_text())["ok"] is False
    api_only = _cli(f"{BROKEN}:waiting_has_legal", "--games", "2", "--api-only")
    assert api_only.returncode == 0, api_only.stdout + api_only.stderr
    assert "FAIL    waiting_masks_zero" in api_only.stdout and "PettingZoo's API: OK" in api_only.stdout
    api_broken = _cli(f"{BROKEN}:silent_fold", "--games", "2", "--api-only", "--skip", SUBPROCESS)
    assert api_broken.returncode == 1 and "silent loss" in api_broken.stdout
    usage = _cli("no_such_module_here:env")
    assert usage.returncode == 2
    assert usage.stderr.count("\n") == 1 and "does not import" in usage.stderr


def test_cli_policy_mode_and_its_usage_errors():
    bad = _cli("chicken_v1", "--policy", f"{BROKEN}:unmasked_policy", "--decisions", "200")
    assert bad.returncode == 1 and "masked-out actions chosen" in bad.stdout
    wrong = _cli("chicken_v1", "--policy", "nonsense")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "MODULE:CALLABLE" in wrong.stderr


def test_every_registered_game_is_a_cli_target():
    for name in envs.ENV_NAMES:
        fn, spec = resolve_target(name)
        assert spec == f"fowlplay.envs.{name}:env" and fn is envs.env_module(name).env


def test_the_toy_game_is_fair_to_its_own_tests():
    """The correct toy's legality is what its docstring says (a transcript), so the twins lie about it."""
    env = broken_envs.toy()
    env.reset(seed=3)
    assert env.observe("player_0")["action_mask"].tolist() == [1, 1, 0, 0]
    assert not env.observe("player_1")["action_mask"].any()
    for action in (broken_envs.DRAW, broken_envs.DRAW, broken_envs.PASS, broken_envs.PASS):
        env.step(action)
    assert env.turn == 4 and env.observe(env.agent_selection)["action_mask"][broken_envs.STOP] == 1
    hands = [len(h) for h in env.hands]
    assert hands == [2, 2]
    with pytest.raises(ValueError, match="illegal"):
        env.step(7)
    env.step(broken_envs.STOP)
    assert all(env.terminations.values())
    assert sum(env.rewards.values()) == pytest.approx(0.0)
    assert np.isclose(max(env.rewards.values()), 1.0) or set(env.rewards.values()) == {0.0}


def test_the_toolkit_imports_only_the_core_dependencies():
    code = (
        "import sys, fowlplay.envs.checks; "
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib') "
        "or m.startswith(('fowlplay.training', 'fowlplay.evaluation'))]; "
        "print(heavy); sys.exit(bool(heavy))"
    )
    path = os.pathsep.join([str(ROOT / ".dev"), *(p for p in sys.path if p)])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}
    )
    assert out.returncode == 0, out.stdout + out.stderr
