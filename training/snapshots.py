"""Snapshots of the learner: the opponent pool's files (`<run>/snapshots/step_<N>.npz`), which
every trainer writes and a resumed run reads back."""

from __future__ import annotations

import re
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fowlplay.envs.runtime.files import atomic_write
from fowlplay.envs.runtime.untrusted import inspect_npz, open_regular, read_npz
from fowlplay.training import manifest
from fowlplay.training.checkpoint import MAX_PARAMETERS, CheckpointWarning

#: A snapshot's file name; temporary files of an interrupted save (step_N.tmp.npz, .npz.tmp) are not.
_SNAPSHOT = re.compile(r"^step_(\d+)\.npz$")


def save_snapshot(folder: Path, timesteps: int, state: dict[str, np.ndarray]) -> str:
    """Write learner weights to `<folder>/step_<N>.npz` (whole or not at all); return its name."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"step_{timesteps}"
    atomic_write(folder / f"{name}.npz", lambda handle: np.savez(handle, **state))
    manifest.record(folder.parent, [folder / f"{name}.npz"])  # the run's record of what it wrote
    return name


def load_snapshots(
    folder: Path,
    window: int,
    shapes: dict[str, tuple] | None = None,
    verify: Callable[[Path], str | None] | None = None,
) -> list[tuple[str, dict[str, np.ndarray]]]:
    """The newest `window` readable snapshots of a run directory, oldest first.

    Temporary files are ignored; a snapshot that cannot be read (or, given the learner's `shapes`,
    does not fit its network, which its `.npz` headers tell before any array is read), or one that
    `verify(path)` has a problem with (the run's record says it did not write it), is skipped with
    a `CheckpointWarning`.
    """
    found = []
    if folder.is_dir():
        for path in folder.iterdir():
            match = _SNAPSHOT.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
    out = []
    for _, path in sorted(found, reverse=True):
        if len(out) == window:
            break
        limit = 8 * MAX_PARAMETERS + 2**20
        try:
            with open_regular(path, limit) as handle:
                if not zipfile.is_zipfile(handle):
                    raise ValueError("not a NumPy .npz archive")
            headers = inspect_npz(path, max_elements=MAX_PARAMETERS, max_file=limit)
            fits = shapes is None or {h.name: h.shape for h in headers} == shapes
            state = read_npz(path, headers, max_file=limit) if fits else None
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
            warnings.warn(f"snapshot {path} is corrupt ({exc}); skipped", CheckpointWarning, stacklevel=2)
            continue
        if state is None:
            warnings.warn(
                f"snapshot {path} does not fit the learner's network; skipped",
                CheckpointWarning,
                stacklevel=2,
            )
            continue
        why = verify(path) if verify is not None else None
        if why is not None:
            warnings.warn(f"snapshot {path}: {why}; skipped", CheckpointWarning, stacklevel=2)
            continue
        out.append((path.stem, state))
    return out[::-1]
