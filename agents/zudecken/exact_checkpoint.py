"""An exact solve's memo saved to a folder and read back, so that a solve of any size survives a stop
(Ctrl-C, kill -9, a new machine that kept the folder) and resumes to the same value to the bit.

A checkpoint is the memo's filled entries (``keys-<k>.npy``, ``vals-<k>.npy``) and ``meta.json``,
which names generation ``k``, the solve (ranks, rules, lean, the search's code fingerprint) and how
far it got. The arrays of a new generation are written whole (temporary file, fsync, rename) before
``meta.json`` is replaced to name them, and the older generation is removed only after: a stop at
any moment leaves the last checkpoint readable. A checkpoint of another solve or of other code is
not used (the solve starts over); a damaged one is an error naming the file: ``meta.json`` holds
each array file's SHA-256, checked before any entry is read, so one flipped bit is found rather
than resumed to another "exact" value.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from quadrat_env.files import atomic_open, atomic_write

META = "meta.json"
#: Memo slots read or written at a time (16 MB of keys and values).
CHUNK = 1 << 20
#: The .npy header readers by format version (``np.save`` writes 1.0 unless the header is huge).
HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def identity(solver: Any) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: the pack, the rules and the search's code."""
    from quadrat_env.agents.zudecken.exact import code_fingerprint

    return {"ranks": solver.n, "win": solver.win, "cover": solver.cover, "symmetric": solver.symmetric,
            "lean": solver.lean, "code": code_fingerprint()}  # fmt: skip


def save(solver: Any, folder: Path, progress: dict[str, Any]) -> Path:
    """The memo's filled entries as a new generation in ``folder``; ``progress`` (seconds and the
    like) goes into ``meta.json`` beside the solve's identity."""
    folder.mkdir(parents=True, exist_ok=True)
    old = read_meta(folder)
    generation = int(old["generation"]) + 1 if old else 0
    positions = sum(
        int((solver.keys[at : at + CHUNK, 0] != -1).sum()) for at in range(0, len(solver.keys), CHUNK)
    )
    digests = {}
    for name, array in (("keys", solver.keys), ("vals", solver.vals)):
        with atomic_open(folder / f"{name}-{generation}.npy", "wb") as f:
            hashing = _Hashing(f)
            _filled_into(hashing, solver.keys, array, positions)
            digests[name] = hashing.sha256.hexdigest()
    meta = {**identity(solver), "generation": generation, "positions": positions, "sha256": digests,
            **progress}  # fmt: skip
    atomic_write(folder / META, json.dumps(meta, indent=2))
    for stale in [*folder.glob("keys-*.npy"), *folder.glob("vals-*.npy")]:
        if stale.stem.split("-")[1] != str(generation):
            stale.unlink(missing_ok=True)
    return folder / META


class _Hashing:
    """A file that hashes what is written to it."""

    def __init__(self, f: BinaryIO) -> None:
        self.f, self.sha256 = f, hashlib.sha256()

    def write(self, data: bytes | memoryview) -> int:
        self.sha256.update(data)
        return self.f.write(data)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 24):
                digest.update(block)
    except OSError as err:
        raise ValueError(f"{path} is not a readable checkpoint array: {err}") from None
    return digest.hexdigest()


def _filled_into(f: Any, keys: np.ndarray, array: np.ndarray, positions: int) -> None:
    """The rows of ``array`` where ``keys`` holds an entry, written to a .npy file a chunk at a time
    with plain writes: no copy of the whole memo, and no mapping of the file, whose pages would count
    as the solve's memory (a checkpoint of 11 ranks stays within the solve's own memory)."""
    header = {"descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False,
              "shape": (positions, *array.shape[1:])}  # fmt: skip
    np.lib.format.write_array_header_1_0(f, header)
    for at in range(0, len(keys), CHUNK):
        f.write(array[at : at + CHUNK][keys[at : at + CHUNK, 0] != -1].data)


def read_meta(folder: Path) -> dict[str, Any] | None:
    """The checkpoint's ``meta.json``, or None if there is none."""
    path = folder / META
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"{path} is not a readable checkpoint: {err}") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("generation"), int):
        raise ValueError(f"{path} is not a checkpoint's meta.json (no generation)")
    return meta


def restore(solver: Any, folder: Path) -> dict[str, Any] | None:
    """Load the checkpoint in ``folder`` into the solver's memo; its meta, or None if there is none or
    it belongs to another solve or other code (the solve then starts over)."""
    meta = read_meta(folder)
    if meta is None or any(meta.get(k) != v for k, v in identity(solver).items()):
        return None
    digests = meta.get("sha256")
    for name in ("keys", "vals"):
        path = folder / f"{name}-{meta['generation']}.npy"
        if not isinstance(digests, dict) or not isinstance(digests.get(name), str):
            raise ValueError(f"{folder / META} gives no checksum of {path.name}: delete {folder} to start "
                             "this pack over")  # fmt: skip
        if _sha256(path) != digests[name]:
            raise ValueError(f"{path} does not match its checksum in {META} (damaged): delete {folder} to "
                             "start this pack over")  # fmt: skip
    keys = _chunks(folder / f"keys-{meta['generation']}.npy", np.int64, (meta["positions"], solver.width))
    vals = _chunks(folder / f"vals-{meta['generation']}.npy", np.float64, (meta["positions"],))
    for k, v in zip(keys, vals, strict=True):  # a chunk at a time: no second copy of the memo in memory
        if (k[:, 0] == -1).any() or not ((v >= 0) & (v <= 1)).all():
            raise ValueError(f"{folder}: the checkpoint holds entries that no solve writes")
        solver.preload(k, v)
    return meta


def _chunks(path: Path, dtype: type, shape: tuple[int, ...]) -> Iterator[np.ndarray]:
    """A saved array, ``CHUNK`` rows at a time, read with plain reads (a mapping's pages would count
    as the solve's memory); its header checked against what meta.json says before the first."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, after the last chunk
    except OSError as err:
        raise ValueError(f"{path} is not a readable checkpoint array: {err}") from None
    with f:
        try:
            version = np.lib.format.read_magic(f)
            read_header = HEADERS.get(version)
            if read_header is None:
                raise ValueError(f"format version {version}")
            found, fortran, kind = read_header(f)
        except (OSError, ValueError) as err:
            raise ValueError(f"{path} is not a readable checkpoint array: {err}") from None
        if kind != dtype or found != tuple(shape) or fortran:
            said = f"{np.dtype(dtype)} {tuple(shape)}"
            raise ValueError(f"{path} holds {kind} {found}, meta.json says {said}")
        row = int(np.prod(shape[1:], dtype=np.int64))
        for at in range(0, shape[0], CHUNK):
            rows = min(CHUNK, shape[0] - at)
            chunk = np.fromfile(f, dtype=dtype, count=rows * row)
            if len(chunk) != rows * row:
                raise ValueError(
                    f"{path} is cut short: {at + len(chunk) // max(row, 1):,} of {shape[0]:,} rows"
                )
            yield chunk.reshape(rows, *shape[1:])
