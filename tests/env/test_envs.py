"""Conformance over every registered ID, and the env contract: masks, rewards, replay, bad input."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from conftest import deck_starting
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import quadrat_env
from quadrat_env import IllegalMove
from quadrat_env.cards import format_cards
from quadrat_env.registry import env_ids, short_name

IDS = quadrat_env.ENV_IDS


def rollout(env, seed, policy_seed=0, deck=None):
    """Random legal play to the end; returns the whole trajectory."""
    rng = np.random.default_rng(policy_seed)
    options = None if deck is None else {"deck": deck}
    obs, info = env.reset(seed=seed, options=options)
    steps = [(obs, 0.0, False, False, info)]
    while not (steps[-1][2] or steps[-1][3]):
        mask = steps[-1][4]["action_mask"]
        assert mask.dtype == np.int8 and mask.any(), "mask all zero while the episode runs"
        assert np.array_equal(env.unwrapped.action_masks(), mask.astype(bool))
        steps.append(env.step(int(rng.choice(np.flatnonzero(mask)))))
    return steps


def same(a, b):
    assert len(a) == len(b)
    for (o1, r1, t1, u1, i1), (o2, r2, t2, u2, i2) in zip(a, b, strict=True):
        assert np.array_equal(o1, o2) and r1 == r2 and t1 == t2 and u1 == u2
        assert i1.keys() == i2.keys()
        assert all(np.array_equal(i1[k], i2[k]) for k in i1)


@pytest.mark.parametrize("env_id", IDS)
def test_checkers_pass_without_warnings(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id, render_mode="ansi").unwrapped)
        sb3_check_env(gym.make(env_id), warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_random_legal_play_to_the_end(env_id):
    env = gym.make(env_id)
    for seed in range(20):
        steps = rollout(env, seed)
        *_, (obs, _, terminated, truncated, info) = steps
        assert terminated and not truncated
        assert isinstance(info["won"], bool) and 0 <= info["cards_left"] <= 52
        assert not info["action_mask"].any() and not env.unwrapped.action_masks().any()
        assert all(env.observation_space.contains(s[0]) for s in steps)


@pytest.mark.parametrize("env_id", IDS)
def test_seeded_resets_are_deterministic_and_decks_replay(env_id):
    a, b = gym.make(env_id), gym.make(env_id)
    same(rollout(a, seed=7), rollout(b, seed=7))
    deck = a.unwrapped.deck
    same(rollout(a, seed=7), rollout(b, seed=None, deck=list(deck)))
    rollout(a, seed=8)
    assert a.unwrapped.deck != deck  # (Quadrille's first observation hides the deal entirely)


@pytest.mark.parametrize("env_id", IDS)
def test_pickled_env_continues_identically(env_id):
    env = gym.make(env_id)
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    copy = pickle.loads(pickle.dumps(env))
    same(rollout(env, seed=None, deck=list(env.unwrapped.deck)),
         rollout(copy, seed=None, deck=list(env.unwrapped.deck)))  # fmt: skip
    assert copy.unwrapped.deck == env.unwrapped.deck


@pytest.mark.parametrize("env_id", IDS)
def test_make_by_module_prefix_without_import(env_id):
    code = f"import gymnasium as gym; e = gym.make('quadrat_env:{env_id}'); print(e.reset(seed=0)[0].shape)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(gym.make(env_id).observation_space.shape)


@pytest.mark.parametrize("env_id", IDS)
def test_ansi_render(env_id):
    env = gym.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    env.step(0 if "Quadrille" in env_id else int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    state = env.unwrapped.state
    text = env.render()
    assert env.unwrapped.state == state  # drawing changes nothing
    assert env.unwrapped.game.name in text and any(s in text for s in "♣♦♥♠")
    with pytest.warns(UserWarning, match="render_mode"):
        assert gym.make(env_id).unwrapped.render() is None


@pytest.mark.parametrize("env_id", IDS)
def test_every_declared_render_mode_draws_without_changing_the_game(env_id):
    modes = gym.make(env_id).unwrapped.metadata["render_modes"]
    assert set(modes) == {"ansi", "rgb_array", "human"}
    env = gym.make(env_id, render_mode="rgb_array")
    _, info = env.reset(seed=2)
    rng, shapes, done = np.random.default_rng(0), set(), False
    while not done:
        state = env.unwrapped.state
        frame = env.render()
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        assert frame.std() > 10  # something is drawn on the table
        assert env.unwrapped.state == state
        shapes.add(frame.shape)
        _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert len(shapes) == 1  # one frame size for a whole episode


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_make_vec_env_defaults_work(env_id):
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(env_id, n_envs=2, seed=0)  # asks for render_mode="rgb_array"
    venv.reset()
    assert venv.env_method("action_masks")[0].dtype == bool


# -- dead starts, rewards, illegal actions -----------------------------------------------------
@pytest.mark.parametrize(("env_id", "head", "end"), [
    ("quadrat_env/Quadrat-v0", "7C 7D 7H 7S", 6),
    ("quadrat_env/Quadrat52-v0", "2C 7D 7H 7S", 6),
    ("quadrat_env/Zudecken-v0", "AC 2D 3H 4S", 11),
])  # fmt: skip
def test_a_deal_with_no_move_offers_only_the_end_action(env_id, head, end):
    env = gym.make(env_id)
    size = 32 if env_id.endswith("Quadrat-v0") else 52
    _, info = env.reset(options={"deck": deck_starting(head, size)})
    assert np.flatnonzero(info["action_mask"]).tolist() == [end]
    _, reward, terminated, _, info = env.step(end)
    assert terminated and reward == 0.0 and info["won"] is False and info["cards_left"] == size
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(end)


def test_end_action_is_illegal_while_moves_exist():
    env = gym.make("quadrat_env/Quadrat-v0")
    env.reset(options={"deck": deck_starting("7C 8C 7D 7H", 32)})
    _, reward, terminated, _, info = env.step(6)
    assert info["illegal_action"] and reward == -0.01 and not terminated


def test_sparse_and_dense_rewards_on_a_won_deal():
    # Zudecken rank by rank: eleven... thirteen quads cover everything and win.
    deck = [f"{r}{s}" for r in "A23456789TJQK" for s in "CDHS"]
    for mode, total in [("sparse", 1.0), ("dense", 2.0)]:
        env = gym.make("quadrat_env/Zudecken-v0", reward_mode=mode)
        env.reset(options={"deck": deck})
        rewards = [env.step(10)[1] for _ in range(13)]
        assert rewards[-1] >= 1.0 and sum(rewards) == pytest.approx(total)
        if mode == "dense":
            assert rewards[0] == pytest.approx(4 / 52)


def test_illegal_action_penalised_leaves_state():
    env = gym.make("quadrat_env/Zudecken-v0", illegal_penalty=0.5)
    obs, info = env.reset(options={"deck": deck_starting("7C 7D 2H 9S")})
    before = env.unwrapped.state
    obs2, reward, terminated, truncated, info2 = env.step(5)  # (2,3) = 2H 9S do not match
    assert reward == -0.5 and info2["illegal_action"] and not (terminated or truncated)
    assert env.unwrapped.state == before and np.array_equal(obs, obs2)
    assert np.array_equal(info["action_mask"], info2["action_mask"])


def test_illegal_action_ends_the_episode_when_asked():
    env = gym.make("quadrat_env/Zudecken-v0", illegal_action="end")
    obs, _ = env.reset(options={"deck": deck_starting("7C 7D 2H 9S")})
    before = env.unwrapped.state
    obs2, reward, terminated, truncated, info = env.step(5)  # (2,3) = 2H 9S do not match
    assert reward == -0.01 and terminated and not truncated
    assert info["illegal_action"] and not info["won"] and info["cards_left"] == 52
    assert env.unwrapped.state == before and np.array_equal(obs, obs2) and not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(0)


def test_illegal_action_raises_when_asked():
    env = gym.make("quadrat_env/Quadrille-v0", illegal_action="raise")
    env.reset(seed=0)
    before = env.unwrapped.state
    with pytest.raises(IllegalMove, match="action 5 is not legal"):
        env.step(5)  # nothing on the discard pile yet
    assert env.unwrapped.state == before


@pytest.mark.parametrize("action", [-1, 12, 1.5, "3", None, np.array([1, 2])])
def test_actions_outside_the_space_always_raise(action):
    env = gym.make("quadrat_env/Zudecken-v0").unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(action)


def test_step_before_reset_raises():
    with pytest.raises(RuntimeError, match="before reset"):
        gym.make("quadrat_env/Quadrat-v0").unwrapped.step(0)


# -- bad input leaves the env as it was ---------------------------------------------------------
@pytest.mark.parametrize(("env_id", "deck", "message"), [
    ("quadrat_env/Quadrat-v0", deck_starting("", 52), "52 cards; this game needs 32"),
    ("quadrat_env/Quadrat-v0", deck_starting("", 32)[1:] + (1,), "2C, not in the 32-card"),
    ("quadrat_env/Quadrat52-v0", deck_starting("", 52)[:51] + (0,), "repeats AC"),
    ("quadrat_env/Zudecken-v0", ["XX"] * 52, "unknown card code 'XX'"),
    ("quadrat_env/Quadrille-v0", deck_starting("", 52)[:40], "40 cards"),
    ("quadrat_env/Quadrille-v0", 42, "deck must be a list of card codes"),
])  # fmt: skip
def test_bad_deck_raises_and_changes_nothing(env_id, deck, message):
    env = gym.make(env_id).unwrapped
    obs, info = env.reset(seed=5)
    state, rng_state = env.state, env.np_random.bit_generator.state
    with pytest.raises((ValueError, TypeError), match=message):
        env.reset(seed=99, options={"deck": deck})
    assert env.state == state and env.np_random.bit_generator.state == rng_state
    assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))


def test_unknown_reset_option_is_named():
    env = gym.make("quadrat_env/Zudecken-v0")
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['dek'\]"):
        env.reset(options={"dek": []})


@pytest.mark.parametrize(("env_id", "kwargs", "message"), [
    ("quadrat_env/Quadrat-v0", {"n_cards": 36}, "n_cards must be 32 or 52"),
    ("quadrat_env/Zudecken-v0", {"win": "clear"}, "win must be"),
    ("quadrat_env/Zudecken-v0", {"cover": "all"}, "cover must be"),
    ("quadrat_env/Quadrille-v0", {"redeals": -1}, "redeals"),
    ("quadrat_env/Quadrille-v0", {"reward_mode": "shaped"}, "reward_mode must be one of"),
    ("quadrat_env/Quadrat-v0", {"render_mode": "video"}, "render_mode must be one of"),
    ("quadrat_env/Quadrat-v0", {"illegal_action": "ignore"}, "illegal_action must be one of"),
    ("quadrat_env/Quadrat-v0", {"illegal_penalty": -1}, "illegal_penalty must be finite"),
    ("quadrat_env/Quadrat-v0", {"illegal_penalty": "0.1"}, "illegal_penalty must be a number"),
])  # fmt: skip
def test_bad_kwargs(env_id, kwargs, message):
    with warnings.catch_warnings(), pytest.raises(ValueError, match=message):
        warnings.simplefilter("ignore")  # gym.make warns about an undeclared render mode first
        gym.make(env_id, **kwargs)


def test_variants_through_kwargs():
    env = gym.make("quadrat_env/Zudecken-v0", cover="pairs", win="dealt")
    assert env.unwrapped.game.max_group == 2 and not env.unwrapped.game.win_needs_clear
    assert gym.make("quadrat_env/Quadrille-v0", redeals=0).unwrapped.game.redeals == 0
    env = gym.make("quadrat_env/Quadrat52-v0")
    env.reset(seed=0)
    assert len(env.unwrapped.deck) == 52 and format_cards([0]) in " ".join(env.unwrapped.deck)


@pytest.mark.parametrize("env_id", IDS)
def test_env_docstring_is_the_spec_and_prints_the_layout(env_id):
    """The class docstring prints the layout of each main ID; a rung's own table is added to its
    env page (tests/repository/test_docs.py)."""
    env = gym.make(env_id).unwrapped
    doc = type(env).__doc__
    if env_id not in env_ids(rungs=False):  # a rung: named by the documented scheme, its table on its page
        assert "`Zudecken{4r}-v0`" in doc and short_name(env_id) == f"Zudecken{env.game.pack_size}"
        assert env.observation_space.shape == (5 * env.game.pack_size + 9,)
        return
    headings = ["Description", "Action Space", "Observation Space", "Rewards", "Episode End", "Arguments",
                "Version History"]  # fmt: skip
    assert [h for h in headings if f"## {h}" in doc] == headings
    layout = env.game.layout
    assert layout.size == env.observation_space.shape[0]
    for line in layout.table().splitlines():  # the table is printed from the layout itself
        assert line in doc, line


@pytest.mark.parametrize("env_id", IDS)
def test_the_docstring_is_the_spec_under_gymnasiums_headings(env_id):
    doc = gym.make(env_id).unwrapped.__doc__
    first = doc.splitlines()[0]
    assert first and not first.startswith(("class ", " ")) and first.endswith("."), first
    headings = ["Description", "Action Space", "Observation Space", "Rewards", "Episode End", "Arguments",
                "Version History"]  # fmt: skip
    found = [line.strip()[3:] for line in doc.splitlines() if line.strip().startswith("## ")]
    assert found == headings
