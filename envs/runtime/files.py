"""Writing a file of a run whole or not at all, with the mode any new file gets."""

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


def new_file_mode() -> int:
    """The mode `open()` gives a new file: 0o666 less the process's umask (0o644 under umask 022)."""
    return 0o666 & ~_umask()


def _umask() -> int:
    # Linux shows the umask without changing it. Elsewhere it is read by setting it and back, and a
    # file another thread creates in between gets 0o644.
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
