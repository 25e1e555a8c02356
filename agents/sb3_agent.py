"""Saved stable-baselines3 / sb3-contrib models behind the shared agent interface."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import Agent


class SB3Agent(Agent):
    """A PPO or MaskablePPO model. MaskablePPO gets the masks; plain PPO plays without them, so
    its illegal actions reach the env (and are counted by the evaluation)."""

    def __init__(self, model: object, name: str, masked: bool) -> None:
        self.model, self.name, self.masked = model, name, masked

    @classmethod
    def load(cls, path: str | Path, algo: str, name: str | None = None) -> SB3Agent:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no saved model at {path}")
        if algo == "maskable_ppo":
            from sb3_contrib import MaskablePPO

            return cls(MaskablePPO.load(path, device="cpu"), name or algo, masked=True)
        if algo == "ppo":
            from stable_baselines3 import PPO

            return cls(PPO.load(path, device="cpu"), name or algo, masked=False)
        raise ValueError(f"algo must be 'ppo' or 'maskable_ppo', got {algo!r}")

    def predict(self, observation, state=None, episode_start=None, deterministic=False,
                action_masks=None):  # fmt: skip
        if self.masked:
            if action_masks is None:
                raise ValueError("MaskablePPO needs action_masks= (env.action_masks())")
            return self.model.predict(observation, state, episode_start, deterministic,
                                      action_masks=np.asarray(action_masks).astype(bool))  # fmt: skip
        return self.model.predict(observation, state, episode_start, deterministic)

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return int(self.predict(observation, action_masks=mask, deterministic=True)[0])
