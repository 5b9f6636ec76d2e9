"""Fit the gain of the ISMCTS leaf, tanh(gain x lead), from seeded baseline self-play.

    python -m fowlplay.evaluation.ismcts_fit --game murder_she_crows_v1 --games 150 --seed 0

A truncated ISMCTS rollout (`evaluation.ismcts`) stops where a round (Chicken) or turn (the other
games) begins, `PHASES`, and estimates each seat's win reward there as tanh(gain x lead), the lead
being the game's `LEAVES` function of the table (zero-sum score differences on the scale of the
game's score-mode returns; Murder Most Fowl: its public `potential`). This command measures how
well a lead predicts the result: it plays `--games` games with the rule-based `BaselineAgent` in
every seat (game i dealt from seed `--seed + i`, the games `ismcts` rolls out with), records every
seat's lead at every state where a round or turn begins, and the win reward (+1, -1, shares for
ties) that seat finally received, and fits the gain by least squares: the gain minimising the sum
of (tanh(gain x lead) - reward)^2 over all those points. The baselines are deterministic, so the
fit is a function of the game, the player count, the games and the seed alone; its 95% interval
resamples whole games with replacement (`--bootstrap` times, from `--seed`).

It prints one line per game: points, fitted gain with its interval, the gain `LEAVES` uses, and
the root-mean-square error of both (a gain whose error is close to the fitted one's predicts
about as well). `--json PATH` also writes those figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass

import numpy as np
from fowlplay import envs
from fowlplay.envs.runtime.cli import integer
from fowlplay.evaluation.ismcts import LEAVES, PHASES

#: Players per game when --players is not given: Murray's minimum, two for the others.
DEFAULT_PLAYERS = {"murray_frog_v0": 3}
#: Where the least-squares search looks for the gain (log-spaced grid, then a golden-section refinement).
GAIN_RANGE = (1e-3, 50.0)


@dataclass(frozen=True)
class Fit:
    """One game's fitted leaf gain and how well it and the code's gain predict the result."""

    game: str
    players: int
    games: int
    seed: int
    points: int
    gain: float
    gain_lo: float
    gain_hi: float
    rmse: float
    code_gain: float
    code_rmse: float


def self_play_points(
    game_name: str, players: int, games: int, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per game: (leads, rewards) at every state where a round or turn begins, in baseline self-play."""
    env = envs.make(game_name, num_players=players)
    module = envs.env_module(game_name)
    lead, _ = LEAVES[game_name]
    phase = PHASES[game_name]
    out = []
    for i in range(games):
        env.reset(seed=seed + i)
        game, encode = env.game, env.observer.encode
        policies = [module.BaselineAgent(env.options) for _ in range(players)]
        leads = []
        current = phase(game)
        while not game.over:
            mask = game.legal_mask()
            legal = np.flatnonzero(mask)
            if legal.size == 1:
                game.apply(int(legal[0]))
            else:
                player = game.current_player
                game.apply(int(policies[player].act(encode(game, player), mask)))
            if not game.over and phase(game) != current:
                current = phase(game)
                leads.append(lead(game))
        final = game.returns()
        rewards = np.tile(np.asarray(final, dtype=float), (len(leads), 1))
        out.append((np.asarray(leads, dtype=float).reshape(-1), rewards.reshape(-1)))
    return out


def squared_error(gain: float, leads: np.ndarray, rewards: np.ndarray) -> float:
    """Sum of (tanh(gain x lead) - reward)^2."""
    return float(np.sum((np.tanh(gain * leads) - rewards) ** 2))


def fit_gain(leads: np.ndarray, rewards: np.ndarray) -> float:
    """The least-squares gain of tanh(gain x lead) against rewards, within `GAIN_RANGE`."""
    low, high = (math.log(g) for g in GAIN_RANGE)
    grid = np.exp(np.linspace(low, high, 121))
    errors = [squared_error(g, leads, rewards) for g in grid]
    k = int(np.argmin(errors))
    a, b = math.log(grid[max(k - 1, 0)]), math.log(grid[min(k + 1, len(grid) - 1)])
    ratio = (math.sqrt(5) - 1) / 2  # golden section on log(gain) within the best grid cell's neighbours
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    for _ in range(40):
        if squared_error(math.exp(c), leads, rewards) < squared_error(math.exp(d), leads, rewards):
            b, d = d, c
            c = b - ratio * (b - a)
        else:
            a, c = c, d
            d = a + ratio * (b - a)
    return math.exp((a + b) / 2)


def fit_game(
    game_name: str, players: int | None = None, games: int = 150, seed: int = 0, bootstrap: int = 200
) -> Fit:
    """Play the self-play games of one game and fit its leaf gain, with a bootstrap interval over games."""
    players = players or DEFAULT_PLAYERS.get(game_name, 2)
    per_game = self_play_points(game_name, players, games, seed)
    leads = np.concatenate([x for x, _ in per_game])
    rewards = np.concatenate([y for _, y in per_game])
    if not leads.size:
        raise ValueError(f"{games} games of {game_name} gave no state where a round or turn begins")
    gain = fit_gain(leads, rewards)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3,)))
    samples = []
    for _ in range(bootstrap):
        picked = rng.integers(len(per_game), size=len(per_game))
        x = np.concatenate([per_game[i][0] for i in picked])
        y = np.concatenate([per_game[i][1] for i in picked])
        if x.size:
            samples.append(fit_gain(x, y))
    lo, hi = (float(np.quantile(samples, q)) for q in (0.025, 0.975)) if samples else (math.nan, math.nan)
    code_gain = LEAVES[game_name][1]
    n = leads.size
    return Fit(
        game=game_name,
        players=players,
        games=games,
        seed=seed,
        points=int(n),
        gain=gain,
        gain_lo=lo,
        gain_hi=hi,
        rmse=math.sqrt(squared_error(gain, leads, rewards) / n),
        code_gain=code_gain,
        code_rmse=math.sqrt(squared_error(code_gain, leads, rewards) / n),
    )


def main(argv: list[str] | None = None) -> int:
    """Fit and print the leaf gain of each game given."""
    parser = argparse.ArgumentParser(
        prog="python -m fowlplay.evaluation.ismcts_fit", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--game", nargs="+", default=list(envs.ENV_NAMES), choices=envs.ENV_NAMES)
    parser.add_argument(
        "--games", type=integer(1), default=150, help="baseline self-play games per game [150]"
    )
    parser.add_argument(
        "--seed",
        type=integer(0),
        default=0,
        help="game i is dealt from seed + i; also seeds the bootstrap [0]",
    )
    parser.add_argument("--players", type=integer(1), help="players per game [Murray 3, the others 2]")
    parser.add_argument(
        "--bootstrap", type=integer(1), default=200, help="resamples of the games for the interval [200]"
    )
    parser.add_argument("--json", dest="json_path", help="also write the fits to this JSON file")
    args = parser.parse_args(argv)
    fits = []
    print("game | players | games | points | fitted gain [95% CI] | rmse | gain in LEAVES | its rmse")
    for name in args.game:
        try:
            fit = fit_game(name, args.players, args.games, args.seed, args.bootstrap)
        except ValueError as err:  # e.g. a player count the game does not allow
            print(f"{parser.prog}: {name}: {err}", file=sys.stderr)
            return 2
        fits.append(fit)
        print(
            f"{fit.game} | {fit.players} | {fit.games} | {fit.points} | {fit.gain:.3f} "
            f"[{fit.gain_lo:.3f}, {fit.gain_hi:.3f}] | {fit.rmse:.4f} | {fit.code_gain:g} | {fit.code_rmse:.4f}"
        )
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump([asdict(fit) for fit in fits], f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
