"""A multi-file change is all old or all new: the writer killed (as by kill -9) after any of its steps
leaves, once the next writer has finished the journal, either every old file or every new one, and
no temporary file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from quadrat_env.journal import LOCK, finish, replace_all

WRITER = """
import sys
from pathlib import Path
from quadrat_env.journal import replace_all
root = Path(sys.argv[1])
replace_all({root / "a.txt": b"new a", root / "sub" / "b.txt": b"new b", root / "gone.txt": None,
             root / "c.txt": b"new c"}, root / ".journal")
"""
OLD = {"a.txt": "old a", "sub/b.txt": "old b", "gone.txt": "old gone"}
NEW = {"a.txt": "new a", "sub/b.txt": "new b", "c.txt": "new c"}


def files(root: Path) -> dict[str, str]:
    # (the writers' lock file stays, hidden, as every lock file here does)
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()
            and p.name != LOCK}  # fmt: skip


def start(root: Path) -> None:
    for name, text in OLD.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_writer_killed_after_any_step_leaves_all_old_or_all_new(tmp_path):
    outcomes = []
    for kill_at in range(1, 12):
        root = tmp_path / str(kill_at)
        start(root)
        env = {**os.environ, "QUADRAT_ENV_KILL_AT": str(kill_at)}
        done = subprocess.run([sys.executable, "-c", WRITER, str(root)], env=env, capture_output=True)
        finish(root / ".journal")  # what the next writer does first
        now = files(root)
        assert now in (OLD, NEW), (kill_at, now)
        outcomes.append((done.returncode, now == NEW))
    assert (137, False) in outcomes and (137, True) in outcomes  # killed both before and after the turn
    assert outcomes[-1] == (0, True)  # the last run was not killed: every step done


def test_an_unstopped_change_is_whole(tmp_path):
    start(tmp_path)
    changes = {tmp_path / "a.txt": b"new a", tmp_path / "sub" / "b.txt": b"new b",
               tmp_path / "gone.txt": None, tmp_path / "c.txt": b"new c"}  # fmt: skip
    replace_all(changes, tmp_path / ".journal")
    assert files(tmp_path) == NEW
