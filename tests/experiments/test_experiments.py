"""Smoke tests of training, saving, loading and the benchmark (a few hundred steps; no timing)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml
from quadrat_env.agents import evaluate
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.experiments import benchmark, train
from quadrat_env.experiments.common import pages

import quadrat_env

ROOT = Path(__file__).resolve().parents[2]
ZU = "quadrat_env/Zudecken-v0"


@pytest.mark.parametrize("algo", train.ALGOS)
def test_trained_models_load_and_play_the_registered_env(models, algo):
    agent = SB3Agent.load(models / f"Zudecken-{algo}.zip", algo, ZU)
    summary, episodes = evaluate(ZU, agent, range(20), progress=False)
    assert summary.episodes == 20 and all(e.steps >= 1 for e in episodes)
    if algo == "maskable_ppo":
        assert summary.illegal_rate == 0.0


def test_benchmark_json_schema(models, tmp_path):
    out = tmp_path / "out"
    benchmark.main(["--deals", "12", "--planner-deals", "3", "--planner-samples", "2", "--env", ZU,
                    "--env", "quadrat_env/Quadrat-v0", "--jobs", "2",
                    "--models", str(models), "--out", str(out), "--no-progress"])  # fmt: skip
    result = json.loads((out / "benchmark.json").read_text())
    assert result["schema_version"] == benchmark.SCHEMA_VERSION and result["deals"] == 12
    zu = [r["agent"] for r in result["rows"] if r["env_id"] == ZU]
    assert zu == ["random", "greedy", "planner", "ppo", "maskable_ppo", "solver (knows the stock)"]
    assert [r["env_id"] for r in result["rows"]][0] == ZU  # rows keep the order of --env
    keys = {"env_id", "agent", "episodes", "wins", "win_rate", "ci_low", "ci_high",
            "mean_cards_left", "illegal_rate", "seconds"}  # fmt: skip
    for row in result["rows"]:
        assert keys <= row.keys() and row["ci_low"] <= row["win_rate"] <= row["ci_high"]
    assert {s["algo"] for s in result["learned"]} == {"ppo", "maskable_ppo"}
    assert (out / "benchmark.md").read_text().startswith("| env | agent |")
    assert (out / "win_rates.png").stat().st_size > 1000
    # the planner's time a decision, from the run itself: no page states one the run did not measure
    planner = next(r for r in result["rows"] if r["agent"] == "planner")
    assert (
        planner["decisions"] >= 3
        and "ms a decision on Zudecken in this run" in (out / "benchmark.md").read_text()
    )


def test_page_markers_are_replaced(tmp_path):
    page = tmp_path / "benchmark.md"
    page.write_text(f"intro\n{benchmark.MARKERS[0]}\nold\n{benchmark.MARKERS[1]}\nrest\n")
    pages.update_page(page, "| new |\n", "cmd", benchmark.MARKERS)
    text = page.read_text()
    assert "old" not in text and "| new |" in text and text.endswith(f"{benchmark.MARKERS[1]}\nrest\n")
    page.write_text("no markers")
    with pytest.raises(ValueError, match="lacks the markers"):
        pages.update_page(page, "x", "cmd", benchmark.MARKERS)


def test_update_docs_outside_the_repository_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        benchmark.main(["--update-docs", "--deals", "1"])
    assert exc.value.code == 2 and "run it from the repository root" in capsys.readouterr().err


@pytest.mark.parametrize(("command", "argv"), [
    ("train", ["--env", ZU, "--algo", "a2c"]),
    ("train", ["--env", "CartPole-v1", "--algo", "ppo"]),
    ("train", ["--env", ZU, "--algo", "ppo", "--timesteps", "0"]),
    ("train", ["--env", ZU, "--algo", "ppo", "--hyperparams", "/nonexistent.yml"]),
    ("train", ["--env", ZU, "--algo", "ppo", "--init", "/nonexistent.zip"]),
    ("grid", ["--envs", "Nope"]),
    ("grid", ["--envs", "Zudecken", "--seeds", "-1"]),
    ("grid", ["--envs", "Zudecken", "--algos", "dqn"]),
    ("grid", ["--envs", "Zudecken", "--jobs", "0"]),
])  # fmt: skip
def test_training_commands_reject_bad_arguments(command, argv, capsys):
    import importlib

    module = importlib.import_module(f"quadrat_env.experiments.{command}")
    with pytest.raises(SystemExit) as exc:
        module.main(argv)
    assert exc.value.code == 2 and "error" in capsys.readouterr().err


@pytest.mark.parametrize("algo", train.ALGOS)
def test_training_is_reproducible_from_config_and_seed(tmp_path, algo):
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    params = []
    for run in ("a", "b"):
        train.main(["--env", "quadrat_env/Quadrille-v0", "--algo", algo, "--seed", "3", "--timesteps",
                    "512", "--n-envs", "2", "--out", str(tmp_path / run), "--no-progress"])  # fmt: skip
        path = tmp_path / run / algo / "Quadrille-seed3" / "model.zip"
        model = (MaskablePPO if algo == "maskable_ppo" else PPO).load(path, device="cpu")
        params.append(model.policy.state_dict())
    assert all(torch.equal(params[0][k], params[1][k]) for k in params[0])


def test_curve_and_features_from_the_yaml(tmp_path):
    """--eval-every writes one curve point per interval plus the last, each a win rate with its
    interval on validation deals; ``features: zudecken`` gives the policy ZudeckenFeatures."""
    import csv

    from quadrat_env.agents.networks import extractor

    hp = tmp_path / "hp.yml"
    entry = yaml.safe_load((train.HYPERPARAMS / "zudecken_rl.yml").read_text())[ZU]
    hp.write_text(yaml.safe_dump({ZU: {**entry, "n_envs": 8, "n_steps": 16, "batch_size": 64}}))
    train.main(["--env", ZU, "--algo", "maskable_ppo", "--hyperparams", str(hp), "--timesteps", "256",
                "--eval-every", "128", "--eval-deals", "20", "--out", str(tmp_path),
                "--no-progress"])  # fmt: skip
    folder = tmp_path / "maskable_ppo" / "Zudecken-seed0"
    rows = list(csv.DictReader((folder / "curve.csv").open()))
    assert [int(r["steps"]) for r in rows] == [8, 136, 256]  # at the start, every 128 steps, the end
    for r in rows:
        assert r["deals"] == "20" and float(r["ci_low"]) <= float(r["win_rate"]) <= float(r["ci_high"])
    model = SB3Agent.load(folder / "model.zip", "maskable_ppo", ZU).model
    assert type(model.policy.features_extractor) is extractor("zudecken")


def test_train_rejects_an_unknown_features_name(tmp_path, capsys):
    hp = tmp_path / "hp.yml"
    hp.write_text(yaml.safe_dump({ZU: {"n_timesteps": 64, "n_envs": 1, "features": "os.system"}}))
    with pytest.raises(SystemExit) as exc:
        train.main(["--env", ZU, "--algo", "maskable_ppo", "--hyperparams", str(hp), "--out", str(tmp_path)])
    assert exc.value.code == 2 and "features must be" in capsys.readouterr().err
    assert not (tmp_path / "maskable_ppo").exists()


def test_fine_tuning_starts_from_the_given_model(models, tmp_path):
    init = models / "Zudecken-maskable_ppo.zip"
    train.main(["--env", ZU, "--algo", "maskable_ppo", "--timesteps", "64", "--n-envs", "1",
                "--init", str(init), "--out", str(tmp_path), "--no-progress"])  # fmt: skip
    folder = tmp_path / "maskable_ppo" / "Zudecken-seed0"
    assert yaml.safe_load((folder / "config.yml").read_text())["init"] == str(init)
    assert SB3Agent.load(folder / "model.zip", "maskable_ppo", ZU).model.policy_kwargs == (
        SB3Agent.load(init, "maskable_ppo", ZU).model.policy_kwargs
    )


def test_init_logit_scale_sharpens_the_policy_and_keeps_its_argmax(models):
    import torch

    model = SB3Agent.load(models / "Zudecken-maskable_ppo.zip", "maskable_ppo", ZU).model
    env = gym.make(ZU)
    obs = torch.as_tensor(np.array([env.reset(seed=s)[0] for s in range(20)]))
    before = model.policy.get_distribution(obs).distribution.logits.detach()
    train._scale_logits(model.policy, 8.0)
    after = model.policy.get_distribution(obs).distribution.logits.detach()
    assert torch.equal(before.argmax(1), after.argmax(1))
    assert (after.softmax(1).amax(1) >= before.softmax(1).amax(1) - 1e-6).all()


@pytest.mark.parametrize("scale", [0, -1.0, "big", True])
def test_train_refuses_a_bad_init_logit_scale(tmp_path, capsys, scale):
    hp = tmp_path / "hp.yml"
    hp.write_text(yaml.safe_dump({ZU: {"n_timesteps": 64, "n_envs": 1, "init_logit_scale": scale}}))
    with pytest.raises(SystemExit) as exc:
        train.main(["--env", ZU, "--algo", "maskable_ppo", "--hyperparams", str(hp), "--out", str(tmp_path)])
    assert exc.value.code == 2 and "init_logit_scale must be" in capsys.readouterr().err
    assert not (tmp_path / "maskable_ppo").exists()


def test_demo_command(tmp_path, capsys):
    from quadrat_env.experiments import demo

    assert demo.main(["--deals", "3", "--show", "1", "--env", ZU, "--no-progress",
                      "--json", str(tmp_path / "demo.json")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "| quadrat_env/Zudecken-v0 | greedy | 3 |" in out and "cards left" in out
    assert len(json.loads((tmp_path / "demo.json").read_text())) == 2


def test_throughput_command_writes_every_measurement(tmp_path, monkeypatch, capsys):
    from quadrat_env.experiments import throughput

    # Smaller jobs for a test: 2,000 greedy deals on 100 envs, and no PPO timing.
    monkeypatch.setattr(throughput, "SIZES", (4, 8, 16))
    original = throughput.greedy_deals
    monkeypatch.setattr(throughput, "greedy_deals", lambda env_id: original(env_id, 2000, 100))
    throughput.main(["--seconds", "0.01", "--ppo-timesteps", "0", "--out", str(tmp_path), "--jax", "off"])
    assert not list(tmp_path.glob("throughput_jax*"))
    data = json.loads((tmp_path / "throughput.json").read_text())
    assert data["single Blackjack-v1"] > 0
    for env_id in ("quadrat_env/Zudecken-v0", "quadrat_env/Quadrille-v0"):
        assert data[f"native {env_id} x16"] > 0 and data[f"sync {env_id} x16"] > 0
    greedy = data["greedy 100k quadrat_env/Zudecken-v0"]
    assert greedy["deals"] == 2000 and 0.01 < greedy["win_rate"] < 0.12
    assert 0.4 < data["greedy 100k quadrat_env/Quadrille-v0"]["win_rate"] < 0.8  # always playing: about 59%
    assert "| Zudecken-v0 |" in (tmp_path / "throughput.md").read_text()
    with pytest.raises(SystemExit):
        throughput.main(["--seconds", "0"])


def test_throughput_measures_the_jax_rules_with_the_device_name(tmp_path, monkeypatch):
    pytest.importorskip("jax")
    from quadrat_env.experiments import throughput
    from quadrat_env.experiments.common.jax_speed import spread_pairs

    # one size and two games: each size compiles each game's scan three times (pool, fresh and
    # replayed deals) and its batched env; every game's JAX rules are played in tests/env/test_jax.py
    with monkeypatch.context() as two_games:
        two_games.setattr(quadrat_env, "MAIN_IDS", ("quadrat_env/Quadrille-v0", "quadrat_env/Zudecken32-v0"))
        throughput.main(["--seconds", "0.01", "--jax", "only", "--jax-sizes", "16", "--out", str(tmp_path)])
    assert not (tmp_path / "throughput.json").exists()  # --jax only: the other measurements are not made
    data = json.loads((tmp_path / "throughput_jax_cpu.json").read_text())
    assert data["jax device"] == "cpu: cpu" and data["jax version"]
    for key in ("jax pool", "jax fresh", "jax replay", "vec compiled", "vec jax"):
        assert data[f"{key} quadrat_env/Quadrille-v0 x16"] > 0
    table = (tmp_path / "throughput_jax_cpu.md").read_text()
    assert "| Zudecken32-v0 | 16 |" in table and "**cpu: cpu**" in table
    # several sizes: a column each, in order, as the rows the command makes name them
    labels = [label for label, _ in throughput.jax_rows((4096, 8), 0.01)]
    pairs = {label: {"compiled": 1234.0, "jax": 1234.0} if label.startswith("vec ") else 1234.0
             for label in labels}  # fmt: skip
    two = throughput.jax_table({**spread_pairs(pairs), "jax device": "d", "jax version": "v"})
    rows = [line for line in two.splitlines() if line.startswith("| Quadrat-v0 |")]
    cells = "1,234 / 1,234 | 1.00x | 1,234 / 1,234 / 1,234 | 1.00 |"
    assert rows == [f"| Quadrat-v0 | 8 | {cells}", f"| Quadrat-v0 | 4,096 | {cells}"]


@pytest.mark.parametrize("name", ["Quadrat", "Quadrat52", "Zudecken", "Zudecken32", "Quadrille"])
def test_committed_models_load_on_cpu_and_play_their_env(name):
    from quadrat_env.experiments.publish import MODELS

    from quadrat_env.wrappers import mask_observation_space

    env_id = f"quadrat_env/{name}-v0"
    for algo in train.ALGOS:
        agent = SB3Agent.load(MODELS / f"{name}-{algo}.zip", algo, env_id)
        env = gym.make(env_id)
        # plain PPO sees the legal actions after the observation (ppo.yml: observe_mask)
        expected = (mask_observation_space(env.observation_space, int(env.action_space.n))
                    if agent.observes_mask else env.observation_space)  # fmt: skip
        assert agent.model.observation_space == expected and agent.observes_mask == (algo == "ppo")
        summary, _ = evaluate(env_id, agent, range(3), progress=False)
        assert summary.episodes == 3
        if algo == "maskable_ppo":
            assert summary.illegal_rate == 0.0


def test_publishing_replaces_an_earlier_runs_monitor_logs(tmp_path):
    from quadrat_env.experiments.publish import monitor_logs

    from quadrat_env.journal import replace_all

    target = tmp_path / "models" / "monitor" / "X"
    target.mkdir(parents=True)
    (target / "7.monitor.csv.gz").write_bytes(b"stale")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "0.monitor.csv").write_text("#{}\nr,l,t\n")
    replace_all(monitor_logs(tmp_path / "run", target), tmp_path / "journal")
    assert sorted(p.name for p in target.iterdir()) == ["0.monitor.csv.gz"]


def test_solver_then_now_times_both_on_the_same_deals(capsys):
    """The earlier commit's solver and today's decide the same deals (the command refuses to
    report a speed-up when they disagree)."""
    import subprocess
    from pathlib import Path

    from scripts import solver_then_now

    repo = Path(solver_then_now.__file__).resolve().parents[1]
    if subprocess.run(["git", "-C", str(repo), "cat-file", "-e", "20c39d5^{commit}"]).returncode != 0:
        pytest.skip("needs the repository's history (a shallow clone lacks commit 20c39d5)")
    assert solver_then_now.main(["--deals", "30", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "winnable in both" in out and "faster than 20c39d5" in out


def test_startup_measures_first_use_in_fresh_processes():
    from quadrat_env.experiments.checks import startup

    cold, warm = startup.measure("quadrat_env/Quadrat-v0", runs=1)
    assert cold > 0 and warm > 0


def test_the_benchmark_writes_a_new_run_folder_and_leaves_the_working_tree_as_it_was(tmp_path, monkeypatch):
    import subprocess

    def tracked_changes() -> str:
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                              capture_output=True, text=True).stdout  # fmt: skip

    before = tracked_changes()
    monkeypatch.chdir(tmp_path)
    argv = [
        "--deals",
        "2",
        "--planner-deals",
        "0",
        "--env",
        "quadrat_env/Quadrat-v0",
        "--no-plots",
        "--no-progress",
    ]
    assert benchmark.main(argv) == 0
    (run,) = (tmp_path / "runs" / "benchmark").iterdir()
    assert json.loads((run / "benchmark.json").read_text())["deals"] == 2
    assert tracked_changes() == before


def test_each_committed_run_s_monitor_logs_come_from_one_run():
    """A run's Monitor files start within a second of each other (one env each, started together);
    logs of another run beside them would mix two runs into one learning curve."""
    import gzip

    def start(log: Path) -> float:
        with gzip.open(log, "rt") as f:
            return json.loads(f.readline()[1:])["t_start"]

    for folder in sorted((ROOT / "experiments" / "models" / "monitor").iterdir()):
        starts = [start(log) for log in folder.glob("*.monitor.csv.gz")]
        assert starts and max(starts) - min(starts) < 1.0, folder.name


def test_tables_only_rewrites_tables_and_plots_from_an_earlier_run_and_plays_nothing(tmp_path, capsys):
    (tmp_path / "benchmark.json").write_bytes((ROOT / "results" / "benchmark.json").read_bytes())
    assert benchmark.main(["--out", str(tmp_path), "--tables-only", "--no-progress"]) == 0
    assert (tmp_path / "benchmark.md").read_text() == (ROOT / "results" / "benchmark.md").read_text()
    assert (tmp_path / "benchmark.json").read_bytes() == (ROOT / "results" / "benchmark.json").read_bytes()
    from matplotlib.testing.compare import compare_images

    for plot in ("win_rates.png", "learning_curves.png", "zudecken_share.png"):  # drawn again: as committed,
        # but for anti-aliasing that moves with numpy's build (measured: RMS 0.71 of 255 for the
        # learning curves between two machines)
        assert compare_images(str(ROOT / "results" / plot), str(tmp_path / plot), tol=2) is None, plot
    with pytest.raises(SystemExit) as stop:
        benchmark.main(["--out", str(tmp_path / "none"), "--tables-only"])
    assert stop.value.code == 2 and "--tables-only" in capsys.readouterr().err
