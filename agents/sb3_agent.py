"""Saved stable-baselines3 / sb3-contrib models behind the shared agent interface."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from quadrat_env.agents.base import Agent

from quadrat_env.wrappers import observe_mask, sees_mask


class SB3Agent(Agent):
    """A saved SB3 / sb3-contrib model. MaskablePPO gets the masks; the others play without them,
    so their illegal actions reach the env (and are counted by the evaluation)."""

    def __init__(self, model: object, name: str, masked: bool, observes_mask: bool = False) -> None:
        self.model, self.name, self.masked = model, name, masked
        # a model trained with observe_mask sees the mask after the observation (VecMaskObservation)
        self.observes_mask = observes_mask

    @classmethod
    def load(cls, path: str | Path, algo: str | None, env_id: str, name: str | None = None,
             trust: bool = False) -> SB3Agent:  # fmt: skip
        """A saved model for ``env_id``; ``algo`` ``None``: the one the file names
        (``algo_of``). Model files are code: by default nothing in
        the file is unpickled (``quadrat_env.agents.safe_load``); ``trust=True`` lets SB3 unpickle
        it as it is."""
        from quadrat_env.agents.safe_load import ALGOS, algo_of, load_model

        if algo is None:
            algo = algo_of(path)
        if algo not in ALGOS:
            raise ValueError(f"algo must be one of {list(ALGOS)}, got {algo!r}")
        import gymnasium as gym

        model = load_model(path, algo, env_id, trust=trust)
        return cls(model, name or algo, masked=algo == "maskable_ppo",
                   observes_mask=sees_mask(model.observation_space.shape, gym.make(env_id)))  # fmt: skip

    def predict(self, observation, state=None, episode_start=None, deterministic=False,
                action_masks=None):  # fmt: skip
        if self.observes_mask:
            if action_masks is None:
                raise ValueError(f"{self.name} observes the mask: pass action_masks= (env.action_masks())")
            observation = observe_mask(np.asarray(observation), np.asarray(action_masks))
        if self.masked:
            if action_masks is None:
                raise ValueError("MaskablePPO needs action_masks= (env.action_masks())")
            return self.model.predict(observation, state, episode_start, deterministic,
                                      action_masks=np.asarray(action_masks).astype(bool))  # fmt: skip
        return self.model.predict(observation, state, episode_start, deterministic)

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's probability of each action (what it samples in training; 0 for an illegal
        action where the policy is masked, MaskablePPO)."""
        import torch as th

        if self.observes_mask:
            observation = observe_mask(np.asarray(observation), np.asarray(mask))
        policy = self.model.policy
        obs = policy.obs_to_tensor(np.asarray(observation))[0]
        with th.no_grad():
            if self.masked:
                dist = policy.get_distribution(obs, action_masks=np.asarray(mask).astype(bool)[None])
            else:
                dist = policy.get_distribution(obs)
            return dist.distribution.probs[0].cpu().numpy().astype(np.float64)

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return int(self.predict(observation, action_masks=mask, deterministic=True)[0])
