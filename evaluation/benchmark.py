"""Throughput benchmark: `fowlplay-bench` prints decisions per second per game and player count.

For each game and player count it measures masked random play (a) through the raw engine and
(b) through the full PettingZoo AEC API as users get it from `envs.make`, plus reset, `clone()`
and `resample_hidden()` rates and the memory one environment holds. In the same run it measures
PettingZoo's `leduc_holdem_v4` and `texas_holdem_v4` through the AEC API (when installed) and
prints each game's ratio to Leduc, so the comparison holds on any machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

import envs
from envs.core.testing import random_legal

#: The bar of the throughput issue: every game at its default player count, through the AEC API.
TARGET_RATIO_TO_LEDUC = 3.0


def _timed(body: Callable[[], int], seconds: float) -> float:
    """Call `body` (which returns how many units it did) until `seconds` pass; units per second."""
    body()  # warm-up: imports, caches
    done, start = 0, time.perf_counter()
    while True:
        done += body()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def aec_decisions_per_second(env, seconds: float) -> float:
    """Masked random play through agent_iter / last / step, counting live decisions."""
    rng = np.random.default_rng(0)
    seeds = iter(range(10**9))

    def one_game() -> int:
        env.reset(seed=next(seeds))
        decisions = 0
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(random_legal(obs["action_mask"], rng))
            decisions += 1
        return decisions

    return _timed(one_game, seconds)


def engine_decisions_per_second(env, seconds: float) -> float:
    """Masked random play on the rules engine alone (no observations, no AEC bookkeeping)."""
    rng = np.random.default_rng(0)
    game_cls, options = env.game_cls, env.options
    seeds = iter(range(10**9))

    def one_game() -> int:
        game = game_cls(options, np.random.default_rng(next(seeds)))
        decisions = 0
        while not game.over:
            game.apply(random_legal(game.legal_mask(), rng))
            decisions += 1
        return decisions

    return _timed(one_game, seconds)


def _mid_game(env, steps: int = 10) -> None:
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        env.step(random_legal(env.observe(agent)["action_mask"], rng))


def per_second(action: Callable[[], object], seconds: float, batch: int = 50) -> float:
    """Calls per second of `action`."""

    def body() -> int:
        for _ in range(batch):
            action()
        return batch

    return _timed(body, seconds)


def memory_per_env(make: Callable[[], object], count: int = 50) -> float:
    """Bytes held per environment after reset and a few moves (tracemalloc, averaged)."""
    keep = []
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(count):
        env = make()
        _mid_game(env)
        keep.append(env)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / count


def bench_game(name: str, num_players: int, seconds: float) -> dict:
    """Every figure for one game and player count."""
    env = envs.make(name, num_players=num_players)
    row = {"game": name, "players": num_players}
    row["aec_decisions_per_s"] = aec_decisions_per_second(env, seconds)
    row["engine_decisions_per_s"] = engine_decisions_per_second(env, seconds)
    row["resets_per_s"] = per_second(lambda: env.reset(seed=3), seconds / 4)
    _mid_game(env)
    row["clones_per_s"] = per_second(env.clone, seconds / 4)
    agent = env.possible_agents[0]
    twin = env.clone()
    row["resamples_per_s"] = per_second(lambda: twin.resample_hidden(agent, seed=5), seconds / 4)
    row["bytes_per_env"] = memory_per_env(lambda: envs.make(name, num_players=num_players))
    return row


def bench_reference(name: str, seconds: float) -> dict | None:
    """The same AEC loop on a PettingZoo classic game, or None when it is not installed."""
    try:
        from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4
    except ImportError:
        return None
    module = {"leduc_holdem_v4": leduc_holdem_v4, "texas_holdem_v4": texas_holdem_v4}[name]
    env = module.env()
    row = {"game": f"pettingzoo:{name}", "players": 2}
    row["aec_decisions_per_s"] = aec_decisions_per_second(env, seconds)
    row["resets_per_s"] = per_second(lambda: env.reset(seed=3), seconds / 4)
    row["bytes_per_env"] = memory_per_env(module.env)
    return row


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "B":
        return f"{value / 1024:,.0f} KiB"
    return f"{value:,.0f}"


def format_table(rows: list[dict]) -> str:
    """The figures as a Markdown table."""
    head = (
        "| game | players | AEC decisions/s | x Leduc | engine decisions/s | resets/s | clones/s "
        "| resample_hidden/s | memory/env |"
    )
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = r.get("ratio_to_leduc")
        lines.append(
            f"| {r['game']} | {r['players']} | {_fmt(r['aec_decisions_per_s'])} | "
            f"{'-' if ratio is None else f'{ratio:.1f}'} | {_fmt(r.get('engine_decisions_per_s'))} | "
            f"{_fmt(r.get('resets_per_s'))} | {_fmt(r.get('clones_per_s'))} | "
            f"{_fmt(r.get('resamples_per_s'))} | {_fmt(r.get('bytes_per_env'), 'B')} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (and write JSON with --json)."""
    parser = argparse.ArgumentParser(prog="fowlplay-bench", description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(envs.ENV_NAMES), choices=envs.ENV_NAMES)
    parser.add_argument(
        "--players", default="default", help="'default' (each game's default count), 'all', or a number"
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per throughput figure")
    parser.add_argument("--json", dest="json_path", help="also write every figure to this JSON file")
    parser.add_argument("--no-reference", action="store_true", help="skip the PettingZoo classic games")
    args = parser.parse_args(argv)

    rows = []
    leduc = None
    if not args.no_reference:
        for reference in ("leduc_holdem_v4", "texas_holdem_v4"):
            row = bench_reference(reference, args.seconds)
            if row is None:
                print("pettingzoo[classic] is not installed: no reference figures", file=sys.stderr)
                break
            rows.append(row)
            if reference == "leduc_holdem_v4":
                leduc = row["aec_decisions_per_s"]
    for name in args.games:
        counts = envs.player_counts(name)
        default = envs.make(name).options.num_players
        if args.players == "default":
            chosen = [default]
        elif args.players == "all":
            chosen = list(counts)
        else:
            chosen = [int(args.players)] if int(args.players) in counts else []
        for n in chosen:
            row = bench_game(name, n, args.seconds)
            row["default_players"] = n == default
            rows.append(row)
    for row in rows:
        row["ratio_to_leduc"] = None if leduc is None else row["aec_decisions_per_s"] / leduc
    print(format_table(rows))
    below = [
        r["game"]
        for r in rows
        if r.get("default_players")
        and r["ratio_to_leduc"] is not None
        and r["ratio_to_leduc"] < TARGET_RATIO_TO_LEDUC
    ]
    if leduc is not None:
        verdict = "all games meet" if not below else f"below the bar: {below}"
        print(
            f"\nbar: >= {TARGET_RATIO_TO_LEDUC:g}x leduc_holdem_v4 through the AEC API at the default player count; {verdict}"
        )
    if args.json_path:
        payload = {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "numpy": np.__version__,
            "fowlplay": envs.__version__,
            "seconds_per_figure": args.seconds,
            "target_ratio_to_leduc": TARGET_RATIO_TO_LEDUC,
            "rows": rows,
        }
        with open(args.json_path, "w") as handle:
            json.dump(payload, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
