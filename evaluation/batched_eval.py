"""`fowlplay-eval`'s duplicate round robin played on the batched JAX twins.

    python -m fowlplay.evaluation.batched_eval --game chicken_v1 --agents baseline random --matches 200

The same tables and seatings as `fowlplay-eval` (`evaluation.matches.tables` and `arrangements`:
every deal under every seating of its table, every table on the same deals), the same score (each
game read as pairwise comparisons of the agents' mean returns) and the same 95% interval over deals
(`evaluation.stats.pairwise`). The games run on the twins (`training.jitted.duplicate`), all of
them in one jitted call: the deals are the twin's, drawn from `--seed`, so the figures agree with
`fowlplay-eval`'s within their intervals, not game for game. Agents are those with a JAX form:
`random`, `baseline` (its twin), `ckpt:PATH` / `ckpt-det:PATH` and `zoo:GAME` (the checkpoint's
weights as a pure JAX policy, `training.jitted.policies`); the rest play only in Python
(`fowlplay-eval`). Needs the `jax` extra.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from fowlplay import envs
from fowlplay.envs.runtime.cli import integer
from fowlplay.envs.runtime.files import atomic_write
from fowlplay.evaluation.agents import ACCEPTED, AgentSpec, AgentSpecError, parse_specs, resolve_spec
from fowlplay.evaluation.matches import SEATINGS, arrangements, tables
from fowlplay.evaluation.stats import pairwise

PROG = "python -m fowlplay.evaluation.batched_eval"
#: Agent kinds with a JAX form.
BATCHED_KINDS = ("random", "baseline", "checkpoint")


def _actor(spec: AgentSpec, game: str, options: dict[str, Any]):
    """The JAX actor of a resolved spec, or an AgentSpecError naming the kinds that have one."""
    from fowlplay.training.jitted import policies

    if spec.kind == "random":
        return policies.uniform
    if spec.kind == "baseline":
        return policies.baseline(game, **options)
    if spec.kind == "checkpoint":
        policy, _ = policies.load_jax_policy(
            spec.model["checkpoint"], expect_sha256=spec.model["weights_sha256"]
        )
        return policies.greedy(policy) if spec.deterministic else policies.sampling(policy)
    raise AgentSpecError(
        f"agent {spec.label!r} ({spec.text}) plays only in Python: the batched evaluation plays random, "
        "baseline, ckpt:PATH, ckpt-det:PATH and zoo:GAME; use fowlplay-eval for the others"
    )


def batched_evaluation(
    game: str,
    specs: list[AgentSpec],
    matches: int,
    players: int,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    seating: str = "pairs",
) -> dict[str, Any]:
    """Play the round robin on the twins; `pairwise` records (as fowlplay-eval's summary has them),
    the games' rows, and the seconds it took (compiling counted apart)."""
    import jax
    from fowlplay.training.jitted import duplicate

    options = dict(options or {})
    env = envs.make(game, num_players=players, **options)
    specs = [resolve_spec(spec, env) for spec in specs]
    actors = [_actor(spec, game, {"num_players": players, **options}) for spec in specs]
    layout = [np.array(arrangements(t, seating), np.int32) for t in tables(len(specs), players, seating)]
    twin = envs.make_jax(game, num_players=players, **options)
    play = duplicate.make_play(twin, actors, layout, matches)
    key = jax.random.PRNGKey(seed)
    began = time.monotonic()
    play = play.lower(key).compile()
    compiled = time.monotonic()
    results = duplicate.fetch(play(key))
    played = time.monotonic()
    labels = [spec.label for spec in specs]
    rows = [
        {
            "seats": [labels[i] for i in seats],
            "returns": result["returns"][m, a].tolist(),
            "length": int(result["length"][m, a]),
            "truncated": bool(result["truncated"][m, a]),
            "match": m,
        }
        for table, result in zip(layout, results)
        for m in range(matches)
        for a, seats in enumerate(table)
    ]
    decisions = sum(row["length"] for row in rows)
    return {
        "game": game,
        "players": players,
        "options": options,
        "matches": matches,
        "seed": seed,
        "seating": seating,
        "agents": [spec.to_dict() for spec in specs],
        "pairwise": pairwise(rows, labels, players),
        "rows": rows,
        "compile_seconds": compiled - began,
        "seconds": played - compiled,
        "decisions": decisions,
    }


def build_parser() -> argparse.ArgumentParser:
    """The command line (fowlplay-eval's names for what the two share)."""
    from fowlplay.evaluation.cli import _option

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", required=True, choices=envs.ENV_NAMES, help="registered game")
    parser.add_argument(
        "--agents", required=True, nargs="+", metavar="SPEC", help=f"two or more of: {ACCEPTED}"
    )
    parser.add_argument(
        "--matches", type=integer(1), default=100, help="duplicate matches (deals) per table [100]"
    )
    parser.add_argument(
        "--players", type=integer(1), default=None, help="players per game [the game's default]"
    )
    parser.add_argument("--seed", type=integer(0), default=0, help="root seed of every deal and agent [0]")
    parser.add_argument(
        "--seating", choices=SEATINGS, default="pairs", help="tables for more than 2 players [pairs]"
    )
    parser.add_argument(
        "--option", type=_option, action="append", default=[], metavar="KEY=VALUE", help="game rule option"
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="also write the summary (without the games) here"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 on success, 2 on a refused agent."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(args.agents) < 2:
        parser.error("--agents needs at least two agents")
    options = dict(args.option)
    if "num_players" in options:
        parser.error("give the player count with --players, not --option num_players=...")
    try:
        players = args.players or len(envs.make(args.game, **options).possible_agents)
        envs.make(args.game, num_players=players, **options)  # the game's own message
        specs = parse_specs(args.agents)
        tables(len(specs), players, args.seating)
    except ValueError as err:
        parser.error(str(err))
    try:
        summary = batched_evaluation(
            args.game, specs, args.matches, players, args.seed, options, args.seating
        )
    except AgentSpecError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(
            f"{PROG}: the batched evaluation needs JAX ({err}): pip install 'fowlplay[jax]'", file=sys.stderr
        )
        return 2
    for r in summary["pairwise"]:
        print(
            f"{r['agent']} vs {r['opponent']}: score {r['score']:.3f} [{r['score_lo']:.3f}, {r['score_hi']:.3f}]; "
            f"{r['matches']} matches; {r['games']} games: {r['wins']} W / {r['draws']} D / {r['losses']} L"
        )
    rate = summary["decisions"] / max(summary["seconds"], 1e-9)
    print(
        f"{summary['decisions']} decisions in {summary['seconds']:.2f} s ({rate:,.0f} per s), "
        f"compiled in {summary['compile_seconds']:.0f} s"
    )
    if args.json is not None:
        out = {name: value for name, value in summary.items() if name != "rows"}
        text = (json.dumps(out, indent=1, default=float) + "\n").encode()
        atomic_write(args.json, lambda handle: handle.write(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
