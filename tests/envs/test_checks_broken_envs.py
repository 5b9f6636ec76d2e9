"""More broken twins of the toy game (tests/envs/broken_envs.py), one for each check that had none:
each check reports its twin's defect, and passes on the correct toy and on a real game.

- `clone_independent`: the clones of an env share a random generator that no observation shows;
- `observation_in_space`: an observation below its declared bounds;
- `games_end`: a game that never ends;
- `seeds_differ`: reset ignores its seed (a game that is fixed, not random);
- `rewards`: a missing reward, a reward that is no number, a reward that is not finite.
"""

from __future__ import annotations

import copy
import functools

import pytest
from fowlplay.envs.checks import FAIL, PASS, SKIPPED, CheckReport, check_aec_env

from tests.envs.broken_envs import DRAW, ToyEnv

#: Small budgets, as tests/envs/test_checks.py uses; the fresh-process check is not needed here.
FAST = {"games": 4, "exact_decisions": 16, "hidden_samples": 8, "api_cycles": 50}
SUBPROCESS = "reset_seed_across_processes"
#: A game that never ends is walked this far (the default, 10,000 decisions, is slow for a test).
MAX_STEPS = 200


# ----- the twins -----------------------------------------------------------------------------------
class RandomDraws(ToyEnv):
    """The correct game, except that a draw takes a random card of the deck (from the env's seeded
    generator) instead of its top card: a clone must copy the generator for its play to be its own."""

    def step(self, action):
        agent = self.agent_selection
        live = not (self.terminations[agent] or self.truncations[agent])
        if live and action == DRAW and self._legal()[DRAW]:
            self.deck = self._shuffle(self.deck)  # the deck's order is hidden: only its size is seen
        super().step(action)


class SharedRandomClone(RandomDraws):
    """clone() copies everything but the generator: every clone of one env draws from one generator,
    made at the first clone, which no observation and no state_dict shows. Playing one clone moves
    the next clone's draws (the original keeps its own, so its replays stay faithful)."""

    def clone(self):
        shared = self.__dict__.get("clones_rng")
        if shared is None:
            shared = self.clones_rng = copy.deepcopy(self.rng)
        twin = copy.deepcopy(self)
        twin.rng = shared
        return twin


class ObservationBelowSpace(ToyEnv):
    """The turn is encoded one too low: -1 on the first turn, below the space's lower bound 0."""

    def _encode(self, seat):
        out = super()._encode(seat)
        out[-1] = self.turn - 1
        return out


class NeverEnds(ToyEnv):
    """Stopping, and the turn limit, start the turns over instead of ending the game."""

    def _finish(self):
        self.turn = 0
        seat = self._seat(self.agent_selection)
        self.agent_selection = self.possible_agents[(seat + 1) % len(self.possible_agents)]


class IgnoresSeed(ToyEnv):
    """reset(seed) deals from a fixed generator: every seed plays the same game."""

    def reset(self, seed=None, options=None):
        super().reset(seed=0, options=options)


class MissingReward(ToyEnv):
    """The last seat's reward is missing from `rewards` after every step but the last."""

    def step(self, action):
        last = self.possible_agents[-1]
        self.rewards.setdefault(last, 0.0)  # back for the step itself, which adds every reward up
        super().step(action)
        if not self._over:
            del self.rewards[last]


class BoolReward(ToyEnv):
    """The winners' reward is True, a bool, rather than a number."""

    def _finish(self):
        super()._finish()
        for agent, reward in self.rewards.items():
            if reward > 0:
                self.rewards[agent] = True


class NanReward(ToyEnv):
    """The first seat's final reward is NaN."""

    def _finish(self):
        super()._finish()
        self.rewards[self.possible_agents[0]] = float("nan")


def random_draws(**kwargs):
    return RandomDraws(**kwargs)


def shared_random_clone(**kwargs):
    return SharedRandomClone(**kwargs)


def observation_below_space(**kwargs):
    return ObservationBelowSpace(**kwargs)


def never_ends(**kwargs):
    return NeverEnds(**kwargs)


def ignores_seed(**kwargs):
    return IgnoresSeed(**kwargs)


def missing_reward(**kwargs):
    return MissingReward(**kwargs)


def bool_reward(**kwargs):
    return BoolReward(**kwargs)


def nan_reward(**kwargs):
    return NanReward(**kwargs)


@functools.cache
def report_of(factory) -> CheckReport:
    """The toolkit's report on a twin (computed once per test session)."""
    return check_aec_env(factory, **FAST, max_steps=MAX_STEPS, skip=(SUBPROCESS,))


@functools.cache
def real_game() -> CheckReport:
    return check_aec_env("chicken_v1", **FAST, skip=(SUBPROCESS,))


# ----- each check names its twin's defect ------------------------------------------------------------
def test_the_game_with_random_draws_and_its_own_clones_passes_every_check():
    # SharedRandomClone's correct twin: what fails below is the shared generator, not the random draws
    report = report_of(random_draws)
    assert report.ok, report.table()
    assert report["clone_independent"].status == PASS and "independent" in report["clone_independent"].message


def test_clones_sharing_a_generator_no_observation_shows_are_not_independent():
    result = report_of(shared_random_clone)["clone_independent"]
    assert result.status == FAIL, result
    assert "two clones of one state given the same actions played differently" in result.message
    assert {"seed", "step", "agent"} <= set(result.evidence), result


def test_an_observation_outside_its_declared_space_is_named_with_its_index():
    result = report_of(observation_below_space)["observation_in_space"]
    assert result.status == FAIL, result
    last = ToyEnv().observation_space("player_0")["observation"].shape[0] - 1
    assert f"outside the declared observation space (indices outside the bounds: [{last}])" in result.message
    assert result.evidence["step"] == 0, result


def test_a_game_that_never_ends_fails_games_end():
    result = report_of(never_ends)["games_end"]
    assert result.status == FAIL, result
    assert f"the game had not ended after {MAX_STEPS} decisions" in result.message
    # Nothing else is wrong: the turn starts over, it stays within its bounds.
    assert report_of(never_ends)["observation_in_space"].status == PASS


def test_a_reset_that_ignores_its_seed_is_not_said_to_give_different_games():
    result = report_of(ignores_seed)["seeds_differ"]
    assert result.status == SKIPPED, result
    assert "reset ignores its seed" in result.message


@pytest.mark.parametrize(
    "factory, said",
    [
        (missing_reward, "no reward for ['player_1'] after a step"),
        (bool_reward, "is a bool, not a number"),
        (nan_reward, "player_0's reward is nan"),
    ],
)
def test_a_reward_missing_not_a_number_or_not_finite_fails_rewards(factory, said):
    result = report_of(factory)["rewards"]
    assert result.status == FAIL, result
    assert said in result.message, result


#: twin -> every check that fails on it (PettingZoo's own api_test sees some of the same defects).
FAILING = {
    shared_random_clone: {"clone_independent"},
    observation_below_space: {"observation_in_space", "pettingzoo_api"},
    never_ends: {"games_end"},
    ignores_seed: set(),  # a fixed game is no error: seeds_differ is skipped, as for a game without chance
    missing_reward: {"rewards", "pettingzoo_api"},
    bool_reward: {"rewards"},
    nan_reward: {"rewards", "pettingzoo_api", "pettingzoo_seed"},
}


@pytest.mark.parametrize("factory", list(FAILING), ids=lambda f: f.__name__)
def test_only_the_checks_that_name_a_twins_defect_fail(factory):
    report = report_of(factory)
    assert set(report.failed) == FAILING[factory], report.table()


# ----- and each passes on a real game ---------------------------------------------------------------
@pytest.mark.parametrize(
    "check", ["clone_independent", "observation_in_space", "games_end", "seeds_differ", "rewards"]
)
def test_each_check_passes_on_a_real_game(check):
    report = real_game()
    assert report[check].status == PASS, report.table()
