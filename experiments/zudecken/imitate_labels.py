"""The solver's labels for ``quadrat_env.experiments.zudecken.imitate``: deals played, decisions labelled.

At every decision where some legal moves still win the deal and some do not, the observation, the
mask and which moves win are recorded (the solver runs on the true deck; the network only sees the
observation). How the deals are played is a ``Collection``; ``collect_parallel`` shares
the deals between worker processes (or Ray tasks) in chunks with generators of their own, so the
labels do not depend on how many workers made them.
"""

from __future__ import annotations

import functools
import json
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from quadrat_env.agents.solver import Solver
from quadrat_env.experiments.common.parallel import run_tasks

from quadrat_env.files import atomic_open, atomic_write, load_npz

ENV_ID = "quadrat_env/Zudecken-v0"
CHUNK = 2500  # deals per collection task; each task has its own generator, so --jobs never matters
KEYS = ("obs", "mask", "wins")


@dataclass(frozen=True)
class Collection:
    """How the deals are played and labelled."""

    #: Share of random moves.
    epsilon: float = 0.1
    #: Round 0: follow a random winning move (or, with ``label_samples``, the planner's choice)
    #: instead of the behaviour policy.
    first: bool = True
    #: 0: label whether each move wins the true deal; N: the share of N sampled unseen orders in
    #: which it wins (what the planner estimates; the true order is not read).
    label_samples: int = 0
    #: > 0: the behaviour network plays this many deals side by side (``play_side_by_side``).
    width: int = 0
    #: The game; and whether each move is labelled with its exact optimal value (the exact
    #: solver's, ``quadrat_env.agents.zudecken.optimal.OptimalAgent``: packs of up to 40 cards).
    env_id: str = ENV_ID
    exact: bool = False


@dataclass(frozen=True)
class _Task:
    """One chunk of deals for a worker: the behaviour policy (its file's bytes, or None), the
    deals ``lo .. hi - 1``, how to play them and the key of the chunk's generator."""

    model: Any
    lo: int
    hi: int
    how: Collection
    rng_key: tuple[int, ...]


def collect(model: Any, seeds: range, how: Collection, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Play ``seeds`` as ``how`` says with ``model`` (an SB3 model, the bytes of its file, or None in
    round 0); the labelled decisions as arrays ``obs``, ``mask`` and ``wins``."""
    model = _loaded(model, how.env_id)
    env = gym.make(how.env_id).unwrapped
    data: dict[str, list] = {k: [] for k in KEYS}
    label = _labeller(_values(how, env.game), data)
    if how.width and not how.first:
        play_side_by_side(model, seeds, how.epsilon, rng, label, how.width, how.env_id)
    else:
        for seed in seeds:
            _play_one(env, seed, model, how, rng, label)
    return {k: np.array(v) for k, v in data.items()}


def _loaded(model: Any, env_id: str) -> Any:
    """In a worker (a process or a Ray task) the behaviour policy arrives as its file's bytes."""
    if not isinstance(model, bytes):
        return model
    import tempfile

    from quadrat_env.agents.safe_load import load_model

    with tempfile.TemporaryDirectory() as folder:
        atomic_write(Path(folder) / "behaviour.zip", model)
        return load_model(Path(folder) / "behaviour.zip", "maskable_ppo", env_id)


def _labeller(values: Callable[..., np.ndarray], data: dict[str, list]) -> Callable[..., np.ndarray]:
    """``label(env, obs, mask, moves, rng)``: each legal move's label from ``values``; the decision
    is kept (in ``data``) if the labels differ."""

    def label(env: Any, obs: np.ndarray, mask: np.ndarray, moves: np.ndarray, rng: Any) -> np.ndarray:
        wins = np.zeros(len(mask), dtype=np.float32)
        if len(moves) > 1:
            wins[moves] = values(env, obs, mask, moves, rng)
            if wins[moves].min() < wins[moves].max():  # some moves better than others
                for key, value in zip(KEYS, (obs, mask, wins), strict=True):
                    data[key].append(value)
        return wins

    return label


def _values(how: Collection, game: Any) -> Callable[..., np.ndarray]:
    """The label of each legal move: its exact optimal value, its share of ``label_samples``
    sampled unseen orders that still win, or whether it still wins the true deal."""
    if how.exact:
        return lambda env, obs, mask, moves, rng: _optimal(how.env_id).move_values(obs, mask, moves)
    solver = Solver(game)
    if how.label_samples:
        return lambda env, obs, mask, moves, rng: solver.win_shares(obs, moves, rng, how.label_samples)
    return lambda env, obs, mask, moves, rng: solver.wins_after(env.game.to_row(env.state), moves)[0]


@functools.lru_cache(maxsize=2)
def _optimal(env_id: str) -> Any:
    """The exact solver's agent, one per process (its table is solved once, then looked up)."""
    from quadrat_env.agents.zudecken.optimal import OptimalAgent

    return OptimalAgent(env_id)


def _play_one(env: Any, seed: int, model: Any, how: Collection, rng: np.random.Generator,
              label: Callable[..., np.ndarray]) -> None:  # fmt: skip
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        mask = info["action_mask"].astype(bool)
        moves = np.flatnonzero(mask)
        wins = label(env, obs, mask, moves, rng)
        if rng.random() < how.epsilon or len(moves) == 1:
            action = int(rng.choice(moves))
        elif how.first and (how.label_samples or how.exact):  # round 0: the best label, then greedy
            best = np.zeros_like(info["action_mask"])
            best[moves[wins[moves] == wins[moves].max()]] = 1
            action = env.game.greedy(best)
        elif how.first:  # round 0: follow a random winning move where there is one
            good = np.flatnonzero(wins)
            action = int(rng.choice(good if len(good) else moves))
        else:
            action = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
        obs, _, done, _, info = env.step(action)


def play_side_by_side(model: Any, seeds: range, epsilon: float, rng: np.random.Generator, label: Any,
                      width: int, env_id: str = ENV_ID) -> None:  # fmt: skip
    """The network plays ``width`` deals at a time, one batched ``predict`` per step (one-observation
    calls dominate a DAgger round otherwise), calling ``label`` at every decision. Deal ``seed``'s
    random moves come from its own generator, seeded by one draw from ``rng`` and ``seed``, so the
    labels do not depend on ``width`` (only their order does)."""
    base, pending = int(rng.integers(2**62)), iter(seeds)

    def deal(env: Any) -> list | None:
        seed = next(pending, None)
        if seed is None:
            return None
        return [env, np.random.default_rng((base, seed)), *env.reset(seed=seed)]

    games = [g for g in (deal(gym.make(env_id).unwrapped) for _ in range(width)) if g]
    while games:
        masks = np.array([g[3]["action_mask"].astype(bool) for g in games])
        chosen = model.predict(np.array([g[2] for g in games]), action_masks=masks, deterministic=True)[0]
        for i, (env, deal_rng, obs, _) in enumerate(games):
            moves = np.flatnonzero(masks[i])
            label(env, obs, masks[i], moves, deal_rng)
            explore = deal_rng.random() < epsilon or len(moves) == 1
            action = int(deal_rng.choice(moves)) if explore else int(chosen[i])
            obs, _, done, _, info = env.step(action)
            games[i] = deal(env) if done else [env, deal_rng, obs, info]
        games = [g for g in games if g]


def _collect_task(task: _Task) -> dict[str, np.ndarray]:
    import torch

    torch.set_num_threads(1)
    return collect(task.model, range(task.lo, task.hi), task.how, np.random.default_rng(task.rng_key))


def _describe(task: _Task) -> str:
    return f"labelling deals {task.lo}..{task.hi - 1}"


def collect_parallel(model: Any, seeds: range, how: Collection, key: tuple[int, ...], jobs: int,
                     ray: str | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """``collect`` over ``seeds`` in chunks of ``CHUNK`` deals on ``jobs`` processes (or Ray),
    with a progress bar; chunk ``k`` uses the generator ``default_rng((*key, k))``, so the labels
    do not depend on ``jobs``."""
    from tqdm.auto import tqdm

    tasks = [_Task(model, lo, min(lo + CHUNK, seeds.stop), how, (*key, k))
             for k, lo in enumerate(range(seeds.start, seeds.stop, CHUNK))]  # fmt: skip
    parts = []
    with tqdm(total=len(seeds), unit="deal", desc="solver labels", disable=None) as bar:
        for task, part in zip(tasks, run_tasks(_collect_task, tasks, jobs, _describe, ray), strict=True):
            parts.append(part)
            bar.update(task.hi - task.lo)
    return {k: np.concatenate([p[k] for p in parts if len(p[k])]) for k in KEYS}


def shared_labels(path: Path, deals: range, how: Collection, seed: int, jobs: int,
                  ray: str | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:  # fmt: skip
    """Round 0's labels from ``path`` if it holds them, else collected on ``deals`` and saved there;
    and how and on which deals they were made. Round 0 plays the planner's choice (or a random
    winning move), not the network, so every training seed may learn from the same labels."""
    made = {"deals": [deals.start, deals.stop], "epsilon": how.epsilon, "label_samples": how.label_samples}
    if path.is_file():
        try:
            saved = load_npz(path)  # headers checked before anything is allocated
            found = json.loads(str(saved["how"]))
            labels = {k: saved[k] for k in KEYS}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
            # a damaged file is a lost cache, not a lost result: the labels are made again
            print(f"imitate: {path} cannot be read ({type(err).__name__}: {err}); making the labels again",
                  file=sys.stderr, flush=True)  # fmt: skip
        else:
            if any(found.get(k) != made[k] for k in ("epsilon", "label_samples")):
                raise ValueError(f"{path} holds labels made {found}, not {made}")
            return labels, found
    data = collect_parallel(None, deals, how, (seed, 0), jobs, ray)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_labels(path, data, how=json.dumps(made))
    return data, made


def save_labels(path: Path, data: dict[str, np.ndarray], **extra: Any) -> None:
    with atomic_open(path, "wb") as f:  # a file object: numpy adds no ".npz" to the name
        np.savez_compressed(f, **extra, **data)


def read_labels(path: Path) -> dict[str, np.ndarray]:
    saved = load_npz(path)
    return {k: saved[k] for k in KEYS}


def joined(data: dict[str, np.ndarray], new: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return new if not data else {k: np.concatenate([data[k], new[k]]) for k in data}
