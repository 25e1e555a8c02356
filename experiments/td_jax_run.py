"""One run of ``quadrat_env.experiments.td_jax``: the loop around the jitted learner, its validation
curve, checkpoints, the finished run's files and the export to an SB3 model."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
from gymnasium.utils import seeding
from quadrat_env.agents.evaluate import wilson
from quadrat_env.experiments import checkpoint
from quadrat_env.experiments.runs import on_stop_signals
from quadrat_env.experiments.td_jax_learner import JaxTD

from quadrat_env import seeds
from quadrat_env.core.jax_core import pack_indices
from quadrat_env.files import atomic_write
from quadrat_env.registry import env_ids, rules_for

CHECKPOINT = "checkpoint.npz"
WEIGHTS = "weights.npz"
#: The validation curve's columns (``curve.csv``), as ``td``'s.
FIELDS = ("moves", "seconds", "deals", "win_rate", "ci_low", "ci_high")
#: Moves per jitted call, about: the loop checks signals, progress and checkpoints between calls.
CALL_MOVES = 1 << 18
#: Deals played at once when evaluating (memory: an afterstate per move per deal).
EVAL_BATCH = 2048


class Run:
    """The Python side of a run: counts, curve, time."""

    def __init__(self, settings: Any) -> None:
        self.s, self.td = settings, JaxTD(settings)
        self.updates, self.deals, self.wins, self.next_eval = 0, 0, 0, 0
        self.seconds, self.loss, self.curve = 0.0, float("nan"), []
        self._since = time.perf_counter()
        self.per_call = max(1, CALL_MOVES // self.td.moves_per_update)
        self.valid = decks(settings, seeds.VALIDATION.take(settings.eval_deals))

    @property
    def moves(self) -> int:
        return self.updates * self.td.moves_per_update

    def elapsed(self) -> float:
        return self.seconds + time.perf_counter() - self._since

    def train(self, carry: Any) -> Any:
        n = min(self.per_call, self.td.total_updates - self.updates)
        carry, stats = self.td.train(carry, n)
        self.updates += n
        self.deals, self.wins = self.deals + int(stats.deals), self.wins + int(stats.wins)
        self.loss = float(stats.loss)
        return carry

    def win_rate(self, params: Any, deck_rows: np.ndarray) -> tuple[int, int]:
        won = sum(int(np.asarray(self.td.play(params, deck_rows[at : at + EVAL_BATCH])).sum())
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
        return {"td_jax": state}, self.td.to_arrays(carry)

    def restore(self, path: Path) -> Any:
        meta, arrays = checkpoint.load(path)
        state = meta.get("td_jax")
        if not isinstance(state, dict) or set(state) != {"updates", "deals", "wins", "next_eval", "seconds",
                                                         "curve"}:  # fmt: skip
            raise ValueError(f"{path} is not a checkpoint of td_jax")
        carry = self.td.from_arrays(arrays, str(path))
        for key, value in state.items():
            setattr(self, key, value)
        self._since = time.perf_counter()
        return carry

    def summary(self, params: Any) -> dict[str, Any]:
        seconds = self.elapsed()
        out = {"method": self.s.method, "features": self.s.features, "features_kwargs": self.td.size,
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
    device = jax.devices()[0]
    return f"{device.platform}: {getattr(device, 'device_kind', device.platform)}"


class _Stop:
    def __init__(self) -> None:
        self.signal = 0

    def __call__(self, signum: int, frame: Any) -> None:
        if self.signal:  # a second one: stop at once
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)
        self.signal = signum


def run(settings: Any, run_dir: Path, resume: bool = False, progress: bool = True,
        checkpoint_minutes: float = 10.0) -> dict[str, Any]:  # fmt: skip
    """Train to ``n_moves`` (from the checkpoint with ``resume``); the summary, or
    ``{"interrupted": signal, "moves": ...}`` when a signal stopped it at a checkpoint."""
    from tqdm.auto import tqdm

    run_dir.mkdir(parents=True, exist_ok=True)
    state = Run(settings)
    carry = state.restore(run_dir / CHECKPOINT) if resume else state.td.init()
    stop, last_save = _Stop(), time.monotonic()
    total = state.td.total_updates * state.td.moves_per_update
    bar = tqdm(total=total, initial=state.moves, unit="move", unit_scale=True,
               desc=f"td_jax {settings.env_id}", disable=not progress)  # fmt: skip
    with on_stop_signals(stop), bar:
        while state.updates < state.td.total_updates and not stop.signal:
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
    return _finish(state, carry, run_dir)


def _finish(state: Run, carry: Any, run_dir: Path) -> dict[str, Any]:
    summary = state.summary(carry.params)
    meta = {"features": state.s.features, "features_kwargs": state.td.size, "env_id": state.s.env_id,
            "env_kwargs": state.s.env_kwargs, "seed": state.s.seed, "method": state.s.method}  # fmt: skip
    checkpoint.save(run_dir / WEIGHTS, meta, {k: np.asarray(v) for k, v in carry.params.items()})
    if sb3_installed():
        export_model(run_dir)
    atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2))
    (run_dir / CHECKPOINT).unlink(missing_ok=True)  # the run is whole: weights, summary (and model)
    return summary


def _write_curve(run_dir: Path, rows: list[list[Any]]) -> None:
    atomic_write(run_dir / "curve.csv", "\n".join(",".join(map(str, r)) for r in [FIELDS, *rows]) + "\n")


def sb3_installed() -> bool:
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        return False
    return True


def export_model(run_dir: Path) -> Path:
    """``run_dir/model.zip``: the weights of ``run_dir/weights.npz`` in the torch afterstate network
    of an SB3 MaskablePPO model (what ``td`` writes), checked to give the same scores."""
    import torch
    from quadrat_env.agents.networks import afterstate_model, afterstate_names

    from quadrat_env.files import save_model

    path = run_dir / WEIGHTS
    meta, arrays = checkpoint.load(path)
    features, size, env_id = meta.get("features"), meta.get("features_kwargs"), meta.get("env_id")
    if features not in afterstate_names() or not isinstance(size, dict) or env_id not in env_ids():
        raise ValueError(f"{path} names no afterstate network and env (features, features_kwargs, env_id)")
    env_kwargs = meta.get("env_kwargs") or {}
    model = afterstate_model(env_id, int(meta.get("seed", 0)), features, size, env_kwargs)
    net = model.policy.features_extractor
    expected = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    if {k: tuple(v.shape) for k, v in arrays.items()} != expected:
        raise ValueError(f"{path}: its arrays are not the {len(expected)} weights of {features} {size}")
    net.load_state_dict({k: torch.from_numpy(np.array(v, np.float32)) for k, v in arrays.items()})
    _check_same_scores(net, JaxTD.jax_params(arrays), features, env_id, env_kwargs)
    save_model(model, run_dir / "model.zip")
    return run_dir / "model.zip"


def _check_same_scores(net: Any, params: Any, features: str, env_id: str, env_kwargs: dict[str, Any]) -> None:
    """The torch network scores the moves of 512 opening deals as the JAX one does."""
    import torch
    from quadrat_env.agents.networks import jax_afterstate_network

    from quadrat_env.functional import make

    core = make(env_id, **env_kwargs)
    obs = jax.vmap(core.observe)(jax.vmap(core.init)(jax.random.split(jax.random.key(0), 512)))
    view = jax_afterstate_network(features, core.observation_shape[0])
    mine = np.asarray(view.scores(params, *jax.vmap(view.afterstates)(obs)))
    with torch.no_grad():
        theirs = net(torch.from_numpy(np.array(obs))).numpy()
    if not np.allclose(mine, theirs, atol=1e-4):
        raise ValueError(
            f"the exported network's scores differ from JAX's by {np.abs(mine - theirs).max():.3g}"
        )
