"""Masks in the observation: ActionMaskObservation and its vector form."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import quadrat_env
from quadrat_env.wrappers import ActionMaskObservation, VectorActionMaskObservation

ZU = "quadrat_env/Zudecken-v0"


@pytest.mark.parametrize("env_id", quadrat_env.ENV_IDS)
def test_wrapped_env_passes_the_checker_and_carries_the_mask(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (the checker always notes that a wrapped env is not its unwrapped env; nothing else may warn)
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version")
        check_env(ActionMaskObservation(gym.make(env_id).unwrapped))
    env = ActionMaskObservation(gym.make(env_id))
    obs, info = env.reset(seed=0)
    assert set(obs) == {"observations", "action_mask"} and obs["action_mask"].dtype == np.float32
    assert env.observation_space.contains(obs)
    done = False
    while not done:
        assert np.array_equal(obs["action_mask"], info["action_mask"].astype(np.float32))
        obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        done = terminated or truncated
        assert env.observation_space.contains(obs)


def test_keys_and_dtype_are_configurable():
    env = ActionMaskObservation(gym.make(ZU), observation_key="observation", mask_dtype=np.int8)
    obs, _ = env.reset(seed=1)
    assert set(obs) == {"observation", "action_mask"} and obs["action_mask"].dtype == np.int8
    assert env.observation_space.contains(obs)
    bad_args = [
        ({"mask_key": "observations"}, "must differ"),
        ({"mask_dtype": np.int64}, "mask_dtype"),
        ({"observation_key": ""}, "non-empty"),
    ]
    for bad, message in bad_args:
        with pytest.raises(ValueError, match=message):
            ActionMaskObservation(gym.make(ZU), **bad)


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_vector_form_reads_every_env_mask(mode):
    venv = VectorActionMaskObservation(gym.make_vec(ZU, num_envs=4, vectorization_mode=mode))
    obs, info = venv.reset(seed=0)
    assert obs["observations"].shape == (4, 269) and obs["action_mask"].shape == (4, 12)
    assert venv.observation_space.contains(obs)
    for _ in range(50):
        acts = np.argmax(obs["action_mask"] + np.random.default_rng(0).random((4, 12)) * 0.5, axis=1)
        obs, *_ = venv.step(acts)
        assert venv.observation_space.contains(obs)
    if mode == "vector_entry_point":  # after a partial reset the other envs keep their masks
        before = obs["action_mask"].copy()
        obs, _ = venv.reset(options={"reset_mask": np.array([True, False, False, False])})
        assert np.array_equal(obs["action_mask"][1:], before[1:])


@pytest.mark.parametrize("env_id", quadrat_env.ENV_IDS)
def test_mask_in_observation_matches_the_vector_form(env_id):
    """The single-env wrapper lays out what VecMaskObservation gives plain PPO, and passes the checker."""
    from quadrat_env.wrappers import MaskInObservation, observe_mask

    env = MaskInObservation(gym.make(env_id))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    plain, _ = gym.make(env_id).reset(seed=3)
    assert np.array_equal(obs, observe_mask(plain, info["action_mask"]))
    assert env.observation_space.contains(obs)
