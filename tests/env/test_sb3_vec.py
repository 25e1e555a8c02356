"""SB3 on the native batched env: the same transitions as DummyVecEnv, and MaskablePPO trains."""

from __future__ import annotations

import numpy as np
import pytest

from quadrat_env.sb3 import SB3VecEnv, make_sb3_vec_env

pytest.importorskip("sb3_contrib")
ZU = "quadrat_env/Zudecken-v0"


@pytest.mark.parametrize("copy", [True, False])
def test_adapter_matches_dummy_vec_env_transition_for_transition(copy):
    """Also with ``copy=False`` (the batched env's observation buffer returned as it is): the
    terminal observation is the ended deal's, not the next deal's first."""
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    native = make_sb3_vec_env(ZU, n_envs=4, seed=3, reward_mode="dense", copy=copy)
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
        obs_n = obs_n.copy()  # with copy=False, the next step writes into it
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
    with pytest.raises(ValueError, match="SameStep"):  # SB3 expects the deal anew in the same step
        SB3VecEnv(gym.make_vec(ZU, num_envs=2).unwrapped)


def test_mask_observation_appends_the_current_masks_and_plain_ppo_plays_from_it(tmp_path):
    from quadrat_env.agents.evaluate import evaluate
    from quadrat_env.agents.sb3_agent import SB3Agent
    from stable_baselines3 import PPO

    from quadrat_env.sb3 import VecMaskObservation

    zu = "quadrat_env/Zudecken-v0"
    venv = VecMaskObservation(make_sb3_vec_env(zu, n_envs=4, seed=0, illegal_action="end"))
    obs = venv.reset()
    assert obs.shape == (4, 269 + 12) and venv.observation_space.contains(obs[0])
    for _ in range(60):
        masks = np.stack(venv.env_method("action_masks"))
        assert np.array_equal(obs[:, 269:], masks.astype(np.float32))
        actions = np.where(np.random.default_rng(0).random(4) < 0.1, 0, masks.argmax(axis=1))
        obs, _, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):  # the last observation: its mask is all zero
            last = infos[i]["terminal_observation"]
            assert last.shape == (281,) and not last[269:].any()
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=64, seed=0, device="cpu")
    model.learn(128).save(tmp_path / "m.zip")
    agent = SB3Agent.load(tmp_path / "m.zip", "ppo", zu)  # safe loading knows the wider observation
    assert agent.observes_mask and not agent.masked
    summary, _ = evaluate(zu, agent, range(20), progress=False)
    assert summary.episodes == 20
