"""No game can be drawn by stalling.

Chicken and Murder, She Crows have caps: a player who drags a game to its cap loses it by the
standings (before the `_v1` names, a capped game paid 0 to everyone, so Chicken's
always-raise-by-one turned every game it was losing into a draw). Murray the A**hole Frog and
Murder Most Fowl cannot be dragged out at all: every turn draws from a deck that is reshuffled at
most once (Murray) or never refilled (Fowl), so a game ends by its deck long before Murray's
300-turn cap; their stallers (the slowest probes: always pass, always draw from a pile) lose.

Seeded duplicate games through the evaluation harness (`one-vs-rest`: the staller alone in one
seat, the rule-based baseline in every other, every rotation).
"""

from __future__ import annotations

import pytest
from fowlplay import envs
from fowlplay.evaluation.agents import parse_specs
from fowlplay.evaluation.matches import EvalConfig, TablePlayer, plan


def staller_games(game: str, staller: str, players: int, matches: int, **options) -> list[dict]:
    """Every game of `staller` alone against the baseline, as games.jsonl rows (staller's return first)."""
    config = EvalConfig(
        game=game,
        agents=tuple(parse_specs([f"probe:{staller}", "baseline"])),
        matches=matches,
        players=players,
        options=options,
        seating="one-vs-rest",
    )
    player = TablePlayer(config)
    rows = []
    for task in plan(config):
        row = player.play(task)
        seat = row["seats"].index(f"probe:{staller}")
        game = player.env.unwrapped.game
        rows.append(
            {
                **row,
                "staller": row["returns"][seat],
                "capped": getattr(game, "_capped", None),
                "turns": getattr(game, "turn", None),
            }
        )
    return rows


@pytest.mark.parametrize(("players", "matches"), [(2, 2), (4, 1)])
def test_chicken_raise_by_one_reaches_the_cap_and_loses_there(players, matches):
    rows = staller_games("chicken_v1", "raise-by-one", players, matches)
    assert all(row["capped"] for row in rows), "the staller no longer drags every game to the round cap"
    assert all(row["terminated"] and not row["truncated"] for row in rows)
    # Alone last: -1 at two players, -1/(n-1) at n.
    assert all(row["staller"] == pytest.approx(-1 / (players - 1)) for row in rows), [
        r["staller"] for r in rows
    ]


def test_chicken_v0s_cap_still_pays_the_staller_a_draw():
    # The deprecated rule (cap_ending="draw"), kept for old results: the same games are truncated at 0.
    rows = staller_games("chicken_v1", "raise-by-one", 2, 2, cap_ending="draw", max_rounds=10)
    assert all(row["truncated"] and row["returns"] == [0.0, 0.0] for row in rows)


@pytest.mark.parametrize("staller", ["stop", "never-score"])
@pytest.mark.parametrize("players", [2, 4])
def test_a_crows_player_who_never_scores_loses(staller, players):
    rows = staller_games("murder_she_crows_v1", staller, players, 2)
    assert all(row["staller"] < 0 for row in rows), [row["staller"] for row in rows]


@pytest.mark.parametrize("staller", ["stop", "never-score"])
def test_a_crows_game_cut_by_the_cap_ends_by_the_track_not_in_a_draw(staller):
    # A short cap, so that every game reaches it: the staller, still at the start, loses there.
    rows = staller_games("murder_she_crows_v1", staller, 2, 3, max_turns=12)
    assert all(row["capped"] and row["terminated"] and not row["truncated"] for row in rows)
    assert all(row["staller"] == -1.0 for row in rows), [row["staller"] for row in rows]
    drawn = staller_games("murder_she_crows_v1", staller, 2, 3, max_turns=12, cap_ending="draw")
    assert all(row["truncated"] and row["staller"] == 0.0 for row in drawn)


def murray_turn_bound(players: int, **options) -> int:
    """The most turns a Murray game can last: every turn draws `draw_count` cards, and the deck is
    reshuffled once (the Hawk's reshuffle), so no game draws more than twice its cards."""
    rules = envs.make("murray_frog_v0", num_players=players, **options).unwrapped.options
    return 2 * rules.total_cards // rules.draw_count


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_murrays_deck_ends_every_game_long_before_its_turn_cap(players):
    # The 300-turn cap (a truncation, a draw) is a guard, not a rule a staller can reach.
    assert (
        murray_turn_bound(players)
        < envs.make("murray_frog_v0", num_players=players).unwrapped.options.max_turns
    )


@pytest.mark.parametrize("players", [3, 5])
def test_a_murray_player_who_only_passes_cards_on_loses_within_the_deck(players):
    # "pass": prefer passing a card on (ending the turn) to anything that scores.
    rows = staller_games("murray_frog_v0", "pass", players, 2)
    assert all(row["terminated"] and not row["truncated"] for row in rows)
    assert all(row["turns"] <= murray_turn_bound(players) for row in rows), [row["turns"] for row in rows]
    assert all(row["staller"] < 0 for row in rows), [row["staller"] for row in rows]


def test_the_murray_turn_bound_holds_with_a_small_draw():
    # One card a turn doubles the bound; random games still end within it.
    rows = staller_games("murray_frog_v0", "random", 3, 3, draw_count=1)
    bound = murray_turn_bound(3, draw_count=1)
    assert all(row["terminated"] and row["turns"] <= bound for row in rows), (
        [r["turns"] for r in rows],
        bound,
    )


@pytest.mark.parametrize("players", [2, 4])
def test_a_fowl_player_who_draws_from_the_piles_cannot_outlast_the_deck_and_loses(players):
    # Every turn takes at least one card from the top of the deck (the seed), and the deck is never
    # refilled: a game lasts at most as many turns as the deck holds after the deal.
    env = envs.make("murder_most_fowl_v0", num_players=players)
    env.reset(seed=0)
    deck = len(env.unwrapped.game.deck)
    rows = staller_games("murder_most_fowl_v0", "draw_pile", players, 2)
    assert all(row["terminated"] and not row["truncated"] for row in rows)
    assert all(row["turns"] <= deck for row in rows), ([row["turns"] for row in rows], deck)
    assert sum(row["staller"] for row in rows) < 0, [row["staller"] for row in rows]
