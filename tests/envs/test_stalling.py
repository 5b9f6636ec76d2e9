"""No game can be drawn by stalling: a player who drags a game to its cap loses it by the standings.

Seeded duplicate games through the evaluation harness (`one-vs-rest`: the staller alone in one
seat, the rule-based baseline in every other, every rotation). Before `chicken_v1`, a capped game
paid 0 to everyone, so Chicken's always-raise-by-one turned every game it was losing into a draw.
"""

from __future__ import annotations

import pytest
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
        rows.append({**row, "staller": row["returns"][seat], "capped": player.env.unwrapped.game._capped})
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
