"""A learning curve for ``quadrat_env.experiments.train``: validation win rate every N steps.

Every ``eval_every`` environment steps the model being trained plays ``eval_deals`` validation deals
(``seeds.VALIDATION``, never the benchmark's) deterministically, through the same evaluation loop as
every agent (``quadrat_env.agents.evaluate``, on the batched env), and one row goes to the CSV:
steps, seconds since the start, win rate and its Wilson interval, illegal-action rate.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from quadrat_env.agents.evaluate import evaluate
from quadrat_env.agents.sb3_agent import SB3Agent
from stable_baselines3.common.callbacks import BaseCallback

from quadrat_env import seeds
from quadrat_env.files import atomic_open

FIELDS = ("steps", "seconds", "deals", "win_rate", "ci_low", "ci_high", "illegal_rate")


class CurveCallback(BaseCallback):
    """Evaluate every ``settings.eval_every`` steps (and at the end); append to ``path``
    (``settings``: a run's ``Settings``)."""

    def __init__(self, settings: Any, path: Path, write: bool = True) -> None:
        super().__init__()
        self.env_id, self.every = settings.env_id, int(settings.eval_every)
        self.deals = seeds.VALIDATION.take(int(settings.eval_deals))
        self.masked, self.observes_mask = settings.algo == "maskable_ppo", bool(settings.observe_mask)
        self.path, self.next_at, self.start = path, 0, time.perf_counter()
        self.rows: list[tuple] = [FIELDS]
        self.final_point = True  # a run stopped at a checkpoint gets no end-of-run point
        if write:  # (a resumed run's rows come from its checkpoint)
            self._write()

    def _write(self) -> None:
        """The whole curve so far, rewritten atomically (a few hundred bytes a point)."""
        with atomic_open(self.path, "w", newline="") as f:
            csv.writer(f).writerows(self.rows)

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_at:
            self.point()
            self.next_at = self.num_timesteps + self.every
        return True

    def _on_training_end(self) -> None:
        if self.final_point:
            self.point()

    def point(self) -> None:
        agent = SB3Agent(self.model, "curve", self.masked, self.observes_mask)
        summary, _ = evaluate(self.env_id, agent, self.deals, progress=False, n_envs=1024)
        row = (self.num_timesteps, round(time.perf_counter() - self.start, 1), summary.episodes,
               round(summary.win_rate, 5), round(summary.ci_low, 5), round(summary.ci_high, 5),
               round(summary.illegal_rate, 5))  # fmt: skip
        self.rows.append(row)
        self._write()
        # tqdm's bar is on stderr; the curve points go to stdout as they come
        print(f"[curve] {row[0]:>11,} steps: {summary.win_rate:.2%} "
              f"[{summary.ci_low:.2%}, {summary.ci_high:.2%}]", flush=True)  # fmt: skip
