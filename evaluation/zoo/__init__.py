"""The model zoo: one trained agent per game, shipped inside the package (docs/zoo.md).

Each agent is an ordinary checkpoint of `training.checkpoint` (`<game>.npz`, its weights as plain
arrays, and `<game>.json`, what they are for), trained at the game's benchmark player count by the
command its entry names (`fowlplay-train --config configs/zoo/<game>.yaml`). `zoo.json` beside them
holds each pair's SHA-256 (of the files' bytes), its player count and how it was made; every path to
an agent checks both files against it first, and the checkpoint loader then checks the weights
against the hash in `<game>.json`, so a damaged or replaced file is refused, never played.

    from fowlplay.evaluation import zoo
    agent = zoo.load("chicken_v1")              # a PolicyAgent: agent.act(observation, mask)
    zoo.games()                                 # the games the zoo has an agent for
    zoo.entry("murray_frog_v0")["players"]      # the player count it was trained (and plays) at

On the command line every agent spec takes `zoo:GAME` (`evaluation.agents`), and `zoo` alone names
the zoo agent of the game being played.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

#: The folder of the shipped files.
FOLDER = Path(__file__).resolve().parent
#: The index of the zoo: game -> its entry (`players`, `npz_sha256`, `json_sha256`, `command`, ...).
INDEX = FOLDER / "zoo.json"
#: The keys every entry of the index holds.
ENTRY_KEYS = ("players", "npz_sha256", "json_sha256", "timesteps", "command")


class ZooError(ValueError):
    """A game the zoo has no agent for, or a shipped file that does not match its recorded hash."""


def _index() -> dict[str, dict[str, Any]]:
    """The zoo's index; a missing or malformed one is a ZooError (a damaged install)."""
    try:
        index = json.loads(INDEX.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ZooError(
            f"the model zoo's index {INDEX.name} cannot be read ({err}); reinstall fowlplay"
        ) from None
    if not isinstance(index, dict) or not all(
        isinstance(entry, dict) and set(ENTRY_KEYS) <= set(entry) for entry in index.values()
    ):
        raise ZooError(f"the model zoo's index {INDEX.name} is malformed; reinstall fowlplay")
    return index


def games() -> list[str]:
    """The games the zoo holds an agent for, sorted."""
    return sorted(_index())


def entry(game: str) -> dict[str, Any]:
    """The index entry of `game`'s agent: players, file hashes, timesteps and the train command."""
    index = _index()
    if game not in index:
        raise ZooError(f"the model zoo has no agent for {game!r}; it has: {', '.join(sorted(index))}")
    return dict(index[game])


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def path(game: str) -> Path:
    """The checkpoint stem of `game`'s agent (`<stem>.npz` and `<stem>.json`), its files verified
    against the index; a missing or changed file is a ZooError."""
    record = entry(game)
    stem = FOLDER / game
    for suffix in ("npz", "json"):
        file = stem.with_suffix(f".{suffix}")
        if not file.is_file():
            raise ZooError(f"the model zoo's {file.name} is missing; reinstall fowlplay")
        if file_sha256(file) != record[f"{suffix}_sha256"]:
            raise ZooError(
                f"the model zoo's {file.name} does not match its SHA-256 in {INDEX.name}: "
                "it was changed or damaged; reinstall fowlplay"
            )
    return stem


def load(game: str, deterministic: bool = False, seed: int | None = None, env=None):
    """`game`'s zoo agent as a `training.agent.PolicyAgent` (sampling from its policy, or its most
    likely action if `deterministic`), its files verified; `env`, if given, must be the game at the
    agent's player count and options (else a CheckpointError says how they differ)."""
    stem = path(game)
    from fowlplay.training.agent import PolicyAgent

    return PolicyAgent.from_checkpoint(stem, env=env, deterministic=deterministic, seed=seed)
