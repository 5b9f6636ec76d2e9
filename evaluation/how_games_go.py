"""How games go: seeded games between rule-based baselines, summed up for each game's rules page.

    python -m fowlplay.evaluation.how_games_go --game chicken_v1 --games 200

plays `--games` seeded games (seeds 0, 1, ...) with the game's `BaselineAgent` in every seat, at
every player count, and prints the Markdown table of the rules page's "How games go" section:
mean length (decisions, and the game's own rounds or turns), each seat's share of the wins
(shared wins split), how the games ended, and how often the win was shared. What "how they
ended" counts is the game's own (`ENDINGS`): Chicken and Crows reach the target or the cap;
Murder Most Fowl ends with one player left or an empty deck, with or without a murder, won on a
route or shared at a score of 0; Murray ends by going out, the Hawk in the pond or an empty deck.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from fowlplay import envs
from fowlplay.envs.core.rewards import best_players


@dataclass
class Tally:
    """What the games of one player count added up to."""

    players: int
    games: int = 0
    decisions: int = 0
    periods: int = 0  # rounds (Chicken) or turns (the others)
    seat_wins: list[float] = field(default_factory=list)
    endings: Counter = field(default_factory=Counter)
    shared: int = 0
    no_winner: int = 0


# ----- what each game counts ---------------------------------------------------------------------
def _chicken(game, events: dict) -> tuple[int, list[str]]:
    return game.round, ["cap" if game._capped else "target"]


def _crows(game, events: dict) -> tuple[int, list[str]]:
    return game.turns, ["cap" if game._capped else "target"]


def _fowl(game, events: dict) -> tuple[int, list[str]]:
    winners = game.winners()
    out = ["one left" if game.alive.count(True) == 1 else "deck empty"]
    murderer = events.get("murderer")
    if murderer is not None:
        out.append("murder")
        if murderer in winners:
            out.append("murderer won")
    if any(game.caught):
        out.append("caught")
    if winners:
        out.append("won at 0" if game.score(winners[0]) == 0 else "won on a route")
    return game.turn, out


def _murray(game, events: dict) -> tuple[int, list[str]]:
    reason = game.end_reason
    if "went out" in reason:
        ending = "went out"
    elif "Hawk" in reason:
        ending = "Hawk in the pond"
    elif reason:
        ending = "empty deck"
    else:
        ending = "cap"
    return game.turn, [ending]


#: Per rules family: the seats that won a finished game (a two-player tie shares a win paid 0 / 0).
WINNERS: dict[str, Callable] = {
    "chicken": lambda game: best_players(game.scores),
    "crows": lambda game: best_players(game.track),
    "fowl": lambda game: game.winners(),
    "murray": lambda game: best_players(game.scores()),
}
#: Per rules family: the period counted, what one finished game counts, and the order they are shown in.
ENDINGS: dict[str, tuple[str, Callable, tuple[str, ...]]] = {
    "chicken": ("rounds", _chicken, ("target", "cap")),
    "crows": ("turns", _crows, ("target", "cap")),
    "fowl": (
        "turns",
        _fowl,
        ("one left", "deck empty", "murder", "murderer won", "caught", "won on a route", "won at 0"),
    ),
    "murray": ("turns", _murray, ("went out", "Hawk in the pond", "empty deck", "cap")),
}
#: Fowl's murder facts are shares of the games with a murder, not of all games.
_OF_MURDERS = ("murderer won",)


def _family(game: str) -> str:
    return envs.env_module(game).raw_env.__module__.split(".")[-2]


def play(game: str, players: int, games: int) -> Tally:
    """Seeded games 0..games-1 between baselines at `players` seats."""
    module = envs.env_module(game)
    env = envs.make(game, num_players=players)
    count = ENDINGS[_family(game)][1]
    tally = Tally(players, seat_wins=[0.0] * players)
    for seed in range(games):
        env.reset(seed=seed)
        agents = [module.BaselineAgent(env.unwrapped.options, seed=seat) for seat in range(players)]
        events: dict = {}
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            actor = int(env.agent_selection.rpartition("_")[2])
            murdered = sum(getattr(env.unwrapped.game, "murdered", ()))
            obs = env.observe(env.agent_selection)
            env.step(agents[actor].act(obs["observation"], obs["action_mask"]))
            tally.decisions += 1
            if sum(getattr(env.unwrapped.game, "murdered", ())) > murdered:
                events["murderer"] = actor
        state = env.unwrapped.game
        winners = [] if state.truncated else WINNERS[_family(game)](state)
        for p in winners:
            tally.seat_wins[p] += 1 / len(winners)
        tally.shared += len(winners) > 1
        tally.no_winner += not winners
        periods, endings = count(state, events)
        tally.periods += periods
        tally.endings.update(endings)
        tally.games += 1
    return tally


def _endings_text(tally: Tally, order: tuple[str, ...]) -> str:
    n = tally.games
    murders = tally.endings.get("murder", 0)
    parts = []
    for name in order:
        k = tally.endings.get(name, 0)
        if name in _OF_MURDERS:
            parts.append(f"{name} {k} of {murders}")
        else:
            parts.append(f"{name} {k / n:.0%}")
    return ", ".join(parts)


def markdown(game: str, tallies: list[Tally]) -> str:
    """The "How games go" table of one game."""
    period, _, order = ENDINGS[_family(game)]
    lines = [
        f"| players | games | decisions | {period} | seat win shares (player_0, 1, ...) | how games end | shared wins | no winner |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in tallies:
        shares = " / ".join(f"{w / t.games:.2f}" for w in t.seat_wins)
        lines.append(
            f"| {t.players} | {t.games} | {t.decisions / t.games:.0f} | {t.periods / t.games:.1f} | {shares} | "
            f"{_endings_text(t, order)} | {t.shared / t.games:.0%} | {t.no_winner / t.games:.0%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`python -m fowlplay.evaluation.how_games_go`: print each game's "How games go" table."""
    parser = argparse.ArgumentParser(
        prog="python -m fowlplay.evaluation.how_games_go", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--game", action="append", choices=envs.ENV_NAMES, help="a game (repeat; default all)"
    )
    parser.add_argument("--games", type=int, default=200, help="seeded games per player count [200]")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be a positive integer; got {args.games}")
    for game in args.game or envs.ENV_NAMES:
        print(f"{game}:\n")
        print(markdown(game, [play(game, n, args.games) for n in envs.player_counts(game)]))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
