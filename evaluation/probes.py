"""Trivial probe policies: one-line strategies a baseline (or any agent) must beat.

The probes themselves (`probe:NAME` agents, one list per game) are `evaluation.probe_agents`.

    python -m fowlplay.evaluation.probes --table

plays every probe against every rule-based baseline at every player count (the probe in one
seat, the baseline in the others, duplicate and seat-rotated; `probe_table`) and prints the
Markdown table of docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np
from fowlplay import envs
from fowlplay.evaluation.agents import AgentSpecError, parse_specs
from fowlplay.evaluation.matches import EvalConfig, TablePlayer, plan
from fowlplay.evaluation.probe_agents import probe_names


# ----- the probe table --------------------------------------------------------------------------
@dataclass(frozen=True)
class ProbeRow:
    """How the agent (the baseline) did against one probe at one player count, from its seats."""

    game: str
    players: int
    probe: str
    games: int
    #: The agent's seats' mean reward per game (the zero-sum win reward: its fair share is 0) and
    #: the standard error of that mean over the deals (each deal's rotations are one sample).
    reward: float
    stderr: float
    #: Share of the games' wins that went to the agent's seats (shared wins split), and the fair share.
    wins: float
    fair_wins: float
    #: Games that reached a cap.
    capped: int
    against: str = "baseline"

    @property
    def holds(self) -> bool:
        """The bar: the agent scores at least its fair share (mean reward >= 0)."""
        return self.reward >= 0

    @property
    def clearly_below(self) -> bool:
        """The agent scores below its fair share by more than twice the standard error."""
        return self.reward + 2 * self.stderr < 0


def probe_row(
    game: str,
    players: int,
    probe: str,
    matches: int,
    seed: int = 0,
    options=None,
    against: str = "baseline",
) -> ProbeRow:
    """Play `probe` alone against `against` (one-vs-rest, every rotation) on `matches` seeded deals."""
    config = EvalConfig(
        game=game,
        agents=tuple(parse_specs([f"probe:{probe}", f"agent={against}"])),
        matches=matches,
        players=players,
        seed=seed,
        options=dict(options or {}),
        seating="one-vs-rest",
    )
    player = TablePlayer(config.resolve_agents())  # an agent that does not fit the game: AgentSpecError
    per_deal: dict[int, list[float]] = {}
    wins = 0.0
    capped = games = 0
    for task in plan(config):
        row = player.play(task)
        if row["error"]:
            raise RuntimeError(f"{game} probe:{probe} against {against}: {row['error']}")
        seats = [i for i, label in enumerate(row["seats"]) if label == "agent"]
        returns = row["returns"]
        best = max(returns)
        winners = [i for i, r in enumerate(returns) if r == best] if best > 0 else []
        per_deal.setdefault(task.match, []).append(sum(returns[i] for i in seats) / len(seats))
        wins += sum(1 for i in seats if i in winners) / len(winners) if winners else 0.0
        capped += int(row["truncated"] or getattr(player.env.unwrapped.game, "_capped", False))
        games += 1
    deals = np.array([np.mean(r) for r in per_deal.values()])
    stderr = float(deals.std(ddof=1) / np.sqrt(deals.size)) if deals.size > 1 else float("inf")
    return ProbeRow(
        game,
        players,
        probe,
        games,
        float(deals.mean()),
        stderr,
        wins / games,
        (players - 1) / players,
        capped,
        against,
    )


def probe_table(
    games=None, matches: int = 50, seed: int = 0, progress=None, against: str = "baseline"
) -> list[ProbeRow]:
    """Every probe of every game against its baseline (or `against`) at every player count."""
    rows = []
    for game in games or envs.ENV_NAMES:
        for players in envs.player_counts(game):
            for probe in probe_names(game):
                rows.append(probe_row(game, players, probe, matches, seed, against=against))
                if progress is not None:
                    progress(rows[-1])
    return rows


def markdown(rows: list[ProbeRow]) -> str:
    """The table as Markdown: one line per game, player count and probe."""
    lines = [
        "| game | players | probe | games | baseline reward ± s.e. | baseline wins (fair) | capped | bar |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.game} | {r.players} | `{r.probe}` | {r.games} | {r.reward:+.3f} ± {r.stderr:.3f} | "
            f"{r.wins:.3f} ({r.fair_wins:.3f}) | {r.capped} | {'holds' if r.holds else 'FAILS'} |"
        )
    return "\n".join(lines)


def markdown_by_game(rows: list[ProbeRow]) -> str:
    """One table per game: a row per probe, a column per player count (the baseline's mean reward
    ± its standard error, and how many games reached the cap)."""
    out = []
    for game in dict.fromkeys(r.game for r in rows):
        mine = [r for r in rows if r.game == game]
        counts = list(dict.fromkeys(r.players for r in mine))
        cells = {(r.probe, r.players): r for r in mine}
        lines = [
            f"| probe | {' | '.join(f'{n} players' for n in counts)} |",
            "|---|" + "---|" * len(counts),
        ]
        for probe in dict.fromkeys(r.probe for r in mine):
            row = []
            for n in counts:
                r = cells.get((probe, n))
                if r is None:
                    row.append("")
                    continue
                text = f"{r.reward:+.3f} ± {r.stderr:.3f}" + (f" ({r.capped} capped)" if r.capped else "")
                row.append(text if r.holds else f"**{text} FAILS**")
            lines.append(f"| `{probe}` | {' | '.join(row)} |")
        games = sorted({(r.players, r.games) for r in mine})
        held = sum(r.holds for r in mine)
        lines.append("")
        lines.append(
            f"{game}: the bar holds in {held} of {len(mine)} cells; games per cell: "
            + ", ".join(f"{g} at {n} players" for n, g in games)
            + "."
        )
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _progress(row: ProbeRow) -> None:
    print(markdown([row]).splitlines()[-1], file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """`python -m fowlplay.evaluation.probes`: list the probes, or play and print the probe table."""
    parser = argparse.ArgumentParser(
        prog="python -m fowlplay.evaluation.probes", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--game", action="append", choices=envs.ENV_NAMES, help="a game (repeat; default all)"
    )
    parser.add_argument("--table", action="store_true", help="play every probe against the baseline")
    parser.add_argument("--matches", type=int, default=50, help="deals per probe and player count [50]")
    parser.add_argument("--seed", type=int, default=0, help="root seed [0]")
    parser.add_argument(
        "--against", default="baseline", help="the agent spec the probes play against [baseline]"
    )
    parser.add_argument("--progress", action="store_true", help="print each row to stderr as it is played")
    args = parser.parse_args(argv)
    if args.matches < 1:
        parser.error(f"--matches must be a positive integer; got {args.matches}")
    games = args.game or list(envs.ENV_NAMES)
    if not args.table:
        for game in games:
            print(f"{game}: {', '.join(probe_names(game))}")
        return 0
    progress = _progress if args.progress else None
    try:
        rows = probe_table(games, args.matches, args.seed, progress, args.against)
    except AgentSpecError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(markdown_by_game(rows))
    failed = [r for r in rows if not r.holds]
    if failed:
        print(f"\n{len(failed)} of {len(rows)} rows fail the bar", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
