"""The registry of games, observation layouts, and the numba import."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import quadrat_env
from quadrat_env import GameSpec, register_game, spec_for
from quadrat_env.core.layout import Layout
from quadrat_env.games.zudecken import SPEC as ZUDECKEN
from quadrat_env.registry import rules_for, short_names


def test_every_id_is_reached_through_its_spec():
    for env_id in quadrat_env.ENV_IDS:
        spec = spec_for(env_id)
        env = gym.make(env_id).unwrapped
        assert isinstance(env, spec.env_class) and env_id in spec.every_id
        assert rules_for(env_id) == env.game  # the same rules, without making an env
        assert gym.spec(env_id).max_episode_steps == spec.max_episode_steps
    assert spec_for("quadrat_env:quadrat_env/Zudecken-v0") is ZUDECKEN
    assert short_names()["Quadrat52"] == "quadrat_env/Quadrat52-v0"
    with pytest.raises(ValueError, match="not a registered patience"):
        spec_for("CartPole-v1")


def test_the_zudecken_ladder_is_registered_rung_by_rung():
    """Rungs 4..13: 8 and 13 are the IDs that were there before; the others are ``rungs``, left
    out of ``env_ids(rungs=False)`` (the benchmark's rows) and in every other list."""
    from quadrat_env.games.zudecken import LADDER
    from quadrat_env.registry import env_ids, jax_env_ids, jax_id

    assert sorted(LADDER) == list(range(4, 14))
    assert LADDER[8] == "quadrat_env/Zudecken32-v0" and LADDER[13] == "quadrat_env/Zudecken-v0"
    for ranks, env_id in LADDER.items():
        game = rules_for(env_id)
        assert game.pack_size == 4 * ranks and len({c % 13 for c in game.pack}) == ranks
        assert rules_for("quadrat_env/Zudecken-v0", ranks=ranks) == game
        assert env_id in env_ids() and jax_id(env_id) in jax_env_ids()
        assert (env_id in env_ids(rungs=False)) == (ranks in (8, 13))
    assert set(env_ids()) - set(env_ids(rungs=False)) == set(ZUDECKEN.rungs)
    assert len(jax_env_ids(rungs=False)) == len(env_ids(rungs=False))
    with pytest.raises(ValueError, match="both an ID and a rung"):
        GameSpec(name="X", rules=ZUDECKEN.rules, env_class=ZUDECKEN.env_class,
                 vector_env_class=ZUDECKEN.vector_env_class, ids={"x/X-v0": {}},
                 rungs={"x/X-v0": {}}, max_episode_steps=5)  # fmt: skip


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ranks": 3}, "ranks must be a whole number in 4..13, got 3"),
    ({"ranks": 14}, "ranks must be a whole number in 4..13, got 14"),
    ({"ranks": 6.0}, "ranks must be a whole number, got 6.0"),
    ({"ranks": 6, "n_cards": 32}, "n_cards=32 and ranks=6 disagree"),
    ({"n_cards": 30}, "n_cards must be 4 x ranks"),
])  # fmt: skip
def test_a_bad_rung_is_a_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("quadrat_env/Zudecken-v0", **kwargs)


def test_bad_registrations_are_refused():
    with pytest.raises(ValueError, match="already registered by game 'Zudecken'"):
        register_game(GameSpec(name="Copy", rules=ZUDECKEN.rules, env_class=ZUDECKEN.env_class,
                               vector_env_class=ZUDECKEN.vector_env_class,
                               ids={"quadrat_env/Zudecken-v0": {}}, max_episode_steps=5))  # fmt: skip
    with pytest.raises(TypeError, match="env_class must subclass PatienceEnv"):
        GameSpec(name="X", rules=ZUDECKEN.rules, env_class=dict, vector_env_class=ZUDECKEN.vector_env_class,
                 ids={"x/X-v0": {}}, max_episode_steps=5)  # fmt: skip
    with pytest.raises(ValueError, match="no env ID"):
        GameSpec(name="X", rules=ZUDECKEN.rules, env_class=ZUDECKEN.env_class,
                 vector_env_class=ZUDECKEN.vector_env_class, ids={}, max_episode_steps=5)  # fmt: skip
    with pytest.raises(TypeError, match="rules must be callable"):
        GameSpec(name="X", rules=None, env_class=ZUDECKEN.env_class,
                 vector_env_class=ZUDECKEN.vector_env_class, ids={"x/X-v0": {}},
                 max_episode_steps=5)  # fmt: skip


def test_layout_pieces_are_contiguous_and_named():
    layout = Layout(("a", 3, "first"), ("b", 1, "one entry"))
    assert layout.size == 4 and layout["b"].slice == slice(3, 4) and "a" in layout
    assert layout.table().splitlines()[2] == "| `[0, 3)` | `a` | first |"
    assert layout.table().splitlines()[3] == "| `3` | `b` | one entry |"
    with pytest.raises(KeyError, match="no observation piece 'c'"):
        layout["c"]
    with pytest.raises(ValueError, match="unique"):
        Layout(("a", 1, ""), ("a", 2, ""))
    with pytest.raises(ValueError, match="size >= 1"):
        Layout(("a", 0, ""))


def test_without_numba_the_import_says_how_to_install_it():
    code = "import sys; sys.modules['numba'] = None; import quadrat_env"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 1 and "pip install 'numba>=0.60'" in out.stderr


@pytest.mark.parametrize("limit", [None, 7, 500])
def test_gym_make_max_episode_steps_is_the_limit_that_truncates(limit):
    """``gym.make(id, max_episode_steps=N)`` truncates at N, as its spec says (illegal actions
    under "penalize" keep an episode going forever)."""
    kwargs = {} if limit is None else {"max_episode_steps": limit}
    env = gym.make("quadrat_env/Zudecken-v0", **kwargs)
    expected = 200 if limit is None else limit
    assert env.spec.max_episode_steps == expected
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    steps = 0
    while True:
        steps += 1
        _, _, terminated, truncated, _ = env.step(illegal)
        if terminated or truncated:
            break
    assert truncated and not terminated and steps == expected
    vec = gym.make_vec(
        "quadrat_env/Zudecken-v0", num_envs=2, vectorization_mode="vector_entry_point", **kwargs
    )
    assert vec.unwrapped.max_episode_steps == expected


def test_rules_for_takes_rule_kwargs_and_names_unknown_ones():
    assert rules_for("quadrat_env/Zudecken-v0", cover="pairs") == gym.make(
        "quadrat_env/Zudecken-v0", cover="pairs").unwrapped.game  # fmt: skip
    assert rules_for("quadrat_env/Quadrat52-v0").pack_size == 52
    assert rules_for("quadrat_env/Quadrille-v0").greedy_is_optimal
    assert not rules_for("quadrat_env/Zudecken-v0").greedy_is_optimal
    with pytest.raises(ValueError, match="render_mode"):  # an env kwarg, not a rule kwarg
        rules_for("quadrat_env/Zudecken-v0", render_mode="ansi")
    with pytest.raises(ValueError, match="not a registered patience"):
        rules_for("CartPole-v1")
