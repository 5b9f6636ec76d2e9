"""Duplicate matches: who sits where, which deal, and playing the games (in parallel, resumable).

A *table* is the multiset of agents at one game, written as the seat pattern of its first
arrangement. A *match* is one deal (one environment seed) played at a table under every
*arrangement* of that table: both orders for two players, every distinct cyclic rotation for
more. Every seed is derived from the root seed with `numpy.random.SeedSequence` and a fixed
spawn key, so a game's result depends only on (root seed, table, match, arrangement), never on
the order games are played in or on the number of worker processes.

Seats for more than two players (`seating`):

- "pairs" (default): every pair of listed agents gets a table whose seats alternate A, B, A, B, ...;
  with an odd number of seats the swapped pattern B, A, B, ... is played as well, so across a
  match each agent holds every seat, and the majority, equally often.
- "combinations": every set of `players` distinct agents gets a table (needs at least that many
  agents); its arrangements are the `players` cyclic rotations.
- "one-vs-rest": the first listed agent holds one seat and each other listed agent in turn holds all
  the others (A, B, B, ...), under every cyclic rotation; `fowlplay-exploit` scores a best response
  alone against the agent it exploits this way. With two players it is "pairs" for the first agent's
  pairings only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.rewards import win_rewards
from fowlplay.envs.runtime.lock import acquire, release
from fowlplay.envs.runtime.stopping import further_stops_ignored, signal_of
from fowlplay.envs.runtime.untrusted import (
    OutsideError,
    UntrustedFileError,
    parse_json,
    read_within,
)
from fowlplay.evaluation.agents import AgentSpec, ModelCache, build_agent, resolve_spec
from fowlplay.evaluation.report import OutputError, write_json

SEATINGS = ("pairs", "combinations", "one-vs-rest")
#: Spawn-key tags keep the deal seeds, agent seeds and bootstrap seeds independent streams.
DEAL_KEY, AGENT_KEY, BOOTSTRAP_KEY = 0, 1, 2
#: Largest integer a JSON reader without big integers keeps exactly (2**53).
_SEED_BITS = 53
GAMES_FILE = "games.jsonl"
#: What the games of an output directory were played with (to name what changed on a refused resume).
RUN_FILE = "run.json"
#: The largest games.jsonl a resume reads (a million games of a 6-player table take about 1 GB).
MAX_GAMES_BYTES = 4 * 2**30
#: The largest run.json read back (it names the agents of one evaluation).
MAX_RUN_FILE_BYTES = 2 * 2**20


@dataclass(frozen=True)
class EvalConfig:
    """Everything that decides the games of an evaluation (not how many workers play them)."""

    game: str
    agents: tuple[AgentSpec, ...]
    matches: int
    players: int
    seed: int = 0
    options: dict = field(default_factory=dict)
    seating: str = "pairs"
    #: Load checkpoints without a tensor-only weights file from their pickled SB3 zip (runs its code).
    trust_checkpoint: bool = False

    def identity(self) -> dict:
        """The fields that decide every game's result (`matches` only says how many are played).

        A checkpoint agent counts by the file and weights it plays (see `resolve_agents`).
        """
        return {
            "game": self.game,
            "players": self.players,
            "options": self.options,
            "agents": [a.identity() for a in self.agents],
            "seed": self.seed,
            "seating": self.seating,
            "package_version": envs.__version__,
        }

    def fingerprint(self) -> str:
        """A short hash of `identity()`: rows of games.jsonl from another run are recognised by it."""
        text = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def make_env(self):
        """A fresh environment of the evaluated game."""
        return envs.make(self.game, num_players=self.players, **self.options)

    def resolve_agents(self) -> EvalConfig:
        """This config with every agent checked against the game and each checkpoint pinned to the
        file and weights it plays (loaded once here, without unpickling unless trusted)."""
        env = self.make_env()
        agents = tuple(resolve_spec(a, env, self.trust_checkpoint) for a in self.agents)
        return dataclasses.replace(self, agents=agents)

    @property
    def labels(self) -> list[str]:
        """Agent labels in the order they were listed."""
        return [a.label for a in self.agents]


# ----- seats ------------------------------------------------------------------------------------
def _rotations(pattern: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [pattern[r:] + pattern[:r] for r in range(len(pattern))]


def _unique(patterns: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    return list(dict.fromkeys(patterns))


def tables(num_agents: int, players: int, seating: str = "pairs") -> list[tuple[int, ...]]:
    """The round robin: one seat pattern (agent indices) per table."""
    if seating not in SEATINGS:
        raise ValueError(f"seating must be one of {SEATINGS}; got {seating!r}")
    if num_agents < 2:
        raise ValueError(f"a round robin needs at least 2 agents; got {num_agents}")
    if seating == "pairs":
        return [tuple((i, j)[s % 2] for s in range(players)) for i, j in combinations(range(num_agents), 2)]
    if seating == "one-vs-rest":
        return [(0,) + (j,) * (players - 1) for j in range(1, num_agents)]
    if num_agents < players:
        raise ValueError(
            f"seating 'combinations' needs at least {players} agents for {players} players; "
            f"got {num_agents} (use seating 'pairs')"
        )
    return list(combinations(range(num_agents), players))


def arrangements(table: tuple[int, ...], seating: str = "pairs") -> list[tuple[int, ...]]:
    """Every distinct seating of a table that one match plays on its deal."""
    patterns = _rotations(table)
    if seating == "pairs" and len(table) % 2 == 1:
        a, b = table[0], table[1]
        swapped = tuple(b if x == a else a for x in table)
        patterns += _rotations(swapped)
    return _unique(patterns)


# ----- seeds ------------------------------------------------------------------------------------
def _seed_int(root: int, key: tuple[int, ...]) -> int:
    state = np.random.SeedSequence(root, spawn_key=key).generate_state(1, np.uint64)[0]
    return int(state >> np.uint64(64 - _SEED_BITS))


def deal_seed(root: int, match: int) -> int:
    """The environment seed of match `match`; every table plays the same deals (common random numbers)."""
    return _seed_int(root, (DEAL_KEY, match))


def agent_seed(root: int, table: int, match: int, arrangement: int, seat: int) -> int:
    """The seed an agent is reset with for one seat of one game."""
    return _seed_int(root, (AGENT_KEY, table, match, arrangement, seat))


@dataclass(frozen=True)
class GameTask:
    """One game to play: which table, match and arrangement."""

    table: int
    match: int
    arrangement: int

    @property
    def key(self) -> tuple[int, int, int]:
        """Sort and identity key."""
        return (self.table, self.match, self.arrangement)


def plan(config: EvalConfig) -> list[GameTask]:
    """Every game of the evaluation, in canonical order (match-major, so early stops stay balanced)."""
    layout = [
        arrangements(t, config.seating) for t in tables(len(config.agents), config.players, config.seating)
    ]
    return [
        GameTask(t, m, a)
        for m in range(config.matches)
        for t, seatings in enumerate(layout)
        for a in range(len(seatings))
    ]


# ----- one game ---------------------------------------------------------------------------------
def play_game(env, agents: list, seed: int, agent_seeds: list[int]) -> dict:
    """Play one game to its end; illegal actions forfeit it (recorded, never passed to the env)."""
    env.reset(seed=seed)
    for agent, s in zip(agents, agent_seeds):
        agent.reset(s)
    index = {name: i for i, name in enumerate(env.possible_agents)}
    n = len(agents)
    returns = [0.0] * n
    decisions = [0] * n
    time_ns = [0] * n
    illegal = [0] * n
    # An ISMCTS agent counts the decisions whose re-deal of the hidden cards failed (RedealError).
    redeals = [getattr(agent, "redeal_failures", 0) for agent in agents]
    error = None
    while True:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            break
        seat = index[name]
        obs = env.observe(name)
        mask = obs["action_mask"]
        start = time.perf_counter_ns()
        action = agents[seat].act(obs["observation"], mask)
        time_ns[seat] += time.perf_counter_ns() - start
        decisions[seat] += 1
        try:
            legal = 0 <= int(action) < mask.shape[0] and bool(mask[int(action)])
        except (TypeError, ValueError):
            legal = False
        if not legal:
            # The offender forfeits: every other seat shares the win. The env never sees the action.
            illegal[seat] += 1
            error = f"{name} chose illegal action {action!r}; legal: {np.flatnonzero(mask).tolist()}"
            returns = win_rewards([p for p in range(n) if p != seat], n)
            break
        env.step(int(action))
        for other, reward in env.rewards.items():
            returns[index[other]] += reward
    return {
        "returns": [float(r) for r in returns],
        "terminated": error is None and any(env.terminations.values()),
        "truncated": error is None and any(env.truncations.values()),
        "length": sum(decisions),
        "decisions": decisions,
        "time_ns": time_ns,
        "illegal": illegal,
        "redeal_failures": [getattr(agent, "redeal_failures", 0) - r for agent, r in zip(agents, redeals)],
        "error": error,
    }


class TablePlayer:
    """Plays the games of one evaluation; one per process, holding its env, models and agents."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self.env = config.make_env()
        self.layout = [
            arrangements(t, config.seating)
            for t in tables(len(config.agents), config.players, config.seating)
        ]
        self.models = ModelCache(config.trust_checkpoint)
        self._agents: dict[tuple[int, int], object] = {}

    def _agent(self, agent_index: int, seat: int):
        # One instance per (agent, seat): an agent holding two seats must not share its state.
        key = (agent_index, seat)
        if key not in self._agents:
            spec = self.config.agents[agent_index]
            self._agents[key] = build_agent(spec, self.env, seed=None, models=self.models)
        return self._agents[key]

    def play(self, task: GameTask) -> dict:
        """One game as a games.jsonl row."""
        cfg = self.config
        seats = self.layout[task.table][task.arrangement]
        seed = deal_seed(cfg.seed, task.match)
        seeds = [agent_seed(cfg.seed, task.table, task.match, task.arrangement, s) for s in range(len(seats))]
        agents = [self._agent(a, s) for s, a in enumerate(seats)]
        result = play_game(self.env, agents, seed, seeds)
        return {
            "run": cfg.fingerprint(),
            "table": task.table,
            "match": task.match,
            "arrangement": task.arrangement,
            "seats": [cfg.agents[a].label for a in seats],
            "deal_seed": seed,
            "agent_seeds": seeds,
            **result,
        }


# ----- worker processes -------------------------------------------------------------------------
_worker: TablePlayer | None = None


def _init_worker(config: EvalConfig, parent: int) -> None:
    global _worker
    # Ctrl-C reaches the whole process group; the parent stops the pool and reports once.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SIGTERM came blocked from the forkserver (`_start_forkserver`); the pool stops its workers
    # with it, so a worker takes it again.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    exit_when_gone(parent)
    _limit_threads(uses_torch=any(a.kind == "checkpoint" for a in config.agents))
    _worker = TablePlayer(config)


def exit_when_gone(pid: int, every: float = 1.0) -> threading.Thread:
    """Exit this process soon after process `pid` has gone; watched by a daemon thread.

    A worker must not outlive the evaluation that started it. A killed evaluation (SIGKILL, or a
    SIGTERM, which runs no clean-up) cannot stop its pool, and the pool's workers, children of the
    forkserver rather than of the evaluation, would otherwise go on playing the games already
    queued for them and then wait for more forever.
    """

    def watch() -> None:
        while True:
            time.sleep(every)
            try:
                os.kill(pid, 0)
            except (ProcessLookupError, PermissionError):  # gone (or its number reused by another user)
                os._exit(1)

    thread = threading.Thread(target=watch, name=f"exit-when-{pid}-gone", daemon=True)
    thread.start()
    return thread


def _play_in_worker(task: GameTask) -> dict:
    assert _worker is not None
    return _worker.play(task)


def _limit_threads(uses_torch: bool) -> None:
    """One BLAS / torch thread per worker: the workers are the parallelism."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if not uses_torch:
        return  # importing torch costs seconds per worker
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def _game_modules(config: EvalConfig) -> list[str]:
    """Modules worth preloading: the game's and, for checkpoints, the training code."""
    modules = [envs.env_module(config.game).__name__]
    if any(a.kind == "checkpoint" for a in config.agents):
        modules += ["fowlplay.training.agent"]
    return modules


def start_method() -> str:
    """forkserver where the platform has it, else spawn (never fork: torch and threads dislike it)."""
    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


def _start_forkserver() -> None:
    """Start the forkserver with SIGTERM blocked, which it keeps (and its workers inherit).

    A SIGTERM to the whole process group (`docker stop`, a batch scheduler) would otherwise kill the
    server while the pool still needs it, and the pool's thread would die with a traceback trying to
    replace the workers that SIGTERM killed. The evaluation stops its pool itself, and the server
    exits when the evaluation does.
    """
    from multiprocessing import forkserver

    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def play_games(config: EvalConfig, tasks: list[GameTask], workers: int = 1) -> Iterator[dict]:
    """Play `tasks`, yielding rows as games finish (in any order when workers > 1)."""
    if not tasks:
        return
    if workers <= 1:
        player = TablePlayer(config)
        for task in tasks:
            yield player.play(task)
        return
    ctx = multiprocessing.get_context(start_method())
    if ctx.get_start_method() == "forkserver":
        # Import the game code once in the server; every worker forks from it already loaded.
        ctx.set_forkserver_preload(["fowlplay.evaluation.matches", *_game_modules(config)])
        _start_forkserver()
    chunk = max(1, min(16, len(tasks) // (workers * 8)))
    with (
        _pool_thread_errors_held(),
        ctx.Pool(workers, initializer=_init_worker, initargs=(config, os.getpid())) as pool,
    ):
        yield from pool.imap_unordered(_play_in_worker, tasks, chunksize=chunk)


@contextlib.contextmanager
def _pool_thread_errors_held() -> Iterator[None]:
    """Hold back what the pool's own threads raise until the pool is done, and drop it after a stop.

    A signal to the whole process group kills the workers at once, and the pool's thread may fail
    to replace them (the forkserver going under a loaded machine's race) before the main thread has
    even seen the signal: that is part of the stop, not news, and the command's one line says what
    was kept. Without a stop, what was held is printed as Python would have printed it.
    """
    held: list[threading.ExceptHookArgs] = []
    previous = threading.excepthook

    def hold(args: threading.ExceptHookArgs) -> None:
        name = args.thread.name if args.thread is not None else ""
        (held.append if "_handle_" in name else previous)(args)

    threading.excepthook = hold
    stopped = False
    try:
        yield
    except KeyboardInterrupt:
        stopped = True
        raise
    finally:
        threading.excepthook = previous
        for args in [] if stopped else held:
            previous(args)


# ----- games.jsonl ------------------------------------------------------------------------------
class ResumeError(ValueError):
    """games.jsonl holds games of a different evaluation, or a line that is no game record."""


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM (`signum`) during an evaluation; every game finished before it is saved
    in games.jsonl."""

    def __init__(self, path: Path, saved: int, planned: int, signum: int = signal.SIGINT) -> None:
        super().__init__(f"evaluation interrupted; {saved} of {planned} games saved in {path}")
        self.path, self.saved, self.planned, self.signum = path, saved, planned, signum


#: Keys every games.jsonl row holds.
ROW_KEYS = ("run", "table", "match", "arrangement", "seats", "returns")


def _row_problem(row) -> str | None:
    """What is wrong with a parsed games.jsonl row, or None."""
    if not isinstance(row, dict):
        return "it lacks every key"
    missing = [key for key in ROW_KEYS if key not in row]
    if missing:
        return f"it lacks {missing}"
    if not isinstance(row["run"], str):
        return "its 'run' is not a string"
    for key in ("table", "match", "arrangement"):
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53:
            return f"its {key!r} is not a count"
    if not isinstance(row["seats"], list) or not all(isinstance(seat, str) for seat in row["seats"]):
        return "its 'seats' is not a list of agent labels"
    returns = row["returns"]
    if not isinstance(returns, list) or len(returns) != len(row["seats"]):
        return "its 'returns' does not list one number per seat"
    if not all(isinstance(r, (int, float)) and not isinstance(r, bool) and abs(r) <= 1e9 for r in returns):
        return "its 'returns' holds something other than finite numbers"
    return None


def _row(line: bytes, path: Path, number: int) -> dict | None:
    """One games.jsonl line as a row (None for a blank line); a damaged line is a ResumeError."""
    if not line.strip():
        return None
    try:
        row = parse_json(line, f"line {number}", max_depth=None)  # `_row_problem` checks every field
        problem = _row_problem(row)
    except UntrustedFileError as exc:
        problem = f"not JSON: {str(exc).partition(': ')[2] or exc}"
    if problem:
        raise ResumeError(
            f"{path} line {number} is not a game record ({problem}); delete that line (its game is "
            "played again) or the whole file, then run the command again"
        )
    return row


def describe_change(before: dict, now: dict) -> list[str]:
    """What differs between two `EvalConfig.identity()`s, naming both sides (agents by their model)."""
    changes = []
    for key in sorted(set(before) | set(now)):
        if key == "agents" or before.get(key) == now.get(key):
            continue
        changes.append(f"{key} was {before.get(key)!r}, now {now.get(key)!r}")
    old_agents = {a.get("label"): a for a in before.get("agents", [])}
    new_agents = {a.get("label"): a for a in now.get("agents", [])}
    if list(old_agents) != list(new_agents):
        changes.append(f"agents were {list(old_agents)}, now {list(new_agents)}")
    for label, agent in new_agents.items():
        old = old_agents.get(label)
        if old is None or old == agent:
            continue
        if "model" in agent and "model" in old:
            changes.append(
                f"agent {label!r} played {_model(old['model'])}; now it is {_model(agent['model'])}"
            )
        else:
            changes.append(f"agent {label!r} was {old}, now {agent}")
    return changes


def _model(model: dict) -> str:
    return f"{model['file']} (weights sha256 {model['weights_sha256'][:12]}, {model['timesteps']} timesteps)"


def _refusal(path: Path, number: int, config: EvalConfig) -> ResumeError:
    """The error for a games.jsonl row of another evaluation, naming what changed when run.json tells."""
    what = "game, players, options, agents (the models they play), seed or seating differ"
    try:
        recorded = parse_json(read_within(path.parent / RUN_FILE, path.parent, MAX_RUN_FILE_BYTES), RUN_FILE)
        changes = describe_change(recorded["identity"], config.identity())
        if changes and recorded.get("fingerprint") != config.fingerprint():
            what = "; ".join(changes)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # an older output directory without run.json: say what may differ
    return ResumeError(
        f"{path} line {number} was written by a different evaluation ({what}); use another --out "
        f"directory or delete {path.name} to start over"
    )


def read_games(path: Path, config: EvalConfig) -> dict[tuple[int, int, int], dict]:
    """Rows already played, by key; a partly written last line (an interrupted write) is cut off.

    A row of another evaluation, or a damaged line, is a ResumeError naming the file and line.
    """
    if not path.exists():
        return {}
    try:
        # Inside its own folder: a games.jsonl that links elsewhere is neither read nor cut short.
        data = read_within(path, path.parent, MAX_GAMES_BYTES)
    except OutsideError:
        raise ResumeError(
            f"{path} leads outside {path.parent} (a link); delete it (or choose another --out) to start over"
        ) from None
    except UntrustedFileError as exc:
        raise ResumeError(f"{exc}; delete it (or choose another --out) to start over") from None
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with path.open("r+b") as f:
            f.truncate(cut)
        data = data[:cut]
    rows = {}
    fingerprint = config.fingerprint()
    for number, line in enumerate(data.splitlines(), start=1):
        row = _row(line, path, number)
        if row is None:
            continue
        if row["run"] != fingerprint:
            raise _refusal(path, number, config)
        rows[(row["table"], row["match"], row["arrangement"])] = row
    return rows


def _write_run_file(out: Path, config: EvalConfig) -> None:
    """run.json: the identity the games were played with, and (`weights`, by agent label) each
    checkpoint's weights file relative to the run folder, so that a copied runs folder replays (a zoo
    agent's file is the package's, found by its game)."""
    weights = {
        agent.label: Path(os.path.relpath(agent.model["file"], out.resolve())).as_posix()
        for agent in config.agents
        if agent.model is not None and not agent.zoo
    }
    record = {"fingerprint": config.fingerprint(), "identity": config.identity(), "weights": weights}
    write_json(out / RUN_FILE, record)


def run_games(
    config: EvalConfig,
    out: Path,
    workers: int = 1,
    progress: bool = True,
    on_row: Callable[[dict], None] | None = None,
) -> tuple[list[dict], dict]:
    """Play every planned game not already in `out`/games.jsonl, appending each as it finishes.

    Returns the planned rows in canonical order and counts of what was resumed and played. Ctrl-C
    raises `EvalInterrupted`; a file that cannot be written raises `OutputError`. The evaluation
    holds the lock of `out` (`training.lock`): a second one into the same folder is refused.
    """
    config = config.resolve_agents()
    with output_folder(out):
        return _run_games(config, out, workers, progress, on_row)


@contextlib.contextmanager
def output_folder(out: Path) -> Iterator[None]:
    """Hold the lock of `out` for the block (`training.lock`; the folder is created when missing,
    and an OSError doing so is an `OutputError`); a folder another run writes is `FolderBusyError`."""
    try:
        acquire(out)
    except OSError as exc:
        raise OutputError(out, exc) from exc
    try:
        yield
    finally:
        release(out)


def _run_games(
    config: EvalConfig, out: Path, workers: int, progress: bool, on_row: Callable[[dict], None] | None
) -> tuple[list[dict], dict]:
    path = out / GAMES_FILE
    done = read_games(path, config)
    _write_run_file(out, config)
    tasks = plan(config)
    todo = [t for t in tasks if t.key not in done]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), unit="game", desc=config.game)
    played = 0
    try:
        f = path.open("a", encoding="utf-8")
    except OSError as exc:
        raise OutputError(path, exc) from exc
    games = play_games(config, todo, workers)
    interrupted, signum = False, signal.SIGINT
    try:
        for row in games:
            try:
                f.write(json.dumps(row) + "\n")
                f.flush()
            except OSError as exc:
                raise OutputError(path, exc) from exc
            done[(row["table"], row["match"], row["arrangement"])] = row
            played += 1
            if bar is not None:
                bar.update()
            if on_row is not None:
                on_row(row)
    except KeyboardInterrupt as stop:
        interrupted, signum = True, signal_of(stop)
    finally:
        with further_stops_ignored(interrupted):
            games.close()  # stops the worker pool now, not when the generator is collected
            with contextlib.suppress(OSError):  # every row was flushed as it was written
                f.close()
            if bar is not None:
                bar.close()
            if interrupted:
                # Count what the file holds: Ctrl-C may land between a row's write and its bookkeeping.
                saved = read_games(path, config)
                raise EvalInterrupted(path, sum(1 for t in tasks if t.key in saved), len(tasks), signum)
    rows = [done[t.key] for t in tasks]
    counts = {
        "planned": len(tasks),
        "resumed": len(tasks) - len(todo),
        "played": played,
        "ignored": len(done) - len(tasks),
    }
    return rows, counts
