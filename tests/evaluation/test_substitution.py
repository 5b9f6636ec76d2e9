"""The substitution test: the helper decides one kind of decision in the agent's place, and the
rows share every deal and seed (evaluation/substitution.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.agents import Agent, RandomAgent
from fowlplay.evaluation import substitution as S  # noqa: N812 - the module read as one short name
from fowlplay.evaluation.agents import parse_spec, resolve_spec

CROWS = "murder_she_crows_v1"


class Recorder(Agent):
    """Plays the first legal action and notes the decision kind of every call."""

    def __init__(self, env) -> None:
        self.env, self.asked = env, []

    def act(self, observation, action_mask) -> int:
        self.asked.append(self.env.unwrapped.game.decision())
        return int(np.flatnonzero(action_mask)[0])


def test_the_helper_decides_only_the_kinds_it_is_given():
    env = envs.make(CROWS)
    helper = Recorder(env)
    me = S.Substitute(env, RandomAgent(0), helper, {"place"})
    env.reset(seed=3)
    for name in env.agent_iter():
        if env.terminations[name] or env.truncations[name]:
            env.step(None)
            continue
        view = env.observe(name)
        env.step(me.act(view["observation"], view["action_mask"]))
    assert len(me.met) > 1  # the game asked more than one kind of decision
    assert helper.asked and set(helper.asked) == {"place"}
    assert len(helper.asked) == me.met["place"]


def test_every_kind_decided_by_the_helper_is_the_helpers_own_play():
    """Common random numbers: the last row (the helper decides everything) scores deal for deal what
    the helper scores playing alone, and a random agent gains from the baseline's decisions."""
    rows = S.substitution(
        CROWS, "random", "baseline", "baseline", deals=3, players=None, seed=4, log=lambda _: None
    )
    assert [row.label for row in rows] == [S.ALONE, *rows[0].met, S.EVERY]
    env = envs.make(CROWS)
    specs = {
        role: resolve_spec(parse_spec(t), env) for role, t in (("agent", "baseline"), ("helper", "random"))
    }
    specs["opponent"] = specs["agent"]
    baseline_alone = S.play_row(env, specs, S.ALONE, set(), 3, 4)
    assert rows[-1].scores == baseline_alone.scores
    assert np.mean(rows[-1].scores) > np.mean(rows[0].scores)
    assert rows[0].games == 3 * 2 and sum(rows[0].met.values()) > 0


def test_the_table_gives_each_kinds_counts_agreement_and_paired_change():
    alone = S.Row(S.ALONE, [0.0, 0.5, 0.5], {"bid": 30}, 6, {"bid": 12})
    better, helper = S.Row("bid", [0.5, 1.0, 0.5]), S.Row(S.EVERY, [1.0, 1.0, 1.0], {"bid": 24}, 6)
    lines = S.table([alone, better, helper]).splitlines()
    assert lines[2].startswith("| (none: the agent alone) | - | - | - | 0.333")
    assert lines[3].startswith("| `bid` | 5.0 | 4.0 | 40% | 0.667") and "+0.333" in lines[3]
    assert lines[3].endswith("| 1/2/0 |") and lines[4].endswith("| 3/0/0 |")


def test_the_agent_alone_is_asked_beside_the_helper_without_its_choices_changing():
    """The helper asked beside the agent alone changes none of the agent's games (its own seeded
    generator), and agreement is counted per kind: the baseline beside itself always agrees."""
    env = envs.make(CROWS)
    specs = {
        role: resolve_spec(parse_spec(t), env) for role, t in (("agent", "random"), ("helper", "baseline"))
    }
    specs["opponent"] = specs["helper"]
    asked, plain = (S.play_row(env, specs, S.ALONE, set(), 2, 1, shadow=shadow) for shadow in (True, False))
    assert asked.scores == plain.scores and asked.met == plain.met and not plain.agreed
    assert 0 < sum(asked.agreed.values()) < sum(asked.met.values())
    same = {**specs, "agent": specs["helper"]}
    mirror = S.play_row(env, same, S.ALONE, set(), 2, 1, shadow=True)
    assert mirror.agreed == mirror.met


def test_unknown_kinds_and_bad_arguments_are_named(capsys):
    with pytest.raises(
        ValueError, match=r"--kinds \['bet'\]: the agent met no decision of that kind; it met \['bid'\]"
    ):
        S.substitution("chicken_v1", "random", "baseline", "random", 2, None, 0, kinds=["bet"])
    assert S.main(["--game", "chicken_v1", "--agent", "nonsense", "--deals", "2"]) == 2
    assert "nonsense" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        S.main(["--game", "chicken_v1", "--agent", "random", "--deals", "1"])
    assert "--deals must be at least 2" in capsys.readouterr().err
