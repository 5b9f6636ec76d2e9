"""The record a run keeps of the files it wrote, so that a resume reads only its own.

`<run>/files.json` holds the SHA-256 of every checkpoint, snapshot and RLlib state file the run
wrote, under its path relative to the run, and an HMAC-SHA256 of that list keyed by a secret of
this user (`key_path()`: `$FOWLPLAY_KEY_FILE`, else `~/.config/fowlplay/run.key`, made on first
use, readable by this user only). A resume checks every file it is about to load against the
record (`verify`) and refuses one that is not there, or differs, or a record whose HMAC is not
this user's: a file planted in a run folder, or a folder someone else wrote, is never loaded as
this run's state. `--trust-checkpoint` lifts the check (the user vouches for the files); moving or
copying a run folder keeps it valid (paths are relative, hashes are of contents).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import warnings
from pathlib import Path

from fowlplay.envs.runtime.files import atomic_write
from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes, read_json

#: The record's file name inside a run directory.
MANIFEST = "files.json"
FORMAT = 1
#: The largest file hashed (a checkpoint of the largest network allowed is far smaller).
MAX_HASHED_BYTES = 4 * 2**30
_CHUNK = 2**20


class ManifestError(ValueError):
    """A file a resume would load that this run did not write (or the record cannot vouch for)."""


class ManifestWarning(UserWarning):
    """The record could not be kept (no key), so a later resume will need --trust-checkpoint."""


def key_path() -> Path:
    """Where this user's key lives: `$FOWLPLAY_KEY_FILE`, else `$XDG_CONFIG_HOME` (or ~/.config)/fowlplay/run.key."""
    explicit = os.environ.get("FOWLPLAY_KEY_FILE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "fowlplay" / "run.key"


def _key(create: bool) -> bytes | None:
    """This user's key (made when missing and `create`); None when it cannot be read or made."""
    path = key_path()
    try:
        text = read_bytes(path, 1024).strip()
        if len(text) >= 32:
            return text
    except FileNotFoundError:
        pass
    except (OSError, UntrustedFileError):
        return None
    if not create:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return _key(create=False)
    except OSError:
        return None
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_hex(32).encode())
    return _key(create=False)


def sha256_of(path: str | Path) -> str:
    """The SHA-256 of a regular file's contents."""
    from fowlplay.envs.runtime.untrusted import open_regular

    digest = hashlib.sha256()
    with open_regular(path, MAX_HASHED_BYTES) as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _mac(key: bytes, files: dict[str, str]) -> str:
    text = json.dumps(files, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, text, hashlib.sha256).hexdigest()


def _relative(run_dir: Path, path: Path) -> str:
    return Path(os.path.relpath(Path(path).absolute(), Path(run_dir).absolute())).as_posix()


def _read(run_dir: Path) -> dict:
    """The record of `run_dir` as written ({} when there is none); ManifestError when malformed."""
    path = Path(run_dir) / MANIFEST
    try:
        record = read_json(path, limit=64 * 2**20)
    except FileNotFoundError:
        return {}
    except (OSError, UntrustedFileError) as exc:
        raise ManifestError(f"{path} is unreadable ({exc})") from None
    files = record.get("files") if isinstance(record, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise ManifestError(f"{path} is not a record of a run's files (no 'files' mapping of hashes)")
    return record


def record(run_dir: str | Path, paths, digests: dict | None = None) -> None:
    """Add the SHA-256 of each of `paths` (files inside `run_dir`), and the given `digests` (path ->
    SHA-256, for a file about to be written), to the run's record, signed anew.

    Only the run holding the folder's lock calls this, so the read-modify-write is its alone.
    """

    run_dir = Path(run_dir)
    key = _key(create=True)
    try:
        data = _read(run_dir)
    except ManifestError:
        data = {}  # a damaged record vouches for nothing: start a new one
    signed = key is not None and isinstance(data.get("hmac"), str)
    # Only entries this user signed carry over: a record made elsewhere (or forged) is never
    # laundered into one of ours by signing it anew.
    files = (
        dict(data["files"]) if signed and hmac.compare_digest(data["hmac"], _mac(key, data["files"])) else {}
    )
    for path in paths:
        files[_relative(run_dir, path)] = sha256_of(path)
    for path, digest in (digests or {}).items():
        files[_relative(run_dir, path)] = digest
    if key is None:
        warnings.warn(
            f"cannot keep this user's key at {key_path()} (set FOWLPLAY_KEY_FILE to a writable file): "
            f"{run_dir / MANIFEST} is unsigned, so resuming this run will need --trust-checkpoint",
            ManifestWarning,
            stacklevel=2,
        )
    data = {"format": FORMAT, "files": files, "hmac": None if key is None else _mac(key, files)}
    text = (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()
    atomic_write(run_dir / MANIFEST, lambda handle: handle.write(text))


def problem(run_dir: str | Path, path: str | Path) -> str | None:
    """Why `path` (inside `run_dir`) is not a file this run wrote, or None when it is."""
    run_dir = Path(run_dir)
    where = run_dir / MANIFEST
    try:
        data = _read(run_dir)
    except ManifestError as exc:
        return str(exc)
    if not data:
        return (
            f"{run_dir} has no {MANIFEST}, the record of the files a run wrote (older fowlplay, or not a run)"
        )
    key = _key(create=False)
    if (
        key is None
        or not isinstance(data.get("hmac"), str)
        or not hmac.compare_digest(data["hmac"], _mac(key, data["files"]))
    ):
        return (
            f"{where} was not signed by this user's fowlplay (a run made elsewhere, or the record was edited)"
        )
    name = _relative(run_dir, path)
    expected = data["files"].get(name)
    if expected is None:
        return f"{name} is not among the files {where} records"
    try:
        actual = sha256_of(path)
    except FileNotFoundError:
        return f"{name} does not exist"
    except (OSError, UntrustedFileError) as exc:
        return str(exc)
    if actual != expected:
        return f"{name} is corrupt or was replaced: its SHA-256 is not the one {where} records"
    return None


def verify(run_dir: str | Path, paths, trust: bool = False) -> None:
    """Refuse (ManifestError) any of `paths` this run did not write, unless `trust`."""
    if trust:
        return
    for path in paths:
        why = problem(run_dir, path)
        if why is not None:
            raise ManifestError(
                f"refusing to resume from {path}: {why}; if you trust every file of {run_dir}, "
                "resume with --trust-checkpoint"
            )
