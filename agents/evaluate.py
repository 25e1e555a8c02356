"""One evaluation loop for every agent: the same seeded deals, win rate with a Wilson interval."""

from __future__ import annotations

import csv
import math
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from quadrat_env.agents.base import Agent

from quadrat_env.files import atomic_open


@dataclass(frozen=True)
class Episode:
    seed: int
    won: bool
    cards_left: int
    steps: int
    illegal: int
    reward: float
    stuck: bool = False  # ended at an illegal action, which a deterministic agent would repeat


@dataclass(frozen=True)
class Summary:
    env_id: str
    agent: str
    episodes: int
    wins: int
    win_rate: float
    ci_low: float
    ci_high: float
    mean_cards_left: float
    illegal_rate: float
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Episodes(Sequence[Episode]):
    """Per-deal outcomes in columns, in the order of the seeds: 38 bytes a deal where a list of
    ``Episode`` objects takes about 1.3 KB, so 10^8 deals fit in memory. Indexing gives ``Episode``."""

    def __init__(self, seeds: Sequence[int]) -> None:
        n = len(seeds)
        if isinstance(seeds, range):
            self.seed = np.arange(seeds.start, seeds.stop, seeds.step, dtype=np.int64)
        else:
            self.seed = np.asarray(seeds, dtype=np.int64).reshape(n)
        self.won, self.stuck = np.zeros(n, bool), np.zeros(n, bool)
        self.cards_left = np.zeros(n, np.int32)
        self.steps, self.illegal, self.reward = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n)

    def put(self, order: int, e: Episode) -> None:
        self.won[order], self.cards_left[order], self.steps[order] = e.won, e.cards_left, e.steps
        self.illegal[order], self.reward[order], self.stuck[order] = e.illegal, e.reward, e.stuck

    def __len__(self) -> int:
        return len(self.seed)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return Episode(int(self.seed[i]), bool(self.won[i]), int(self.cards_left[i]), int(self.steps[i]),
                       int(self.illegal[i]), float(self.reward[i]), bool(self.stuck[i]))  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Sequence)
            and len(self) == len(other)
            and all(a == b for a, b in zip(self, other, strict=True))
        )

    __hash__ = None  # type: ignore[assignment]


def as_episodes(episodes: Sequence[Episode]) -> Episodes:
    """``episodes`` in columns (a list of ``Episode`` from elsewhere, or ``Episodes`` as it is)."""
    if isinstance(episodes, Episodes):
        return episodes
    out = Episodes([e.seed for e in episodes])
    for k, e in enumerate(episodes):
        out.put(k, e)
    return out


class _Deals:
    """The deals still to deal, in order, with their places (no list of them: 10^8 may be asked)."""

    def __init__(self, seeds: Sequence[int]) -> None:
        self.seeds, self.next = seeds, 0

    def __bool__(self) -> bool:
        return self.next < len(self.seeds)

    def __len__(self) -> int:
        return len(self.seeds) - self.next

    def pop(self) -> tuple[int, int]:
        order, self.next = self.next, self.next + 1
        return order, int(self.seeds[order])


#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959964


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if n <= 0:
        raise ValueError(f"need at least one episode, got n={n}")
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # rounding can put a bound a hair past p (at 0 or n wins); the interval must contain p
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def play_episode(env: gym.Env, agent: Agent, seed: int) -> Episode:
    """One deal, dealt by ``reset(seed=seed)``, played to the end (or the time limit)."""
    return _play([env], agent, [seed], progress=None)[0]


def evaluate(
    env_id: str,
    agent: Agent,
    seeds: Iterable[int],
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
    n_envs: int = 16,
    batched: bool = True,
) -> tuple[Summary, Episodes]:
    """Play every seeded deal once; ``seeds`` fixes the deals, so agents are compared paired.

    ``n_envs`` deals run side by side so that neural agents predict on a batch; each deal is
    still dealt by its own ``reset(seed=...)``, so a deterministic agent's results do not depend
    on ``n_envs`` (a network's, up to float rounding: where two moves score within about 1e-6, a
    batch of another size or another thread count may pick the other one). ``batched`` plays them
    as rows of the ID's native batched env (one compiled pass per step) instead of ``n_envs``
    single envs: the same deals, the same calls to ``agent.predict`` in the same order, so the
    same per-deal results (tested for every ID).

    Agents act deterministically here. An illegal action leaves the state and so the observation
    unchanged, so a deterministic agent would repeat it until the time limit: the episode is
    ended at once and counted as lost (``Episode.stuck``).
    """
    seeds = seeds if isinstance(seeds, range) else list(seeds)
    n = max(1, min(n_envs, len(seeds)))
    start = time.perf_counter()
    bar = _bar(len(seeds), f"{agent.name:>12} {env_id}", progress)
    if batched and gym.spec(env_id).vector_entry_point is not None:
        venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                            autoreset_mode=AutoresetMode.NEXT_STEP, **(env_kwargs or {}))  # fmt: skip
        episodes = _play_batched(venv.unwrapped, agent, seeds, bar)
    else:
        envs = [gym.make(env_id, **(env_kwargs or {})) for _ in range(n)]
        episodes = _play(envs, agent, seeds, bar)
    return summarize(env_id, agent.name, episodes, time.perf_counter() - start), episodes


@dataclass
class _Running:
    """A deal in progress on one env of the evaluation."""

    order: int  # its place in ``seeds``
    seed: int
    obs: np.ndarray
    info: dict[str, Any]
    steps: int = 0
    illegal: int = 0
    reward: float = 0.0

    def took(self, reward: float, stuck: bool) -> None:
        """Count one step: its reward, and whether the action was illegal."""
        self.steps += 1
        self.illegal += stuck
        self.reward += float(reward)

    def episode(self, won: bool, cards_left: int, stuck: bool) -> Episode:
        return Episode(self.seed, won, cards_left, self.steps, self.illegal, self.reward, stuck)


def _play(envs: list[gym.Env], agent: Agent, seeds: Sequence[int], progress: Any) -> Episodes:
    """Play ``seeds`` on ``envs`` side by side; results come back in the order of ``seeds``."""
    results, queue = Episodes(seeds), _Deals(seeds)
    live: dict[int, _Running] = {}  # env index -> its deal

    def deal(i: int) -> None:
        order, seed = queue.pop()
        live[i] = _Running(order, seed, *envs[i].reset(seed=seed))

    for i in range(min(len(envs), len(queue))):
        deal(i)
    while live:
        idx = list(live)
        obs = np.stack([live[i].obs for i in idx])
        masks = np.stack([live[i].info["action_mask"] for i in idx])
        actions, _ = agent.predict(obs, deterministic=True, action_masks=masks)
        for i, action in zip(idx, np.atleast_1d(actions), strict=True):
            run = live[i]
            run.obs, reward, terminated, truncated, run.info = envs[i].step(action)
            stuck = bool(run.info.get("illegal_action"))
            run.took(reward, stuck)
            if terminated or truncated or stuck:
                won = bool(run.info.get("won", False))
                results.put(run.order, run.episode(won, int(run.info["cards_left"]), stuck))
                del live[i]
                if progress is not None:
                    progress.update(1)
                if queue:
                    deal(i)
    if progress is not None:
        progress.close()
    return results


def _play_batched(venv: Any, agent: Agent, seeds: Sequence[int], progress: Any) -> Episodes:
    """``_play`` on the rows of a batched env (NEXT_STEP autoreset): row ``i`` plays what env
    ``i`` would, a finished row is dealt its next seed by ``reset(seed=..., reset_mask)``, and
    ``agent.predict`` sees the live rows in the order ``_play`` shows them."""
    n = venv.num_envs
    results, queue = Episodes(seeds), _Deals(seeds)
    live: dict[int, _Running] = {}
    first = [queue.pop() for _ in range(min(n, len(queue)))]
    row_seeds = [seed for _, seed in first] + [0] * (n - len(first))  # idle rows: never counted
    obs, info = venv.reset(seed=row_seeds)
    for i, (order, seed) in enumerate(first):
        live[i] = _Running(order, seed, obs[i], {})
    while live:
        idx = list(live)
        actions = venv.action_masks().argmax(axis=1)  # idle rows: any legal action, ignored
        picked, _ = agent.predict(obs[idx], deterministic=True, action_masks=venv.action_masks()[idx])
        actions[idx] = np.atleast_1d(picked)
        obs, rewards, terminated, truncated, info = venv.step(actions)
        redeal: dict[int, int] = {}
        for i in idx:
            run = live[i]
            stuck = bool(info["illegal_action"][i])
            run.took(rewards[i], stuck)
            if terminated[i] or truncated[i] or stuck:
                results.put(run.order, run.episode(bool(info["won"][i]), int(info["cards_left"][i]), stuck))
                del live[i]
                if progress is not None:
                    progress.update(1)
                if queue:
                    order, seed = queue.pop()
                    redeal[i] = seed
                    live[i] = _Running(order, seed, obs[i], {})
        if redeal:
            mask = np.zeros(n, dtype=bool)
            mask[list(redeal)] = True
            obs, _ = venv.reset(seed=[redeal.get(i) for i in range(n)], options={"reset_mask": mask})
    if progress is not None:
        progress.close()
    return results


def write_deals(path: Path, episodes: Sequence[Episode]) -> None:
    """Per-deal outcomes as CSV (seed, won, cards_left, steps, illegal_actions): pandas and rliable
    read it as it is, and two agents' files on the same seeds pair deal by deal."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["seed", "won", "cards_left", "steps", "illegal_actions"])
        cols = as_episodes(episodes)
        for at in range(0, len(cols), 1 << 16):  # a block of rows at a time: 10^8 rows stream
            part = slice(at, at + (1 << 16))
            out.writerows(zip(cols.seed[part].tolist(), cols.won[part].astype(int).tolist(),
                              cols.cards_left[part].tolist(), cols.steps[part].tolist(),
                              cols.illegal[part].tolist(), strict=True))  # fmt: skip


def summarize(env_id: str, agent: str, episodes: Sequence[Episode], seconds: float) -> Summary:
    cols = as_episodes(episodes)
    n = len(cols)
    wins = int(cols.won.sum())
    low, high = wilson(wins, n)
    steps = int(cols.steps.sum())
    return Summary(
        env_id=env_id,
        agent=agent,
        episodes=n,
        wins=wins,
        win_rate=wins / n,
        ci_low=low,
        ci_high=high,
        mean_cards_left=float(cols.cards_left.mean()),
        illegal_rate=int(cols.illegal.sum()) / max(steps, 1),
        seconds=seconds,
    )


def _bar(total: int, desc: str, enabled: bool) -> Any:
    """A progress bar on a terminal; where stderr is not one (a pipe, a log) a line every tenth."""
    if not enabled:
        return None
    if not sys.stderr.isatty():
        return _Lines(total, desc.strip())
    try:
        from tqdm.auto import tqdm  # from the "train" extra; evaluation works without it
    except ImportError:
        return _Lines(total, desc.strip())
    return tqdm(total=total, desc=desc, unit="deal", leave=False)


class _Lines:
    """Progress for a log: ``desc: k/total deals (p%), s`` on stderr at each tenth of the deals."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc, self.done, self.start = total, desc, 0, time.perf_counter()
        self.next = max(1, total // 10)

    def update(self, n: int) -> None:
        self.done += n
        if self.done >= self.next and self.done < self.total:
            print(f"{self.desc}: {self.done:,}/{self.total:,} deals ({self.done / self.total:.0%}), "
                  f"{time.perf_counter() - self.start:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
            self.next = self.done + max(1, self.total // 10)

    def close(self) -> None:
        pass
