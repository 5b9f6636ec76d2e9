"""Reading files that someone else may have written (a downloaded run folder, a shared `--out`),
within bounds decided before anything is allocated.

- Only regular files are opened: a symbolic link to a device (`/dev/zero`), a named pipe or a
  folder where a file belongs is refused before it is opened, and checked again on the open file.
- A file read from inside a folder (a run folder, `--runs`) must stay inside it once every link is
  followed (`within`, `open_within`): a link out of the folder reads as no file at all
  (`OutsideError`, a `FileNotFoundError`), so a caller answers outside and missing alike.
- Every read has a size limit, checked against the file's size first and enforced while reading.
- JSON is parsed with a depth limit and with finite numbers only (`1e999`, `NaN`, `Infinity` are
  refused); a reader then checks each field's type and range (`check_count`, `check_number`).
- A NumPy `.npz` is inspected from its zip directory and each member's `.npy` header: member names,
  compressed and uncompressed sizes, dtypes and shapes are checked before any array is read
  (`inspect_npz`), and `read_npz` reads only what passed.

Every refusal is an `UntrustedFileError` whose message names the file and what is wrong.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: The largest JSON file read whole (checkpoint metadata, run records): far above any we write.
MAX_JSON_BYTES = 16 * 2**20
#: The deepest nesting of a JSON value we accept (our files nest 5 levels at most).
MAX_JSON_DEPTH = 64
#: Open a named pipe without waiting for a writer (it is refused right after, as no regular file).
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
#: The dtypes a weights file may hold: floats and integers, never objects (which need pickle).
_NUMERIC_KINDS = "fiu"


class UntrustedFileError(ValueError):
    """A file that is not what it should be (not a regular file, too large, malformed); the message
    names it."""


class OutsideError(FileNotFoundError):
    """A path that leads outside the folder it must stay in (by `..` or a link): treated as missing,
    so that the answer does not tell a probe which outside paths exist."""


def within(path: str | Path, folder: str | Path) -> Path:
    """`path` with every link followed, when it lies inside `folder` (itself resolved, the folder
    included); else `OutsideError`. A link loop is an `OutsideError` too."""
    try:
        root = Path(folder).resolve()
        resolved = Path(path).resolve()
    except (OSError, RuntimeError):  # a loop of links
        raise OutsideError(f"{path} does not lead to a file inside {folder}") from None
    if resolved != root and root not in resolved.parents:
        raise OutsideError(f"{path} leads outside {folder}")
    return resolved


def open_within(path: str | Path, folder: str | Path, limit: int) -> io.BufferedReader:
    """`open_regular` of `path`, which must lead to a regular file inside `folder` once every link
    is followed; checked again on the open file (a link swapped in between is caught)."""
    resolved = within(path, folder)
    handle = open_regular(resolved, limit)
    try:
        opened = Path(f"/proc/self/fd/{handle.fileno()}")
        if opened.parent.is_dir():  # Linux: where the open file really is
            within(os.readlink(opened), folder)
    except BaseException:
        handle.close()
        raise
    return handle


def read_within(path: str | Path, folder: str | Path, limit: int) -> bytes:
    """The whole of `path` (at most `limit` bytes), a regular file inside `folder` (`open_within`)."""
    with open_within(path, folder, limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UntrustedFileError(f"{path} grew past {limit:,} bytes while it was read")
    return data


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str | Path, limit: int) -> io.BufferedReader:
    """`path` opened for reading when it is a regular file of at most `limit` bytes (a symbolic
    link to one is followed); anything else is an `UntrustedFileError`. FileNotFoundError passes."""
    path = Path(path)
    mode = os.stat(path).st_mode  # follows a link: what matters is what it points at
    if not stat.S_ISREG(mode):
        raise UntrustedFileError(f"{path} is {_kind(mode)}, not a regular file; refusing to read it")
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)  # the file opened may not be the one looked at (it was swapped)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFileError(
                f"{path} is {_kind(info.st_mode)}, not a regular file; refusing to read it"
            )
        if info.st_size > limit:
            raise UntrustedFileError(
                f"{path} is {info.st_size:,} bytes, more than the {limit:,} such a file may have"
            )
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path, limit: int) -> bytes:
    """The whole of a regular file of at most `limit` bytes (it may not grow past it while read)."""
    with open_regular(path, limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UntrustedFileError(f"{path} grew past {limit:,} bytes while it was read")
    return data


# ----- JSON --------------------------------------------------------------------------------------
def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is out of range")
    return value


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _depth(value: Any, limit: int) -> int:
    """How deep `value` nests (lists and objects), counting no further than `limit` + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def parse_json(text: bytes | str, where: str, max_depth: int | None = MAX_JSON_DEPTH) -> Any:
    """JSON with finite numbers only and at most `max_depth` levels of nesting; `where` names it.

    `max_depth` None skips the walk that counts the levels (for many small records whose fields the
    reader checks anyway): nesting deeper than the parser's own recursion limit is still refused."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        value = json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise UntrustedFileError(f"{where} is not valid JSON: it nests too deep") from None
    except UnicodeDecodeError as exc:
        raise UntrustedFileError(f"{where} is not valid JSON: not UTF-8 text ({exc.reason})") from None
    except ValueError as exc:  # JSONDecodeError, a number out of range, an integer too long
        raise UntrustedFileError(f"{where} is not valid JSON: {exc}") from None
    if max_depth is not None and _depth(value, max_depth) > max_depth:
        raise UntrustedFileError(f"{where} is not valid JSON: it nests deeper than {max_depth} levels")
    return value


def read_json(path: str | Path, limit: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A JSON file read with `read_bytes` and `parse_json`."""
    return parse_json(read_bytes(path, limit), str(path), max_depth)


def check_count(value: Any, what: str, low: int = 0, high: int = 2**62) -> int:
    """`value` when it is an int in [low, high] (a bool is not); else a ValueError naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} must be an integer in {low}..{high:,}; got {_short(value)}")
    return value


def check_number(value: Any, what: str, low: float, high: float) -> float:
    """`value` when it is a finite int or float in [low, high]; else a ValueError naming `what`."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{what} must be a number in {low:g}..{high:g}; got {_short(value)}")
    return float(value)


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


# ----- NumPy .npz ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArrayHeader:
    """What one `.npy` member of an `.npz` says it holds, read from its header alone."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool
    #: Bytes of the member as stored and as decompressed.
    compressed: int
    size: int

    @property
    def count(self) -> int:
        """Elements of the array."""
        return math.prod(self.shape)


@contextlib.contextmanager
def open_zip(path: str | Path, limit: int) -> Iterator[zipfile.ZipFile]:
    """A zip archive that is a regular file of at most `limit` bytes, closed (with its file) after."""
    with open_regular(path, limit) as handle:
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise UntrustedFileError(f"{path} is not a zip archive ({exc})") from None
        with archive:
            yield archive


def check_members(
    path: str | Path, archive: zipfile.ZipFile, max_member: int, max_total: int, allowed=None
) -> list[zipfile.ZipInfo]:
    """The members of a zip archive, refused unless each decompresses to at most `max_member`
    bytes, all together to at most `max_total`, and (when `allowed` is given) each name is in it.

    The sizes come from the zip's directory; reading a member checks its real size against them
    (`zipfile` stops at the size the directory states), so a lying directory cannot make us read more.
    """
    members = archive.infolist()
    total = 0
    for info in members:
        if allowed is not None and info.filename not in allowed:
            raise UntrustedFileError(
                f"{path} holds an unexpected member {info.filename!r}; expected only {sorted(allowed)}"
            )
        if info.file_size > max_member:
            raise UntrustedFileError(
                f"{path} member {info.filename!r} decompresses to {info.file_size:,} bytes, more than "
                f"the {max_member:,} it may have"
            )
        total += info.file_size
    if total > max_total:
        raise UntrustedFileError(
            f"{path} decompresses to {total:,} bytes in all, more than the {max_total:,} it may have"
        )
    return members


def inspect_npz(path: str | Path, max_elements: int, max_file: int) -> list[ArrayHeader]:
    """The headers of every array of an `.npz`, checked before any array is read: a file of at most
    `max_file` bytes, only `.npy` members with numeric dtypes, at most `max_elements` elements in
    all, and each member's size exactly what its header's shape and dtype make."""
    path = Path(path)
    max_bytes = max_elements * 8 + 2**20  # 8 bytes an element at most, and the headers
    with open_zip(path, max_file) as archive:
        headers = []
        for info in check_members(path, archive, max_bytes, max_bytes):
            name = info.filename
            if not name.endswith(".npy") or info.is_dir():
                raise UntrustedFileError(f"{path} member {name!r} is not a NumPy array (.npy)")
            try:
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    if version == (1, 0):
                        shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
                    elif version in ((2, 0), (3, 0)):
                        shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
                    else:
                        raise ValueError(f"unknown .npy version {version}")
                    offset = member.tell()
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, SyntaxError, TypeError) as exc:
                raise UntrustedFileError(f"{path} member {name!r} has no valid .npy header ({exc})") from None
            if dtype.kind not in _NUMERIC_KINDS or dtype.hasobject:
                raise UntrustedFileError(
                    f"{path} member {name!r} holds {dtype} values; a weights file holds numbers only"
                )
            header = ArrayHeader(
                name[:-4], tuple(shape), dtype, bool(fortran), info.compress_size, info.file_size
            )
            if header.count > max_elements:
                raise UntrustedFileError(
                    f"{path} member {name!r} claims {header.count:,} elements (shape {header.shape}), more "
                    f"than the {max_elements:,} allowed"
                )
            if offset + header.count * dtype.itemsize != info.file_size:
                raise UntrustedFileError(
                    f"{path} member {name!r} is {info.file_size:,} bytes, but its header (shape "
                    f"{header.shape}, {dtype}) needs {offset + header.count * dtype.itemsize:,}"
                )
            headers.append(header)
    elements = sum(h.count for h in headers)
    if elements > max_elements:
        raise UntrustedFileError(
            f"{path} holds {elements:,} elements in all, more than the {max_elements:,} allowed"
        )
    return headers


def read_npz(path: str | Path, headers: list[ArrayHeader], max_file: int) -> dict[str, np.ndarray]:
    """The arrays of an `.npz` whose `headers` `inspect_npz` passed (never unpickling anything)."""
    path = Path(path)
    names = {h.name + ".npy" for h in headers}
    max_bytes = sum(h.size for h in headers)
    state = {}
    with open_zip(path, max_file) as archive:
        # The file may have changed since it was inspected: its members are checked again.
        check_members(path, archive, max_bytes, max_bytes, allowed=names)
        for header in headers:
            try:
                with archive.open(header.name + ".npy") as member:
                    state[header.name] = np.lib.format.read_array(member, allow_pickle=False)
            except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
                raise UntrustedFileError(
                    f"{path} member {header.name + '.npy'!r} is damaged ({exc})"
                ) from None
            if state[header.name].shape != header.shape or state[header.name].dtype != header.dtype:
                raise UntrustedFileError(f"{path} changed while it was read; read it again")
    return state
