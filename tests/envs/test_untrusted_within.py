"""Reading inside a folder (`envs.runtime.untrusted.within`, `open_within`, `read_within`): a path
that leads out of the folder, by a link or by `..`, reads as no file at all."""

from __future__ import annotations

import os

import pytest
from fowlplay.envs.runtime.untrusted import (
    OutsideError,
    UntrustedFileError,
    open_within,
    read_within,
    within,
)


@pytest.fixture
def folders(tmp_path):
    inside, outside = tmp_path / "runs", tmp_path / "outside"
    (inside / "run").mkdir(parents=True)
    outside.mkdir()
    (inside / "run" / "report.md").write_text("# ours\n")
    (outside / "secret").write_text("not for you\n")
    return inside, outside


def test_a_file_inside_is_read_and_its_size_bounded(folders):
    inside, _ = folders
    assert read_within(inside / "run" / "report.md", inside, 100) == b"# ours\n"
    with pytest.raises(UntrustedFileError, match="more than the 3 such a file may have"):
        read_within(inside / "run" / "report.md", inside, 3)
    (inside / "run" / "alias.md").symlink_to("report.md")  # a link that stays inside is followed
    assert read_within(inside / "run" / "alias.md", inside, 100) == b"# ours\n"


@pytest.mark.parametrize("how", ["file link", "folder link", "dot-dot", "absolute", "loop", "device"])
def test_a_path_that_leads_outside_is_no_file(folders, how):
    inside, outside = folders
    path = {
        "file link": inside / "run" / "report.md",
        "folder link": inside / "away" / "secret",
        "dot-dot": inside / "run" / ".." / ".." / "outside" / "secret",
        "absolute": outside / "secret",
        "loop": inside / "run" / "a",
        "device": inside / "run" / "zero",
    }[how]
    if how == "file link":
        path.unlink()
        path.symlink_to(outside / "secret")
    elif how == "folder link":
        (inside / "away").symlink_to(outside, target_is_directory=True)
    elif how == "loop":
        os.symlink(inside / "run" / "b", inside / "run" / "a")
        os.symlink(inside / "run" / "a", inside / "run" / "b")
    elif how == "device":
        path.symlink_to("/dev/zero")
    with pytest.raises(OutsideError):
        within(path, inside)
    with pytest.raises(FileNotFoundError):  # the caller's answer for a missing file fits both
        open_within(path, inside, 2**20)


def test_a_folder_or_a_device_inside_is_refused_as_no_regular_file(folders):
    inside, _ = folders
    with pytest.raises(UntrustedFileError, match="is a folder, not a regular file"):
        read_within(inside / "run", inside, 100)
    os.mkfifo(inside / "run" / "pipe")
    with pytest.raises(UntrustedFileError, match="is a named pipe"):
        read_within(inside / "run" / "pipe", inside, 100)
