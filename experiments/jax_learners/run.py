"""One run of a JAX learner (``td_jax``, ``ppo_jax``): the loop around its jitted updates, the
validation curve, checkpoints and ``--resume``, the finished run's files.

A learner is an object with ``moves_per_update`` and ``total_updates``; ``init()`` (its carry: a
pytree of arrays holding everything the run depends on, its weights under ``.params``);
``train(carry, n)`` (``n`` updates: the new carry and ``Stats``); ``play(params, decks)`` (which of
the decks, JAX pack indices, it wins playing greedily); ``describe()`` (what the summary and
``weights.npz`` say of its network). The run's weights are written as ``weights.npz`` (named as the
torch policy's ``state_dict``) and, where SB3 is installed, exported as ``model.zip``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.utils import seeding
from quadrat_env.agents.evaluate import wilson
from quadrat_env.experiments import checkpoint
from quadrat_env.experiments.runs import StopAtBoundary, on_stop_signals

from quadrat_env import seeds
from quadrat_env.core.jax_core import pack_indices
from quadrat_env.files import atomic_write, finish_run
from quadrat_env.registry import rules_for

CHECKPOINT = "checkpoint.npz"
WEIGHTS = "weights.npz"
#: The validation curve's columns (``curve.csv``), as ``td``'s.
FIELDS = ("moves", "seconds", "deals", "win_rate", "ci_low", "ci_high")
#: Moves per jitted call at most: the loop checks signals, progress and checkpoints between calls.
CALL_MOVES = 1 << 18
#: The first call's moves at most, and how long a call should take: later calls grow or shrink
#: toward it, so that a slow learner (PPO scoring every afterstate, on a CPU) still stops on a
#: signal, checkpoints and shows progress within about this many seconds.
FIRST_CALL_MOVES = 1 << 14
CALL_SECONDS = 30.0
#: Deals played at once when evaluating (memory: an afterstate per move per deal).
EVAL_BATCH = 2048


class Stats(NamedTuple):
    """What ``train`` reports of its updates: deals ended, deals won, the mean loss."""

    deals: Any
    wins: Any
    loss: Any


class Run:
    """The Python side of a run: counts, curve, time."""

    def __init__(self, settings: Any, learner: Any) -> None:
        self.s, self.learner = settings, learner
        self.updates, self.deals, self.wins, self.next_eval = 0, 0, 0, 0
        self.seconds, self.loss, self.curve = 0.0, float("nan"), []
        self._since = time.perf_counter()
        self.most_per_call = max(1, CALL_MOVES // self.learner.moves_per_update)
        self.per_call = min(self.most_per_call, max(1, FIRST_CALL_MOVES // self.learner.moves_per_update))
        self.valid = decks(settings, seeds.VALIDATION.take(settings.eval_deals))

    @property
    def moves(self) -> int:
        return self.updates * self.learner.moves_per_update

    def elapsed(self) -> float:
        return self.seconds + time.perf_counter() - self._since

    def train(self, carry: Any) -> Any:
        """One jitted call: its updates end at the run's end or the next validation, whichever is
        first (so the curve's points do not depend on how the calls were sized)."""
        mpu = self.learner.moves_per_update
        to_eval = max(1, -(-(self.next_eval - self.moves) // mpu))
        n = max(1, min(self.per_call, self.learner.total_updates - self.updates, to_eval))
        start = time.perf_counter()
        carry, stats = self.learner.train(carry, n)
        self.deals, self.wins = self.deals + int(stats.deals), self.wins + int(stats.wins)  # waits for it
        self.updates += n
        self.loss = float(stats.loss)
        took = time.perf_counter() - start  # the first call's includes compiling: later calls catch up
        self.per_call = max(
            1, min(self.most_per_call, 4 * self.per_call, int(n * CALL_SECONDS / max(took, 1e-3)))
        )
        return carry

    def win_rate(self, params: Any, deck_rows: np.ndarray) -> tuple[int, int]:
        won = sum(int(np.asarray(self.learner.play(params, deck_rows[at : at + EVAL_BATCH])).sum())
                  for at in range(0, len(deck_rows), EVAL_BATCH))  # fmt: skip
        return won, len(deck_rows)

    def evaluate(self, params: Any) -> None:
        won, n = self.win_rate(params, self.valid)
        low, high = wilson(won, n)
        self.curve.append([self.moves, round(self.elapsed(), 1), n, round(won / n, 5), round(low, 5),
                           round(high, 5)])  # fmt: skip
        self.next_eval = self.moves + self.s.eval_every

    def snapshot(self, carry: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        self.seconds, self._since = self.elapsed(), time.perf_counter()
        state = {k: getattr(self, k) for k in ("updates", "deals", "wins", "next_eval", "seconds", "curve")}
        return {"jax_run": state}, carry_arrays(carry)

    def restore(self, path: Path) -> Any:
        meta, arrays = checkpoint.load(path)
        state = meta.get("jax_run")
        if not isinstance(state, dict) or set(state) != {"updates", "deals", "wins", "next_eval", "seconds",
                                                         "curve"}:  # fmt: skip
            raise checkpoint.CheckpointError(f"{path} is not a checkpoint of a JAX learner")
        carry = carry_from_arrays(self.learner.init(), arrays, str(path))
        for key, value in state.items():
            setattr(self, key, value)
        self._since = time.perf_counter()
        return carry

    def summary(self, params: Any) -> dict[str, Any]:
        seconds = self.elapsed()
        out = {"method": self.s.method, **self.learner.describe(),
               "moves": self.moves, "updates": self.updates, "seconds": round(seconds, 1),
               "moves_per_second": round(self.moves / max(seconds, 1e-9)), "device": device_name(),
               "jax": jax.__version__, "training_deals": self.deals,
               "training_win_rate": round(self.wins / max(self.deals, 1), 5),
               "val_win_rate": self.curve[-1][3] if self.curve else None}  # fmt: skip
        if self.s.test_deals:
            won, n = self.win_rate(params, decks(self.s, seeds.BENCHMARK.take(self.s.test_deals)))
            low, high = wilson(won, n)
            out.update(test_deals=n, test_wins=won, test_win_rate=round(won / n, 5),
                       test_ci=[round(low, 5), round(high, 5)])  # fmt: skip
        return out


def decks(settings: Any, seed_range: range) -> np.ndarray:
    """The decks the compiled env deals for these seeds (``reset(seed=s)``), as JAX pack indices."""
    rule_kwargs = {k: v for k, v in settings.env_kwargs.items() if k in ("n_cards", "cover", "win")}
    pack = rules_for(settings.env_id, **rule_kwargs).pack
    rows = np.stack([seeding.np_random(s)[0].permutation(pack) for s in seed_range])
    return pack_indices(rows, pack)


def device_name() -> str:
    import os

    device = jax.devices()[0]
    if device.platform == "cpu":
        return f"cpu: {os.cpu_count()} cores"
    return f"{device.platform}: {getattr(device, 'device_kind', device.platform)}"


def run(settings: Any, learner: Any, run_dir: Path, resume: bool = False, progress: bool = True,
        checkpoint_minutes: float = 10.0,
        export: Callable[[Path], Path] | None = None) -> dict[str, Any]:  # fmt: skip
    """Train to ``n_moves`` (from the checkpoint with ``resume``); the summary, or
    ``{"interrupted": signal, "moves": ...}`` when a signal stopped it at a checkpoint. ``export``
    writes ``model.zip`` from the run folder's ``weights.npz`` (called where SB3 is installed)."""
    from tqdm.auto import tqdm

    run_dir.mkdir(parents=True, exist_ok=True)
    state = Run(settings, learner)
    carry = state.restore(run_dir / CHECKPOINT) if resume else state.learner.init()
    stop, last_save = StopAtBoundary(), time.monotonic()
    total = state.learner.total_updates * state.learner.moves_per_update
    bar = tqdm(total=total, initial=state.moves, unit="move", unit_scale=True,
               desc=f"td_jax {settings.env_id}", disable=not progress)  # fmt: skip
    with on_stop_signals(stop), bar:
        while state.updates < state.learner.total_updates and not stop.signal:
            if state.moves >= state.next_eval:
                state.evaluate(carry.params)
                _write_curve(run_dir, state.curve)
            before = state.moves
            carry = state.train(carry)
            bar.update(state.moves - before)
            bar.set_postfix_str(f"validation {state.curve[-1][3]:.2%} at {state.curve[-1][0]:,}")
            if time.monotonic() - last_save >= checkpoint_minutes * 60:
                checkpoint.save(run_dir / CHECKPOINT, *state.snapshot(carry))
                last_save = time.monotonic()
        if stop.signal:
            checkpoint.save(run_dir / CHECKPOINT, *state.snapshot(carry))
            return {"interrupted": stop.signal, "moves": state.moves}
        state.evaluate(carry.params)
        _write_curve(run_dir, state.curve)
        bar.set_postfix_str(f"validation {state.curve[-1][3]:.2%} at {state.curve[-1][0]:,}")
    return _finish(state, carry, run_dir, export)


def _finish(state: Run, carry: Any, run_dir: Path, export: Callable[[Path], Path] | None) -> dict[str, Any]:
    summary = state.summary(carry.params)
    meta = {**state.learner.describe(), "env_id": state.s.env_id, "env_kwargs": state.s.env_kwargs,
            "seed": state.s.seed, "method": state.s.method}  # fmt: skip
    checkpoint.save(run_dir / WEIGHTS, meta, {k: np.asarray(v) for k, v in carry.params.items()})
    if export is not None and sb3_installed():
        export(run_dir)
    atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2))
    finish_run(run_dir, CHECKPOINT)  # whole (no half-written copies): weights, summary (and model)
    return summary


def _write_curve(run_dir: Path, rows: list[list[Any]]) -> None:
    atomic_write(run_dir / "curve.csv", "\n".join(",".join(map(str, r)) for r in [FIELDS, *rows]) + "\n")


def sb3_installed() -> bool:
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        return False
    return True


def repeat(update: Callable[[Any, Any], tuple[Any, Stats]], carry: Any, n: jax.Array) -> tuple[Any, Stats]:
    """``n`` updates in a loop whose length is traced, not static: one compilation serves calls of
    every length. The deals ended and won over them, and their mean loss."""

    def body(_: jax.Array, state: tuple[Any, jax.Array, jax.Array, jax.Array]) -> tuple[Any, ...]:
        carry, deals, wins, loss = state
        carry, stats = update(carry, None)
        return (carry, deals + stats.deals.astype(jnp.int32), wins + stats.wins.astype(jnp.int32),
                loss + stats.loss.astype(jnp.float32))  # fmt: skip

    zero = jnp.zeros((), jnp.int32)
    carry, deals, wins, loss = jax.lax.fori_loop(0, n, body, (carry, zero, zero, jnp.zeros((), jnp.float32)))
    return carry, Stats(deals, wins, loss / jnp.maximum(n, 1))


def reset_ended(ended: jax.Array, fresh: Any, state: Any) -> Any:
    """``fresh``'s rows where ``ended``, else ``state``'s (pytrees of arrays with rows first)."""

    def pick(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.where(ended.reshape(ended.shape + (1,) * (a.ndim - 1)), a, b)

    return jax.tree_util.tree_map(pick, fresh, state)


def carry_arrays(carry: Any) -> dict[str, np.ndarray]:
    """A carry's leaves as named arrays (a checkpoint's)."""
    return {f"carry/{i}": np.asarray(leaf) for i, leaf in enumerate(jax.tree_util.tree_leaves(carry))}


def carry_from_arrays(fresh: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The carry a checkpoint stored, checked leaf by leaf against a new run's ``fresh`` one."""
    like, treedef = jax.tree_util.tree_flatten(fresh)
    if len([k for k in arrays if k.startswith("carry/")]) != len(like):
        raise checkpoint.CheckpointError(
            f"{where}: holds another number of arrays than this run: not its checkpoint"
        )
    leaves = []
    for i, want in enumerate(like):
        got = arrays.get(f"carry/{i}")
        if got is None or got.shape != want.shape or got.dtype != want.dtype:
            found, need = (
                "missing" if got is None else f"{got.dtype}{list(got.shape)}",
                f"{want.dtype}{list(want.shape)}",
            )
            raise checkpoint.CheckpointError(f"{where}: array carry/{i} is {found}, this run needs {need}: "
                                             "not a checkpoint of these settings")  # fmt: skip
        leaves.append(jnp.asarray(got))
    return jax.tree_util.tree_unflatten(treedef, leaves)
