"""The native batched envs: identical to N single envs (via SyncVectorEnv), step by step."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import quadrat_env
from quadrat_env import IllegalMove
from quadrat_env.cards import parse_deck
from quadrat_env.core.vector import QUEUE, PatienceVectorEnv

ZU = "quadrat_env/Zudecken-v0"


def assert_same(a, b, where: str) -> None:
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
        return
    if isinstance(a, tuple):
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{k}]")
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (where, a.dtype, b.dtype, a.shape, b.shape)
    assert np.array_equal(a, b), (where, np.argwhere(a != b)[:5])


def next_step_view(out: tuple) -> tuple:
    """SyncVectorEnv's step result as the batched env reports it: a finished env's mask allows every
    action (its next action is ignored), where the single env's terminal mask is all zero."""
    obs, reward, terminated, truncated, info = out
    done = (terminated | truncated)[:, None]
    return obs, reward, terminated, truncated, {**info, "action_mask": np.where(done, 1, info["action_mask"])}


def random_actions(rng: np.random.Generator, masks: np.ndarray, illegal_share: float) -> np.ndarray:
    """A random legal action per env; a share of them random (often illegal) instead."""
    keys = np.where(masks == 1, rng.random(masks.shape), -1.0)
    acts = keys.argmax(axis=1)
    wild = rng.random(len(masks)) < illegal_share
    acts[wild] = rng.integers(masks.shape[1], size=wild.sum())
    return acts


@pytest.mark.parametrize(
    ("env_id", "kwargs", "steps"),
    [(env_id, {}, 300) for env_id in quadrat_env.ENV_IDS]
    + [
        (ZU, {"reward_mode": "dense"}, 300),
        ("quadrat_env/Quadrille-v0", {"reward_mode": "dense", "redeals": 1}, 1500),
        ("quadrat_env/Quadrat-v0", {"max_episode_steps": 4}, 100),  # truncations
        (ZU, {"illegal_action": "end"}, 300),  # an illegal action ends the episode
    ],
)
def test_batched_env_matches_single_envs_step_by_step(env_id, kwargs, steps):
    native = gym.make_vec(env_id, num_envs=6, **kwargs)
    sync = gym.make_vec(env_id, num_envs=6, vectorization_mode="sync", **kwargs)
    assert isinstance(native.unwrapped, PatienceVectorEnv)
    first = native.reset(seed=11), sync.reset(seed=11)
    assert_same(first[0], first[1], "reset")
    rng = np.random.default_rng(0)
    info, endings = first[0][1], 0
    for t in range(steps):
        acts = random_actions(rng, info["action_mask"], illegal_share=0.05)
        out_native, out_sync = native.step(acts), next_step_view(sync.step(acts))
        for name, a, b in zip(
            ("obs", "reward", "terminated", "truncated", "info"), out_native, out_sync, strict=True
        ):
            assert_same(a, b, f"{name} at step {t}")
        info = out_native[4]
        endings += int(out_native[2].sum() + out_native[3].sum())
        assert np.array_equal(native.unwrapped.action_masks(), out_sync[4]["action_mask"].astype(bool))
    assert endings >= 6  # the run went through autoresets


def test_make_vec_uses_the_native_env_with_next_step_autoreset():
    venv = gym.make_vec(ZU, num_envs=3)
    assert isinstance(venv.unwrapped, PatienceVectorEnv)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert venv.single_action_space == gym.make(ZU).action_space
    obs, info = venv.reset(seed=0)
    assert obs.shape == (3, 269) and obs.dtype == np.float32 and venv.observation_space.contains(obs)
    masks = venv.unwrapped.action_masks()
    assert masks.dtype == bool and masks.shape == (3, 12)
    assert np.array_equal(masks, info["action_mask"].astype(bool)) and info["action_mask"].dtype == np.int8


def test_autoreset_next_step_ignores_the_action_and_deals_anew():
    venv = gym.make_vec(ZU, num_envs=1)
    single = gym.make(ZU)
    venv.reset(seed=5)
    single.reset(seed=5)
    terminated = np.array([False])
    while not terminated[0]:
        act = np.flatnonzero(venv.unwrapped.action_masks()[0])[0]
        _, _, terminated, _, info = venv.step(np.array([act]))
    # the finished env will ignore its next action, so its mask allows every one (never all zero)
    assert info["action_mask"][0].all() and venv.unwrapped.action_masks()[0].all()
    obs, reward, terminated, truncated, info = venv.step(np.array([0]))  # any action: a reset step
    expected, _ = single.reset()  # the generator's second deal after seed 5
    assert reward[0] == 0.0 and not terminated[0] and not truncated[0]
    assert np.array_equal(obs[0], expected)


def test_per_env_decks_and_partial_reset():
    single = gym.make(ZU).unwrapped
    decks = []
    for seed in (1, 2, 3):
        single.reset(seed=seed)
        decks.append(single.deck)
    venv = gym.make_vec(ZU, num_envs=3).unwrapped
    obs, _ = venv.reset(options={"decks": decks})
    for i, deck in enumerate(decks):
        assert np.array_equal(obs[i], single.reset(options={"deck": deck})[0])
    venv.step(np.argmax(venv.action_masks(), axis=1))
    before = venv.obs.copy()
    obs, info = venv.reset(options={"reset_mask": np.array([False, True, False]), "decks": decks})
    assert np.array_equal(obs[[0, 2]], before[[0, 2]])  # untouched
    assert np.array_equal(obs[1], single.reset(options={"deck": decks[1]})[0])
    assert info["_cards_left"].tolist() == [False, True, False]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda v: v.step(np.array([0, 0])), "shape"),
        (lambda v: v.step(np.array([0, 0, 12])), "out of range"),
        (lambda v: v.step(np.array([0.0, 0.0, 0.0])), "integer"),
        (lambda v: v.reset(options={"decks": ["AC 2C", None, None]}), "env 0"),
        (lambda v: v.reset(options={"decks": [None]}), "list of 3"),
        (lambda v: v.reset(options={"shuffle": True}), "unknown reset option"),
        (lambda v: v.reset(options={"reset_mask": np.array([1, 0, 0])}), "reset_mask"),
        (lambda v: v.reset(seed="7"), "seed"),
    ],
)
def test_bad_input_raises_and_changes_nothing(call, match):
    venv = gym.make_vec(ZU, num_envs=3).unwrapped
    venv.reset(seed=0)
    state = (venv.obs.copy(), venv.masks.copy(), venv.decks.copy(), venv.queue_pos.copy())
    with pytest.raises(ValueError, match=match):
        call(venv)
    after = (venv.obs, venv.masks, venv.decks, venv.queue_pos)
    assert all(np.array_equal(a, b) for a, b in zip(state, after, strict=True))


def test_illegal_action_raise_mode_steps_nothing():
    venv = gym.make_vec(ZU, num_envs=2, illegal_action="raise").unwrapped
    venv.reset(seed=0)
    masks = venv.action_masks()
    acts = np.array([np.flatnonzero(masks[0])[0], np.flatnonzero(~masks[1])[0]])
    obs = venv.obs.copy()
    with pytest.raises(IllegalMove, match=r"env\(s\) \[1\]"):
        venv.step(acts)
    assert np.array_equal(venv.obs, obs)


def test_batched_constructor_checks_its_arguments():
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec(ZU, num_envs=0)
    with pytest.raises(ValueError, match="render_mode"):
        gym.make_vec(ZU, num_envs=2, render_mode="human")
    with pytest.raises(ValueError, match="reward_mode"):
        gym.make_vec(ZU, num_envs=2, reward_mode="shaped")


@pytest.mark.parametrize("env_id", quadrat_env.ENV_IDS)
def test_batched_render_shows_each_deal(env_id):
    venv = gym.make_vec(env_id, num_envs=2, render_mode="ansi")
    venv.reset(seed=0)
    texts = venv.render()
    single = gym.make(env_id, render_mode="ansi")
    single.reset(seed=1)
    assert len(texts) == 2 and texts[1] == single.render()


@pytest.mark.parametrize("env_id", ["quadrat_env/Quadrat-v0", "quadrat_env/Quadrille-v0"])
def test_deck_queue_deals_what_single_resets_deal_past_refills(env_id):
    # Each env draws QUEUE decks ahead; going through it twice and more must still deal exactly
    # the decks that a single env's reset() deals from the same seed.
    venv = gym.make_vec(env_id, num_envs=2).unwrapped
    singles = [gym.make(env_id).unwrapped for _ in range(2)]
    venv.reset(seed=5)
    for i, env in enumerate(singles):
        env.reset(seed=5 + i)
    for k in range(2 * QUEUE + 3):
        for i, env in enumerate(singles):
            assert venv.decks[i].tolist() == list(parse_deck(env.deck)), (k, i)
            env.reset()
        venv.reset()


def assert_same_info(a, b, where: str) -> None:
    """assert_same, with Gymnasium's object arrays (``final_obs``) compared element by element."""
    assert sorted(a) == sorted(b), (where, sorted(a), sorted(b))
    for key in a:
        if key == "final_obs":
            pairs = zip(a[key], b[key], strict=True)
            assert all((x is None and y is None) or np.array_equal(x, y) for x, y in pairs), where
        elif isinstance(a[key], dict):
            assert_same_info(a[key], b[key], f"{where}.{key}")
        else:
            assert_same(a[key], b[key], f"{where}.{key}")


@pytest.mark.parametrize("env_id", quadrat_env.ENV_IDS)
def test_same_step_autoreset_matches_sync_vector_env(env_id):
    kwargs = {"max_episode_steps": 30} if "Quadrille" in env_id else {}  # truncations too
    native = gym.make_vec(env_id, num_envs=5, autoreset_mode="SameStep", **kwargs)
    sync = gym.make_vec(env_id, num_envs=5, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, **kwargs)  # fmt: skip
    assert native.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP == native.unwrapped.autoreset_mode
    (obs_n, info_n), (obs_s, info_s) = native.reset(seed=4), sync.reset(seed=4)
    assert_same((obs_n, info_n), (obs_s, info_s), "reset")
    rng, finals = np.random.default_rng(1), 0
    for t in range(400):
        acts = random_actions(rng, info_n["action_mask"], illegal_share=0.05)
        out_n, out_s = native.step(acts), sync.step(acts)
        assert_same(out_n[:4], out_s[:4], f"obs, reward, terminated, truncated at step {t}")
        assert_same_info(out_n[4], out_s[4], f"info at step {t}")
        info_n = out_n[4]
        finals += int(info_n.get("_final_obs", np.zeros(5, bool)).sum())
        assert info_n["action_mask"].any(axis=1).all()  # a mask is never all zero: finished envs are dealt
    assert finals >= 5


def test_disabled_autoreset_wants_a_reset_before_the_next_step():
    venv = gym.make_vec(ZU, num_envs=2, autoreset_mode=AutoresetMode.DISABLED).unwrapped
    venv.reset(seed=0)
    while not venv.autoreset.any():
        venv.step(np.argmax(venv.action_masks(), axis=1))
    ended = venv.autoreset.copy()
    assert not venv.action_masks()[ended].any()  # nothing to play until reset (its next step raises)
    before = venv.obs.copy()
    with pytest.raises(RuntimeError, match="ended: reset them first"):
        venv.step(np.zeros(2, dtype=np.int64))
    assert np.array_equal(venv.obs, before)
    venv.reset(options={"reset_mask": ended})
    venv.step(np.argmax(venv.action_masks(), axis=1))
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        gym.make_vec(ZU, num_envs=2, autoreset_mode="sometimes")
