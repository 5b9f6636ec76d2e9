"""The AEC figures of `fowlplay-bench`: decisions per second through the raw engine and through the
PettingZoo AEC API, reset, `clone()` and `resample_hidden()` rates, memory per environment, and the
anchors (PettingZoo's Leduc and Texas, RLCard's Leduc, OpenSpiel's C++ Leduc), each on one clock.

What is measured, and why every loop seeds its first game only, is in `evaluation.benchmark.cli`.
"""

from __future__ import annotations

import os
import platform
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal

#: The clocks a figure can be timed on. "wall" is what a user waits; "cpu" is this process's CPU
#: time, which on a busy machine leaves out the time other programs held the cores (every loop here
#: is single-threaded, so on an idle machine the two agree).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]


def use_clock(name: str) -> None:
    """Time every following figure on clock `name` ("wall" or "cpu")."""
    global _clock
    if name not in CLOCKS:
        raise ValueError(f"unknown clock {name!r}; allowed: {list(CLOCKS)}")
    _clock = CLOCKS[name]


def _timed(body: Callable[[], int], seconds: float) -> float:
    """Call `body` (which returns how many units it did) until `seconds` pass; units per second."""
    body()  # warm-up: imports, caches
    done, start = 0, _clock()
    while True:
        done += body()
        elapsed = _clock() - start
        if elapsed >= seconds:
            return done / elapsed


def aec_decisions_per_second(env, seconds: float) -> float:
    """Masked random play through agent_iter / last / step, counting live decisions.

    The first game is seeded; later ones reset unseeded (the env's own generator goes on), the
    way a training loop resets, so an env whose seeded reset is costly is not penalised for it.
    """
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def one_game() -> int:
        env.reset()
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


def _pettingzoo_classic(name: str):
    """PettingZoo's classic game module `name` (ImportError when pettingzoo[classic] is missing)."""
    from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4

    return {"leduc_holdem_v4": leduc_holdem_v4, "texas_holdem_v4": texas_holdem_v4}[name]


def bench_reference(name: str, seconds: float) -> dict | None:
    """The same AEC loop on a PettingZoo classic game, or None when it is not installed."""
    try:
        module = _pettingzoo_classic(name)
    except ImportError:
        return None
    env = module.env()
    row = {"game": f"pettingzoo:{name}", "players": 2}
    row["aec_decisions_per_s"] = aec_decisions_per_second(env, seconds)
    env.reset(seed=3)
    row["resets_per_s"] = per_second(env.reset, seconds / 4)
    row["bytes_per_env"] = memory_per_env(module.env)
    return row


RLCARD_LEDUC = "rlcard:leduc-holdem"
OPENSPIEL_LEDUC = "openspiel:leduc_poker (C++)"


def bench_rlcard_leduc(seconds: float) -> dict | None:
    """RLCard's Leduc without PettingZoo: reset / legal actions / step, or None if not installed."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("leduc-holdem", config={"seed": 0})
    row = {"game": RLCARD_LEDUC, "players": 2}
    row["aec_decisions_per_s"] = rlcard_leduc_decisions_per_second(env, seconds)
    row["resets_per_s"] = per_second(env.reset, seconds / 4)
    return row


def rlcard_leduc_decisions_per_second(env, seconds: float) -> float:
    """Masked random play on an RLCard env: reset, legal actions, step."""
    rng = np.random.default_rng(0)

    def one_game() -> int:
        state, _ = env.reset()
        decisions = 0
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[rng.integers(len(legal))])
            decisions += 1
        return decisions

    return _timed(one_game, seconds)


def bench_openspiel_leduc(seconds: float) -> dict | None:
    """OpenSpiel's C++ Leduc through pyspiel, with each decision's observation and legal actions."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("leduc_poker")
    row = {"game": OPENSPIEL_LEDUC, "players": 2}
    row["aec_decisions_per_s"] = openspiel_decisions_per_second(game, seconds)
    row["resets_per_s"] = per_second(game.new_initial_state, seconds / 4)
    return row


def openspiel_decisions_per_second(game, seconds: float) -> float:
    """Masked random play on a pyspiel game, with each decision's observation and legal actions."""
    rng = np.random.default_rng(0)

    def one_game() -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(_sample_outcome(state.chance_outcomes(), rng.random()))
                continue
            player = state.current_player()
            state.observation_tensor(player)
            legal = state.legal_actions(player)
            state.apply_action(legal[rng.integers(len(legal))])
            decisions += 1
        return decisions

    return _timed(one_game, seconds)


def _sample_outcome(outcomes: list[tuple[int, float]], u: float) -> int:
    """The chance outcome that the uniform draw `u` falls on (cheaper than rng.choice with p)."""
    for outcome, probability in outcomes:
        u -= probability
        if u < 0:
            return outcome
    return outcomes[-1][0]


def aec_rate_again(row: dict, seconds: float) -> float:
    """Measure the AEC decisions/s of `row` (a game or an anchor) once more, on a fresh env."""
    name = row["game"]
    if name == RLCARD_LEDUC:
        import rlcard

        return rlcard_leduc_decisions_per_second(rlcard.make("leduc-holdem", config={"seed": 0}), seconds)
    if name == OPENSPIEL_LEDUC:
        import pyspiel

        return openspiel_decisions_per_second(pyspiel.load_game("leduc_poker"), seconds)
    if name.startswith("pettingzoo:"):
        return aec_decisions_per_second(_pettingzoo_classic(name.split(":", 1)[1]).env(), seconds)
    return aec_decisions_per_second(envs.make(name, num_players=row["players"]), seconds)


def keep_best_of_rounds(rows: list[dict], rounds: int, seconds: float, again=None) -> None:
    """Measure every row's AEC rate in `rounds - 1` more rounds and keep each row's fastest.

    Each round measures every row once, in table order, so the games and the anchors they are
    compared with take turns at whatever else the machine is doing. On a shared machine a figure
    is only ever slowed down by the other programs (caches, cores, frequency), never sped up, so the
    fastest of several rounds is the closest to the code's own speed; the ratios are then taken
    between best figures. `again` measures one row once more (`aec_rate_again` unless given:
    `fowlplay-bench` passes the one its command module holds, which tests replace).
    """
    again = aec_rate_again if again is None else again
    for _ in range(rounds - 1):
        for row in rows:
            row["aec_decisions_per_s"] = max(row["aec_decisions_per_s"], again(row, seconds))
    for row in rows:
        row["aec_rounds"] = rounds


def machine() -> dict:
    """What the figures were measured on: CPU, cores, Python, and how busy the machine was."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            names = [line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average_1min": load,
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def reference_rows(seconds: float) -> list[dict]:
    """The anchors that are installed, each measured at its best with the same random loop."""
    rows = []
    for reference in ("leduc_holdem_v4", "texas_holdem_v4"):
        row = bench_reference(reference, seconds)
        if row is None:
            print("pettingzoo[classic] is not installed: no PettingZoo anchors", file=sys.stderr)
            break
        rows.append(row)
    for bench, what in ((bench_rlcard_leduc, "rlcard"), (bench_openspiel_leduc, "open_spiel")):
        row = bench(seconds)
        if row is None:
            print(f"{what} is not installed: no {what} anchor", file=sys.stderr)
        else:
            rows.append(row)
    return rows
