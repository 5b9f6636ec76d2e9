"""The league's config: its schema, the YAML's parser, the command line's budget over it, and the
budget a league folder was trained to."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

from fowlplay import envs
from fowlplay.evaluation import report

PROG = "fowlplay-league"
#: Algorithm names become labels and folder names.
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
#: Keys of a league config; anything else is a mistake.
TOP_KEYS = {
    "game",
    "players",
    "train_config",
    "decisions",
    "max_minutes",
    "seeds",
    "algorithms",
    "evaluation",
    "exploit",
}
EVAL_KEYS = {"matches", "seed", "bootstrap"}
EXPLOIT_KEYS = {"total_timesteps", "matches", "seeds"}
ALGORITHM_KEYS = {"name", "trainer", "overrides"}


class LeagueConfigError(ValueError):
    """A league config that cannot be run as written."""


class LeagueFailedError(RuntimeError):
    """A league with nothing left to rate; `errors` are the entries' errors that led there."""

    def __init__(self, message: str, errors: list[dict]) -> None:
        super().__init__(message)
        self.errors = errors


@dataclass(frozen=True)
class Algorithm:
    """One entry of the config: a name, the `trainer:` of `fowlplay-train`, and config overrides."""

    name: str
    trainer: str = "ppo"
    overrides: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LeagueConfig:
    """What a league trains and how it evaluates (see configs/league/<game>.yaml)."""

    game: str
    players: int
    train_config: str
    decisions: int
    seeds: tuple[int, ...]
    algorithms: tuple[Algorithm, ...]
    max_minutes: float | None = None
    matches: int = 50
    eval_seed: int = 0
    bootstrap: int = 1000
    exploit: dict | None = None
    #: Resume trainings and best responses from files their run's record does not vouch for
    #: (`fowlplay-train --trust-checkpoint`); set by `--trust-checkpoint`, never by the YAML.
    trust_checkpoint: bool = False


def _is_count(value) -> bool:
    """Whether `value` is an int >= 1 (a bool is not)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _require(data: dict, key: str, kind, where: str):
    if key not in data:
        raise LeagueConfigError(f"{where}: missing key {key!r}")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LeagueConfigError(f"{where}: {key} must be {getattr(kind, '__name__', kind)}; got {value!r}")
    return value


def _unknown(data: dict, allowed: set, where: str) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise LeagueConfigError(f"{where}: unknown keys {extra}; allowed: {sorted(allowed)}")


def parse_config(data: dict, game: str | None = None, where: str = "league config") -> LeagueConfig:
    """A validated LeagueConfig from the YAML's mapping; `game` (the command line's) must match it."""
    if not isinstance(data, dict):
        raise LeagueConfigError(f"{where}: expected a mapping of keys, got {type(data).__name__}")
    _unknown(data, TOP_KEYS, where)
    config_game = _require(data, "game", str, where)
    if config_game not in envs.ENV_NAMES:
        raise LeagueConfigError(f"{where}: unknown game {config_game!r}; games: {list(envs.ENV_NAMES)}")
    if game is not None and game != config_game:
        raise LeagueConfigError(f"{where} is for {config_game}, but --game says {game}")
    players = _players(data, config_game, where)
    decisions = _require(data, "decisions", int, where)
    if decisions < 1:
        raise LeagueConfigError(f"{where}: decisions must be >= 1; got {decisions}")
    seeds = _require(data, "seeds", list, where)
    if not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise LeagueConfigError(f"{where}: seeds must be distinct integers >= 0; got {seeds!r}")
    algorithms = _algorithms(data, where)
    evaluation = _evaluation(data, where)
    exploit = _exploit(data, where)
    max_minutes = data.get("max_minutes")
    if max_minutes is not None and (not isinstance(max_minutes, (int, float)) or max_minutes <= 0):
        raise LeagueConfigError(f"{where}: max_minutes must be a number > 0 or null; got {max_minutes!r}")
    return LeagueConfig(
        game=config_game,
        players=int(players),
        train_config=_require(data, "train_config", str, where),
        decisions=decisions,
        seeds=tuple(seeds),
        algorithms=tuple(algorithms),
        max_minutes=max_minutes,
        matches=int(evaluation.get("matches", 50)),
        eval_seed=int(evaluation.get("seed", 0)),
        bootstrap=int(evaluation.get("bootstrap", 1000)),
        exploit=dict(exploit) if exploit else None,
    )


def _players(data: dict, game: str, where: str) -> int:
    """The config's player count (the game's default if absent), one the game accepts."""
    players = data.get("players")
    if players is None:
        players = len(envs.make(game).possible_agents)
    if not _is_count(players):
        raise LeagueConfigError(f"{where}: players must be an integer >= 1; got {players!r}")
    try:
        envs.make(game, num_players=players)
    except ValueError as exc:  # a player count the game refuses, in the game's own words
        raise LeagueConfigError(f"{where}: players: {exc}") from None
    return players


def _algorithms(data: dict, where: str) -> list[Algorithm]:
    """The config's `algorithms:`, each a known shape, their names distinct."""
    algorithms = []
    for i, entry in enumerate(_require(data, "algorithms", list, where)):
        at = f"{where}: algorithms[{i}]"
        if not isinstance(entry, dict):
            raise LeagueConfigError(f"{at}: expected a mapping with name, trainer, overrides")
        _unknown(entry, ALGORITHM_KEYS, at)
        name = _require(entry, "name", str, at)
        if not NAME.match(name):
            raise LeagueConfigError(f"{at}: name {name!r} must be letters, digits, '_' or '-'")
        overrides = entry.get("overrides") or {}
        if not isinstance(overrides, dict):
            raise LeagueConfigError(f"{at}: overrides must be a mapping of config keys; got {overrides!r}")
        algorithms.append(Algorithm(name, str(entry.get("trainer", "ppo")), dict(overrides)))
    names = [a.name for a in algorithms]
    if not algorithms or len(set(names)) != len(names):
        raise LeagueConfigError(
            f"{where}: algorithms must be a non-empty list of distinct names; got {names}"
        )
    return algorithms


def _evaluation(data: dict, where: str) -> dict:
    """The config's `evaluation:` mapping ({} if absent), its counts and seed checked."""
    evaluation = data.get("evaluation") or {}
    if not isinstance(evaluation, dict):
        raise LeagueConfigError(
            f"{where}: evaluation must be a mapping of {sorted(EVAL_KEYS)}; got {evaluation!r}"
        )
    _unknown(evaluation, EVAL_KEYS, f"{where}: evaluation")
    for key in ("matches", "bootstrap"):
        if key in evaluation and not _is_count(evaluation[key]):
            raise LeagueConfigError(
                f"{where}: evaluation: {key} must be an integer >= 1; got {evaluation[key]!r}"
            )
    seed = evaluation.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise LeagueConfigError(f"{where}: evaluation: seed must be an integer >= 0; got {seed!r}")
    return evaluation


def _exploit(data: dict, where: str) -> dict | None:
    """The config's `exploit:` budget with its `seeds` filled in, or None when it has none."""
    exploit = data.get("exploit")
    if exploit is not None:
        if not isinstance(exploit, dict):
            raise LeagueConfigError(
                f"{where}: exploit must be a mapping of {sorted(EXPLOIT_KEYS)}; got {exploit!r}"
            )
        _unknown(exploit, EXPLOIT_KEYS, f"{where}: exploit")
        for key in ("total_timesteps", "matches"):
            _require(exploit, key, int, f"{where}: exploit")
        exploit = {**exploit, "seeds": exploit.get("seeds", 1)}
        if not _is_count(exploit["seeds"]):
            raise LeagueConfigError(
                f"{where}: exploit: seeds (best responses per checkpoint) must be an integer >= 1; "
                f"got {exploit['seeds']!r}"
            )
    return exploit


def load_config(path: str | Path, game: str | None = None) -> LeagueConfig:
    """Read and validate a league YAML."""
    import yaml
    from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

    try:
        data = yaml.safe_load(read_bytes(path, 2**20).decode("utf-8"))
    except OSError as exc:
        raise LeagueConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UntrustedFileError as exc:
        raise LeagueConfigError(f"cannot read the league config: {exc}") from None
    except UnicodeDecodeError:
        raise LeagueConfigError(f"{path} is not a YAML text file (it is not UTF-8 text)") from None
    except (yaml.YAMLError, RecursionError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LeagueConfigError(f"{path} is not valid YAML: {first}") from None
    return parse_config(data, game, where=str(path))


def override_budget(
    config: LeagueConfig,
    decisions: int | None = None,
    seeds: list[int] | None = None,
    matches: int | None = None,
    exploit: tuple[int, ...] | None = None,
) -> LeagueConfig:
    """The config with the command line's budget (`--decisions`, `--seeds`, `--matches`, and
    `--exploit TIMESTEPS MATCHES [SEEDS]`) in place of its own."""
    if decisions is not None and not _is_count(decisions):
        raise LeagueConfigError(f"--decisions must be an integer >= 1; got {decisions!r}")
    if seeds is not None and (
        not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds) or len(set(seeds)) != len(seeds)
    ):
        raise LeagueConfigError(f"--seeds must be distinct integers >= 0; got {seeds!r}")
    if matches is not None and not _is_count(matches):
        raise LeagueConfigError(f"--matches must be an integer >= 1; got {matches!r}")
    if exploit is not None:
        if len(exploit) not in (2, 3) or not all(_is_count(x) for x in exploit):
            raise LeagueConfigError(
                f"--exploit must be two or three integers >= 1, TIMESTEPS MATCHES [SEEDS]; got {exploit!r}"
            )
        responses = exploit[2] if len(exploit) == 3 else 1
        config = dataclasses.replace(
            config, exploit={"total_timesteps": exploit[0], "matches": exploit[1], "seeds": responses}
        )
    return dataclasses.replace(
        config,
        decisions=config.decisions if decisions is None else decisions,
        seeds=config.seeds if seeds is None else tuple(seeds),
        matches=config.matches if matches is None else matches,
    )


BUDGET_FILE = "budget.json"


def read_record(path: Path) -> dict:
    """A JSON record of the league's folder, read within bounds; {} when unreadable or not an object."""
    from fowlplay.envs.runtime.untrusted import read_json

    try:
        record = read_json(path)
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def check_budget(config: LeagueConfig, out: Path) -> None:
    """Refuse to resume a league trained to another budget; record the budget of a new one.

    The budget is read from `<out>/budget.json` and from every training record (leagues written
    before budget.json existed have only those), so no checkpoint of one budget is rated beside
    another budget's under a leaderboard that names one.
    """
    found: dict[str, int] = {}
    path = out / BUDGET_FILE
    if path.exists():
        record = read_record(path)
        if not _is_count(record.get("decisions")):
            raise LeagueConfigError(
                f"{path} is damaged (no decisions count); delete it to start the league over"
            )
        found[str(path)] = record["decisions"]
    for record_path in sorted((out / "train").glob("*/seed*.json")):
        record = read_record(record_path)
        if record.get("status") in ("done", "cut_short") and _is_count(record.get("decisions")):
            found[str(record_path)] = record["decisions"]
    other = {where: n for where, n in found.items() if n != config.decisions}
    if other:
        where, n = next(iter(other.items()))
        raise LeagueConfigError(
            f"{out} holds a league trained to {n:,} decisions per run ({where}), but this run asks for "
            f"{config.decisions:,}; resume it with --decisions {n}, or give a new --out"
        )
    report.write_json(path, {"decisions": config.decisions})
