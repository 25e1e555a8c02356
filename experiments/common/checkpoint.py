"""Checkpoints of a training run: all it takes to continue the run as if it had never stopped.

A checkpoint is one ``.npz`` file, written atomically, with no pickle in it (a run folder may come
from anywhere, so resuming loads nothing that could run code): named arrays, and one JSON text
that describes everything else. What goes in is each object's own plain state
(``capture``): numbers, strings, arrays, numpy random generators, and lists, tuples and dicts
of these; attributes of any other kind (spaces, rules, open files, wrapped envs) are left out,
because the object rebuilt from the run's config already holds them.

Each checkpoint carries the SHA-256 of its arrays and JSON, checked on load: a damaged file is a
``CheckpointError`` naming it, never a resumed run on other numbers. ``restore`` also refuses an
array whose type or shape is not the one the rebuilt object holds (a crafted file with a matching
checksum).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from quadrat_env.files import atomic_open, data_files, load_npz

VERSION = 2  # 2: with a checksum (version 1 files, without one, are refused: a flipped bit would pass)


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: unreadable, damaged, or of other settings."""


class _Unsupported(Exception):
    """A value the checkpoint does not store (the rebuilt object supplies it)."""


def _encode(value: Any, arrays: dict[str, np.ndarray], key: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
        return value.item() if isinstance(value, np.generic) else value
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise _Unsupported
        arrays[key] = value
        return {"__array__": key}
    if isinstance(value, np.random.Generator):
        return {"__rng__": value.bit_generator.state}
    if isinstance(value, (list, tuple)):
        items = [_encode(v, arrays, f"{key}.{i}") for i, v in enumerate(value)]
        return items if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        kind = "__ordered__" if isinstance(value, OrderedDict) else "__dict__"
        return {kind: {k: _encode(v, arrays, f"{key}.{k}") for k, v in value.items()}}
    raise _Unsupported


def _decode(value: Any, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(value, list):
        return [_decode(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    if "__array__" in value:
        return arrays[value["__array__"]].copy()
    if "__rng__" in value:
        rng = np.random.Generator(getattr(np.random, value["__rng__"]["bit_generator"])())
        rng.bit_generator.state = value["__rng__"]
        return rng
    if "__tuple__" in value:
        return tuple(_decode(v, arrays) for v in value["__tuple__"])
    if "__ordered__" in value:
        return OrderedDict((k, _decode(v, arrays)) for k, v in value["__ordered__"].items())
    return {k: _decode(v, arrays) for k, v in value["__dict__"].items()}


def capture(obj: Any, arrays: dict[str, np.ndarray], name: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """``obj``'s own attributes that are plain values (see the module docstring), as JSON; its
    arrays go into ``arrays`` under keys starting with ``name``."""
    out = {}
    for attr, value in vars(obj).items():
        if attr in skip:
            continue
        try:
            out[attr] = _encode(value, arrays, f"{name}/{attr}")
        except _Unsupported:
            continue
    return out


def restore(obj: Any, state: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Set the attributes ``capture`` stored back on ``obj`` (a newly built equal object). An array
    must have the type and shape of the one the object holds (rows may differ where it holds none:
    a buffer that fills); else ``CheckpointError``, with nothing set."""
    try:
        values = {attr: _decode(value, arrays) for attr, value in state.items()}
    except (KeyError, TypeError, AttributeError, ValueError) as err:  # a crafted file's broken entries
        raise CheckpointError(f"the checkpoint's values cannot be read ({type(err).__name__}): not a "
                              "checkpoint of these settings") from None  # fmt: skip
    for attr, value in values.items():
        now = getattr(obj, attr, None)
        if not isinstance(now, np.ndarray) and not _same_type(now, value):
            raise CheckpointError(f"the checkpoint's {attr} is {type(value).__name__}, the run holds "
                                  f"{type(now).__name__}: not a checkpoint of these settings")  # fmt: skip
        if isinstance(now, np.ndarray) and not _same_kind(now, value):
            found = (
                f"{value.dtype}{list(value.shape)}" if isinstance(value, np.ndarray) else type(value).__name__
            )
            held = f"{now.dtype}{list(now.shape)}"
            raise CheckpointError(f"the checkpoint's {attr} is {found}, the run holds {held}: not a "
                                  "checkpoint of these settings")  # fmt: skip
    for attr, value in values.items():
        setattr(obj, attr, value)


def _same_type(now: Any, value: Any) -> bool:
    """A plain value of the kind the object holds (numbers as JSON stores them: a whole number may
    stand for a float); values of other kinds (None, objects) are not checked."""
    kinds = ((bool, np.bool_), (int, np.integer), (float, np.floating), (str,), (list,), (tuple,), (dict,),
             (np.random.Generator,))  # fmt: skip
    for kind in kinds:
        if isinstance(now, kind):
            whole = type(value) is int or isinstance(value, np.integer)
            if kind[0] is float:
                return isinstance(value, float) or whole
            if kind[0] is int:
                return whole
            return isinstance(value, kind)
    return True


def _same_kind(now: np.ndarray, value: Any) -> bool:
    if not isinstance(value, np.ndarray) or value.dtype != now.dtype or value.ndim != now.ndim:
        return False
    return value.shape[1:] == now.shape[1:] and (value.shape[:1] == now.shape[:1] or len(now) == 0)


def global_rngs(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The process-wide generators SB3 draws from: Python's, numpy's legacy one and torch's."""
    import torch

    arrays["rng/torch"] = torch.get_rng_state().numpy()
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    arrays["rng/numpy"] = keys
    return {"python": _encode(random.getstate(), arrays, "rng/python"),
            "numpy": [kind, pos, has_gauss, gauss]}  # fmt: skip


def set_global_rngs(state: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    import torch

    torch.set_rng_state(torch.from_numpy(arrays["rng/torch"].copy()))
    kind, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state((kind, arrays["rng/numpy"], pos, has_gauss, gauss))
    random.setstate(_decode(state["python"], arrays))


def save(path: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """One checkpoint file, replacing the last one only once written whole."""
    text = json.dumps({"version": VERSION, **meta})
    with atomic_open(path, "wb") as f:
        np.savez(f, __meta__=np.array(text), __sha256__=np.array(digest(text, arrays)), **arrays)


def digest(text: str, arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the JSON and of each array's name, type, shape and bytes, in name order."""
    h = hashlib.sha256(text.encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.data if a.dtype != object else b"")
    return h.hexdigest()


def load(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A checkpoint's JSON and arrays (``ValueError`` if the file is not one)."""
    try:
        arrays = load_npz(path)  # headers checked before anything is allocated
        text = str(arrays.pop("__meta__"))
        meta = json.loads(text)
        said = str(arrays.pop("__sha256__")) if "__sha256__" in arrays else None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise CheckpointError(f"{path} is not a readable checkpoint ({type(err).__name__}: {err})") from None
    if isinstance(meta, dict) and meta.get("version") == 1:
        raise CheckpointError(f"{path} is a version-1 checkpoint, without the checksum that finds a damaged "
                              "file; start the run again with --overwrite")  # fmt: skip
    if not isinstance(meta, dict) or meta.get("version") != VERSION:
        raise CheckpointError(f"{path} is not a checkpoint of this version")
    if said != digest(text, arrays):
        raise CheckpointError(f"{path} does not match its checksum (damaged); start the run again with "
                              "--overwrite")  # fmt: skip
    return meta, arrays


# -- SB3 runs -------------------------------------------------------------------------------------
def env_objects(venv: Any) -> list[Any]:
    """Every object of a vec env whose state changes while it runs: the wrapper chain down to the
    batched env (``.venv``), and for SB3's ``DummyVecEnv`` each env's chain (``.env``)."""
    out, node = [], venv
    while node is not None:
        out.append(node)
        for env in getattr(node, "envs", []) or []:
            while env is not None:
                out.append(env)
                env = getattr(env, "env", None)
        node = getattr(node, "venv", None)
    return out


def monitor_files(run_dir: Path) -> list[Path]:
    return data_files(run_dir / "monitor", "*.monitor.csv")


def snapshot(model: Any, callbacks: list[Any], run_dir: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The state of a run at a rollout boundary (after an update, before the next rollout)."""
    import io

    arrays: dict[str, np.ndarray] = {}
    buffer = io.BytesIO()
    model.save(buffer)  # weights, optimiser state, step and update counts (SB3's own format)
    arrays["model"] = np.frombuffer(buffer.getvalue(), dtype=np.uint8)
    meta = {
        "num_timesteps": int(model.num_timesteps),
        "model": capture(model, arrays, "sb3", skip=("policy", "env", "rollout_buffer")),
        "env": [capture(o, arrays, f"env{i}") for i, o in enumerate(env_objects(model.get_env()))],
        "callbacks": [capture(c, arrays, f"cb{i}", skip=("model", "locals", "globals")) for i, c in
                      enumerate(callbacks)],
        "rng": global_rngs(arrays),
        # Monitor logs are appended to; on resume they are cut back to what they held here
        "monitor_sizes": {p.name: p.stat().st_size for p in monitor_files(run_dir)},
        # and each Monitor's clock (its time column) goes on from where it stood here
        "monitor_clocks": [time.time() - o.t_start for o in env_objects(model.get_env())
                           if hasattr(o, "t_start")],
    }  # fmt: skip
    return meta, arrays


def check_snapshot(meta: dict[str, Any], path: Path, run_dir: Path, most_steps: int) -> None:
    """A ``train`` checkpoint's own fields, before any is used: ``monitor_sizes`` may name only the
    run's Monitor logs, cut back no further than they are long (a crafted file with a recomputed
    checksum could otherwise name ``../../somefile`` and truncate it); the step counts (at most
    ``most_steps``: the run's steps and one rollout) and the clocks are numbers in range."""
    logs = {p.name: p.stat().st_size for p in monitor_files(run_dir)}
    sizes = meta.get("monitor_sizes")
    if not isinstance(sizes, dict) or any(
        name not in logs or not _whole(size, 0, logs[name]) for name, size in sizes.items()
    ):
        raise CheckpointError(f"{path}: not this run's checkpoint: its monitor_sizes name files that are "
                              f"not this run's Monitor logs, or sizes beyond them")  # fmt: skip
    model, clocks = meta.get("model"), meta.get("monitor_clocks", [])
    steps = [meta.get("num_timesteps"), model.get("num_timesteps") if isinstance(model, dict) else None]
    if (
        not all(_whole(n, 0, most_steps) for n in steps)
        or not _number(meta.get("seconds", 0), 0, 1e9)
        or (not isinstance(clocks, list) or not all(_number(c, -1e9, 1e9) for c in clocks))
    ):
        raise CheckpointError(f"{path}: not this run's checkpoint: its step counts, seconds or Monitor "
                              f"clocks are out of range or of the wrong type for these settings")  # fmt: skip


# -- imitation runs (experiments/zudecken/imitate.py) ------------------------------------------------------
def save_imitation(path: Path, model: Any, settings: Any, rounds: list[dict[str, Any]], best: float,
                   next_round: int, next_epoch: int) -> None:  # fmt: skip
    """After a validation: the network's weights and where the run goes on (its round's labels are
    already in ``labels/``; the optimiser starts afresh at every fit, so it holds no state)."""
    arrays = {f"policy/{k}": v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}
    meta = {"rounds": rounds, "best": best, "round": next_round, "epoch": next_epoch,
            "labels_made": settings.labels_made}  # fmt: skip
    save(path, meta, arrays)


def resume_imitation(path: Path, model: Any, settings: Any) -> dict[str, Any]:
    """Load ``save_imitation``'s checkpoint into ``model`` (and ``settings.labels_made``); its
    meta (round, epoch, ...)."""
    import torch

    meta, arrays = load(path)
    check_imitation(meta, path, settings)
    prefix = "policy/"
    state = {k[len(prefix) :]: torch.from_numpy(v.copy()) for k, v in arrays.items() if k.startswith(prefix)}
    model.policy.load_state_dict(state)
    if meta.get("labels_made") is not None:
        settings.labels_made = meta["labels_made"]
    return meta


def _whole(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _number(value: Any, low: float, high: float) -> bool:
    return type(value) in (int, float) and low <= value <= high


#: Each validation row an imitation checkpoint keeps: its fields, and what each may hold (``s``: the
#: run's settings; a loss may be any float, NaN included).
_ROW = {
    "round": lambda v, s: _whole(v, 0, s.rounds - 1),
    "epochs": lambda v, s: _whole(v, 1, s.epochs),
    "samples": lambda v, s: _whole(v, 0, 2**40),
    "loss": lambda v, s: type(v) in (int, float),
    "val_win_rate": lambda v, s: _number(v, 0, 1),
    "seconds": lambda v, s: _number(v, 0, 1e9),
}


def check_imitation(meta: dict[str, Any], path: Path, settings: Any) -> None:
    """An imitation checkpoint's meta, of its types and within its run's settings: a file whose
    checksum was recomputed cannot skip the training (an epoch past the last) nor give a traceback."""
    said = {
        "round": _whole(meta.get("round"), 0, settings.rounds),
        "epoch": _whole(meta.get("epoch"), 0, settings.epochs - 1),
        "best": _number(meta.get("best"), -1, 1),
        "labels_made": meta.get("labels_made") is None or isinstance(meta.get("labels_made"), dict),
    }
    rows = meta.get("rounds")
    said["rounds"] = (isinstance(rows, list) and len(rows) <= settings.rounds * settings.epochs and all(
        isinstance(r, dict) and r.keys() == _ROW.keys() and all(ok(r[k], settings) for k, ok in _ROW.items())
        for r in rows))  # fmt: skip
    wrong = [key for key, ok in said.items() if not ok]
    if wrong:
        raise CheckpointError(f"{path}: not this run's checkpoint: {', '.join(wrong)} out of range or "
                              f"of the wrong type for these settings")  # fmt: skip


def check_counts(state: dict[str, Any], path: Path, updates: int) -> None:
    """A JAX run's checkpointed counts, of their types and within what its settings allow
    (``updates`` at most): a file whose checksum was recomputed cannot claim a finished run of 10^9
    updates, nor give a traceback."""
    for key, most in {
        "updates": updates,
        "deals": None,
        "wins": state.get("deals"),
        "next_eval": None,
    }.items():
        value = state[key]
        if type(value) is not int or value < 0 or (type(most) is int and value > most):
            bound = f" at most {most:,}" if type(most) is int else ""
            raise CheckpointError(f"{path}: {key} must be a whole number >= 0{bound} for these settings, "
                                  f"got {value!r}")  # fmt: skip
    if type(state["seconds"]) not in (int, float) or not 0 <= state["seconds"] < 1e9:
        raise CheckpointError(f"{path}: seconds must be a number >= 0, got {state['seconds']!r}")
    rows = state["curve"]
    if not isinstance(rows, list) or not all(
        isinstance(r, list) and len(r) == 6 and all(type(v) in (int, float) for v in r) for r in rows
    ):
        raise CheckpointError(f"{path}: curve must be rows of six numbers")
