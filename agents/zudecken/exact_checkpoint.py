"""An exact solve's memo saved to a folder and read back, so that a solve of any size survives a stop
(Ctrl-C, kill -9, a new machine that kept the folder) and resumes to the same value to the bit.

A checkpoint is the memo's filled entries (``keys-<k>.npy``, ``vals-<k>.npy``) and ``meta.json``,
which names generation ``k``, the solve (ranks, rules, lean, the search's code fingerprint) and how
far it got. The arrays of a new generation are written whole (temporary file, fsync, rename) before
``meta.json`` is replaced to name them, and the older generation is removed only after: a stop at
any moment leaves the last checkpoint readable. A checkpoint of another solve or of other code is
not used (the solve starts over); a damaged one is an error naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from quadrat_env.files import atomic_path, atomic_write

META = "meta.json"
#: Memo slots read or written at a time (64 MB of keys and values).
CHUNK = 1 << 22


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
    for name, array in (("keys", solver.keys), ("vals", solver.vals)):
        with atomic_path(folder / f"{name}-{generation}.npy") as tmp:
            _filled_into(tmp, solver.keys, array, positions)
    meta = {**identity(solver), "generation": generation, "positions": positions, **progress}
    atomic_write(folder / META, json.dumps(meta, indent=2))
    for stale in [*folder.glob("keys-*.npy"), *folder.glob("vals-*.npy")]:
        if stale.stem.split("-")[1] != str(generation):
            stale.unlink(missing_ok=True)
    return folder / META


def _filled_into(path: Path, keys: np.ndarray, array: np.ndarray, positions: int) -> None:
    """The rows of ``array`` where ``keys`` holds an entry, written to a .npy file a chunk at a time
    (no copy of the whole memo: a checkpoint of 11 ranks stays within the solve's own memory)."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=array.dtype, shape=(positions, *array.shape[1:]))
    done = 0
    for at in range(0, len(keys), CHUNK):
        chunk = array[at : at + CHUNK][keys[at : at + CHUNK, 0] != -1]
        out[done : done + len(chunk)] = chunk
        done += len(chunk)
    out.flush()
    del out


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
    keys = _array(folder / f"keys-{meta['generation']}.npy", np.int64, (meta["positions"], solver.width))
    vals = _array(folder / f"vals-{meta['generation']}.npy", np.float64, (meta["positions"],))
    for at in range(0, len(keys), CHUNK):  # a chunk at a time: no second copy of the memo in memory
        k, v = np.array(keys[at : at + CHUNK]), np.array(vals[at : at + CHUNK])
        if (k[:, 0] == -1).any() or not ((v >= 0) & (v <= 1)).all():
            raise ValueError(f"{folder}: the checkpoint holds entries that no solve writes")
        solver.preload(k, v)
    return meta


def _array(path: Path, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """A saved array, mapped from disk; its header checked against what meta.json says."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as err:
        raise ValueError(f"{path} is not a readable checkpoint array: {err}") from None
    if array.dtype != dtype or array.shape != tuple(shape):
        said = f"{np.dtype(dtype)} {tuple(shape)}"
        raise ValueError(f"{path} holds {array.dtype} {array.shape}, meta.json says {said}")
    return array
