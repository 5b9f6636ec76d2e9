"""Pictures of the table (`render_mode="rgb_array"`, `env.picture(agent)`, each game's `picture.draw`).

Shape, dtype and determinism for every game and player count; no hidden card drawn face up (a
spectator's picture does not change when any seat's unseen cards are re-dealt, nor a seat's own when
its unseen cards are, and a broken twin that draws the umpire's table fails that check); the docs
pictures regenerate exactly; the video recipe of docs/ecosystem.md writes a GIF.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core import picture
from fowlplay.envs.core.testing import random_legal

PIL = pytest.importorskip("PIL")

ROOT = Path(__file__).resolve().parents[2]
CASES = [(name, n) for name in envs.ENV_NAMES for n in envs.player_counts(name)]
IDS = [f"{name}-{n}p" for name, n in CASES]
#: Decisions between the states a test looks at, and how many it looks at per game.
STRIDE, STATES = 9, 6
#: The no-leak check looks at early and late states of each game (as many states).
LEAK_GAPS = (4, 9, 15, 24, 36)


def states(name: str, n: int, seed: int = 0, gaps: tuple[int, ...] = (STRIDE,) * (STATES - 1)):
    """An env of a seeded masked random game, yielded at its start and then after each of `gaps`
    more decisions (while it lasts)."""
    env = envs.make(name, num_players=n, render_mode="rgb_array")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    yield env
    for gap in gaps:
        for _ in range(gap):
            if not env.agents:
                return
            obs, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else random_legal(obs["action_mask"], rng))
        if not env.agents:
            return
        yield env


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_rgb_array_is_one_image_size_per_game_and_deterministic(name, n):
    first = [env.render() for env in states(name, n)]
    shape = first[0].shape
    for image in first:
        assert image.dtype == np.uint8 and image.ndim == 3 and image.shape == shape and shape[2] == 3
        assert image.flags.c_contiguous
        colours = image[::3, ::3].astype(np.uint32) @ np.array([1 << 16, 1 << 8, 1], np.uint32)
        assert len(np.unique(colours)) > 20  # a drawing, not a blank
    np.random.seed(1)  # the picture uses no global generator
    again = [env.render() for env in states(name, n)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(first[0], image) for image in first[1:])  # the table changes


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_a_seat_sees_its_own_picture_and_the_end_is_drawn(name, n):
    env = envs.make(name, num_players=n, render_mode="rgb_array")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else random_legal(obs["action_mask"], rng))
    # Every agent is done: the last table is still drawn, for a spectator and for each seat.
    final = env.unwrapped.picture()
    assert final.shape == env.render().shape
    for agent in env.possible_agents:
        assert env.unwrapped.picture(agent).shape == final.shape


def test_a_seat_s_own_cards_are_face_up_in_its_view_only():
    env = envs.make("chicken_v1", num_players=3, render_mode="rgb_array")
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    while not any(env.unwrapped.game.numbers):
        env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))
    holder = next(p for p, numbers in enumerate(env.unwrapped.game.numbers) if numbers)
    others = [a for a in env.possible_agents if a != f"player_{holder}"]
    own = env.unwrapped.picture(f"player_{holder}")
    assert not np.array_equal(own, env.render())
    # Another seat sees the holder's cards as the spectator does: the two differ only in the name
    # tag ("(you)") and the view line of the header, never in the holder's row of cards.
    chicken = importlib.import_module("fowlplay.envs.chicken.picture")
    top = chicken.HEADER + chicken.TOP + holder * chicken.SEAT
    row = slice(top + 34, top + chicken.SEAT - 10)
    for agent in others:
        assert np.array_equal(env.unwrapped.picture(agent)[row], env.render()[row])
    assert not np.array_equal(own[row], env.render()[row])


# ----- no hidden card face up -----------------------------------------------------------------------
def leaks(name: str, n: int, seed: int = 0) -> tuple[list[str], int]:
    """Every picture that changed when only cards its viewer cannot see were re-dealt, and how many
    re-deals changed the umpire's table (so that the check had something to find)."""
    found, redealt = [], 0
    decisions = [0, *np.cumsum(LEAK_GAPS).tolist()]
    for state, env in enumerate(states(name, n, seed, LEAK_GAPS)):
        game = env.unwrapped
        spectator = game.picture()
        for k, agent in enumerate(game.possible_agents):
            own = game.picture(agent)
            twin = game.clone()
            twin.resample_hidden(agent, seed=100 + k)
            redealt += twin.game.state_dict() != game.game.state_dict()
            where = f"{name} {n}p, seed {seed}, {decisions[state]} decisions in"
            if not np.array_equal(twin.picture(), spectator):
                found.append(
                    f"{where}: the spectator's picture changed when {agent}'s unseen cards were re-dealt"
                )
            if not np.array_equal(twin.picture(agent), own):
                found.append(f"{where}: {agent}'s picture changed when its unseen cards were re-dealt")
    return found, redealt


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_no_picture_draws_a_card_its_viewer_cannot_see(name, n):
    found, redealt = leaks(name, n)
    assert found == []
    assert redealt > 0  # the re-deals did change hidden cards: the comparison could have failed


def test_a_hornet_look_shows_the_hand_looked_at_to_the_looker_only():
    # Murray's Hornet: while its player chooses the insect to take, its observation holds the
    # target's hand, so its picture shows it face up; nobody else's does.
    env = envs.make("murray_frog_v0", num_players=3)
    rng = np.random.default_rng(0)
    for seed in range(200):
        env.reset(seed=seed)
        game = env.unwrapped.game
        while env.agents and game.decision() != "hornet_take" and not game.over:
            obs = env.observe(env.agent_selection)
            env.step(random_legal(obs["action_mask"], rng))
        if env.agents and not game.over and game.decision() == "hornet_take":
            break
    else:
        pytest.fail("no Hornet look in 200 seeded games")
    murray = picture.picture_module(game)
    looker, target = game.player, game.target
    seen = murray.hidden_cards(game, looker)[target]
    assert seen.face_down == 0 and len(seen.shown) == game.hand_sizes[target]
    bystander = next(p for p in range(3) if p not in (looker, target))
    assert murray.hidden_cards(game, bystander)[target].face_down == game.hand_sizes[target] - sum(
        game.shown[target]
    )
    twin = env.unwrapped.clone()
    twin.resample_hidden(f"player_{looker}", seed=1)
    assert np.array_equal(twin.picture(f"player_{looker}"), env.unwrapped.picture(f"player_{looker}"))


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_a_twin_that_draws_the_umpire_s_table_is_caught(name, monkeypatch):
    n = envs.player_counts(name)[0]
    env = envs.make(name, num_players=n)
    env.reset(seed=0)
    module = picture.picture_module(env.unwrapped.game)
    honest = module.hidden_cards
    monkeypatch.setattr(module, "hidden_cards", lambda game, viewer, reveal=False: honest(game, viewer, True))
    found, _ = leaks(name, n)
    assert found, f"{name}: a picture of the umpire's table passed the no-leak check"


def test_bad_viewer_and_missing_pillow_are_one_line_errors(monkeypatch):
    env = envs.make("chicken_v1", render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"viewer=7 is not a seat; allowed: None \(a spectator\) or 0\.\.1"):
        picture.draw(env.unwrapped.game, 7)
    with pytest.raises(envs.UnknownAgentError, match="player_9"):
        env.unwrapped.picture("player_9")
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"pip install 'fowlplay\[render\]'"):
        picture.pillow()


def test_importing_the_envs_does_not_import_pillow():
    code = (
        "import sys, fowlplay.envs as e; env = e.make('chicken_v1', render_mode='rgb_array'); env.reset(seed=0); "
        "assert 'PIL' not in sys.modules, 'PIL imported'; env.render(); assert 'PIL' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# ----- the docs pictures ----------------------------------------------------------------------------
def test_every_docs_picture_is_committed_and_shown():
    pages = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])
    for spec in picture.DOC_PICTURES:
        assert (ROOT / "docs" / "images" / spec.file).is_file(), (
            f"run `make pictures`: {spec.file} is missing"
        )
        assert f"images/{spec.file}" in pages, f"no page shows docs/images/{spec.file}"
    committed = {p.name for p in (ROOT / "docs" / "images").glob("*.png")}
    assert committed == {spec.file for spec in picture.DOC_PICTURES}  # no stale picture left behind


@pytest.mark.parametrize("spec", picture.DOC_PICTURES, ids=lambda s: s.file)
def test_a_docs_picture_regenerates_pixel_for_pixel(spec):
    from PIL import Image

    with Image.open(ROOT / "docs" / "images" / spec.file) as committed:
        stored = picture.to_array(committed)
    fresh = picture.to_array(picture.doc_picture(spec))
    assert fresh.shape == stored.shape and np.array_equal(fresh, stored), (
        f"docs/images/{spec.file} is stale: run `make pictures` and commit the result"
    )


# ----- the video recipe -----------------------------------------------------------------------------
def test_the_video_recipe_records_a_gif(tmp_path):
    iio = pytest.importorskip("imageio.v3")
    page = (ROOT / "docs" / "ecosystem.md").read_text()
    found = re.search(r"<!-- recipe: video -->\n```python\n(.*?)\n```", page, re.DOTALL)
    assert found, "docs/ecosystem.md has no code block after <!-- recipe: video -->"
    namespace = {"__name__": "ecosystem_recipe_video"}
    exec(compile(found.group(1), "docs/ecosystem.md:video", "exec"), namespace)
    path = tmp_path / "chicken.gif"
    frames = namespace["record"](path, seed=0, max_frames=12, target=10, max_rounds=2)
    video = iio.imread(path)
    assert frames == 12 and video.shape[0] == frames and video.shape[-1] == 3
    env = envs.make("chicken_v1", render_mode="rgb_array", target=10, max_rounds=2)
    env.reset(seed=0)
    assert video.shape[1:3] == env.render().shape[:2]
