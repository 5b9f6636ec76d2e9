"""The Fowl baseline never throws a game away on a Murder that must fail."""

from __future__ import annotations

import pytest
from fowlplay import envs
from fowlplay.envs.fowl import BaselineAgent


def play_logged(seed: int, num_players: int = 2) -> list[str]:
    """Every log line of one seeded game between baselines."""
    env = envs.make("murder_most_fowl_v0", num_players=num_players)
    env.reset(seed=seed)
    agents = [BaselineAgent(env.unwrapped.options) for _ in range(num_players)]
    lines = []
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        obs = env.observe(env.agent_selection)
        env.step(agents[int(env.agent_selection[-1])].act(obs["observation"], obs["action_mask"]))
        lines += env.unwrapped.game.log
    return lines


@pytest.mark.parametrize("seed", [13, 16, 38, 59])
def test_a_doomed_murder_is_discarded_not_played(seed):
    # In these deals the baseline before this rule was caught murdering (seeds 38 and 59 on turn 1,
    # at 0-0): it kept the Murder beside cards it could not play, so the Murder was its only play.
    lines = play_logged(seed)
    assert not [line for line in lines if "is caught" in line]


def test_on_turn_one_the_murder_goes_to_the_discard_pile():
    lines = play_logged(38)
    first_turn = lines[: next(i for i, line in enumerate(lines) if line.startswith("player_1"))]
    assert any("player_0 discards Murder" in line for line in first_turn), first_turn
