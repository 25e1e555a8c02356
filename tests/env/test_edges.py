"""The edges found by fuzzing: each bad input gets a clear error and changes nothing."""

from __future__ import annotations

import copy
import io
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

from quadrat_env.cards import FULL_PACK, format_cards

QU, ZU, QT = "quadrat_env/Quadrille-v0", "quadrat_env/Zudecken-v0", "quadrat_env/Quadrat-v0"
CODES = format_cards(FULL_PACK).split()


def test_a_refused_reset_leaves_the_time_limit_counting():
    """The env's own limit (the ``max_episode_steps`` kwarg of the class; ``gym.make`` applies
    Gymnasium's TimeLimit instead, which restarts its count when ``reset`` is called, refused or not)."""
    from quadrat_env.registry import spec_for

    env = spec_for(QU).env_class(max_episode_steps=1000)
    env.reset(seed=0)
    for _ in range(999):
        assert not env.step(5)[3]  # illegal: nothing on the discard pile
    with pytest.raises(ValueError, match="bad deck"):
        env.reset(options={"deck": ["AC"]})
    assert env.step(5)[3]  # step 1,000 is truncated all the same


def test_the_first_batched_reset_deals_every_env():
    venv = gym.make_vec(ZU, num_envs=2).unwrapped
    with pytest.raises(ValueError, match="first reset must deal every env"):
        venv.reset(seed=0, options={"reset_mask": np.array([True, False])})
    with pytest.raises(RuntimeError, match="before reset"):
        venv.step(np.zeros(2, dtype=np.int64))
    venv.reset(seed=0)
    venv.reset(options={"reset_mask": np.array([True, False])})  # later resets may be partial


def test_a_refused_seed_list_reseeds_no_env():
    venv = gym.make_vec(ZU, num_envs=4).unwrapped
    venv.reset(seed=0)
    states = [g.bit_generator.state for g in venv.rngs]
    for bad in ([1, 2, 3, -1], -5, [1, 2, 3, 4.0], [1, 2, 3, True]):
        with pytest.raises(ValueError, match="seed must be"):
            venv.reset(seed=bad)
    assert [g.bit_generator.state for g in venv.rngs] == states


@pytest.mark.parametrize(("deck", "message"), [
    (np.array(CODES).reshape(4, 13), "shape \\(4, 13\\) is not one row"),
    (np.array("AC 2C"), "shape \\(\\) is not one row"),  # a 0-d string array
    (np.array(7), "shape \\(\\) is not one row"),
    (set(CODES), "a set has no order"),
    (frozenset(CODES), "a set has no order"),
    (dict.fromkeys(CODES), "a dict is not a deck"),
    (b"AC 2C", "bytes"),
])  # fmt: skip
def test_decks_must_be_one_ordered_row(deck, message):
    env = gym.make(ZU).unwrapped
    obs, _ = env.reset(seed=1)
    rng = env.np_random.bit_generator.state
    with pytest.raises(ValueError, match=message):
        env.reset(options={"deck": deck})
    assert env.np_random.bit_generator.state == rng and np.array_equal(env.reset(seed=1)[0], obs)
    assert np.array_equal(env.reset(options={"deck": np.array(CODES)})[0],
                          env.reset(options={"deck": CODES})[0])  # a 1-D array is a deck  # fmt: skip


@pytest.mark.parametrize("action", [True, False, np.True_, np.False_])
def test_bools_are_not_actions(action):
    env = gym.make(ZU).unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(action)


@pytest.mark.parametrize(("env_id", "kwargs"), [
    (QT, {"n_cards": 32.0}), (QT, {"n_cards": True}), (QU, {"redeals": 2.0}),
    (ZU, {"illegal_penalty": "0.1"}), (ZU, {"illegal_penalty": np.bool_(True)}),
])  # fmt: skip
def test_one_rule_for_numbers_refuses(env_id, kwargs):
    for make in (gym.make, lambda i, **k: gym.make_vec(i, num_envs=2, **k)):
        with pytest.raises(ValueError, match="must be a (whole )?number"):
            make(env_id, **kwargs)
    with pytest.raises(ValueError, match="max_episode_steps must be a whole number"):
        gym.make_vec(env_id, num_envs=2, max_episode_steps=10.5)  # (gym.make checks its own)


@pytest.mark.parametrize(("env_id", "kwargs"), [
    (QT, {"n_cards": np.int64(52)}), (QU, {"redeals": np.int64(1)}),
    (ZU, {"illegal_penalty": np.float32(0.1)}), (ZU, {"illegal_penalty": 1}),
])  # fmt: skip
def test_one_rule_for_numbers_accepts_numpy_numbers(env_id, kwargs):
    gym.make(env_id, **kwargs).reset(seed=0)
    gym.make_vec(env_id, num_envs=2, **kwargs).reset(seed=0)


@pytest.mark.parametrize("wrapped", [False, True])
def test_copies_share_nothing(wrapped):
    env = gym.make(ZU) if wrapped else gym.make(ZU).unwrapped
    obs, info = env.reset(seed=3)
    # Gymnasium's wrappers copy shallowly (the copy would share the env), so a wrapped env is
    # copied deeply; the env itself copies its arrays and generator on copy.copy.
    twin = copy.deepcopy(env) if wrapped else copy.copy(env)
    state, rng = env.unwrapped.state, env.unwrapped.np_random.bit_generator.state
    move = int(np.flatnonzero(info["action_mask"])[0])
    stepped, *_ = twin.step(move)
    twin.reset()
    assert env.unwrapped.state == state and env.unwrapped.np_random.bit_generator.state == rng
    assert np.array_equal(env.step(move)[0], stepped)
    venv = gym.make_vec(ZU, num_envs=3).unwrapped
    venv.reset(seed=0)
    vtwin, before = copy.copy(venv), venv.obs.copy()
    vtwin.step(np.argmax(vtwin.action_masks(), axis=1))
    assert np.array_equal(venv.obs, before)


def test_quadrat_play_takes_unicode_digits_as_wrong_entries():
    from quadrat_env.experiments import play

    out = io.StringIO()
    assert play.play(ZU, 1, io.StringIO("²\n٣\nq\n"), out) == 1
    assert "'²' is not a legal move" in out.getvalue() and "'٣' is not a legal move" in out.getvalue()


def test_quadrat_play_answers_a_5000_digit_move_in_one_line_and_takes_leading_zeros():
    from quadrat_env.experiments import play

    out = io.StringIO()
    assert play.play(ZU, 1, io.StringIO("9" * 5000 + "\n01\nq\n"), out) == 1
    text = out.getvalue()
    assert "'99999999999999999999...' is not a legal move" in text
    assert "'01' is not a legal move" not in text and "stock 46" in text  # 01: move 1, legal


def test_check_env_passes_with_default_arguments_without_pygame_or_pillow():
    code = ("import sys; sys.modules['pygame'] = None; sys.modules['PIL'] = None\n"
            "import gymnasium as gym, quadrat_env\n"
            "from gymnasium.utils.env_checker import check_env\n"
            "for i in quadrat_env.ENV_IDS:\n"
            "    env = gym.make(i).unwrapped\n"
            "    assert env.metadata['render_modes'] == ['ansi'], env.metadata\n"
            "    check_env(env)\n"
            "print('ok')")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_sb3_adapter_spec_and_a_failed_step():
    from quadrat_env.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env(ZU, n_envs=2, seed=0)
    assert venv.get_attr("spec") == [venv.spec, venv.spec] and venv.spec.id == ZU
    venv.reset()
    venv.step_async(np.array([0, 99]))
    with pytest.raises(ValueError, match="out of range"):
        venv.step_wait()
    with pytest.raises(RuntimeError, match="without step_async"):
        venv.step_wait()  # not the old error again


def failing_task(task, args):  # noqa: ANN001, ANN201 - a module-level function, so workers can load it
    raise OSError(f"disk full while running {task[1]}")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_benchmark_ends_with_one_line_when_a_worker_fails(jobs, monkeypatch, capsys, tmp_path):
    from quadrat_env.experiments import benchmark

    monkeypatch.setattr(benchmark, "run_task", failing_task)
    code = benchmark.main(["--deals", "2", "--planner-deals", "0", "--env", ZU, "--jobs", jobs,
                           "--out", str(tmp_path), "--no-plots", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "disk full" in err[0] and "OSError" in err[0]


@pytest.mark.parametrize("seed", [True, np.bool_(False), -1, 2.0, "3"])
def test_single_and_batched_env_refuse_the_same_seeds(seed):
    env = gym.make("quadrat_env/Zudecken-v0")
    vec = gym.make_vec("quadrat_env/Zudecken-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="seed must be"):
        env.reset(seed=seed)
    with pytest.raises(ValueError, match="seed must be"):
        vec.reset(seed=seed)


def test_single_and_batched_env_take_numpy_integer_seeds():
    env = gym.make("quadrat_env/Zudecken-v0")
    vec = gym.make_vec("quadrat_env/Zudecken-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert np.array_equal(env.reset(seed=np.int64(3))[0], env.reset(seed=3)[0])
    assert np.array_equal(vec.reset(seed=np.int64(3))[0][0], env.reset(seed=3)[0])


def test_a_huge_deck_is_refused_by_its_length_before_it_is_read():
    env = gym.make("quadrat_env/Zudecken-v0")
    env.reset(seed=1)
    before = env.unwrapped.deck
    for deck in (range(10**9), "AS " * 10**6, np.zeros(10**7, dtype=np.int64)):
        with pytest.raises(ValueError, match="cards; this game needs 52"):
            env.reset(options={"deck": deck})
    assert env.unwrapped.deck == before


def test_a_masked_array_deck_is_refused_or_read_by_its_data():
    from quadrat_env.cards import PACKS

    env = gym.make("quadrat_env/Zudecken-v0")
    masked = np.ma.masked_array(np.array(PACKS[52]), mask=[True] + [False] * 51)
    with pytest.raises(ValueError, match="masked"):
        env.reset(options={"deck": masked})
    obs, _ = env.reset(options={"deck": np.ma.masked_array(np.array(PACKS[52]))})
    assert np.array_equal(obs, env.reset(options={"deck": list(PACKS[52])})[0])
