"""Journals are untrusted input, and writers of one folder take turns (quadrat_env.journal)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quadrat_env.journal import JournalError, finish, read_journal, replace_all


def _journal(folder: Path, plan: object, state: str = "renaming") -> Path:
    journal = folder / ".journal"
    journal.write_text(json.dumps({"state": state, "plan": plan}))
    return journal


@pytest.mark.parametrize(
    "plan",
    [
        [["/etc/hostname", None]],  # absolute
        [["../victim.txt", None]],  # out through ..
        [["out/victim.txt", None]],  # out through a symbolic link
        [["a.txt", ".b.txt.pending"]],  # a temporary file that is not the target's
        [["a.txt", "../.victim.txt.pending"]],
        [["a.txt"]],
        [[1, None]],
        "a.txt",
    ],
    ids=["absolute", "dotdot", "symlink", "other-temp", "temp-out", "short", "number", "not-a-list"],
)
def test_a_forged_journal_is_refused_and_touches_nothing(tmp_path, plan):
    folder, outside = tmp_path / "guarded", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (outside / "victim.txt").write_text("keep me too")
    (folder / "out").symlink_to(outside)
    (folder / "a.txt").write_text("a")
    (folder / ".b.txt.pending").write_text("b")
    journal = _journal(folder, plan)
    with pytest.raises(JournalError, match=r"\.journal: not a journal this package wrote"):
        finish(journal)
    with pytest.raises(JournalError):
        replace_all({folder / "a.txt": b"new"}, journal)
    assert victim.read_text() == "keep me" and (outside / "victim.txt").read_text() == "keep me too"
    assert (folder / "a.txt").read_text() == "a" and (folder / ".b.txt.pending").read_text() == "b"
    assert journal.is_file()  # left for the user to look at


@pytest.mark.parametrize(
    "body", ["{", "[]", '{"state": "renaming"}', '{"state": "x", "plan": []}', "\0" * 10]
)
def test_a_malformed_journal_is_one_clear_error(tmp_path, body):
    (tmp_path / ".journal").write_text(body)
    with pytest.raises(JournalError, match="nothing was changed"):
        read_journal(tmp_path / ".journal")


def test_a_change_outside_the_guarded_folder_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "in").mkdir()
    with pytest.raises(ValueError, match="outside"):
        replace_all({tmp_path / "in" / "a.txt": b"a", tmp_path / "b.txt": b"b"}, tmp_path / "in" / ".journal")
    assert not (tmp_path / "in" / "a.txt").exists() and not (tmp_path / "b.txt").exists()


def test_journals_name_their_files_relative_to_their_folder(tmp_path):
    finish(tmp_path / ".journal")  # none: nothing to do
    record = _journal(tmp_path, [["sub/a.txt", "sub/.a.txt.pending"], ["gone.txt", None]])
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".a.txt.pending").write_text("new a")
    (tmp_path / "gone.txt").write_text("old")
    finish(record)  # a "renaming" journal rolls forward
    assert (tmp_path / "sub" / "a.txt").read_text() == "new a" and not (tmp_path / "gone.txt").exists()


WRITER = """
import os, sys, time
from pathlib import Path
real = os.fsync
os.fsync = lambda fd: (time.sleep(0.15), real(fd))  # a slow disk
from quadrat_env.journal import replace_all
folder, name, start = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
while time.time() < start:  # both writers released at the same instant
    pass
replace_all({folder / f"{name}-{i}.txt": name.encode() for i in range(4)}, folder / ".journal")
"""


def test_two_writers_released_together_both_arrive_whole(tmp_path):
    import time

    start = time.time() + 2
    argv = [[sys.executable, "-c", WRITER, str(tmp_path), name, str(start)] for name in ("first", "second")]
    writers = [subprocess.Popen(a, stderr=subprocess.PIPE, text=True) for a in argv]
    for w in writers:
        assert w.wait(timeout=120) == 0, w.stderr.read()
    for name in ("first", "second"):
        assert [(tmp_path / f"{name}-{i}.txt").read_text() for i in range(4)] == [name] * 4
    assert not list(tmp_path.glob(".*pending")) and not (tmp_path / ".journal").exists()


def test_finish_leaves_no_temporary_file_of_a_writer_killed_mid_write(tmp_path):
    (tmp_path / "..a.txt.tmpk3x9.pending").write_text("half")  # atomic_write's scratch of .a.txt.pending
    (tmp_path / ".a.txt.pending").write_text("whole")
    (tmp_path / "a.txt").write_text("old")
    finish(_journal(tmp_path, [["a.txt", ".a.txt.pending"]], state="writing"))
    assert (
        sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "old"
    )
