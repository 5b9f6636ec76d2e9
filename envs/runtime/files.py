"""Writing a file of a run whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path


class WriteError(OSError):
    """A file of a run that could not be written (a full disk, say); the message names it."""

    def __init__(self, target: str | Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.filename = str(target)
        self.message = f"cannot write {target}: {cause.strerror or cause}"

    def __str__(self) -> str:
        return self.message


def atomic_write(target: Path, write) -> None:
    """Write `target` through `write(handle)` into a temporary file renamed over it: all or nothing.

    A failure (a full disk) removes the temporary file and raises `WriteError` naming `target`.
    """
    tmp = target.with_name(target.name + ".tmp")
    try:
        with open(tmp, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WriteError(target, exc) from exc
