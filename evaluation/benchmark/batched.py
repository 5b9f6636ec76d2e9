"""Batched throughput: `fowlplay-bench --batched` times the JAX twins beside Pgx's Leduc.

For every game whose twin is installed (at its default player count) and for Pgx's
`leduc_holdem` (when pgx is installed) it compiles one jitted `lax.scan` rollout per batch size: a
batch of games dealt by `jax.vmap(init)`, then `steps` decisions of uniformly random legal actions
(one uniform per game picks among the legal ones), each game dealt again when it ends (auto-reset).
Every step of the scan is one agent decision of every game in the batch (none of the twins has
chance or forced steps as decisions), so decisions/s = batch x steps / seconds. Beside them it
measures each game's AEC figure through `envs.make` with the same masked random loop as
`fowlplay-bench` (`evaluation.benchmark.aec`), in the same run. Compile time is the time to lower and
compile one rollout; memory is the State's bytes per game, and XLA's temporary buffers of the
compiled rollout divided by the batch.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from fowlplay import envs
from fowlplay.evaluation.benchmark.aec import CLOCKS, aec_rate_again, keep_best_of_rounds

#: The batch sizes of the bars' table (issue 29: 1 to 8192).
BATCH_SIZES = (1, 8, 64, 512, 2048, 8192)
#: Decisions per game in one timed rollout.
STEPS = 100
#: Timed rollouts per batch size (the fastest counts: a busy machine only ever slows one down).
REPEATS = 3
#: The bars of issue 29 at each game's best batch: this many times its own AEC figure; Chicken and
#: Murder, She Crows at least Pgx Leduc's figure; no compile over this many seconds.
TARGET_RATIO_TO_AEC = 5.0
AT_LEAST_LEDUC = ("chicken_v1", "murder_she_crows_v1")
COMPILE_LIMIT_S = 60.0
PGX_LEDUC = "pgx:leduc_holdem"


def random_legal_actions(key, mask):
    """A uniformly random legal action of each row of a batch of bool masks (one uniform per row)."""
    import jax
    import jax.numpy as jnp

    # The mask as 32-bit words, so that counting and finding legal ids are a few integer operations
    # per row rather than a prefix sum over every id (an associative scan of 47 ids cost twice this).
    words = -(-mask.shape[-1] // 32)
    padded = jnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, words * 32 - mask.shape[-1])])
    bits = padded.reshape(*mask.shape[:-1], words, 32).astype(jnp.uint32) << jnp.arange(32, dtype=jnp.uint32)
    packed = bits.sum(axis=-1, dtype=jnp.uint32)
    legal = jax.lax.population_count(packed).astype(jnp.int32)  # legal ids per word
    counts = legal.sum(axis=-1)
    pick = jnp.floor(jax.random.uniform(key, counts.shape) * counts).astype(jnp.int32)
    pick = jnp.minimum(pick, jnp.maximum(counts - 1, 0))  # uniform() < 1, but float32 rounds up
    # The word holding the pick-th legal id (from 0), and the pick's rank among that word's ids.
    word, rank, chosen = jnp.zeros_like(packed[..., 0]), pick, jnp.zeros_like(pick)
    before = jnp.zeros_like(pick)
    for j in range(words):
        here = (before <= pick) & (pick < before + legal[..., j])
        word = jnp.where(here, packed[..., j], word)
        rank = jnp.where(here, pick - before, rank)
        chosen = jnp.where(here, 32 * j, chosen)
        before = before + legal[..., j]
    # Within the word, halve the bits five times: go high when the low half has at most `rank` ids.
    for width in (16, 8, 4, 2, 1):
        low = word & jnp.uint32((1 << width) - 1)
        below = jax.lax.population_count(low).astype(jnp.int32)
        high = rank >= below
        rank = jnp.where(high, rank - below, rank)
        word = jnp.where(high, word >> width, low)
        chosen = chosen + jnp.where(high, width, 0)
    return jnp.where(counts > 0, chosen, 0).astype(jnp.int32)


def rollout(init: Callable, step: Callable, batch: int, steps: int):
    """(deal, run): `deal(key)` is a batch of new games; `run(state, key)` plays `steps` random
    legal decisions in every game with auto-reset (`step` must reset by itself)."""
    import jax

    def deal(key):
        return jax.vmap(init)(jax.random.split(key, batch))

    def run(state, key):
        def decide(carry, _):
            state, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            action = random_legal_actions(act_key, state.legal_action_mask)
            state = jax.vmap(step)(state, action, jax.random.split(step_key, batch))
            return (state, key), None

        (state, key), _ = jax.lax.scan(decide, (state, key), None, length=steps)
        return state

    return jax.jit(deal), jax.jit(run)


def _nbytes(tree) -> int:
    import jax

    return sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves(tree))


def bench_batched(
    init: Callable,
    step: Callable,
    batch_sizes,
    steps: int,
    repeats: int = REPEATS,
    clock: Callable[[], float] = time.perf_counter,
) -> list[dict]:
    """Decisions/s, compile seconds and memory per game of one env at each batch size."""
    import jax

    rows = []
    key = jax.random.PRNGKey(0)
    for batch in batch_sizes:
        deal, run = rollout(init, step, batch, steps)
        state = deal(key)
        jax.block_until_ready(state)
        start = time.perf_counter()
        compiled = run.lower(state, key).compile()
        compile_s = time.perf_counter() - start
        jax.block_until_ready(compiled(state, key))  # warm-up
        best = float("inf")
        for repeat in range(repeats):
            start = clock()
            state = jax.block_until_ready(compiled(state, jax.random.PRNGKey(repeat + 1)))
            best = min(best, clock() - start)
        analysis = getattr(compiled, "memory_analysis", lambda: None)()
        temp = getattr(analysis, "temp_size_in_bytes", None)  # not every backend reports it
        rows.append(
            {
                "batch": batch,
                "decisions_per_s": batch * steps / best,
                "compile_s": compile_s,
                "state_bytes_per_game": _nbytes(state) / batch,
                "temp_bytes_per_game": None if temp is None else temp / batch,
            }
        )
    return rows


def twin_functions(name: str, num_players: int | None = None):
    """(init, auto-resetting step, players) of a game's twin (default options but the player count)."""
    from fowlplay.envs.core.twin import auto_reset

    env = envs.make_jax(name) if num_players is None else envs.make_jax(name, num_players=num_players)
    return env.init, auto_reset(env), env.num_players


def pgx_functions(name: str = "leduc_holdem"):
    """(init, auto-resetting step, players) of a Pgx env; ImportError without pgx."""
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(name)
    return env.init, auto_reset(env.step, env.init), env.num_players


def run(
    games: dict[str, list[int]],
    batch_sizes=BATCH_SIZES,
    steps: int = STEPS,
    seconds: float = 2.0,
    repeats: int = REPEATS,
    clock: Callable[[], float] = time.perf_counter,
    pgx_leduc: bool = True,
    rounds: int = 1,
) -> list[dict]:
    """Every row of the batched table: each game's twin at each player count of `games` (skipped,
    with a note, where its module is missing), Pgx's Leduc (when installed), and each game's AEC
    figure of this run: measured after every rollout (so no compile runs beside it), `rounds` times
    with the games taking turns, keeping each game's fastest (the twins' figures are the fastest of
    `repeats` rollouts: both sides get their best)."""
    rows, aec_rows = [], []
    targets = [(PGX_LEDUC, None, None)] if pgx_leduc else []
    targets += [(name, name, n) for name, counts in games.items() for n in counts]
    for label, name, n in targets:
        try:
            if name is None:
                init, step, players = pgx_functions()
            else:
                init, step, players = twin_functions(name, n)
        except ImportError as error:
            missing = getattr(error, "name", None) or str(error)
            what = "pgx is not installed" if name is None else "its batched twin cannot be imported"
            print(f"{label}: skipped, {what} ({missing})", file=sys.stderr)
            continue
        if name is not None:
            aec_rows.append({"game": label, "players": players})
        for row in bench_batched(init, step, batch_sizes, steps, repeats, clock):
            rows.append({"game": label, "players": players, "aec_decisions_per_s": None, **row})
            print(_line(rows[-1]), file=sys.stderr, flush=True)
    for aec in aec_rows:
        aec["aec_decisions_per_s"] = aec_rate_again(aec, seconds)
    keep_best_of_rounds(aec_rows, rounds, seconds)
    fastest = {(aec["game"], aec["players"]): aec["aec_decisions_per_s"] for aec in aec_rows}
    for row in rows:
        row["aec_decisions_per_s"] = fastest.get((row["game"], row["players"]))
    leduc = [r["decisions_per_s"] for r in rows if r["game"] == PGX_LEDUC]
    best_leduc = max(leduc, default=None)
    for row in rows:
        aec = row["aec_decisions_per_s"]
        row["ratio_to_aec"] = None if not aec else row["decisions_per_s"] / aec
        row["ratio_to_pgx_leduc_best"] = None if best_leduc is None else row["decisions_per_s"] / best_leduc
    return rows


def main(args, chosen: dict[str, list[int]], machine: dict) -> int:
    """`fowlplay-bench --batched`: print the table and the bars (and write JSON with --json)."""
    import importlib.util
    import json
    import os

    if importlib.util.find_spec("jax") is None:
        raise SystemExit(
            "fowlplay-bench --batched needs JAX: pip install 'fowlplay[jax]' (pgx for the Leduc row)"
        )
    batch_sizes = args.batch_sizes or list(BATCH_SIZES)
    steps = args.steps or STEPS
    print(
        f"batched: {steps} decisions per game per rollout, the fastest of {REPEATS} rollouts per batch size; "
        f"AEC figures over {args.seconds:g} s each, measured after the rollouts, the fastest of "
        f"{args.rounds} round(s) (--rounds)"
    )
    rows = run(chosen, batch_sizes, steps, args.seconds, REPEATS, CLOCKS[args.clock], rounds=args.rounds)
    print(format_table(rows))
    print("\n" + verdict(rows))
    if hasattr(os, "getloadavg"):
        print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if args.json_path:
        payload = {
            "machine": machine,
            "fowlplay": envs.__version__,
            "clock": args.clock,
            "steps": steps,
            "repeats": REPEATS,
            "seconds_per_aec_figure": args.seconds,
            "aec_rounds": args.rounds,
            "rows": rows,
        }
        with open(args.json_path, "w") as handle:
            json.dump(payload, handle, indent=2)
    return 0


def _line(row: dict) -> str:
    return f"  {row['game']} batch {row['batch']}: {row['decisions_per_s']:,.0f} decisions/s"


def _num(value, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def format_table(rows: list[dict]) -> str:
    """The batched figures as a Markdown table, one row per game and batch size."""
    lines = [
        "| game | players | batch | decisions/s | x own AEC | x Pgx Leduc's best | compile s "
        "| state bytes/game | XLA temp bytes/game | AEC decisions/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['game']} | {r['players']} | {r['batch']} | {r['decisions_per_s']:,.0f} | "
            f"{_num(r['ratio_to_aec'], '.1f')} | {_num(r['ratio_to_pgx_leduc_best'], '.2f')} | "
            f"{r['compile_s']:.1f} | {r['state_bytes_per_game']:,.0f} | {_num(r['temp_bytes_per_game'])} | "
            f"{_num(r['aec_decisions_per_s'])} |"
        )
    return "\n".join(lines)


def verdict(rows: list[dict]) -> str:
    """The issue's bars against this run's figures, one line each."""
    best: dict[str, dict] = {}
    for r in rows:
        if r["game"] not in best or r["decisions_per_s"] > best[r["game"]]["decisions_per_s"]:
            best[r["game"]] = r
    leduc = best.get(PGX_LEDUC)
    games = [g for g in best if g != PGX_LEDUC]
    lines = []
    below = [g for g in games if (best[g]["ratio_to_aec"] or 0) < TARGET_RATIO_TO_AEC]
    lines.append(
        f"bar: best batch >= {TARGET_RATIO_TO_AEC:g}x the game's own AEC figure: "
        + ("all games meet it" if not below else f"below it: {below}")
    )
    if leduc is not None:
        slow = [
            g for g in games if g in AT_LEAST_LEDUC and best[g]["decisions_per_s"] < leduc["decisions_per_s"]
        ]
        lines.append(
            f"bar: {' and '.join(AT_LEAST_LEDUC)} >= Pgx Leduc's best ({leduc['decisions_per_s']:,.0f} "
            f"decisions/s at batch {leduc['batch']}): " + ("met" if not slow else f"below it: {slow}")
        )
        goal = [g for g in games if best[g]["decisions_per_s"] < leduc["decisions_per_s"]]
        lines.append("goal: every game >= Pgx Leduc's best: " + ("met" if not goal else f"below it: {goal}"))
    slowest = max((r["compile_s"] for r in rows), default=0.0)
    lines.append(
        f"bar: no compile over {COMPILE_LIMIT_S:g} s: "
        + ("met" if slowest <= COMPILE_LIMIT_S else "missed")
        + f" (longest {slowest:.1f} s)"
    )
    for g in games:
        r = best[g]
        lines.append(
            f"best of {g}: {r['decisions_per_s']:,.0f} decisions/s at batch {r['batch']} "
            f"({_num(r['ratio_to_aec'], '.1f')}x its AEC figure)"
        )
    return "\n".join(lines)
