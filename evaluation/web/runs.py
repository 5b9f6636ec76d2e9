"""The folder of runs the web table shows (`--runs`), and every file it reads from it.

Inside `--runs` means inside: a file is read only when, with every link followed, it is a regular
file inside the runs folder (`envs.runtime.untrusted.open_within`), within a size limit. A path
that leads outside answers exactly as a missing one does (a 404 naming what is allowed), so the
server cannot be used to probe the disk. `ckpt:` specs name paths relative to the runs folder, and
a checkpoint plays only when its weights and metadata lie inside it. run.json is read as a record
someone else may have edited: its values are held to the limits of a play form (`limits`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from fowlplay.envs.runtime.untrusted import (
    OutsideError,
    UntrustedFileError,
    open_within,
    parse_json,
    read_within,
    within,
)
from fowlplay.evaluation.web.limits import (
    MAX_RUN_AGENTS,
    MAX_SEARCH_BUDGET,
    MAX_SPEC_TEXT,
    LimitError,
    check_game,
    check_options,
    check_players,
)

#: Files of a run folder the results page shows.
REPORT_FILES = ("report.md", "leaderboard.md")
#: The largest report (report.md, leaderboard.md) the results page reads: ours are a few KiB, and
#: rendering a crafted one costs up to about 60 microseconds a byte (15 s at this size, once: the
#: page is kept, `evaluation.web.app`).
MAX_REPORT_BYTES = 256 * 1024
#: The largest plot the results page serves.
MAX_PLOT_BYTES = 32 * 2**20
#: The largest run.json read.
MAX_RUN_FILE_BYTES = 2 * 2**20
#: The largest games.jsonl the replay reads (about a million games), its longest line (a game
#: record is a few hundred bytes), and the seconds one request may spend reading it.
MAX_GAMES_BYTES = 2**30
MAX_GAME_LINE = 64 * 1024
MAX_GAMES_SECONDS = 20.0
#: Games listed on one page of a games.jsonl.
GAMES_PER_PAGE = 200
#: How a web request names a checkpoint.
CKPT_HINT = "name a checkpoint as ckpt:PATH, PATH relative to the runs folder"
#: A seed a run.json may give (the evaluation's seeds are 64-bit).
MAX_RUN_SEED = 2**63 - 1


class WebError(Exception):
    """A request the table cannot serve: a one-line message for the page and its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class RunsFolder:
    """The folder of runs the server shows (evaluations, leagues, trained checkpoints); nothing
    outside it is read."""

    root: Path

    def run(self, name: str | None) -> Path:
        """The run folder `name` (a path relative to the root); a 404 when it is missing or outside."""
        if not name:
            raise WebError(400, "no run given: add ?run=NAME, a folder under the runs folder")
        if len(name) > 500 or "\x00" in name:
            raise WebError(400, "the run name is too long or holds a NUL byte")
        try:
            folder = within(self.root / name, self.root)
        except OutsideError:
            folder = None
        if folder is None or not folder.is_dir():
            raise WebError(404, f"no run {name[:80]!r} under the runs folder {self.root}")
        return folder

    def has(self, path: Path) -> bool:
        """True when `path` leads to a regular file inside the root."""
        try:
            return within(path, self.root).is_file()
        except OutsideError:
            return False

    def read(self, path: Path, limit: int) -> bytes:
        """The bytes of a run's file: a 404 when missing or outside, a 422 when unreadable."""
        try:
            return read_within(path, self.root, limit)
        except FileNotFoundError:  # OutsideError too: the same answer
            raise WebError(404, f"this run has no {path.name}") from None
        except (OSError, UntrustedFileError) as err:
            raise WebError(422, f"{path.name} cannot be read: {self._short(err)}") from None

    def _short(self, err: Exception) -> str:
        """An error about a file, without the server's own path to the runs folder."""
        return str(err).replace(str(self.root.resolve()), "RUNS").replace(str(self.root), "RUNS")

    def name(self, folder: Path) -> str:
        """A run folder's name relative to the root."""
        return folder.resolve().relative_to(self.root.resolve()).as_posix()

    def listing(self, depth: int = 4, limit: int = 200) -> list[dict]:
        """Run folders with a report or games under the root (breadth first, at most `limit`)."""
        found, level = [], [self.root]
        for _ in range(depth):
            below = []
            for folder in level:
                try:
                    children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
                except OSError:
                    continue
                for child in children:
                    files = {f for f in (*REPORT_FILES, "games.jsonl") if self.has(child / f)}
                    if files:
                        found.append(
                            {
                                "name": self.name(child),
                                "report": bool(files & set(REPORT_FILES)),
                                "games": "games.jsonl" in files,
                            }
                        )
                        if len(found) >= limit:
                            return found
                    below.append(child)
            level = below
        return found

    def report(self, folder: Path) -> tuple[str, str]:
        """(file name, text) of a run's report (an evaluation's report.md or a league's leaderboard.md)."""
        for name in REPORT_FILES:
            if self.has(folder / name):
                return name, self.read(folder / name, MAX_REPORT_BYTES).decode("utf-8", "replace")
        raise WebError(404, f"this run has no report ({' or '.join(REPORT_FILES)}): has it finished?")

    def checkpoint(self, path_text: str, what: str) -> Path:
        """The checkpoint a path relative to the root names (a file, a stem or a run folder), its
        weights and metadata inside the root; one 400 for missing and outside alike."""
        from fowlplay.training import checkpoint

        missing = WebError(
            400,
            f"{what}: no checkpoint at {path_text[:80]!r} inside the runs folder (give a path relative "
            "to it: a run folder, or a checkpoint's .npz, .json or stem)",
        )
        try:
            target = within(self.root / path_text, self.root)
            if target.is_dir():  # its periodic checkpoints are looked at too: they stay inside
                within(target / "checkpoints", self.root)
            stem = checkpoint.resolve(target) if target.is_dir() else checkpoint._stem(target)
            json_file, weights = (within(stem.with_name(stem.name + s), self.root) for s in (".json", ".npz"))
        except (OutsideError, checkpoint.CheckpointError):
            raise missing from None
        if not (json_file.is_file() and weights.is_file()):
            raise missing
        return weights


def checked_spec(text: str, runs: RunsFolder):
    """An agent spec of `fowlplay-eval`, parsed within the web's limits; `ckpt:PATH` (and
    `ckpt-det:PATH`) name a checkpoint relative to the runs folder, and only one inside it."""
    from fowlplay.evaluation.agents import CHECKPOINT_PREFIXES, AgentSpecError, parse_spec

    if len(text) > MAX_SPEC_TEXT:
        raise WebError(400, f"an agent spec is at most {MAX_SPEC_TEXT} characters")
    label, sep, kind = text.partition("=")
    if not sep or "/" in label or not label:
        label, kind = "", text
    for prefix in CHECKPOINT_PREFIXES:
        if kind.startswith(prefix):
            weights = runs.checkpoint(kind[len(prefix) :], f"agent spec {text[:80]!r}")
            spec = parse_spec(f"{prefix}{weights}")
            default = f"{runs.name(weights.parent)}/{weights.stem}" + ("-det" if spec.deterministic else "")
            return dataclasses.replace(spec, label=label or default, text=text)
    if "/" in kind or kind.startswith("."):
        raise WebError(400, f"agent spec {text[:80]!r}: {CKPT_HINT}")
    try:
        spec = parse_spec(text, max_budget=MAX_SEARCH_BUDGET)
    except AgentSpecError as err:
        raise WebError(400, runs._short(err)) from None
    if spec.kind == "checkpoint" and getattr(spec, "zoo", None) is None:
        # A bare PATH that happened to exist where the server runs: not a path inside the runs folder.
        raise WebError(400, f"agent spec {text[:80]!r}: {CKPT_HINT}")
    return spec


# ----- games.jsonl ----------------------------------------------------------------------------------
def read_rows(
    runs: RunsFolder, path: Path, start: int = 0, count: int = GAMES_PER_PAGE, key: tuple | None = None
):
    """Rows of a games.jsonl: `count` from row `start`, or the one row of game `key`; and whether more follow."""
    from fowlplay.evaluation.matches import _row_problem

    rows, index, more = [], 0, False
    deadline = time.monotonic() + MAX_GAMES_SECONDS
    try:
        with open_within(path, runs.root, MAX_GAMES_BYTES) as f:
            for number in range(1, 2**62):
                if number % 1000 == 0 and time.monotonic() > deadline:
                    raise WebError(
                        503, f"reading {path.name} takes longer than {MAX_GAMES_SECONDS:.0f} s here"
                    )
                line = f.readline(MAX_GAME_LINE + 1)
                if not line:
                    break
                if len(line) > MAX_GAME_LINE:
                    raise WebError(422, f"{path.name} line {number} is longer than {MAX_GAME_LINE:,} bytes")
                if not line.strip():
                    continue
                row = _row(line, path.name, number, _row_problem)
                if key is not None:
                    if (row["table"], row["match"], row["arrangement"]) == key:
                        return [row], False
                    continue
                if index >= start + count:
                    more = True
                    break
                if index >= start:
                    rows.append(row)
                index += 1
    except FileNotFoundError:
        raise WebError(404, f"this run has no {path.name}: nothing to replay") from None
    except (OSError, UntrustedFileError) as err:
        raise WebError(422, f"{path.name} cannot be read: {runs._short(err)}") from None
    return rows, more


def _row(line: bytes, name: str, number: int, problem_of) -> dict:
    try:
        row = parse_json(line, f"line {number}", max_depth=None)
    except UntrustedFileError as err:
        raise WebError(422, f"{name} line {number} is not JSON ({err})") from None
    problem = problem_of(row)
    if problem:
        raise WebError(422, f"{name} line {number} is not a game record ({problem})")
    return row


# ----- run.json ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunRecord:
    """An evaluation's run.json: the config its games were played with, and the fingerprint and
    identity it recorded (a copied folder replays when the weights, not their paths, are the same)."""

    config: object
    fingerprint: str
    identity: dict


def fingerprint_of(identity: dict) -> str:
    """`EvalConfig.fingerprint()` of a recorded identity."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def same_play(identity: dict, recorded: dict) -> bool:
    """True when two identities play the same games: equal but for where each checkpoint's file lies."""

    def placeless(value: dict) -> dict:
        agents = []
        for agent in value.get("agents", []):
            if isinstance(agent, dict) and isinstance(agent.get("model"), dict):
                agent = {**agent, "model": {k: v for k, v in agent["model"].items() if k != "file"}}
            agents.append(agent)
        return {**value, "agents": agents}

    return placeless(identity) == placeless(recorded)


def run_record(folder: Path, runs: RunsFolder) -> RunRecord:
    """The `EvalConfig` an evaluation's games were played with, rebuilt from its run.json within
    the web's limits; each checkpoint read from inside the runs folder (by its path relative to the
    run folder when run.json gives one, else by the absolute path older run.json files hold)."""
    from fowlplay.evaluation.matches import RUN_FILE, SEATINGS, EvalConfig

    data = runs.read(folder / RUN_FILE, MAX_RUN_FILE_BYTES)
    try:
        record = parse_json(data, RUN_FILE)
        identity = record["identity"]
        game = check_game(identity["game"])
        players = check_players(game, identity["players"])
        options = check_options(game, identity["options"])
        seed = identity["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_RUN_SEED:
            raise LimitError(f"the seed must be an integer in 0..{MAX_RUN_SEED}")
        if identity["seating"] not in SEATINGS:
            raise LimitError(f"the seating must be one of {', '.join(SEATINGS)}")
        if not isinstance(identity["agents"], list) or not 1 <= len(identity["agents"]) <= MAX_RUN_AGENTS:
            raise LimitError(f"it must list 1..{MAX_RUN_AGENTS} agents")
        weights = record.get("weights") or {}
        if not isinstance(weights, dict):
            raise LimitError("its weights must map agent labels to paths")
        agents = [_agent(folder, runs, agent, weights) for agent in identity["agents"]]
        config = EvalConfig(
            game=game, agents=tuple(agents), matches=1, players=players, seed=seed,
            options=dict(options), seating=identity["seating"],
        )  # fmt: skip
        return RunRecord(config, fingerprint_of(identity), identity)
    except WebError:
        raise
    except (UntrustedFileError, KeyError, TypeError, AttributeError, ValueError) as err:
        raise WebError(
            422, f"{RUN_FILE} of this run cannot be read as an evaluation's record ({runs._short(err)})"
        ) from None


def _agent(folder: Path, runs: RunsFolder, agent: dict, weights: dict):
    """One agent of a run.json as a spec: a checkpoint by its weights inside the runs folder."""
    from fowlplay.evaluation.agents import AgentSpec

    label = agent["label"]
    if not isinstance(label, str) or len(label) > MAX_SPEC_TEXT:
        raise LimitError("an agent's label must be a short text")
    if agent["kind"] != "checkpoint" or agent.get("zoo"):
        # A zoo agent's weights are the package's own file, verified against its hash on load.
        text = f"zoo:{agent['zoo']}" if agent["kind"] == "checkpoint" else str(agent["spec"])
        return dataclasses.replace(checked_spec(text, runs), label=label)
    relative = weights.get(label)
    path = folder / relative if isinstance(relative, str) else Path(str(agent["model"]["file"]))
    try:
        resolved = within(path, runs.root)
        if not resolved.is_file():
            raise OutsideError(path)
    except OutsideError:
        raise WebError(
            422,
            f"the weights of agent {label[:60]!r} are not inside the runs folder: copy them along with the run",
        ) from None
    return AgentSpec(label, "checkpoint", str(resolved), bool(agent["deterministic"]), str(resolved))
