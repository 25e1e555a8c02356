"""The one interface every agent shares, so one evaluation loop serves them all.

It follows stable-baselines3's ``PolicyPredictor``: ``predict(observation, state, episode_start,
deterministic) -> (actions, state)``, plus ``action_masks`` as sb3-contrib's MaskablePPO takes it.
Observations may be one (shape ``(obs,)``) or a batch (shape ``(n, obs)``).
"""

from __future__ import annotations

import numpy as np


class Agent:
    """Base class: subclasses choose one action from one observation and its legal-action mask."""

    name = "agent"

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        raise NotImplementedError

    def predict(
        self,
        observation: np.ndarray,
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        if action_masks is None:
            raise ValueError(
                f"{type(self).__name__}.predict needs action_masks= (env.action_masks()); "
                "use sb3_contrib.common.maskable.evaluation.evaluate_policy, which passes them"
            )
        obs = np.asarray(observation)
        masks = np.asarray(action_masks).astype(bool)
        single = obs.ndim == 1
        obs2, masks2 = (obs[None], masks.reshape(1, -1)) if single else (obs, masks)
        if len(obs2) != len(masks2):
            raise ValueError(f"{len(obs2)} observations but {len(masks2)} action masks")
        for i, m in enumerate(masks2):
            if not m.any():
                raise ValueError(f"action mask {i} allows no action (has the episode ended?)")
        actions = np.array([self.act(o, m) for o, m in zip(obs2, masks2, strict=True)])
        return (actions[0] if single else actions), state

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def legal(mask: np.ndarray) -> np.ndarray:
    """The legal action numbers in ascending order."""
    return np.flatnonzero(mask)
