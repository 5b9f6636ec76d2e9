"""One writer per output folder: the lock that `fowlplay-eval`, `-train`, `-exploit` and `-league`
take on the folder they write.

    with hold_folder(out, "fowlplay-eval"):
        ...  # nothing else writes `out` meanwhile

The lock is `<folder>/.fowlplay.lock`, held with `flock` for as long as the command runs, and it
names its holder (pid, host, command, start time) in JSON. A second command into a held folder is
refused with `FolderBusyError`, whose message names the holder. The kernel drops a `flock` when its
process dies, so a lock left behind by a killed run (SIGKILL, a crash, a lost machine) is stale:
the next run takes it over and says so with a `StaleLockWarning`, naming the run that left it.
The same process may take a folder's lock again inside its own (an exploit's scoring inside its
estimate): the lock is counted, and released when the outermost holder is done.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import os
import socket
import stat
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

#: The lock file's name inside the folder it guards (a command ignores it among the folder's files).
LOCK_NAME = ".fowlplay.lock"
#: The most of a lock file read to name its holder.
_MAX_LOCK_BYTES = 4096
#: Opening a named pipe planted as the lock file must not wait for a writer.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

try:
    import fcntl
except ImportError:  # Windows: the pid in the file decides (see `_locked`)
    fcntl = None  # type: ignore[assignment]


class FolderBusyError(RuntimeError):
    """Another run writes the folder; the message names it (pid, host, command, since when)."""


class StaleLockWarning(UserWarning):
    """A lock left by a run that is gone was taken over."""


#: Folders this process holds: resolved path -> [open lock file, holders inside it, whether the lock
#: created the folder].
_held: dict[Path, list] = {}


def holder_text(info: dict) -> str:
    """'pid 123 on host-a (fowlplay-eval --out runs/x), since 2026-01-02T03:04:05+00:00'."""
    if not isinstance(info, dict) or not info:
        return "an unknown process (its lock file names no holder)"
    command = f" ({info['command']})" if info.get("command") else ""
    since = f", since {info['started']}" if info.get("started") else ""
    return f"pid {info.get('pid', '?')} on {info.get('host', '?')}{command}{since}"


def read_holder(folder: str | Path) -> dict:
    """What the lock file of `folder` says about its holder ({} when there is none or it is unreadable)."""
    path = Path(folder) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        if not _is_regular(fd):
            return {}
        text = os.read(fd, _MAX_LOCK_BYTES)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        info = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    return info if isinstance(info, dict) else {}


def _is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def _alive(pid) -> bool:
    """Whether process `pid` runs on this machine (a pid we may not signal counts as running)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _command_text(command: str | None) -> str:
    if command:
        return command
    import shlex

    return shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else "python"


def _open_lock(path: Path) -> int:
    """Open (creating) the lock file without following a link planted in its place."""
    flags = os.O_RDWR | os.O_CREAT | _NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symbolic link where the lock file belongs
            raise FolderBusyError(
                f"{path} is a symbolic link, not a lock file; remove it and run again"
            ) from None
        raise
    if not _is_regular(fd):
        os.close(fd)
        raise FolderBusyError(
            f"{path} is not a regular file, so it cannot be a lock; remove it and run again"
        )
    return fd


def _locked(fd: int) -> bool:
    """Take the flock of `fd` without waiting; False when another process holds it."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def acquire(folder: str | Path, command: str | None = None) -> Path:
    """Take the lock of `folder` (created if missing) for this process; returns the lock file.

    Raises `FolderBusyError` naming the holder when another live run holds it; a stale lock is taken
    over with a `StaleLockWarning`. An `OSError` (the folder cannot be created) is left to the caller.
    """
    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    key = folder.resolve()
    if key in _held:
        _held[key][1] += 1
        return key / LOCK_NAME
    path = folder / LOCK_NAME
    for _ in range(5):  # a holder that releases between our open and our flock: try again
        fd = _open_lock(path)
        if not _locked(fd):
            os.close(fd)
            raise FolderBusyError(
                f"{folder} is being written by another run: {holder_text(read_holder(folder))}; wait for "
                f"it to finish, stop it, or choose another output folder (the lock is {path})"
            )
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the file we locked was removed by the run that held it: lock the new one
    else:
        raise FolderBusyError(
            f"{folder}: its lock file {path} keeps changing; is another run starting there?"
        )
    before = read_holder(folder)
    here = socket.gethostname()
    if fcntl is None and before and before.get("host") == here and _alive(before.get("pid")):
        os.close(fd)
        raise FolderBusyError(f"{folder} is being written by another run: {holder_text(before)}")
    if before:
        warnings.warn(
            f"{folder} was left locked by a run that is gone ({holder_text(before)}); taking the lock "
            "over (its files are kept; resuming from them is up to this run)",
            StaleLockWarning,
            stacklevel=3,
        )
    info = {
        "pid": os.getpid(),
        "host": here,
        "command": _command_text(command),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (json.dumps(info) + "\n").encode())
    _held[key] = [fd, 1, created]
    return path


def release(folder: str | Path) -> None:
    """Give back one hold of `folder`'s lock; the last one removes the lock file."""
    key = Path(folder).resolve()
    entry = _held.get(key)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] > 0:
        return
    del _held[key]
    fd = entry[0]
    try:
        # Empty first: a run that opened the file before it is unlinked finds no holder to name.
        os.ftruncate(fd, 0)
        with contextlib.suppress(FileNotFoundError):
            if os.stat(key / LOCK_NAME, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                os.unlink(key / LOCK_NAME)
        if entry[2]:  # a folder the lock made and nothing was written to (the run failed at once)
            with contextlib.suppress(OSError):
                key.rmdir()
    except OSError:
        pass  # a folder gone or read-only: the flock still goes with the descriptor
    finally:
        os.close(fd)


@contextlib.contextmanager
def hold_folder(folder: str | Path, command: str | None = None) -> Iterator[Path]:
    """Hold the lock of `folder` for the block (see `acquire`); yields the lock file's path."""
    path = acquire(folder, command)
    try:
        yield path
    finally:
        release(folder)


def holds(folder: str | Path) -> bool:
    """Whether this process holds the lock of `folder`."""
    return Path(folder).resolve() in _held
