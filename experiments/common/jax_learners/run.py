"""One run of a JAX learner (``td_jax``, ``ppo_jax``), or several seeds of it as one program: the
loop around its jitted updates, the validation curve, checkpoints and ``--resume``, the finished
run's files (a folder a seed).

A learner is an object with ``moves_per_update`` and ``total_updates``; ``init()`` (its carry: a
pytree of arrays holding everything the run depends on, its weights under ``.params``);
``train(carry, n)`` (``n`` updates: the new carry and ``Stats``); ``play(params, decks)`` (which of
the decks, JAX pack indices, it wins playing greedily); ``move_scores(params, states)`` (what its
greedy play maximises, as ``play_greedy`` takes it); ``describe()`` (what the summary and
``weights.npz`` say of its network). The run's weights are written as ``weights.npz`` (named as the
torch policy's ``state_dict``) and, where SB3 is installed, exported as ``model.zip``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.utils import seeding
from quadrat_env.agents.evaluate import wilson
from quadrat_env.experiments.common import checkpoint
from quadrat_env.experiments.common.jax_learners import memory
from quadrat_env.experiments.common.runs import StopAtBoundary, on_stop_signals

from quadrat_env import seeds
from quadrat_env.core.jax_core import pack_indices
from quadrat_env.core.jax_pool import redealt, without_dealt
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
    """One seed's side of a run: its counts, curve and time, its checkpoint and summary."""

    #: What a checkpoint stores of a run besides the carry.
    STATE = ("updates", "deals", "wins", "next_eval", "seconds", "curve")

    def __init__(self, settings: Any, learner: Any) -> None:
        self.s, self.learner = settings, learner
        self.updates, self.deals, self.wins, self.next_eval = 0, 0, 0, 0
        self.seconds, self.loss, self.curve = 0.0, float("nan"), []
        self._since = time.perf_counter()

    @property
    def moves(self) -> int:
        return self.updates * self.learner.moves_per_update

    def elapsed(self) -> float:
        return self.seconds + time.perf_counter() - self._since

    def count(self, n: int, stats: Stats) -> None:
        """``n`` more updates, which ended ``stats.deals`` deals and won ``stats.wins``."""
        self.deals, self.wins = self.deals + int(stats.deals), self.wins + int(stats.wins)
        self.updates += n
        self.loss = float(stats.loss)

    def record(self, won: int, n: int) -> None:
        """A point of the validation curve: ``won`` of the ``n`` validation deals, at this move."""
        low, high = wilson(won, n)
        self.curve.append([self.moves, round(self.elapsed(), 1), n, round(won / n, 5), round(low, 5),
                           round(high, 5)])  # fmt: skip
        self.next_eval = self.moves + self.s.eval_every

    def snapshot(self, carry: Any, beside: list[int]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """A checkpoint's contents; ``beside``: the seeds trained in the same program (itself included)."""
        self.seconds, self._since = self.elapsed(), time.perf_counter()
        meta: dict[str, Any] = {"jax_run": {k: getattr(self, k) for k in self.STATE}}
        if beside != [self.s.seed]:
            meta["trained_with_seeds"] = beside
        return meta, carry_arrays(without_dealt(carry))

    def restore(self, path: Path, beside: list[int] | None = None) -> Any:
        """The carry a checkpoint stored (this run's counts restored with it). A seed trained beside
        others resumes only beside the same seeds: alone, or with others, its updates would take
        another floating-point path than the uninterrupted run's."""
        meta, arrays = checkpoint.load(path)
        state = meta.get("jax_run")
        if not isinstance(state, dict) or set(state) != set(self.STATE):
            raise checkpoint.CheckpointError(f"{path} is not a checkpoint of a JAX learner")
        checkpoint.check_counts(state, path, updates=self.learner.total_updates)
        was, now = meta.get("trained_with_seeds", [self.s.seed]), beside or [self.s.seed]
        trained = state["updates"] == self.learner.total_updates  # no update left whose path could differ
        if was != now and not (trained and set(now) <= set(was)):
            raise checkpoint.CheckpointError(
                f"{path}: trained with seeds {_seeds(was)} in one program; "
                f"resume it with --seed {_seeds(was)}"
            )
        fresh = without_dealt(self.learner.init())  # the pool's decks are kept, dealt again here
        carry = redealt(self.learner.core, carry_from_arrays(fresh, arrays, str(path)))
        for key, value in state.items():
            setattr(self, key, value)
        self._since = time.perf_counter()
        return carry

    def summary(self, seconds: float, test: tuple[int, int] | None) -> dict[str, Any]:
        """The finished run's summary: it trained for ``seconds``; ``test``: its wins of the held-out
        deals played, if any."""
        out = {"method": self.s.method, **self.learner.describe(),
               "moves": self.moves, "updates": self.updates, "seconds": round(seconds, 1),
               "moves_per_second": round(self.moves / max(seconds, 1e-9)), "device": device_name(),
               "jax": jax.__version__, "training_deals": self.deals,
               "training_win_rate": round(self.wins / max(self.deals, 1), 5),
               "val_win_rate": self.curve[-1][3] if self.curve else None}  # fmt: skip
        if test is not None:
            won, n = test
            low, high = wilson(won, n)
            out.update(test_deals=n, test_wins=won, test_win_rate=round(won / n, 5),
                       test_ci=[round(low, 5), round(high, 5)])  # fmt: skip
        return out


def _but_seed(run: Run) -> dict[str, Any]:
    """A run's settings but its seed: what the seeds of one program must share."""
    return {k: v for k, v in run.s.config().items() if k != "seed"}


class Runs:
    """The seeds trained in one program: one with its learner's own jitted functions, or several
    (the same settings but the seed) as one program vmapped over a leading seed axis of the carry,
    meant for a GPU, where ten processes of one seed each made no more moves a second than three
    (results/td_jax_gpu; what one program gains there is not measured yet; on 2 CPU cores nothing:
    results/td_jax_cpu/together). A seed's updates then take another floating-point path than alone."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs, first = runs, runs[0]
        self.seeds = [r.s.seed for r in runs]
        if len(set(self.seeds)) < len(runs) or any(_but_seed(r) != _but_seed(first) for r in runs):
            raise ValueError("seeds trained together need distinct seeds and otherwise the same settings")
        one = first.learner
        self.moves_per_update, self.total_updates = one.moves_per_update, one.total_updates
        if len(runs) == 1:
            self._train, self._play = one.train, one.play
        else:
            one.compact = False  # a branch on data would run all its branches under vmap
            self._train = jax.jit(jax.vmap(one.train, in_axes=(0, None)))
            self._play = jax.jit(jax.vmap(one.play, in_axes=(0, None)))
        self.most_per_call = max(1, CALL_MOVES // self.moves_per_update)
        self.per_call = min(self.most_per_call, max(1, FIRST_CALL_MOVES // self.moves_per_update))
        self.valid = decks(first.s, seeds.VALIDATION.take(first.s.eval_deals))

    @property
    def updates(self) -> int:
        return self.runs[0].updates

    @property
    def moves(self) -> int:
        return self.runs[0].moves

    def stack(self, carries: list[Any]) -> Any:
        return carries[0] if len(carries) == 1 else jax.tree_util.tree_map(lambda *x: jnp.stack(x), *carries)

    def split(self, carry: Any) -> list[Any]:
        if len(self.runs) == 1:
            return [carry]
        return [jax.tree_util.tree_map(lambda x, i=i: x[i], carry) for i in range(len(self.runs))]

    def init(self) -> Any:
        return self.stack([r.learner.init() for r in self.runs])

    def restore(self, run_dirs: list[Path]) -> Any:
        carries = [r.restore(d / CHECKPOINT, self.seeds) for r, d in zip(self.runs, run_dirs, strict=True)]
        if len({r.updates for r in self.runs}) > 1:
            raise checkpoint.CheckpointError(
                f"the checkpoints of seeds {_seeds(self.seeds)} stopped at different moves: not one program's"
            )
        return self.stack(carries)

    def save(self, carry: Any, run_dirs: list[Path]) -> None:
        for r, c, d in zip(self.runs, self.split(carry), run_dirs, strict=True):
            checkpoint.save(d / CHECKPOINT, *r.snapshot(c, self.seeds))

    def train(self, carry: Any) -> Any:
        """One jitted call: its updates end at the run's end or the next validation, whichever is
        first (so the curve's points do not depend on how the calls were sized)."""
        first, mpu = self.runs[0], self.moves_per_update
        to_eval = max(1, -(-(first.next_eval - first.moves) // mpu))
        n = max(1, min(self.per_call, self.total_updates - self.updates, to_eval))
        start = time.perf_counter()
        carry, stats = self._train(carry, n)
        stats = jax.tree_util.tree_map(lambda x: np.atleast_1d(np.asarray(x)), stats)  # waits for it
        for i, r in enumerate(self.runs):
            r.count(n, Stats(*(x[i] for x in stats)))
        took = time.perf_counter() - start  # the first call's includes compiling: later calls catch up
        self.per_call = max(
            1, min(self.most_per_call, 4 * self.per_call, int(n * CALL_SECONDS / max(took, 1e-3)))
        )
        return carry

    def wins(self, params: Any, deck_rows: np.ndarray) -> list[tuple[int, int]]:
        """Each seed's wins of ``deck_rows`` played greedily, and how many it played."""
        won = sum(np.atleast_2d(np.asarray(self._play(params, deck_rows[at : at + EVAL_BATCH]))).sum(1)
                  for at in range(0, len(deck_rows), EVAL_BATCH))  # fmt: skip
        return [(int(w), len(deck_rows)) for w in np.atleast_1d(won)]

    def evaluate(self, carry: Any) -> None:
        for r, result in zip(self.runs, self.wins(carry.params, self.valid), strict=True):
            r.record(*result)

    def tests(self, carry: Any) -> list[tuple[int, int] | None]:
        s = self.runs[0].s
        if not s.test_deals:
            return [None] * len(self.runs)
        return list(self.wins(carry.params, decks(s, seeds.BENCHMARK.take(s.test_deals))))


def _seeds(values: list[int]) -> str:
    return " ".join(map(str, values))


def decks(settings: Any, seed_range: range) -> np.ndarray:
    """The decks the compiled env deals for these seeds (``reset(seed=s)``), as JAX pack indices."""
    rule_kwargs = {k: v for k, v in settings.env_kwargs.items() if k in ("n_cards", "cover", "win")}
    pack = rules_for(settings.env_id, **rule_kwargs).pack
    rows = np.stack([seeding.np_random(s)[0].permutation(pack) for s in seed_range])
    return pack_indices(rows, pack)


def device_name() -> str:
    device = jax.devices()[0]
    if device.platform == "cpu":
        return f"cpu: {os.cpu_count()} cores"
    return f"{device.platform}: {getattr(device, 'device_kind', device.platform)}"


def run(settings: Any, learner: Any, run_dir: Path, resume: bool = False, progress: bool = True,
        checkpoint_minutes: float = 10.0,
        export: Callable[[Path], Path] | None = None) -> dict[str, Any]:  # fmt: skip
    """Train to ``n_moves`` (from the checkpoint with ``resume``): the summary, or ``{"interrupted":
    signal, "moves": ...}``; ``export`` writes ``model.zip`` from ``weights.npz`` where SB3 is."""
    return run_seeds([settings], [learner], [run_dir], resume, progress, checkpoint_minutes, export)[0]


def run_seeds(settings: list[Any], learners: list[Any], run_dirs: list[Path], resume: bool = False,
              progress: bool = True, checkpoint_minutes: float = 10.0,
              export: Callable[[Path], Path] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """``run`` for several seeds of the same settings in one program (``Runs``), each into its own
    folder as a run of its own: a summary each, or each one's ``{"interrupted": ...}``."""
    from tqdm.auto import tqdm

    for run_dir in run_dirs:
        run_dir.mkdir(parents=True, exist_ok=True)
    group = Runs([Run(s, learner) for s, learner in zip(settings, learners, strict=True)])
    stop, last_save = StopAtBoundary(), time.monotonic()
    with on_stop_signals(stop):  # a stop while compiling is kept for the loop (raised, it crashed at exit)
        memory.check(group._train, jax.eval_shape(group.init), settings[0].n_envs)  # before allocating
        carry = group.restore(run_dirs) if resume else group.init()
    which = f"seed {group.seeds[0]}" if len(run_dirs) == 1 else f"seeds {_seeds(group.seeds)}"
    bar = tqdm(total=group.total_updates * group.moves_per_update, initial=group.moves, unit="move",
               unit_scale=True, desc=f"{settings[0].env_id} {which}", disable=not progress)  # fmt: skip
    with on_stop_signals(stop), bar:
        while group.updates < group.total_updates and not stop.signal:
            if group.moves >= group.runs[0].next_eval:
                group.evaluate(carry)
                _write_curves(group, run_dirs)
            before = group.moves
            carry = group.train(carry)
            bar.update(group.moves - before)
            bar.set_postfix_str(_postfix(group))
            if time.monotonic() - last_save >= checkpoint_minutes * 60:
                group.save(carry, run_dirs)
                last_save = time.monotonic()
        if stop.signal:
            group.save(carry, run_dirs)
            return [{"interrupted": stop.signal, "moves": group.moves}] * len(run_dirs)
        if not group.runs[0].curve or group.runs[0].curve[-1][0] != group.moves:  # else: resumed after it
            group.evaluate(carry)
            _write_curves(group, run_dirs)
            group.save(carry, run_dirs)  # a stop while finishing (held-out games, export) loses nothing
        bar.set_postfix_str(_postfix(group))
        if stop.signal:  # it came during the final validation: saved above, so --resume finishes it
            return [{"interrupted": stop.signal, "moves": group.moves}] * len(run_dirs)
    seconds = [r.elapsed() for r in group.runs]  # training's, without the held-out deals' games
    tests = group.tests(carry)
    carries = group.split(carry)
    together = {"program_seeds": list(group.seeds)}  # they shared the device: seconds are the program's
    return [_finish(r.summary(seconds[i], tests[i]) | together, r, carries[i], run_dirs[i], export)
            for i, r in enumerate(group.runs)]  # fmt: skip


def _postfix(group: Runs) -> str:
    rates = ", ".join(f"{r.curve[-1][3]:.2%}" for r in group.runs)
    return f"validation {rates} at {group.runs[0].curve[-1][0]:,}"


def _finish(summary: dict[str, Any], state: Run, carry: Any, run_dir: Path,
            export: Callable[[Path], Path] | None) -> dict[str, Any]:  # fmt: skip
    meta = {**state.learner.describe(), "env_id": state.s.env_id, "env_kwargs": state.s.env_kwargs,
            "seed": state.s.seed, "method": state.s.method}  # fmt: skip
    checkpoint.save(run_dir / WEIGHTS, meta, {k: np.asarray(v) for k, v in carry.params.items()})
    if export is not None and sb3_installed():
        export(run_dir)
    atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2))
    finish_run(run_dir, CHECKPOINT)  # whole (no half-written copies): weights, summary (and model)
    return summary


def _write_curves(group: Runs, run_dirs: list[Path]) -> None:
    for r, d in zip(group.runs, run_dirs, strict=True):
        _write_curve(d, r.curve)


def _write_curve(run_dir: Path, rows: list[list[Any]]) -> None:
    atomic_write(run_dir / "curve.csv", "\n".join(",".join(map(str, r)) for r in [FIELDS, *rows]) + "\n")


def sb3_installed() -> bool:
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        return False
    return True


def repeat(update: Callable[[Any, Any], tuple[Any, Stats]], carry: Any, n: jax.Array) -> tuple[Any, Stats]:
    """``n`` updates in a loop of traced length (one compilation for all); deals ended, won, mean loss."""

    def body(_: jax.Array, state: tuple[Any, jax.Array, jax.Array, jax.Array]) -> tuple[Any, ...]:
        carry, deals, wins, loss = state
        carry, stats = update(carry, None)
        return (carry, deals + stats.deals.astype(jnp.int32), wins + stats.wins.astype(jnp.int32),
                loss + stats.loss.astype(jnp.float32))  # fmt: skip

    zero = jnp.zeros((), jnp.int32)
    carry, deals, wins, loss = jax.lax.fori_loop(0, n, body, (carry, zero, zero, jnp.zeros((), jnp.float32)))
    return carry, Stats(deals, wins, loss / jnp.maximum(n, 1))


def play_greedy(core: Any, move_scores: Callable[[Any, Any], jax.Array], params: Any,
                decks: jax.Array) -> jax.Array:  # fmt: skip
    """Play ``decks`` (pack indices) on the JAX rules ``core``, each move the highest of
    ``move_scores(params, states)``, until every deal has ended; which deals were won."""
    env = jax.vmap(core.init_deck)(decks)

    def going(c: tuple[Any, jax.Array]) -> jax.Array:
        return ~(c[0].terminated | c[0].truncated).all()

    def move(c: tuple[Any, jax.Array]) -> tuple[Any, jax.Array]:
        env, won = c
        env = jax.vmap(core.step)(env, move_scores(params, env).argmax(1))
        return env, won | env.won

    return jax.lax.while_loop(going, move, (env, jnp.zeros(decks.shape[0], bool)))[1]


#: Decks a deal played at once in the learners' pools (``quadrat_env.core.jax_pool``; refilled when low).
POOL_ROUNDS = 4


def carry_arrays(carry: Any) -> dict[str, np.ndarray]:
    """A carry's leaves as named arrays (a checkpoint's)."""
    return {f"carry/{i}": np.asarray(leaf) for i, leaf in enumerate(jax.tree_util.tree_leaves(carry))}


def carry_from_arrays(fresh: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The carry a checkpoint stored, checked leaf by leaf against a new run's ``fresh`` one."""
    like, treedef = jax.tree_util.tree_flatten(fresh)
    if len([k for k in arrays if k.startswith("carry/")]) != len(like):
        raise checkpoint.CheckpointError(f"{where}: holds another number of arrays than this run: not its "
                                         "checkpoint")  # fmt: skip
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
