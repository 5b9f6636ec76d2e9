"""The headroom table: every agent against the baseline on the same deals, and its spreads."""

from __future__ import annotations

import json

from fowlplay.evaluation.headroom import headroom_specs, main, table


def test_the_table_lists_every_agent_on_the_same_deals_and_its_spreads(tmp_path, capsys):
    argv = ["--game", "murder_she_crows_v1", "--budgets", "2", "--matches", "1", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert headroom_specs([2]) == ["random", "baseline", "ismcts:2", "oracle:2"]
    for spec in headroom_specs([2]):
        assert f"| {spec} | " in out
    assert "Fair share 1/2 = 0.500" in out and "oracle spread (oracle:2)" in out
    deals = []
    for folder in ("random", "baseline", "ismcts-2", "oracle-2"):
        rows = [json.loads(line) for line in (tmp_path / folder / "games.jsonl").read_text().splitlines()]
        deals.append(sorted((r["match"], r["arrangement"], r["deal_seed"]) for r in rows))
    assert all(d == deals[0] for d in deals) and len(deals[0]) == 2


def test_the_spreads_take_the_best_fair_agent_and_the_best_oracle():
    def row(agent, score):
        return dict(agent=agent, score=score, score_lo=0, score_hi=1, match_wins=0, match_draws=0)

    rows = [
        {**row("random", 0.1), "match_losses": 0, "mean_return": 0.0},
        {**row("ismcts:50", 0.6), "match_losses": 0, "mean_return": 0.0},
        {**row("oracle:10", 0.9), "match_losses": 0, "mean_return": 0.0},
        {**row("oracle:50", 0.8), "match_losses": 0, "mean_return": 0.0},
    ]
    text = table(rows, 2)
    assert "best fair agent, ismcts:50): +0.100" in text and "oracle spread (oracle:10): +0.400" in text


def test_a_player_count_the_game_refuses_is_one_line(tmp_path, capsys):
    assert main(["--game", "chicken_v1", "--players", "9", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m fowlplay.evaluation.headroom: error: ") and "\n" not in err
