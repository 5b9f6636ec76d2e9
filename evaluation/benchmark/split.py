"""Where a `trainer: jax` update's time goes: the rollout alone beside the whole update (rollout,
GAE and the PPO epochs), each game with its config, in one process.

    python -m fowlplay.evaluation.benchmark.split [--games GAME ...] [--set KEY=VALUE ...] [--updates N]

Learner decisions per second of the whole update, of the rollout alone (the same compiled rollout,
timed on its own), and of what is left (GAE and `ppo.n_epochs` epochs of minibatches), after two
warm-up updates; budgets in updates, so each figure covers the same work on any machine.
"""

from __future__ import annotations

import argparse
import time

from fowlplay import envs
from fowlplay.evaluation.benchmark.training import default_config, uptime
from fowlplay.training.cli import set_overrides
from fowlplay.training.config import load_config


def split(game: str, overrides: dict, updates: int = 8) -> dict:
    """One game's figures (decisions/s and milliseconds per update) with its config and `overrides`."""
    import jax
    import jax.numpy as jnp
    from fowlplay.training.jitted import ppo as J  # noqa: N812 - the module read as one short name
    from fowlplay.training.jitted.trainer import learner_games

    config = load_config(default_config(game), {"trainer": "jax", **overrides})
    _, games = learner_games(config)
    s, twin = games.s, games.env
    optimizer = J.make_optimizer(config.ppo.learning_rate, s.max_grad_norm)
    params = J.init_params(
        jax.random.PRNGKey(config.seed),
        twin.observation_shape[0],
        twin.num_actions,
        list(s.net_arch),
        s.embedding,
    )
    dense = J.dense_weights(params, s.embedding)
    opponents = J.Opponents(  # with `jax.imitate_kl`, the start stands in for the imitated policy
        snapshots=J.empty_snapshots(dense, s.snapshot_slots),
        ready=jnp.int32(0),
        reference=dense if s.imitate_kl else None,
    )
    runner = J.start(games, jax.random.PRNGKey(config.seed + 1), params, optimizer)
    compiling = time.monotonic()
    update = J.make_update(games, optimizer).lower(runner, opponents).compile()
    rollout = (
        jax.jit(J.make_rollout(games)).lower(runner.params, runner.games, runner.key, opponents).compile()
    )
    compile_seconds = time.monotonic() - compiling
    for _ in range(2):
        runner, _ = update(runner, opponents)
    jax.block_until_ready(runner.params)
    first = int(runner.timesteps)
    began = time.monotonic()
    for _ in range(updates):
        runner, _ = update(runner, opponents)
    jax.block_until_ready(runner.params)
    whole = time.monotonic() - began
    decisions = int(runner.timesteps) - first
    batch, key = runner.games, runner.key
    began = time.monotonic()
    for _ in range(updates):
        batch, key, trajectory, _ = rollout(runner.params, batch, key, opponents)
    jax.block_until_ready(trajectory.obs)
    alone = time.monotonic() - began
    return {
        "game": game,
        "update": decisions / whole,
        "rollout": decisions / alone,
        "epochs": decisions / max(whole - alone, 1e-9),
        "ms_update": 1000 * whole / updates,
        "ms_rollout": 1000 * alone / updates,
        "compile_seconds": compile_seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", nargs="+", default=list(envs.ENV_NAMES), choices=envs.ENV_NAMES)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--updates", type=int, default=8, help="timed updates per figure")
    args = parser.parse_args(argv)
    overrides = set_overrides(args.overrides)
    print(f"{uptime()} at the start; overrides {overrides or 'none'}")
    print(
        "| game | whole update, decisions/s | rollout alone | GAE + PPO epochs | ms per update (rollout) | compile s |"
    )
    print("|---|---|---|---|---|---|")
    for game in args.games:
        r = split(game, overrides, args.updates)
        print(
            f"| {game} | {r['update']:,.0f} | {r['rollout']:,.0f} | {r['epochs']:,.0f} | "
            f"{r['ms_update']:.1f} ({r['ms_rollout']:.1f}) | {r['compile_seconds']:.0f} |"
        )
    print(f"{uptime()} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
