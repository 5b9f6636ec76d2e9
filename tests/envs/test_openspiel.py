"""The OpenSpiel games (`fowlplay.envs.openspiel`) against the AEC engines: the alignment suite.

Each case drives one seeded game through both and compares legal actions, observation tensors,
chance probabilities, information states and returns at every step (`envs.openspiel.alignment`);
the broken variants below must fail it. Thousands of games: `python -m
fowlplay.envs.openspiel.alignment --games 1000`.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from math import factorial
from pathlib import Path

import pytest

pyspiel = pytest.importorskip("pyspiel")

from fowlplay import envs  # noqa: E402
from fowlplay.envs import openspiel  # noqa: E402
from fowlplay.envs.openspiel import alignment  # noqa: E402
from fowlplay.envs.openspiel import game as os_game  # noqa: E402
from fowlplay.envs.openspiel.alignment import InfoStates, MisalignedError, align_game, align_games  # noqa: E402
from fowlplay.envs.small import small  # noqa: E402

PLAYTHROUGHS = Path(__file__).resolve().parent / "playthroughs"
#: Random games per small variant in the suite (the command runs thousands).
GAMES = 20


def test_every_game_loads_by_its_openspiel_name_with_env_options():
    for name in envs.ENV_NAMES:
        short = f"python_fowlplay_{name}"
        assert short in pyspiel.registered_names()
        n = envs.player_counts(name).stop - 1
        game = pyspiel.load_game(short, {"num_players": n})
        assert game.num_players() == n
        assert game.num_distinct_actions() == envs.make(name, num_players=n).num_actions
        assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


def test_tuple_and_default_options_travel_as_strings():
    game = pyspiel.load_game("python_fowlplay_murder_she_crows_v1", {"coin_spaces": "2;4", "track_length": 6})
    assert game.new_initial_state().spec.options.coin_spaces == (2, 4)
    assert openspiel.load("murray_frog_v0", **small("murray_frog_v0")).num_players() == 3


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"num_players": 9}, "players"),
        ({"coin_spaces": "two"}, "integers joined by"),
        ({"reward_mode": "score"}, "reward_mode='win'"),
    ],
)
def test_bad_parameters_name_what_is_allowed(params, words):
    with pytest.raises(Exception, match=words) as err:
        pyspiel.load_game("python_fowlplay_murder_she_crows_v1", params)
    assert "\n" not in str(err.value).strip()


def test_importing_the_envs_never_imports_pyspiel():
    code = "import sys; from fowlplay import envs; envs.make('chicken_v1'); print('pyspiel' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _golden_end(name: str, n: int) -> tuple[int, str]:
    text = (PLAYTHROUGHS / f"{name}_{n}p.txt").read_text().splitlines()
    end = next(line for line in text if line.startswith("## end"))
    return int(end.split(" after ")[1].split()[0]), text[-1]


@pytest.mark.parametrize("name", [name for name in envs.ENV_NAMES if name != "chicken_v1"])
def test_the_golden_playthrough_aligns(name):
    """The 2-player (Murray 3) golden game: seed 0 and its masked random actions, on both engines
    (Chicken's, 6,000 chance nodes long, and every player count: the alignment command)."""
    n = envs.player_counts(name).start
    count = align_game(name, 0, num_players=n, info=InfoStates())
    decisions, rewards = _golden_end(name, n)
    assert count.steps == decisions  # the same game as the golden file, to its last decision
    assert rewards.startswith("rewards:")


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_random_games_of_the_small_variant_align(name):
    count = align_games(name, range(1, GAMES + 1), **small(name))
    assert count.games == GAMES and count.chance_nodes > 0


def test_random_simulation_test_of_openspiel_passes():
    for name in envs.ENV_NAMES:
        alignment.random_sim(name, 2, **small(name))


def test_a_deal_is_uniform_over_its_distinct_orders():
    """Multiplying the chance probabilities down the deal of small Chicken gives every distinct
    order of its deck the same probability, 1 / (number of distinct orders)."""
    game = openspiel.load("chicken_v1", **small("chicken_v1"))
    deck = game.new_initial_state().node.draw.cards
    distinct = Fraction(factorial(len(deck)))
    for value in set(deck):
        distinct /= factorial(deck.count(value))
    leaves = []

    def walk(state, p):
        if not state.is_chance_node():
            leaves.append(p)
            return
        for action, q in state.chance_outcomes():
            walk(state.child(action), p * Fraction(q).limit_denominator(1000))

    walk(game.new_initial_state(), Fraction(1))
    assert len(leaves) == distinct and set(leaves) == {1 / distinct}


# ----- broken variants: each must fail the alignment ------------------------------------------------
@pytest.fixture
def broken(monkeypatch):
    """Break the adapter one way (by name) for the test's duration."""

    def apply(kind: str) -> None:
        state = os_game.FowlplayState
        if kind == "chance":  # every value equally likely, whatever the copies left
            fair = state.chance_outcomes
            monkeypatch.setattr(
                state, "chance_outcomes", lambda s: [(v, 1 / len(fair(s))) for v, _ in fair(s)]
            )
        elif kind == "leak":  # the information state also records the deck's top card
            record = os_game.Spec.record
            monkeypatch.setattr(
                os_game.Spec, "record", lambda s, g, p, a, x: record(s, g, p, a, x) + bytes(g.deck[-1:])
            )
        elif kind == "memoryless":  # the information state is the last observation alone
            chain = os_game._chain
            monkeypatch.setattr(os_game, "_chain", lambda digest, record: chain(b"", record))
        elif kind == "returns":  # the seats' returns swapped
            returns = state.returns
            monkeypatch.setattr(state, "returns", lambda s: returns(s)[::-1])

    return apply


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("chance", "chicken_v1"),
        ("leak", "chicken_v1"),
        ("memoryless", "murder_she_crows_v1"),
        ("returns", "chicken_v1"),
    ],
)
def test_a_broken_adapter_fails_the_alignment(broken, kind, name):
    broken(kind)
    with pytest.raises(MisalignedError):
        align_games(name, range(1, GAMES + 1), **small(name))


def test_the_alignment_command_runs():
    assert alignment.main(["--games", "1", "--game", "murray_frog_v0", "--players", "3"]) == 0
