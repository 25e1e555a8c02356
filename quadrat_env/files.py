"""Files written whole or not at all: a temporary file in the same folder, fsync, rename.

Every file the package and its tools write (README sections, results, run folders, models, label
files, ``--out`` files) goes through ``atomic_path``, ``atomic_open`` or
``atomic_write``. A full disk, a size limit or a kill during the write leaves the old file
as it was (and at worst a ``.*.tmp*`` file beside it); a rename within one folder is atomic on
POSIX file systems.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix, so writers that infer the format from it
    work) for a writer that takes a file name; on success it replaces ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.tmp", suffix=path.suffix)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, _mode(path))
    try:
        yield tmp_path
        _fsync_file(tmp_path)
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise
    fsync_dir(path.parent)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing ("w" or "wb"), replacing ``path`` only once closed whole."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode must be 'w' or 'wb', got {mode!r}")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as f:
        yield f


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically."""
    with atomic_open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def _mode(path: Path) -> int:
    """The old file's permissions, or what a plain ``open`` would give (mkstemp's are 0600)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def save_model(model: Any, path: str | os.PathLike[str]) -> None:
    """``model.save(path)`` for an SB3 model (or anything with ``save``), atomically."""
    with atomic_path(path) as tmp:
        model.save(tmp)


def copy_folder(source: str | os.PathLike[str], into: str | os.PathLike[str]) -> None:
    """A copy of the folder ``source`` at ``into`` (which must not exist), whole or not at all: copied
    into a hidden temporary folder beside it, each file fsynced, then renamed."""
    into = Path(into)
    if into.exists():
        raise FileExistsError(f"{into} exists already")
    into.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=into.parent, prefix=f".{into.name}.tmp"))
    try:
        shutil.copytree(source, tmp, dirs_exist_ok=True)
        for file in (p for p in tmp.rglob("*") if p.is_file()):
            _fsync_file(file)
        os.rename(tmp, into)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(into.parent)


def remove_partials(folder: str | os.PathLike[str], name: str = "*") -> None:
    """Remove the half-written copies ``atomic_path`` leaves in ``folder`` when a writer is killed
    mid-write (``.<stem>.tmp*<suffix>``; of ``name`` only, if given). Call it only where no other
    writer works (a held folder, or a finished run's)."""
    import glob

    stem, suffix = (
        (glob.escape(Path(name).stem), glob.escape(Path(name).suffix)) if name != "*" else ("*", "")
    )
    for partial in Path(folder).glob(f".{stem}.tmp*{suffix}"):
        if partial.is_file():
            partial.unlink(missing_ok=True)


def finish_run(run_dir: str | os.PathLike[str], checkpoint: str) -> None:
    """A finished run's folder: its checkpoint and any half-written copy of a file removed, and the
    run it replaced (``--overwrite``, kept in ``replaced_dir`` until now) deleted."""
    (Path(run_dir) / checkpoint).unlink(missing_ok=True)
    remove_partials(run_dir)
    kept = replaced_dir(run_dir)
    if kept.is_dir():
        shutil.rmtree(kept)
        with contextlib.suppress(OSError):  # the last one out removes the hidden folder
            kept.parent.rmdir()


def replaced_dir(run_dir: str | os.PathLike[str]) -> Path:
    """Where ``--overwrite`` keeps the run a new one replaces until the new one finishes: hidden
    beside it (``.replaced/<name>``), where no reader of run folders looks."""
    return Path(run_dir).parent / ".replaced" / Path(run_dir).name


def data_files(folder: str | os.PathLike[str], pattern: str) -> list[Path]:
    """The files in ``folder`` matching ``pattern``, sorted, without hidden ones: a writer's
    temporary files (``.name.tmpXXXX``, ``atomic_path``) are not data, whole or half-written."""
    return sorted(p for p in Path(folder).glob(pattern) if not p.name.startswith(".") and p.is_file())


#: The lock file a run holds in its output folder (hidden; ``.gitignore`` lists it).
LOCK = ".quadrat-env.lock"


class FolderBusy(ValueError):
    """Another run holds the output folder."""


@contextlib.contextmanager
def exclusive_folder(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``folder`` (made if missing) for one run: a second run into it while the first holds it is
    refused at once with ``FolderBusy``, so two runs never mix their files. The lock goes with
    the process (``flock``), however it ends."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with _exclusive(folder / LOCK, folder):
        yield folder


@contextlib.contextmanager
def exclusive_run(run_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the run folder ``run_dir`` for one run, from before it is claimed to the run's end: a
    second run into it is refused at once with ``FolderBusy``. The lock file lies beside the folder
    (``.<name>.lock``), so that ``--overwrite`` may delete the folder while it is held."""
    run_dir = Path(run_dir)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(run_dir.parent / f".{run_dir.name}.lock", run_dir):
        yield run_dir


@contextlib.contextmanager
def _exclusive(lock: Path, folder: Path) -> Iterator[None]:
    import fcntl

    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusy(f"another run is writing to {folder}; wait for it to end, or choose another "
                             "output folder") from None  # fmt: skip
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def take_turns(lock: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the lock file ``lock`` (made if missing), waiting while another process holds it: writers
    that must not overlap take turns. The lock goes with the process (``flock``), however it ends."""
    import fcntl

    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


#: The most bytes :func:`load_npz` lets one file's arrays claim (the largest the project writes, the
#: 32-card solved table, is about 0.3 GB).
MAX_NPZ_BYTES = 4 << 30


def load_npz(path: str | os.PathLike[str], max_bytes: int = MAX_NPZ_BYTES) -> dict[str, Any]:
    """The arrays of an ``.npz`` file (no pickles), each header checked first against the bytes its
    member holds and ``max_bytes`` in all, so a forged header costs an error, not an allocation of
    what it claims. ``ValueError`` (or ``OSError``) for a file that is not one."""
    import zipfile

    import numpy as np

    total = 0
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            with archive.open(info) as f:
                major, _ = np.lib.format.read_magic(f)
                read = (
                    np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read(f)
                body = info.file_size - f.tell()
            need = int(np.prod(shape, dtype=object)) * dtype.itemsize
            total += need
            if need > body or total > max_bytes:
                raise ValueError(f"{info.filename} claims shape {shape} ({need:,} bytes); it holds {body:,}")
    with np.load(path, allow_pickle=False) as saved:
        return {name: saved[name] for name in saved.files}
