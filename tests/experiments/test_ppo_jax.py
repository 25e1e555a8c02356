"""PPO in JAX: masks respected, a tiny run learns, its exported model plays the held-out deals move for
move as the JAX policy does, a stopped run resumes to the same weights, bad input is one line."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import yaml

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("sb3_contrib")

import jax  # noqa: E402
from quadrat_env.agents.evaluate import evaluate  # noqa: E402
from quadrat_env.agents.sb3_agent import SB3Agent  # noqa: E402
from quadrat_env.experiments import benchmark, ppo_jax, publish  # noqa: E402
from quadrat_env.experiments.checks import model_equal  # noqa: E402
from quadrat_env.experiments.common import checkpoint  # noqa: E402
from quadrat_env.experiments.common.jax_learners import ppo as core  # noqa: E402
from quadrat_env.experiments.common.jax_learners import run as jax_run  # noqa: E402
from quadrat_env.experiments.common.jax_learners.ppo import JaxPPO  # noqa: E402

from quadrat_env import seeds  # noqa: E402

QUADRILLE, Z32 = "quadrat_env/Quadrille-v0", "quadrat_env/Zudecken32-v0"


def small(**kw) -> ppo_jax.Settings:  # noqa: ANN003
    values = {"env_id": QUADRILLE, "seed": 0, "n_moves": 8192, "n_envs": 64, "n_steps": 16,
              "n_minibatches": 4, "hidden": [32, 32], "eval_every": 4096, "eval_deals": 64, "test_deals": 128,
              **kw}  # fmt: skip
    return ppo_jax.Settings(**values)


AFTERSTATES = {
    "features": "zudecken-afterstates",
    "features_kwargs": {"channels": 8, "layers": 2, "hidden": 16},
}


@pytest.mark.parametrize(("env_id", "policy"), [(QUADRILLE, {}), (Z32, {}), (Z32, AFTERSTATES)])
def test_sampled_actions_are_always_legal(env_id, policy):
    learner = JaxPPO(small(env_id=env_id, **policy))
    carry, step = learner.init(), jax.jit(learner._step)
    env, pool, keys = carry.env, carry.pool, jax.random.split(jax.random.key(1), 40)
    for key in keys:  # 40 moves on 64 deals, new deals dealt as old ones end
        env, pool, t, _ = step(carry.params, env, pool, key)
        assert np.asarray(t.mask)[np.arange(64), np.asarray(t.action)].all()


def test_a_tiny_run_learns_and_its_model_plays_as_the_jax_policy(tmp_path):
    """Quadrille from the sparse reward: 300k moves (about 30 s) take the greedy policy of the
    network from about 1% (random play wins 0%) to over 20% (measured: 1.2% -> 23.6%); SB3 loading
    the exported model wins exactly the same held-out deals on the compiled env."""
    settings = small(n_moves=300_000, n_envs=128, hidden=[64, 64], learning_rate=1e-3, learning_rate_end=1e-3,
                     eval_every=300_000, eval_deals=500, test_deals=500)  # fmt: skip
    summary = ppo_jax.train(settings, tmp_path, progress=False)
    first, last = np.loadtxt(tmp_path / "curve.csv", delimiter=",", skiprows=1)[[0, -1], 3]
    assert last > first + 0.1, (first, last)
    agent = SB3Agent.load(tmp_path / "model.zip", None, QUADRILLE)
    compiled = evaluate(QUADRILLE, agent, seeds.BENCHMARK.take(500), progress=False, n_envs=250)[0]
    assert compiled.wins == summary["test_wins"]
    assert compiled.illegal_rate == 0.0
    # published where the benchmark finds it, as its own kind, with its training row
    models = tmp_path / "models"
    (tmp_path / "config.yml").write_text(yaml.safe_dump(settings.config()))  # as the command writes it
    assert publish.publish(tmp_path, models) == models / "Quadrille-ppo_jax.zip"
    published = SB3Agent.load(models / "Quadrille-ppo_jax.zip", benchmark.MODEL_KINDS["ppo_jax"], QUADRILLE)
    again = evaluate(QUADRILLE, published, seeds.BENCHMARK.take(500), progress=False, n_envs=250)[0]
    assert again.wins == summary["test_wins"]
    method = (
        f"PPO from the reward, JAX, mlp 64x64, ent_coef {settings.ent_coef}, on {summary['device']}, 128 envs"
    )
    row = f"| Quadrille-ppo_jax | 0 | {method} | {summary['moves']:,} |"
    assert row in benchmark.training_table(models)


def test_an_afterstate_policy_scores_the_moves_and_its_model_plays_as_the_jax_policy(tmp_path):
    """The afterstate network as the policy: its logits are the network's scores of the legal
    moves, the critic is the MLP's value net; the exported model (the afterstate network alone, as
    td_jax writes it) gives the JAX policy's move probabilities and wins the same held-out deals,
    but for near-ties broken differently by the two backends' rounding."""
    settings = small(env_id=Z32, n_moves=4096, test_deals=200, **AFTERSTATES)
    learner = JaxPPO(settings)
    params = learner.init().params
    assert {k for k in params if not k.startswith(core.AFTERSTATES)} == {
        k for k in core.init_policy(jax.random.key(0), 169, 12, (32, 32)) if "value_net" in k
    }
    env = learner.init().env
    obs = jax.vmap(learner.core.observe)(env)
    logits = np.asarray(learner.forward(params, obs, env.legal_action_mask)[0])
    scores = np.asarray(
        learner.net.scores(core.afterstate_weights(params), *jax.vmap(learner.net.afterstates)(obs))
    )
    legal = np.asarray(env.legal_action_mask)
    assert np.array_equal(logits[legal], scores[legal]) and (logits[~legal] == core.MASKED).all()
    assert "features" not in small().config() and small().config() == small(features=None).config()

    summary = ppo_jax.train(settings, tmp_path, progress=False)
    assert summary["network"] == "zudecken-afterstates" and summary["critic"]["net_arch"] == [32, 32]
    trained = {k: jax.numpy.asarray(v) for k, v in checkpoint.load(tmp_path / jax_run.WEIGHTS)[1].items()}
    logits = learner.forward(trained, obs, env.legal_action_mask)[0]
    agent = SB3Agent.load(tmp_path / "model.zip", None, Z32)
    theirs = np.stack([agent.probabilities(o[None], m) for o, m in zip(np.asarray(obs), legal, strict=True)])
    assert np.allclose(theirs, jax.nn.softmax(logits), atol=1e-5)  # the same policy, move for move
    compiled = evaluate(Z32, agent, seeds.BENCHMARK.take(200), progress=False, n_envs=200)[0]
    # greedy play: the same deals won but where near-ties break differently (measured: 13 vs 12)
    assert abs(compiled.wins - summary["test_wins"]) <= 3 and compiled.illegal_rate == 0.0
    # published as a learner of its own (not the MLP's ppo_jax row), named by its network
    models = tmp_path / "models"
    (tmp_path / "config.yml").write_text(yaml.safe_dump(settings.config()))  # as the command writes it
    kind = "ppo_jax_afterstates"
    assert publish.publish(tmp_path, models) == models / f"Zudecken32-{kind}.zip"
    published = SB3Agent.load(models / f"Zudecken32-{kind}.zip", benchmark.MODEL_KINDS[kind], Z32)
    again = evaluate(Z32, published, seeds.BENCHMARK.take(200), progress=False, n_envs=200)[0]
    assert again.wins == compiled.wins
    method = (
        f"PPO from the reward, JAX, zudecken-afterstates, ent_coef {settings.ent_coef}, "
        f"on {summary['device']}, 64 envs"
    )
    assert f"| Zudecken32-{kind} | 0 | {method} | {summary['moves']:,} |" in benchmark.training_table(models)
    # on the same states the two sides part only at near ties: gaps far below the usual ones
    same = model_equal.compare(tmp_path, 200)
    assert same["decisions"] > 1000 and same["largest_gap_jax"] <= 1e-3 * same["median_gap_jax"], same
    assert same["wins_jax"] == summary["test_wins"] and abs(same["wins_compiled"] - compiled.wins) <= 3


def test_a_stopped_run_resumes_to_the_uninterrupted_weights(tmp_path, monkeypatch):
    monkeypatch.setattr(jax_run, "CALL_MOVES", 1024)
    ppo_jax.train(small(), tmp_path / "whole", progress=False)
    train = jax_run.Runs.train

    def once(self, carry):  # noqa: ANN001, ANN202
        carry = train(self, carry)
        os.kill(os.getpid(), signal.SIGTERM)
        return carry

    with monkeypatch.context() as m:
        m.setattr(jax_run.Runs, "train", once)
        assert ppo_jax.train(small(), tmp_path / "part", progress=False)["interrupted"] == signal.SIGTERM
    ppo_jax.train(small(), tmp_path / "part", resume=True, progress=False)
    a = checkpoint.load(tmp_path / "whole" / jax_run.WEIGHTS)[1]
    b = checkpoint.load(tmp_path / "part" / jax_run.WEIGHTS)[1]
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(("change", "message"), [
    ({"n_minibatches": 3}, "does not split into 3 minibatches"),
    ({"hidden": [0]}, "hidden must be a list of layer widths"),
    ({"max_grad_norm": 0}, "max_grad_norm must be a number > 0"),
    ({"gamma": 1.5}, "gamma must be a number in"),
    ({"n_moves": 100}, "lower --n-envs"),
    ({"features_kwargs": {"channels": 8}}, "features_kwargs sizes an afterstate policy"),
    ({"features": 3}, "features must be an afterstate network's name"),
])  # fmt: skip
def test_settings_are_checked(change, message):
    with pytest.raises(ValueError, match=message):
        small(**change)


@pytest.mark.parametrize(("args", "message"), [
    (["--env", "Nope"], "unknown env 'Nope'"),
    (["--env", "Quadrille", "--moves", "10"], "lower --n-envs"),
    (["--env", "Quadrille", "--set", "ent_coef"], "--set takes KEY=VALUE"),
    (["--env", "Quadrille", "--set", "ent_coef=[1"], "--set ent_coef: not a YAML value"),
    (["--env", "Quadrille", "--set", "entropy=0.1"], "unknown settings: entropy"),
    (["--env", "Quadrille", "--set", "ent_coef=2"], "ent_coef must be a number in [0, 1]"),
    (["--env", "Zudecken32", "--set", "features=nope"], "features 'nope' has no JAX afterstate network"),
    (["--env", "Quadrille", "--set", "features=zudecken-afterstates"], "expects a Zudecken observation"),
    (["--env", "Zudecken32", "--set", "features=zudecken-afterstates", "--set", "features_kwargs={depth: 2}"],
     "unknown afterstate network sizes: depth"),
    (["--export", "missing-folder"], "not a readable checkpoint"),
    ([], "--env is required"),
])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        ppo_jax.main([*args, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err.strip().splitlines()[-1], err


def test_set_overrides_a_yaml_setting_in_the_runs_config(tmp_path, monkeypatch):
    from quadrat_env.experiments.common.jax_learners import cli

    monkeypatch.setattr(
        cli.Learner, "train_seeds", lambda *a, **k: [{"interrupted": signal.SIGTERM, "moves": 0}]
    )
    argv = ["--env", "Quadrille", "--set", "ent_coef=0.05", "--set", "hidden=[16, 16]", "--moves", "65536",
            "--out", str(tmp_path)]  # fmt: skip
    assert ppo_jax.main(argv) == 128 + signal.SIGTERM  # settings checked, config written, no training
    config = yaml.safe_load((tmp_path / "ppo_jax" / "Quadrille-seed0" / "config.yml").read_text())
    assert config["ent_coef"] == 0.05 and config["hidden"] == [16, 16] and config["n_moves"] == 65536
