"""Train stable-baselines3 / sb3-contrib directly on a native batched env.

SB3 does not take Gymnasium vector envs; ``SB3VecEnv`` presents one as SB3's ``VecEnv``:

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor
    from quadrat_env.sb3 import make_sb3_vec_env

    venv = VecMonitor(make_sb3_vec_env("quadrat_env/Zudecken-v0", n_envs=64, seed=0),
                      info_keywords=("won",))
    MaskablePPO("MlpPolicy", venv).learn(100_000)

It behaves like SB3's ``DummyVecEnv`` over ``gym.make(id)`` envs: a finished deal is reset in the
same step (the batched env's ``SameStep`` autoreset; its last observation in
``info["terminal_observation"]``), ``TimeLimit.truncated`` is
set, and ``env_method("action_masks")`` gives MaskablePPO the masks. Needs the ``train`` extra.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from quadrat_env.core.vector import INFO_KEYS, PatienceVectorEnv
from quadrat_env.wrappers import mask_observation_space, observe_mask

_STEP_KEYS = tuple(k for k in INFO_KEYS if k != "action_mask")  # masks come via action_masks()


class SB3VecEnv(VecEnv):
    """SB3's ``VecEnv`` interface over a ``PatienceVectorEnv``."""

    def __init__(self, venv: PatienceVectorEnv) -> None:
        if not isinstance(venv, PatienceVectorEnv):
            raise TypeError(f"SB3VecEnv wraps a quadrat_env batched env, got {type(venv).__name__}")
        if venv.autoreset_mode is not AutoresetMode.SAME_STEP:  # SB3 deals anew in the same step
            raise ValueError("SB3VecEnv needs a batched env made with autoreset_mode='SameStep' "
                             f"(make_sb3_vec_env does that), got {venv.autoreset_mode.name}")  # fmt: skip
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self.render_mode = venv.render_mode
        self.spec = venv.spec  # VecMonitor writes its ID into the log header
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, info = self.venv.reset(seed=seeds)
        self.reset_infos = _split(info, self.num_envs, _STEP_KEYS)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async(); call step() instead")
        actions, self._actions = self._actions, None  # a failed step is not retried by the next call
        obs, rewards, terminated, truncated, info = self.venv.step(actions)
        dones = terminated | truncated
        infos = _split(info, self.num_envs, _STEP_KEYS)
        if dones.any():  # the batched env dealt them anew already (SAME_STEP)
            last = _split(info["final_info"], self.num_envs, _STEP_KEYS)
            for i in np.flatnonzero(dones).tolist():
                self.reset_infos[i] = infos[i]
                infos[i] = last[i]
                infos[i]["terminal_observation"] = info["final_obs"][i]
        for i, info_i in enumerate(infos):
            info_i["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        frames = self.venv.render() if self.venv.render_mode == "rgb_array" else None
        return list(frames) if frames is not None else [None] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "action_masks":  # what sb3-contrib checks before calling env_method
            return [self.action_masks] * len(self._get_indices(indices))
        if attr_name == "spec":  # the registered ID's spec (the inner single env was not made by gym.make)
            return [self.spec] * len(self._get_indices(indices))
        value = getattr(self.venv.single, attr_name)  # the spaces, game, kwargs
        return [value] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"SB3VecEnv cannot set {attr_name!r}: the batched env shares one config")

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.venv.action_masks()[idx])
        raise AttributeError(f"SB3VecEnv supports env_method('action_masks') only, not {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: Any = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def _get_indices(self, indices: Any) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else indices


class VecMaskObservation(VecEnvWrapper):
    """The legal-action mask appended to the observation, for a policy without action masking
    (plain PPO) that should learn legality from what it sees. Any SB3 ``VecEnv`` whose envs have
    ``action_masks()`` (``DummyVecEnv`` over ``gym.make`` envs, ``SB3VecEnv``)."""

    def __init__(self, venv: VecEnv) -> None:
        n = int(venv.action_space.n)  # type: ignore[attr-defined]
        super().__init__(venv, observation_space=mask_observation_space(venv.observation_space, n))

    def _masks(self) -> np.ndarray:
        return np.stack(self.venv.env_method("action_masks"))

    def reset(self) -> np.ndarray:
        return observe_mask(self.venv.reset(), self._masks())

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:  # an ended episode takes no more actions: its last mask is all zero
            if "terminal_observation" in info:
                last = info["terminal_observation"]
                info["terminal_observation"] = observe_mask(last, np.zeros(self.action_space.n))
        return observe_mask(obs, self._masks()), rewards, dones, infos


def make_sb3_vec_env(env_id: str, n_envs: int, seed: int | None = None, **env_kwargs: Any) -> SB3VecEnv:
    """``gym.make_vec(env_id, n_envs)`` (the native batched env) as an SB3 ``VecEnv``, seeded."""
    kwargs = {"autoreset_mode": AutoresetMode.SAME_STEP, **env_kwargs}
    venv = gym.make_vec(env_id, num_envs=n_envs, vectorization_mode="vector_entry_point", **kwargs)
    sb3 = SB3VecEnv(venv.unwrapped)  # type: ignore[arg-type]
    if seed is not None:
        sb3.seed(seed)
    return sb3


def _split(info: dict[str, Any], n: int, keys: Sequence[str]) -> list[dict[str, Any]]:
    """Gymnasium's batched info (arrays + ``_key`` masks) as SB3's list of per-env dicts."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key in keys:
        if key in info:
            values = info[key].tolist()  # plain Python numbers, as a single env's info holds
            for i in np.flatnonzero(info["_" + key]).tolist():
                out[i][key] = values[i]
    return out
