"""The JAX rules equal the compiled rules step for step; the JAX IDs behave as the compiled ones."""

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
from quadrat_env.experiments.checks.jax_equal import compare  # noqa: E402

import quadrat_env  # noqa: E402
from quadrat_env.core.jax_core import pack_indices  # noqa: E402
from quadrat_env.core.rules import IllegalMove  # noqa: E402
from quadrat_env.functional import make  # noqa: E402
from quadrat_env.registry import jax_env_ids, jax_id, rules_for  # noqa: E402

IDS = quadrat_env.ENV_IDS


def decks(env_id, n, seed=0):
    pack = np.array(rules_for(env_id).pack)
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(pack) for _ in range(n)])


def test_every_id_has_a_jax_twin():
    assert jax_env_ids() == tuple(jax_id(i) for i in IDS)


@pytest.mark.parametrize("env_id", jax_env_ids())
def test_gymnasiums_checker_passes_every_jax_id(env_id):
    """What a user runs first on a new env: Gymnasium's ``check_env`` (it needs array-api-compat,
    which the ``jax`` extra installs)."""
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()
    assert all(i.startswith("quadrat_env_jax/") for i in jax_env_ids())


@pytest.mark.parametrize("policy", ["random", "greedy"])
@pytest.mark.parametrize("env_id", IDS)
def test_the_jax_rules_play_every_step_as_the_compiled_rules(env_id, policy):
    out = compare(env_id, decks(env_id, 300), policy)
    assert out["steps"] > 300 * 2
    assert out["disagreements"] == dict.fromkeys(out["disagreements"], 0), out["first"]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("quadrat_env/Zudecken-v0", {"cover": "pairs", "win": "dealt", "reward_mode": "dense"}),
        ("quadrat_env/Zudecken32-v0", {"win": "dealt"}),
        ("quadrat_env/Quadrille-v0", {"redeals": 0, "reward_mode": "dense"}),
        ("quadrat_env/Quadrille-v0", {"redeals": 5}),
    ],
)
def test_other_settings_play_as_the_compiled_rules_too(env_id, kwargs):
    out = compare(env_id, decks(env_id, 100, seed=1), "random", **kwargs)
    assert out["disagreements"] == dict.fromkeys(out["disagreements"], 0), out["first"]


def test_the_comparison_sees_one_wrong_bit(monkeypatch):
    from quadrat_env.slots.jax_rules import SlotJaxRules

    observe = SlotJaxRules.observe
    monkeypatch.setattr(SlotJaxRules, "observe", lambda self, b: observe(self, b).at[-1].add(1e-7))
    out = compare("quadrat_env/Zudecken32-v0", decks("quadrat_env/Zudecken32-v0", 20), "greedy")
    assert out["disagreements"]["observation"] > 0 and out["first"]["field"] == "observation"


@pytest.mark.parametrize("mode", ["penalize", "end", "raise"])
@pytest.mark.parametrize("env_id", ["quadrat_env/Zudecken-v0", "quadrat_env/Quadrille-v0"])
def test_illegal_actions_as_the_compiled_env(env_id, mode):
    kwargs = {"illegal_action": mode, "reward_mode": "dense", "illegal_penalty": 0.25}
    envs = [gym.make(i, **kwargs).unwrapped for i in (env_id, jax_id(env_id))]
    envs[0].reset(seed=3)
    deck = envs[0].deck
    outs = [env.reset(options={"deck": deck}) for env in envs]
    for _ in range(5):
        illegal = int(np.flatnonzero(outs[0][-1]["action_mask"] == 0)[0])
        if mode == "raise":
            for env in envs:
                with pytest.raises(IllegalMove, match="not legal now"):
                    env.step(illegal)
            np.testing.assert_array_equal(envs[0].action_masks(), envs[1].action_masks())  # unchanged
        else:
            steps = [env.step(illegal) for env in envs]
            _same(steps[0], steps[1])
            if steps[0][2]:
                return
        legal = int(np.flatnonzero(envs[0].action_masks())[0])
        outs = [env.step(legal) for env in envs]
        _same(outs[0], outs[1])
        if outs[0][2]:
            return


def _same(a, b):
    np.testing.assert_array_equal(a[0], np.asarray(b[0]))
    if len(a) == 5:
        assert np.float32(a[1]) == np.float32(b[1]) and a[2:4] == b[2:4]
    np.testing.assert_array_equal(a[-1]["action_mask"], b[-1]["action_mask"])
    assert {k: v for k, v in a[-1].items() if k != "action_mask"} == {
        k: v for k, v in b[-1].items() if k != "action_mask"
    }


def test_inside_jit_bad_actions_follow_the_setting_and_ended_games_stay_ended():
    env_id = "quadrat_env/Zudecken32-v0"
    env = make(env_id, illegal_action="end")
    state = env.init_deck(pack_indices(decks(env_id, 1)[0], rules_for(env_id).pack))
    step = jax.jit(env.step)
    for bad in (-1, env.num_actions, 10**6):
        out = step(state, bad)
        assert bool(out.illegal) and bool(out.terminated) and float(out.reward) == np.float32(-0.01)
        assert not bool(out.legal_action_mask.any())
    again = step(out, 0)
    assert float(again.reward) == 0.0 and bool(again.terminated) and int(again.elapsed) == int(out.elapsed)
    penalize = make(env_id)
    out = jax.jit(penalize.step)(state, -5)
    assert bool(out.illegal) and not bool(out.terminated)
    np.testing.assert_array_equal(np.asarray(penalize.observe(out)), np.asarray(penalize.observe(state)))


def test_a_scan_rollout_of_many_deals_under_jit_and_vmap():
    env = make("quadrat_env/Zudecken-v0")

    def policy_step(state, key):
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(key, logits)
        state = env.step(state, action)
        return state, (state.reward, state.terminated)

    @jax.jit
    def rollout(key):
        keys = jax.random.split(key, 64)
        state = jax.vmap(env.init)(keys)
        steps = jax.random.split(key, 60 * 64).reshape(60, 64, 2)
        return jax.lax.scan(jax.vmap(policy_step), state, steps)

    final, (rewards, terminated) = rollout(jax.random.PRNGKey(0))
    assert bool(final.terminated.all())  # a 52-card deal ends within 52 moves
    assert int(rewards.sum()) == int(final.won.sum()) and 0 < int(final.won.sum()) < 64  # sparse: 1 a win
    assert terminated.shape == (60, 64)


def test_gym_make_and_make_vec_replay_a_deal_as_the_compiled_envs():
    compiled = gym.make("quadrat_env/Zudecken-v0")
    env = gym.make("quadrat_env_jax/Zudecken-v0")
    obs, info = env.reset(seed=5)
    obs_c, info_c = compiled.reset(options={"deck": env.unwrapped.deck})
    np.testing.assert_array_equal(np.asarray(obs), obs_c)
    again, _ = env.reset(options={"deck": env.unwrapped.deck})
    np.testing.assert_array_equal(np.asarray(again), obs_c)
    assert env.reset(seed=5)[0].tolist() == obs.tolist()  # a seed deals the same deck again
    venv = gym.make_vec("quadrat_env_jax/Zudecken-v0", num_envs=3)
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs_v, info_v = venv.reset(options={"decks": [env.unwrapped.deck, None, env.unwrapped.deck]})
    np.testing.assert_array_equal(np.asarray(obs_v[0]), obs_c)
    np.testing.assert_array_equal(np.asarray(obs_v[2]), obs_c)
    assert venv.action_masks().shape == (3, 12) and info_v["action_mask"].dtype == jnp.int8
    for _ in range(60):
        obs_v, rewards, terminated, truncated, info_v = venv.step(venv.action_masks().argmax(axis=1))
    assert obs_v.shape == (3, 269) and rewards.dtype == jnp.float32


def test_bad_input_gives_the_compiled_envs_errors_and_changes_nothing():
    env = gym.make("quadrat_env_jax/Zudecken32-v0").unwrapped
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(0)
    obs, _ = env.reset(seed=1)
    deck = env.deck
    for bad in ([], ["AS"] * 32, list(deck[:-1]), "nonsense"):
        with pytest.raises(ValueError, match="bad deck"):
            env.reset(options={"deck": bad})
    for bad in (1.5, True, -1, 12, np.array([0, 1]), "0"):
        with pytest.raises(ValueError, match="outside the action space"):
            env.step(bad)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    assert env.deck == deck and np.asarray(env.func_env.observation(env.state, None)).tolist() == obs.tolist()
    while not bool(env.state.terminated):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(0)
    venv = gym.make_vec("quadrat_env_jax/Zudecken32-v0", num_envs=2)
    venv.reset(seed=0)
    for bad in ([0], [0.5, 1], [0, 99]):
        with pytest.raises(ValueError, match="actions must be 2 integers"):
            venv.step(np.array(bad))
    with pytest.raises(ValueError, match="render_mode"):
        gym.make("quadrat_env_jax/Zudecken32-v0", render_mode="ansi")


def test_import_quadrat_env_does_not_import_jax_and_a_missing_jax_is_one_line():
    code = (
        "import sys; import quadrat_env; assert 'jax' not in sys.modules, 'jax imported';"
        "sys.modules['jax'] = None; import gymnasium as gym\n"
        "try:\n    gym.make('quadrat_env_jax/Zudecken-v0')\n"
        "except ImportError as err:\n    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "'jax' extra" in out.stdout and 'pip install "quadrat-env[jax]"' in out.stdout


def test_the_functional_api_checks_what_it_is_given_eagerly():
    """A deck that repeats or leaves out a card, a card outside the pack, an action or a time limit
    beyond int32: a clear ValueError (or, for the action, an illegal move), never a silent deal."""
    env = make("quadrat_env/Zudecken32-v0")
    pack = rules_for("quadrat_env/Zudecken32-v0").pack
    for bad, message in (([0] * 32, "each pack index 0..31 once"), (list(range(31)), "must be 32")):
        with pytest.raises(ValueError, match=message):
            env.init_deck(jnp.asarray(bad))
    with pytest.raises(ValueError, match=r"\[1\] are not in this game's 32-card pack"):
        pack_indices([1, *pack[1:]], pack)  # the two of clubs is not in the Skat pack
    with pytest.raises(ValueError, match="are not in this game's"):
        pack_indices([-1, *pack[1:]], pack)
    with pytest.raises(ValueError, match="once"):
        pack_indices([pack[0], *pack[:-1]], pack)
    state = env.init_deck(jnp.asarray(pack_indices(pack, pack)))
    after = env.step(state, 10**10)  # out of range: the illegal-action rule, as for action 99
    assert bool(after.illegal) and bool(env.step(state, 99).illegal)
    with pytest.raises(ValueError, match="max_episode_steps must be at most 2\\*\\*31 - 1"):
        make("quadrat_env/Zudecken32-v0", max_episode_steps=2**40)
    with pytest.raises(RuntimeError, match="call reset\\(\\) first"):
        gym.make("quadrat_env_jax/Zudecken32-v0").unwrapped.action_masks()
