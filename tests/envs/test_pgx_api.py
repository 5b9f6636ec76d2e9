"""Pgx's own API test on every twin: the batched half of `pgx.api_test` (its single-game half fails
on Pgx's own games with today's JAX), and the State's `env_id` and `save_svg` as Pgx's have them."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("pgx")

from fowlplay import envs

GAMES = sorted(envs._BASELINE_TWINS)


@pytest.mark.parametrize("game", GAMES)
def test_pgx_batched_api_test_passes(game):
    from pgx._src.api_test import api_test_batch

    env = envs.make_jax(game)
    api_test_batch(env, num=1)  # random play of a batch of 4 to the end, then save_svg of the batch


def test_state_says_its_game_and_draws_the_table(tmp_path):
    import jax
    from PIL import Image

    game = "chicken_v1"
    env = envs.make_jax(game, num_players=3)
    with jax.disable_jit():  # one deal, op by op: cheaper than compiling init
        state = env.init(jax.random.PRNGKey(0))
    assert state.env_id == env.id == game
    assert "env_id" not in vars(state)  # a property, as Pgx's: not one of the public fields
    path = tmp_path / "table.svg"
    state.save_svg(path)
    text = path.read_text()
    assert text.startswith("<svg") and text.rstrip().endswith("</svg>")
    png = base64.b64decode(re.search(r"base64,([A-Za-z0-9+/=]+)", text).group(1))
    drawn = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    # The picture is the reference's own of the same table (its footer, the last move, aside).
    from fowlplay.envs.chicken import picture
    from fowlplay.envs.chicken.rules import ChickenGame, ChickenOptions

    reference = env.rules.picture_game(jax.tree_util.tree_map(np.asarray, state._game))
    assert isinstance(reference, ChickenGame) and reference.options == ChickenOptions(num_players=3)
    expected = np.asarray(picture.draw(reference, reveal=True).convert("RGB"))
    assert drawn.shape == expected.shape and (drawn == expected).all()
    assert sum(reference.feet) + sum(len(n) for n in reference.numbers) + len(reference.deck) == 60


@pytest.mark.parametrize("game", GAMES)
def test_picture_game_draws_what_the_reference_draws(game):
    """Converted from a reference mid-game and back, the table draws as the reference's does."""
    import importlib

    import jax
    from fowlplay.envs.core.testing import random_legal

    aec = envs.make(game)
    aec.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(25):
        name = aec.agent_selection
        if aec.terminations[name] or aec.truncations[name]:
            break
        aec.step(random_legal(aec.observe(name)["action_mask"], rng))
    twin = envs.make_jax(game)
    reference = aec.unwrapped.game
    back = twin.rules.picture_game(jax.tree_util.tree_map(np.asarray, twin.rules.from_reference(reference)))
    package = {
        "chicken": "chicken",
        "murder_she_crows": "crows",
        "murder_most_fowl": "fowl",
        "murray_frog": "murray",
    }
    module = importlib.import_module(f"fowlplay.envs.{package[game.rsplit('_', 1)[0]]}.picture")
    if hasattr(reference, "turn") and game.startswith("murder_most_fowl"):
        reference.turn = 0  # the Fowl twin keeps no turn count
    a = np.asarray(module.draw(reference, reveal=True))
    b = np.asarray(module.draw(back, reveal=True))
    footer = 60  # the last move's line: the twin keeps no log
    assert a.shape == b.shape and (a[:-footer] == b[:-footer]).all()
