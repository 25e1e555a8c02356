"""Several seeds of a JAX learner in one vmapped program (``--seed 0 1``): each seed's folder is a
run of its own, its updates are its alone-run's up to floating point, a stopped group resumes to
the uninterrupted group's weights, and only beside the same seeds."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("sb3_contrib")

from quadrat_env.experiments import ppo_jax, td_jax  # noqa: E402
from quadrat_env.experiments.common import checkpoint  # noqa: E402
from quadrat_env.experiments.common.jax_learners import run as jax_run  # noqa: E402
from quadrat_env.experiments.common.jax_learners.ppo import JaxPPO  # noqa: E402
from quadrat_env.experiments.common.jax_learners.td import JaxTD  # noqa: E402

from quadrat_env import seeds  # noqa: E402

Z32 = "quadrat_env/Zudecken32-v0"
TINY = {"channels": 8, "layers": 2, "hidden": 16}


def small(seed: int, **kw) -> td_jax.Settings:  # noqa: ANN003
    values = {"n_moves": 8192, "n_envs": 64, "steps_per_update": 2, "eval_every": 4096, "eval_deals": 64,
              "test_deals": 128, "features": "zudecken-afterstates", "features_kwargs": TINY,
              **kw}  # fmt: skip
    return td_jax.Settings(env_id=Z32, seed=seed, **values)


def small_ppo(seed: int) -> ppo_jax.Settings:
    return ppo_jax.Settings.load(Z32, seed, ppo_jax.HYPERPARAMS, n_moves=4096, n_envs=32, n_steps=8,
                                 eval_every=4096, eval_deals=64, test_deals=64, hidden=[16])  # fmt: skip


@pytest.mark.parametrize(("core", "make"), [(JaxTD, small), (JaxPPO, small_ppo)])
def test_a_seed_beside_others_updates_as_it_would_alone(core, make):
    """Vmapped, a seed's first updates equal its own run's up to floating point (later the paths
    part: Adam and the argmax amplify rounding), and each seed's wins are its own params' wins."""
    learners = [core(make(s)) for s in (0, 1)]
    group = jax_run.Runs([jax_run.Run(learner.s, learner) for learner in learners])
    together = group.split(group._train(group.init(), 3)[0])
    learner, mine = learners[1], together[1]  # the second seed: the program is the first one's, vmapped
    alone = learner.train(learner.init(), 3)[0]
    for name, value in alone.params.items():
        np.testing.assert_allclose(mine.params[name], value, atol=1e-5, rtol=1e-4, err_msg=name)
    assert not np.allclose(together[0].params[name], together[1].params[name])
    decks = jax_run.decks(learner.s, seeds.BENCHMARK.take(200))
    wins = group.wins(group.stack([c.params for c in together]), decks)
    assert wins[1] == (int(np.asarray(learner.play(mine.params, decks)).sum()), 200)


def test_several_seeds_write_a_run_each_and_a_stopped_group_resumes_to_the_same_weights(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(jax_run, "CALL_MOVES", 1024)
    args = ["--env", "Zudecken32", "--seed", "3", "4", "--moves", "8192", "--n-envs", "64", "--eval-every",
            "4096", "--eval-deals", "64", "--test-deals", "128", "--set", f"features_kwargs={TINY}",
            "--no-progress"]  # fmt: skip
    assert td_jax.main([*args, "--out", str(tmp_path / "whole")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [f"td_jax on {Z32}, seed {s}" for s in (3, 4)]
    train = jax_run.Runs.train

    def once(self, carry):  # noqa: ANN001, ANN202
        carry = train(self, carry)
        os.kill(os.getpid(), signal.SIGTERM)  # the run's handler: checkpoints and stops
        return carry

    with monkeypatch.context() as m:
        m.setattr(jax_run.Runs, "train", once)
        assert td_jax.main([*args, "--out", str(tmp_path / "part")]) == 128 + signal.SIGTERM
    with pytest.raises(SystemExit) as stop:  # one seed of the two, alone: another program
        td_jax.main([*args[:2], "--seed", "4", *args[5:], "--out", str(tmp_path / "part"), "--resume"])
    assert stop.value.code == 2 and "resume it with --seed 3 4" in capsys.readouterr().err
    assert td_jax.main([*args, "--out", str(tmp_path / "part"), "--resume"]) == 0
    for seed in (3, 4):
        a, b = (tmp_path / run / "td_jax" / f"Zudecken32-seed{seed}" for run in ("whole", "part"))
        wa, wb = checkpoint.load(a / jax_run.WEIGHTS)[1], checkpoint.load(b / jax_run.WEIGHTS)[1]
        assert wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)
        assert (a / "curve.csv").read_text().count("\n") == 4 and (a / "model.zip").is_file()
        assert not (b / jax_run.CHECKPOINT).exists()
    summaries = [checkpoint.load(tmp_path / "whole" / "td_jax" / f"Zudecken32-seed{s}" / jax_run.WEIGHTS)[0]
                 for s in (3, 4)]  # fmt: skip
    assert [s["seed"] for s in summaries] == [3, 4]
    for seed in (3, 4):  # each summary names the program's seeds: its seconds are the program's
        summary = json.loads(
            (tmp_path / "part" / "td_jax" / f"Zudecken32-seed{seed}" / "summary.json").read_text()
        )
        assert summary["program_seeds"] == [3, 4]


def test_seeds_trained_together_need_the_same_settings():
    with pytest.raises(ValueError, match="distinct seeds and otherwise the same settings"):
        jax_run.Runs([jax_run.Run(s, JaxTD(s)) for s in (small(0), small(1, n_envs=32))])
    with pytest.raises(ValueError, match="distinct seeds"):
        jax_run.Runs([jax_run.Run(s, JaxTD(s)) for s in (small(2), small(2))])


def test_a_seed_named_twice_is_one_line_and_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        td_jax.main(["--env", "Zudecken32", "--seed", "1", "1", "--out", str(tmp_path)])
    assert stop.value.code == 2 and "--seed: each seed once, got 1 1" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
