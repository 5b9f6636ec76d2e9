"""Put a trained run's checkpoint into the model zoo (for maintainers, in a source checkout):

    python -m fowlplay.evaluation.zoo.publish runs/zoo/GAME [--checkpoint best]

copies the run's checkpoint (its best by default: the one that scored best against random and the
baseline while training) to `evaluation/zoo/<game>.npz` and `.json`, after checking that it loads,
and records both files' SHA-256, its player count and the command that trains it in `zoo.json`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from fowlplay.evaluation.zoo import FOLDER, INDEX, ZooError, file_sha256
from fowlplay.training import checkpoint

#: The command that trains a game's zoo agent (its config is in the repository's configs/zoo/).
TRAIN_COMMAND = "fowlplay-train --config configs/zoo/{game}.yaml --out runs/zoo/{game}"


def publish(run: Path, which: str = "best", folder: Path = FOLDER) -> dict:
    """Copy checkpoint `which` of `run` into `folder` as `<game>.npz/.json` and record it in the
    index there; returns the index entry."""
    stem = run / which
    try:
        _, metadata = checkpoint.load_policy(stem)  # it must load (and match its own weights hash)
    except checkpoint.CheckpointError as err:
        raise ZooError(f"cannot publish {stem}: {err}") from None
    game = metadata["game"]
    for suffix in (".npz", ".json"):
        shutil.copyfile(stem.with_suffix(suffix), folder / f"{game}{suffix}")
    index_path = folder / INDEX.name
    index = json.loads(index_path.read_text(encoding="utf-8")) if index_path.is_file() else {}
    config = metadata.get("config", {})
    index[game] = {
        "players": int(metadata["env_options"]["num_players"]),
        "npz_sha256": file_sha256(folder / f"{game}.npz"),
        "json_sha256": file_sha256(folder / f"{game}.json"),
        "timesteps": int(metadata["timesteps"]),
        "trainer": config.get("trainer", "ppo"),
        "seed": int(metadata["seed"]),
        "checkpoint": which,
        "command": TRAIN_COMMAND.format(game=game),
    }
    index_path.write_text(json.dumps(dict(sorted(index.items())), indent=2) + "\n", encoding="utf-8")
    return index[game]


def main(argv: list[str] | None = None) -> int:
    """Command line: publish one run's checkpoint into the zoo."""
    parser = argparse.ArgumentParser(description="Put a trained run's checkpoint into the model zoo.")
    parser.add_argument("run", type=Path, help="the training run directory (runs/zoo/GAME)")
    parser.add_argument(
        "--checkpoint", default="best", help="which checkpoint of the run: best or final [best]"
    )
    args = parser.parse_args(argv)
    if args.checkpoint not in ("best", "final"):
        parser.error(f"--checkpoint must be best or final; got {args.checkpoint!r}")
    try:
        record = publish(args.run, args.checkpoint)
    except ZooError as err:
        print(f"fowlplay zoo: {err}", file=sys.stderr)
        return 2
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
