"""Duplicate games on the batched twins: every seating of each deal, all played in one jitted call.

A *table* seats actors (`training.jitted.policies`) by an *arrangement*, one actor index per seat;
a *match* is one deal played under every arrangement given, so the luck of the deal is shared, as
`fowlplay-eval`'s duplicate matches share it (evaluation/matches.py). Every game of a match starts
from the same `init` key (the same deal: a twin fixes its deck at the deal) and draws its later
chance from the same key at each step; the actors draw from keys of their own per game.

`play` runs every game of every match side by side (`vmap`) in one `lax.while_loop` until all have
ended: at each step every actor decides for every row and each row keeps the decision of the actor
in its acting seat. It returns each game's returns per seat, length and whether a cap cut it off;
the scores are computed from those on the host (evaluation/batched_eval.py reads them as
`fowlplay-eval` does; `ladder_scores` here as the trainers' periodic evaluation does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.core.twin import TwinEnv, fmix32
from fowlplay.training.jitted.policies import Actor
from fowlplay.training.jitted.ppo import rows_where

#: A game still running after this many decisions is reported as unfinished (no game gets near it).
MAX_DECISIONS = 100_000


def one_vs_rest(players: int) -> np.ndarray:
    """Arrangements of actor 0 against actor 1: actor 0 in each seat in turn, actor 1 in the others
    (the trainers' periodic evaluation; "one-vs-rest" in fowlplay-eval)."""
    return np.array([[0 if s == seat else 1 for s in range(players)] for seat in range(players)], np.int32)


def pairs(players: int) -> np.ndarray:
    """fowlplay-eval's default seating of two actors (`evaluation.matches.arrangements` of the
    "pairs" table A, B, A, B, ...): every cyclic rotation, and with an odd number of seats those of
    the swapped pattern B, A, B, ... too."""
    pattern = tuple(s % 2 for s in range(players))
    patterns = [pattern[r:] + pattern[:r] for r in range(players)]
    if players % 2:
        swapped = tuple(1 - s for s in pattern)
        patterns += [swapped[r:] + swapped[:r] for r in range(players)]
    return np.array(list(dict.fromkeys(patterns)), np.int32)


def make_play(
    env: TwinEnv, actors: Sequence[Actor], tables: Sequence[np.ndarray], matches: int, lanes: int = 128
):
    """The jitted `play(key, actor_args=()) -> list of dicts, one per table` of `matches` matches at
    each table, every deal under every arrangement of the table (`tables`: one [k, players] array of
    actor indices each); every table plays the same deals, as fowlplay-eval's tables do.

    The games run in about `lanes` rows side by side, shared among the tables by their games: a
    row whose game ends starts the table's next game, so the loop runs about as many steps as the
    decisions divided by the rows rather than the longest game's (each game's chance and actor keys
    depend on the game and its decision count alone, so the results do not depend on `lanes`). An
    actor decides only on the rows of the tables that seat it. It is called as `actor(observation,
    mask, key, *args)` with `actor_args[i]` (the weights of a learner that changes between calls:
    traced, so one compile serves every call). Each table's result holds `returns` [matches, k,
    players], `length` [matches, k], `truncated` and `finished` [matches, k].
    """
    # Long, and kept whole: `play` and its loop body close over the tables' static sizes (games,
    # rows, the actors each seats), which split-out functions would each take as arguments.
    tables = [_checked(np.asarray(t, np.int32), env.num_players, len(actors)) for t in tables]
    games = [matches * len(t) for t in tables]
    share = max(lanes, len(tables)) / sum(games)
    rows = [int(min(g, max(1, round(g * share)))) for g in games]
    seated = [sorted(set(t.ravel().tolist())) for t in tables]
    n = env.num_players

    def play(key: jax.Array, actor_args: tuple = ()) -> list[dict[str, jax.Array]]:
        # Whole: the deals and rows set up, the loop, the results, read top to bottom as one pass.
        actor_args = tuple(actor_args) or ((),) * len(actors)
        deal_key, chance_key, agent_key = jax.random.split(key, 3)
        deals = jax.vmap(env.init)(jax.random.split(deal_key, matches))  # one deal per match
        chance = jax.random.split(chance_key, matches)
        blocks = []
        for b, table in enumerate(tables):
            k = len(table)
            match_of = jnp.arange(games[b]) // k
            lane_game = jnp.arange(rows[b], dtype=jnp.int32)
            blocks.append(
                {
                    "seating": jnp.asarray(np.tile(table, (matches, 1))),  # [games, players]
                    "match": match_of,
                    "agent_keys": jax.random.split(jax.random.fold_in(agent_key, b), games[b]),
                    "game": lane_game,
                    "state": jax.tree_util.tree_map(lambda x, m=match_of, g=lane_game: x[m[g]], deals),
                    "ret": jnp.zeros((rows[b], n), jnp.float32),
                    "steps": jnp.zeros(rows[b], jnp.int32),
                    "next": jnp.int32(rows[b]),
                    "returns": jnp.zeros((games[b], n), jnp.float32),
                    "length": jnp.zeros(games[b], jnp.int32),
                    "truncated": jnp.zeros(games[b], bool),
                    "finished": jnp.zeros(games[b], bool),
                }
            )

        def running(carry) -> jax.Array:
            blocks, t = carry
            active = [(blk["game"] < games[b]).any() for b, blk in enumerate(blocks)]
            return jnp.stack(active).any() & (t < MAX_DECISIONS)

        def step(carry):
            blocks, t = carry
            return [_advance(b, blk) for b, blk in enumerate(blocks)], t + 1

        def _advance(b: int, blk: dict) -> dict:
            state, game = blk["state"], blk["game"]
            active = game < games[b]
            safe = jnp.minimum(game, games[b] - 1)
            keys = step_keys(blk["agent_keys"][safe], blk["steps"])
            acting = blk["seating"][safe, state.current_player]
            action = jnp.zeros(rows[b], jnp.int32)
            for index in seated[b]:
                actor, args = actors[index], actor_args[index]
                chosen = jax.vmap(lambda o, m, key, a=actor, x=args: a(o, m, key, *x))(
                    state.observation, state.legal_action_mask, keys
                )
                action = jnp.where(acting == index, chosen, action)
            state = jax.vmap(env.step)(state, action, step_keys(chance[blk["match"][safe]], blk["steps"]))
            ret = blk["ret"] + state.rewards
            steps = blk["steps"] + active.astype(jnp.int32)
            ended = active & (state.terminated | state.truncated)
            at = jnp.where(ended, game, games[b])  # out of range: dropped
            out = {
                "returns": blk["returns"].at[at].set(ret, mode="drop"),
                "length": blk["length"].at[at].set(steps, mode="drop"),
                "truncated": blk["truncated"].at[at].set(state.truncated & ~state.terminated, mode="drop"),
                "finished": blk["finished"].at[at].set(True, mode="drop"),
            }
            # Each ended row starts the table's next game (in order), or idles once none is left.
            fresh = jnp.minimum(blk["next"] + jnp.cumsum(ended) - 1, games[b])
            game = jnp.where(ended, fresh, game)
            dealt = jax.tree_util.tree_map(lambda x: x[blk["match"][jnp.minimum(game, games[b] - 1)]], deals)
            state = rows_where(ended & (game < games[b]), dealt, state)
            return {
                **blk,
                **out,
                "game": game,
                "state": state,
                "ret": jnp.where(ended[:, None], 0.0, ret),
                "steps": jnp.where(ended, 0, steps),
                "next": blk["next"] + ended.sum(dtype=jnp.int32),
            }

        blocks, _ = jax.lax.while_loop(running, step, (blocks, jnp.int32(0)))
        results = []
        for b, blk in enumerate(blocks):
            shape = (matches, len(tables[b]))
            results.append(
                {
                    "returns": blk["returns"].reshape(*shape, n),
                    "length": blk["length"].reshape(shape),
                    "truncated": blk["truncated"].reshape(shape),
                    "finished": blk["finished"].reshape(shape),
                }
            )
        return results

    return jax.jit(play)


def step_keys(keys: jax.Array, steps: jax.Array) -> jax.Array:
    """Row i's key for its decision `steps[i]`: raw uint32[2] keys hashed from `keys[i]` and the
    count with the twins' integer hash (`jax.random.fold_in` runs threefry, as costly as a step)."""
    words = jax.random.key_data(keys).astype(jnp.uint32)
    count = steps.astype(jnp.uint32)
    first = fmix32(words[:, 0] ^ fmix32(count * jnp.uint32(0x9E3779B9) + jnp.uint32(1)))
    second = fmix32(words[:, 1] ^ fmix32(count * jnp.uint32(0x85EBCA6B) + jnp.uint32(2)))
    return jnp.stack([first, second], axis=1)


def _checked(table: np.ndarray, players: int, actors: int) -> np.ndarray:
    if table.ndim != 2 or table.shape[1] != players or len(table) == 0:
        raise ValueError(f"a table is [k, {players}] actor indices (k >= 1); got shape {table.shape}")
    if table.min() < 0 or table.max() >= actors:
        raise ValueError(f"a table seats actors 0..{actors - 1}; got {np.unique(table).tolist()}")
    return table


def fetch(results: list[dict[str, Any]]) -> list[dict[str, np.ndarray]]:
    """A `play` result on the host, refused when a game did not finish."""
    out = [{name: np.asarray(value) for name, value in table.items()} for table in jax.device_get(results)]
    unfinished = sum(int((~table["finished"]).sum()) for table in out)
    if unfinished:
        raise RuntimeError(f"{unfinished} games did not end within {MAX_DECISIONS} steps of the batch")
    return out


def ladder_scores(result: dict[str, np.ndarray], arrangements: np.ndarray, actor: int = 0) -> float:
    """`actor`'s mean outcome over the games of a one-vs-rest `play` (as `training.ladder.outcome`:
    1 its seat's return highest alone, 0.5 tied for highest, 0 below; a game cut off by its cap
    scores 0 for it, as the trainers' periodic evaluation counts it)."""
    from fowlplay.training.ladder import outcome

    seats = [int(np.flatnonzero(np.asarray(row) == actor)[0]) for row in arrangements]
    total, games = 0.0, 0
    for m in range(result["returns"].shape[0]):
        for a, seat in enumerate(seats):
            cut = bool(result["truncated"][m, a])
            total += 0.0 if cut else outcome(result["returns"][m, a].tolist(), seat)
            games += 1
    return total / games
