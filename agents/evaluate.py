"""One evaluation loop for every agent: the same seeded deals, win rate with a Wilson interval."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import Agent


@dataclass(frozen=True)
class Episode:
    seed: int
    won: bool
    cards_left: int
    steps: int
    illegal: int
    reward: float


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


def wilson(wins: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if n <= 0:
        raise ValueError(f"need at least one episode, got n={n}")
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def play_episode(env: gym.Env, agent: Agent, seed: int) -> Episode:
    """One deal, dealt by ``reset(seed=seed)``, played to the end (or the time limit)."""
    obs, info = env.reset(seed=seed)
    steps = illegal = 0
    total = 0.0
    done = False
    while not done:
        action, _ = agent.predict(obs, deterministic=True, action_masks=info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        illegal += bool(info.get("illegal_action"))
        total += float(reward)
        done = terminated or truncated
    return Episode(seed, bool(info.get("won", False)), int(info["cards_left"]), steps, illegal, total)


def evaluate(
    env_id: str,
    agent: Agent,
    seeds: Iterable[int],
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
) -> tuple[Summary, list[Episode]]:
    """Play every seeded deal once; ``seeds`` fixes the deals, so agents are compared paired."""
    seeds = list(seeds)
    env = gym.make(env_id, **(env_kwargs or {}))
    start = time.perf_counter()
    episodes = [play_episode(env, agent, s) for s in _bar(seeds, f"{agent.name:>8} {env_id}", progress)]
    return summarize(env_id, agent.name, episodes, time.perf_counter() - start), episodes


def summarize(env_id: str, agent: str, episodes: Sequence[Episode], seconds: float) -> Summary:
    n = len(episodes)
    wins = sum(e.won for e in episodes)
    low, high = wilson(wins, n)
    steps = sum(e.steps for e in episodes)
    return Summary(
        env_id=env_id,
        agent=agent,
        episodes=n,
        wins=wins,
        win_rate=wins / n,
        ci_low=low,
        ci_high=high,
        mean_cards_left=float(np.mean([e.cards_left for e in episodes])),
        illegal_rate=sum(e.illegal for e in episodes) / max(steps, 1),
        seconds=seconds,
    )


def _bar(items: list[int], desc: str, enabled: bool) -> Iterable[int]:
    try:
        from tqdm.auto import tqdm  # from the "train" extra; evaluation works without it
    except ImportError:
        return items
    # disable=None: tqdm turns itself off when the output is not a terminal (CI logs, pipes)
    return tqdm(items, desc=desc, unit="deal", leave=False, disable=None if enabled else True)
