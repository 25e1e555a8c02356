"""Masks in the observation, for frameworks that read them there (RLlib, Tianshou, TorchRL, PettingZoo-style).

    env = ActionMaskObservation(gym.make("quadrat_env/Zudecken-v0"))
    obs, info = env.reset(seed=0)
    obs["observations"], obs["action_mask"]          # the flat observation, and the legal actions

    venv = VectorActionMaskObservation(gym.make_vec("quadrat_env/Zudecken-v0", num_envs=8))

The defaults are what RLlib's action-masking example takes as it is: keys ``"observations"`` and
``"action_mask"``, the mask as float32 0/1. PettingZoo-style code names the first key
``"observation"``: pass ``observation_key="observation"``. The mask is the one the env reports in
``info["action_mask"]``: after a single env's episode ends it is all zero (the episode takes no more
actions); a batched env's finished lane (NEXT_STEP autoreset) allows every action, as it ignores the next one.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

MASK_DTYPES = (np.float32, np.float64, np.int8, np.bool_)


def _dict_space(obs_space: gym.Space, n: int, obs_key: str, mask_key: str, dtype: Any) -> spaces.Dict:
    # int8: MultiBinary, as the envs' own masks; float and bool: a 0..1 Box (gymnasium has no bool space)
    mask = spaces.MultiBinary(n) if dtype is np.int8 else spaces.Box(0, 1, (n,), dtype)
    return spaces.Dict({mask_key: mask, obs_key: obs_space})


def _check(observation_key: Any, mask_key: Any, mask_dtype: Any) -> Any:
    for name, key in (("observation_key", observation_key), ("mask_key", mask_key)):
        if not isinstance(key, str) or not key:
            raise ValueError(f"{name} must be a non-empty string, got {key!r}")
    if observation_key == mask_key:
        raise ValueError(f"observation_key and mask_key must differ, both are {mask_key!r}")
    try:
        dtype = np.dtype(mask_dtype).type
    except TypeError:
        dtype = None
    if dtype not in MASK_DTYPES:
        raise ValueError(f"mask_dtype must be one of float32, float64, int8, bool; got {mask_dtype!r}")
    return dtype


def _masks(env: Any, info: dict[str, Any]) -> np.ndarray:
    """The env's current legal actions: its ``action_masks()`` where it has one (after a partial
    reset, ``info`` holds only the envs that were reset), else ``info["action_mask"]``."""
    method = getattr(env.unwrapped, "action_masks", None)
    return method() if callable(method) else np.asarray(info["action_mask"])


class ActionMaskObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """The observation as ``{mask_key: legal actions, observation_key: the flat observation}``."""

    def __init__(self, env: gym.Env, observation_key: str = "observations", mask_key: str = "action_mask",
                 mask_dtype: Any = np.float32) -> None:  # fmt: skip
        gym.utils.RecordConstructorArgs.__init__(self, observation_key=observation_key, mask_key=mask_key,
                                                 mask_dtype=mask_dtype)  # fmt: skip
        gym.Wrapper.__init__(self, env)
        self.dtype = _check(observation_key, mask_key, mask_dtype)
        self.observation_key, self.mask_key = observation_key, mask_key
        n = int(env.action_space.n)  # type: ignore[attr-defined]
        self.observation_space = _dict_space(env.observation_space, n, observation_key, mask_key, self.dtype)

    def _wrap(self, obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        return {self.mask_key: _masks(self.env, info).astype(self.dtype), self.observation_key: obs}

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._wrap(obs, info), info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._wrap(obs, info), reward, terminated, truncated, info  # type: ignore[return-value]


class VectorActionMaskObservation(VectorWrapper):
    """``ActionMaskObservation`` for a vector env (the batched env or Gymnasium's own)."""

    def __init__(self, env: VectorEnv, observation_key: str = "observations", mask_key: str = "action_mask",
                 mask_dtype: Any = np.float32) -> None:  # fmt: skip
        super().__init__(env)
        self.dtype = _check(observation_key, mask_key, mask_dtype)
        self.observation_key, self.mask_key = observation_key, mask_key
        n = int(env.single_action_space.n)  # type: ignore[attr-defined]
        single = _dict_space(env.single_observation_space, n, observation_key, mask_key, self.dtype)
        self.single_observation_space = single
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    @property
    def autoreset_mode(self) -> Any:
        """The wrapped env's autoreset mode (TorchRL reads it from the outermost env)."""
        mode = getattr(self.env, "autoreset_mode", None)
        return mode if mode is not None else self.env.metadata.get("autoreset_mode")

    def _wrap(self, obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        return {self.mask_key: _masks(self.env, info).astype(self.dtype), self.observation_key: obs}

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._wrap(obs, info), info

    def step(self, actions: Any) -> tuple[Any, ...]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return self._wrap(obs, info), rewards, terminated, truncated, info


class MaskInObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """The flat observation with the legal-action mask appended (``mask_observation_space``): the
    single-env form of ``quadrat_env.sb3.VecMaskObservation``, for plain PPO trained with
    ``observe_mask`` outside ``experiments.train`` (rl-zoo3's ``env_wrapper``)."""

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        n = int(env.action_space.n)  # type: ignore[attr-defined]
        self.observation_space = mask_observation_space(env.observation_space, n)  # type: ignore[arg-type]

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return observe_mask(obs, _masks(self.env, info)), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return observe_mask(obs, _masks(self.env, info)), reward, terminated, truncated, info  # type: ignore[return-value]


def mask_observation_space(obs_space: spaces.Box, n_actions: int) -> spaces.Box:
    """The flat observation followed by the legal-action mask (0/1): what a policy that sees the mask
    as input, such as plain PPO trained with ``observe_mask``, observes."""
    low = np.concatenate([np.broadcast_to(obs_space.low, obs_space.shape), np.zeros(n_actions)])
    high = np.concatenate([np.broadcast_to(obs_space.high, obs_space.shape), np.ones(n_actions)])
    return spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)


def sees_mask(shape: tuple[int, ...], env: gym.Env) -> bool:
    """Whether an observation of ``shape`` is ``env``'s with the mask appended (an ``observe_mask`` model)."""
    n = int(env.action_space.n)  # type: ignore[attr-defined]
    return tuple(shape) == (env.observation_space.shape[0] + n,)  # type: ignore[index]


def observe_mask(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``obs`` (one or a batch) with its mask appended, as ``mask_observation_space`` lays out."""
    return np.concatenate([obs, np.asarray(masks, dtype=np.float32)], axis=-1).astype(np.float32)
