"""Several files replaced as one change, with a journal that a stopped writer's successor finishes.

``replace_all(changes, journal)`` leaves every file new or, if the writer is stopped at any point,
every file old once ``finish`` has run (every writer calls it first). The journal guards its own
folder: every change must lie inside it, and the journal names each file relative to it.

A journal is untrusted input (a file anyone may edit): ``finish`` reads it whole before it touches
anything, and refuses it, with ``JournalError`` naming the journal and the problem, unless it is
exactly what ``replace_all`` writes: a state and a plan of (target, temporary file) pairs, every
path relative, without ``..``, resolving (through any symbolic links) inside the folder, and each
temporary file the ``.<name>.pending`` beside its target. Nothing outside the folder is touched.

Writers of one folder take turns: ``replace_all`` holds a lock in the folder (``LOCK``) from before
it finishes an earlier journal until its last rename, so a second writer waits instead of rolling
back the first one's journal while it is still being written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

from quadrat_env.files import atomic_write, fsync_dir, remove_partials, take_turns

#: The lock the writers of one folder take turns with (hidden; ``.gitignore`` lists it).
LOCK = ".quadrat-env-journal.lock"
STATES = ("writing", "renaming")
#: Fault injection for the tests: with ``QUADRAT_ENV_KILL_AT=k`` the writer of ``replace_all``
#: dies (``os._exit``) right after its k-th step, as under ``kill -9``.
_KILL_AT = "QUADRAT_ENV_KILL_AT"


class JournalError(ValueError):
    """A journal that is not one ``replace_all`` wrote: nothing was changed."""


def _relative(folder: Path, path: Path) -> str:
    """``path`` as the journal names it: relative to ``folder``, which it must lie in."""
    real = Path(os.path.realpath(path.parent)) / path.name
    base = Path(os.path.realpath(folder))
    if not real.is_relative_to(base):
        raise ValueError(f"{path} is outside {folder}, the folder its journal guards")
    return real.relative_to(base).as_posix()


def replace_all(changes: dict[Path, bytes | None], journal: str | os.PathLike[str]) -> None:
    """Replace several files as one change (``None`` deletes a file). Steps: a journal in state
    "writing" names each change's temporary file; each new file is written whole beside its target;
    the journal turns "renaming"; the renames and deletions; the journal goes. ``finish`` rolls a
    "writing" journal back, a "renaming" one forward."""
    journal = Path(journal)
    folder = journal.parent
    folder.mkdir(parents=True, exist_ok=True)
    names = [_relative(folder, Path(target)) for target in changes]  # before anything is written
    with take_turns(folder / LOCK):
        finish(journal)
        plan = [
            (name, None if data is None else _pending(name))
            for name, data in zip(names, changes.values(), strict=True)
        ]
        atomic_write(journal, json.dumps({"state": "writing", "plan": plan}))
        _step(1)
        for (_, temp), data in zip(plan, changes.values(), strict=True):
            if temp is not None:
                (folder / temp).parent.mkdir(parents=True, exist_ok=True)
                atomic_write(folder / temp, data)
                _step(2)
        atomic_write(journal, json.dumps({"state": "renaming", "plan": plan}))
        _step(3)
        _complete(folder, plan)
        journal.unlink()
        fsync_dir(folder)


def _pending(name: str) -> str:
    path = PurePosixPath(name)
    return str(path.with_name(f".{path.name}.pending"))


def read_journal(journal: str | os.PathLike[str]) -> tuple[str, list[tuple[str, str | None]]] | None:
    """The state and plan of ``journal`` (None if there is none), checked as the module docstring
    says; ``JournalError`` for anything else."""
    journal = Path(journal)
    if not journal.exists() and not journal.is_symlink():
        return None
    try:
        if not journal.is_file() or journal.stat().st_size > 1 << 20:
            raise ValueError("not a journal file of at most 1 MB")
        record = json.loads(journal.read_text(encoding="utf-8"))
        state, plan = record["state"], record["plan"]
        if state not in STATES or not isinstance(plan, list):
            raise ValueError(f"state {str(state)[:20]!r} or plan is not one replace_all writes")
        return state, [_entry(journal.parent, entry) for entry in plan]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
        raise JournalError(f"{journal}: not a journal this package wrote ({str(err)[:200]}); nothing was "
                           "changed. If no write was under way there, remove it") from None  # fmt: skip


def _entry(folder: Path, entry: object) -> tuple[str, str | None]:
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
            and (entry[1] is None or isinstance(entry[1], str))):  # fmt: skip
        raise ValueError(f"plan entry {str(entry)[:80]} is not [target, temporary file or null]")
    target, temp = entry
    for name in (target, temp):
        if name is None:
            continue
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or not path.parts or "\0" in name:
            raise ValueError(f"{name[:80]!r} is not a path inside the journal's folder")
        _relative(folder, folder / name)  # no symbolic link leads out of the folder
    if temp is not None and temp != _pending(target):
        raise ValueError(f"{temp[:80]!r} is not the temporary file of {target[:80]!r}")
    return target, temp


def finish(journal: str | os.PathLike[str]) -> None:
    """Complete or undo a ``replace_all`` that was stopped (nothing to do if none was). A journal
    that is not one ``replace_all`` wrote raises ``JournalError`` and changes nothing."""
    record = read_journal(journal)
    if record is None:
        return
    journal = Path(journal)
    state, plan = record
    if state == "renaming":
        _complete(journal.parent, plan)
    else:
        for _, temp in plan:
            if temp is not None:
                (journal.parent / temp).unlink(missing_ok=True)
    for _, temp in plan:  # a temporary file's own half-written copy, from a writer killed mid-write
        if temp is not None:
            _unlink_partial(journal.parent / temp)
    journal.unlink(missing_ok=True)


def _unlink_partial(path: Path) -> None:
    """Remove what ``atomic_write(path)`` leaves when killed mid-write (``.<stem>.tmp*<suffix>``)."""
    remove_partials(path.parent, path.name)


def _complete(folder: Path, plan: list[tuple[str, str | None]]) -> None:
    for target, temp in plan:
        if temp is None:
            (folder / target).unlink(missing_ok=True)
        elif (folder / temp).exists():  # not yet renamed
            os.replace(folder / temp, folder / target)
            fsync_dir((folder / target).parent)
        _step(4)


def _step(kind: int) -> None:
    """Count the writer's steps; die after the one ``QUADRAT_ENV_KILL_AT`` names (tests only)."""
    at = os.environ.get(_KILL_AT)
    if at is None:
        return
    _STEPS.append(kind)
    if len(_STEPS) == int(at):
        os._exit(137)


_STEPS: list[int] = []
