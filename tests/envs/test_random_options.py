"""The contract suite's observation-in-space and mask checks over random valid options, not only the
defaults: small decks, short tracks and odd caps are where an encoding's bound is first crossed.

Murray's `table_seen` reached 2.0 against a declared high of 1.0 with small `insect_counts` (68 of
188,522 random games) and never with the defaults; this suite is what would have found it.
Each registered game draws option sets by changing some fields of its defaults at random (ints
and tuples of ints, usually smaller; optional fields from their resolved value; string choices
from their allowed values), keeping the ones its own validation accepts.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.checks import CHECK_NAMES, PASS, check_aec_env
from fowlplay.envs.checks.aec import MASK_CHECKS
from fowlplay.envs.core.options import CAP_ENDINGS, REWARD_MODES

#: Option sets drawn per game for the contract checks, and random games walked with each.
OPTION_SETS = int(os.environ.get("FOWLPLAY_RANDOM_OPTION_SETS", "6"))
GAMES_PER_SET = 20
#: Small option sets drawn per game for the quick observation-bound walk, and games with each.
SMALL_SETS = int(os.environ.get("FOWLPLAY_SMALL_OPTION_SETS", "40"))
SMALL_GAMES = 25
#: The checks run: the observation bound and the mask contract (the walk feeds both).
CHECKED = ("observation_in_space", *MASK_CHECKS)
SKIPPED = tuple(name for name in CHECK_NAMES if name not in (*CHECKED, "dict_convention"))
#: The choices of every string option a game has.
STRING_CHOICES = {"reward_mode": REWARD_MODES, "cap_ending": CAP_ENDINGS}


def _resolved_tuple(options) -> tuple[int, ...] | None:
    """A tuple of ints the options resolve an optional field to (Murray's `counts`), if any."""
    names = {f.name for f in dataclasses.fields(options)}
    for attribute in dir(type(options)):
        if attribute.startswith("_") or attribute in names:
            continue
        value = getattr(options, attribute, None)
        if isinstance(value, tuple) and value and all(isinstance(x, int) for x in value):
            return value
    return None


def _draw_value(field: dataclasses.Field, default, options, rng: np.random.Generator, tiny: bool):
    """A random value for one field: near its least when `tiny` (one copy of a card type, a card
    or two a hand), else usually smaller than the default and sometimes larger."""
    if field.name in STRING_CHOICES:
        return str(rng.choice(STRING_CHOICES[field.name]))
    if isinstance(default, bool):
        return bool(rng.integers(2))
    if isinstance(default, int):
        if tiny:
            return int(rng.integers(min(default, 1), min(default, 2) + 1))
        if rng.random() < 0.7:
            return int(rng.integers(0, default + 1))
        return int(rng.integers(default, 2 * default + 3))
    if isinstance(default, tuple):  # a set of positions (Crows' coin spaces): fewer, and smaller when tiny
        high = 3 if tiny else max(default, default=1) + 1
        size = int(rng.integers(0, min(len(default), high) + 1))
        return tuple(sorted(int(x) for x in rng.choice(np.arange(1, high + 1), size=size, replace=False)))
    if default is None and "tuple" in str(field.type):
        resolved = _resolved_tuple(options)
        if resolved is None:
            return None
        return tuple(int(rng.integers(0, min(x, 3) + 1)) for x in resolved)
    if default is None and "int" in str(field.type):
        return int(rng.integers(0, 3 if tiny else 7))
    return default


def random_options(name: str, rng: np.random.Generator, small: bool | None = None) -> tuple[int, dict]:
    """(players, options) that the game accepts, with some fields changed from its defaults: with
    `small`, every field but the caps shrunk to nearly its least; without, about half of them
    changed either way; None draws one of the two at random."""
    defaults = envs.make(name).options
    for _ in range(5000):
        players = int(rng.choice(list(envs.player_counts(name))))
        options = envs.make(name, num_players=players).options
        tiny = rng.random() < 0.5 if small is None else small
        kwargs = {}
        for field in dataclasses.fields(defaults):
            if field.name == "num_players" or (not tiny and rng.random() < 0.5):
                continue
            if tiny and field.name.startswith("max_"):
                continue  # a tiny cap would end the game before anything happens
            kwargs[field.name] = _draw_value(field, getattr(defaults, field.name), options, rng, tiny)
        try:
            envs.make(name, num_players=players, **kwargs).reset(seed=0)
        except ValueError:
            continue  # options the game refuses (with a clear error, tested elsewhere)
        return players, kwargs
    raise AssertionError(f"{name}: no valid random options in 5000 draws")


CASES = [(name, k) for name in envs.ENV_NAMES for k in range(OPTION_SETS)]


@pytest.mark.parametrize(("name", "k"), CASES, ids=[f"{name}-{k}" for name, k in CASES])
def test_the_contract_checks_pass_under_random_valid_options(name, k):
    rng = np.random.default_rng([envs.ENV_NAMES.index(name), k])
    players, options = random_options(name, rng)
    report = check_aec_env(
        name,
        players=players,
        env_kwargs=options,
        games=GAMES_PER_SET,
        seed=1000 * k,
        exact_decisions=10,
        skip=SKIPPED,
    )
    for check in CHECKED:
        result = report[check]
        assert result.status == PASS, (
            f"{name} with {players} players and {options}: {check}: {result.message}; evidence {result.evidence}"
        )


def walk_in_bounds(name: str, players: int, options: dict, games: int, seed: int) -> str | None:
    """Play `games` masked random games; the first observation outside its Box, described, or None."""
    env = envs.make(name, num_players=players, **options)
    box = env.observation_space(env.possible_agents[0])["observation"]
    rng = np.random.default_rng(seed)
    for game in range(games):
        env.reset(seed=seed + game)
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            value = obs["observation"]
            outside = np.flatnonzero((value < box.low) | (value > box.high))
            if outside.size:
                i = int(outside[0])
                return (
                    f"{name} with {players} players and {options}, game seed {seed + game}: {agent}'s "
                    f"observation[{i}] = {value[i]} outside [{box.low[i]}, {box.high[i]}]"
                )
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return None


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_many_small_games_under_small_random_options_stay_in_their_observation_space(name):
    # Murray's double count crossed its bound in about 1 of 100 of these games before the fix.
    rng = np.random.default_rng([envs.ENV_NAMES.index(name), 99])
    for k in range(SMALL_SETS):
        players, options = random_options(name, rng, small=True)
        problem = walk_in_bounds(name, players, options, SMALL_GAMES, seed=1000 * k)
        assert problem is None, problem


def test_the_draws_change_options_and_reach_small_murray_decks():
    rng = np.random.default_rng(0)
    drawn = [random_options("murray_frog_v0", rng, small=True)[1] for _ in range(10)]
    counts = [o["insect_counts"] for o in drawn]
    assert all(max(c) <= 3 for c in counts) and any(c.count(1) >= 3 for c in counts)
    assert all(o["hand_size"] <= 2 for o in drawn)
    mixed = [random_options("chicken_v1", rng)[1] for _ in range(20)]
    assert any(o.get("reward_mode") == "score" for o in mixed) and any(len(o) > 2 for o in mixed)
