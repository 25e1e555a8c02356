"""SB3 on the native batched env: the same transitions as DummyVecEnv, and MaskablePPO trains."""

from __future__ import annotations

import numpy as np
import pytest

from quadrat_env.sb3 import SB3VecEnv, make_sb3_vec_env

pytest.importorskip("sb3_contrib")
ZU = "quadrat_env/Zudecken-v0"


def test_adapter_matches_dummy_vec_env_transition_for_transition():
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    native = make_sb3_vec_env(ZU, n_envs=4, seed=3, reward_mode="dense")
    dummy = make_vec_env(ZU, n_envs=4, seed=3, env_kwargs={"reward_mode": "dense"})
    obs_n, obs_d = native.reset(), dummy.reset()
    assert np.array_equal(obs_n, obs_d)
    rng = np.random.default_rng(0)
    dones_seen = 0
    for _ in range(200):
        masks = get_action_masks(native)
        assert np.array_equal(masks, get_action_masks(dummy))
        acts = np.where(masks, rng.random(masks.shape), -1).argmax(axis=1)
        obs_n, rew_n, done_n, info_n = native.step(acts)
        obs_d, rew_d, done_d, info_d = dummy.step(acts)
        assert (
            np.array_equal(obs_n, obs_d) and np.array_equal(rew_n, rew_d) and np.array_equal(done_n, done_d)
        )
        for a, b in zip(info_n, info_d, strict=True):
            for key in ("won", "cards_left", "illegal_action", "TimeLimit.truncated"):
                assert a[key] == b[key]
            if "terminal_observation" in b:
                assert np.array_equal(a["terminal_observation"], b["terminal_observation"])
        dones_seen += int(done_n.sum())
    assert dones_seen > 4


def test_maskable_ppo_trains_saves_and_loads_on_the_native_env(tmp_path):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    venv = VecMonitor(make_sb3_vec_env(ZU, n_envs=8, seed=0), info_keywords=("won",))
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(512)
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    obs = venv.reset()
    actions, _ = loaded.predict(
        obs, action_masks=np.stack(venv.env_method("action_masks")), deterministic=True
    )
    assert np.stack(venv.env_method("action_masks"))[np.arange(8), actions].all()


def test_adapter_rejects_other_envs():
    import gymnasium as gym

    with pytest.raises(TypeError, match="batched env"):
        SB3VecEnv(gym.make_vec(ZU, num_envs=2, vectorization_mode="sync"))
