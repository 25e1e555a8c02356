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

ROOT = Path(__file__).resolve().parents[1]
ZU = "quadrat_env/Zudecken-v0"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Train both algorithms for a few hundred steps and lay them out as committed models."""
    root = tmp_path_factory.mktemp("models")
    (root / "seeds").mkdir()
    for algo in train.ALGOS:
        run = root / "runs" / algo
        train.main(["--env", ZU, "--algo", algo, "--seed", "1", "--timesteps", "256",
                    "--n-envs", "2", "--out", str(run), "--no-progress"])  # fmt: skip
        folder = run / algo / "Zudecken-seed1"
        config = yaml.safe_load((folder / "config.yml").read_text())
        assert config["seed"] == 1 and config["n_timesteps"] == 256 and config["n_envs"] == 2
        assert list((folder / "monitor").glob("*.monitor.csv")) and (folder / "tb").is_dir()
        (folder / "model.zip").rename(root / f"Zudecken-{algo}.zip")
    return root


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


def test_page_markers_are_replaced(tmp_path):
    page = tmp_path / "benchmark.md"
    page.write_text(f"intro\n{benchmark.MARKERS[0]}\nold\n{benchmark.MARKERS[1]}\nrest\n")
    benchmark.update_page(page, "| new |\n", "cmd")
    text = page.read_text()
    assert "old" not in text and "| new |" in text and text.endswith(f"{benchmark.MARKERS[1]}\nrest\n")
    page.write_text("no markers")
    with pytest.raises(ValueError, match="lacks the markers"):
        benchmark.update_page(page, "x", "cmd")


def test_the_readme_headline_is_the_benchmarks_zudecken_table():
    import json

    result = json.loads((ROOT / "results" / "benchmark.json").read_text())
    from quadrat_env.experiments.zudecken.headline import HEADLINE, headline

    table = headline(result)
    readme = (ROOT / "README.md").read_text()
    start, end = (readme.index(m) for m in HEADLINE)
    assert table in readme[start:end]  # what the committed results give, as committed
    assert "| **exact optimum** | not known | – | 62.29% | 100% |" in table


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


def test_imitation_behaviour_model_plays_round_0(models, tmp_path):
    """``--behaviour MODEL``: round 0 labels the decisions that model reaches (here with no random
    moves: exactly its own play), and the run's config names it."""
    from quadrat_env.experiments.zudecken import imitate, imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection

    path = models / "Zudecken-maskable_ppo.zip"
    data = imitate_labels.collect(
        path.read_bytes(), range(700, 710), Collection(0.0, False), np.random.default_rng(0)
    )
    model, env, reached = SB3Agent.load(path, "maskable_ppo", ZU).model, gym.make(ZU), []
    for seed in range(700, 710):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            reached.append(obs)
            mask = info["action_mask"].astype(bool)
            action = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
            obs, _, done, _, info = env.step(action)
    labelled = {o.tobytes() for o in data["obs"]}
    assert labelled and labelled <= {o.tobytes() for o in reached}
    imitate.main(["--rounds", "1", "--deals-per-round", "20", "--epochs", "1", "--behaviour", str(path),
                  "--out", str(tmp_path)])  # fmt: skip
    assert yaml.safe_load((tmp_path / "Zudecken-seed0" / "config.yml").read_text())["behaviour"] == str(path)


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

    from quadrat_env.agents.zudecken.features import ZudeckenFeatures

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
    assert isinstance(model.policy.features_extractor, ZudeckenFeatures)


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


def test_demo_and_planner_curve_commands(tmp_path, capsys):
    from quadrat_env.experiments import demo
    from quadrat_env.experiments.zudecken import planner_curve

    assert demo.main(["--deals", "3", "--show", "1", "--env", ZU, "--no-progress",
                      "--json", str(tmp_path / "demo.json")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "| quadrat_env/Zudecken-v0 | greedy | 3 |" in out and "cards left" in out
    assert len(json.loads((tmp_path / "demo.json").read_text())) == 2
    assert planner_curve.main(["--deals", "2", "--samples", "1", "2", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "planner_curve.json").read_text())
    assert [len(r["won_deals"]) for r in rows] == [2, 2]
    assert all(set(r["won_deals"]) <= {"0", "1"} for r in rows)
    assert [r["won_deals"].count("1") for r in rows] == [r["wins"] for r in rows]
    assert [r["samples"] for r in rows] == [1, 2] and all(r["episodes"] == 2 for r in rows)


def test_throughput_command_writes_every_measurement(tmp_path, monkeypatch, capsys):
    from quadrat_env.experiments import throughput

    # Smaller jobs for a test: 2,000 greedy deals on 100 envs, and no PPO timing.
    monkeypatch.setattr(throughput, "SIZES", (4, 8, 16))
    original = throughput.greedy_deals
    monkeypatch.setattr(throughput, "greedy_deals", lambda env_id: original(env_id, 2000, 100))
    throughput.main(["--seconds", "0.01", "--ppo-timesteps", "0", "--out", str(tmp_path)])
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


@pytest.mark.parametrize("name", ["Quadrat", "Quadrat52", "Zudecken", "Quadrille"])
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


def test_how_well_table(tmp_path, monkeypatch):
    from quadrat_env.agents.planner import SAMPLES
    from quadrat_env.experiments.zudecken import how_well

    monkeypatch.setattr(how_well, "model_paths", lambda *a: [])  # the committed models are tested elsewhere
    monkeypatch.setattr(how_well, "extra_models", lambda: [])
    argv = ["--deals", "20", "--planner-deals", "3", "--budgets", "1", "2", "--bound-deals", "15",
            "--bound-samples", "8", "--out", str(tmp_path)]  # fmt: skip
    assert how_well.main(argv) == 0
    rows = json.loads((tmp_path / "how_well.json").read_text())
    assert [r["player"] for r in rows] == [
        "random", "greedy (largest group)", "hand rule (keep matched upcards)", "planner, 1 samples",
        "planner, 2 samples", f"planner (default: up to {SAMPLES} samples, stopping once settled)",
        "bound: one level exact (8 samples)",
        "bound: clairvoyant solver (knows the stock)"]  # fmt: skip
    assert rows[-2]["deals"] == 15
    assert all(r["ci_low"] <= r["win_rate"] <= r["ci_high"] for r in rows)
    assert "| hand rule (keep matched upcards) | 20 |" in (tmp_path / "how_well.md").read_text()


def test_publishing_replaces_an_earlier_runs_monitor_logs(tmp_path):
    from quadrat_env.experiments.publish import gzip_monitor_logs

    target = tmp_path / "models" / "monitor" / "X"
    target.mkdir(parents=True)
    (target / "7.monitor.csv.gz").write_bytes(b"stale")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "0.monitor.csv").write_text("#{}\nr,l,t\n")
    gzip_monitor_logs(tmp_path / "run", target)
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


def test_regret_table_counts_every_decision_with_a_choice(tmp_path, capsys):
    """Greedy's regret: every decision with a choice is counted once, the bins add up to "all", and
    a choice of the best estimate has regret 0 (none is negative)."""
    from quadrat_env.experiments.zudecken import regret

    out = tmp_path / "regret.json"
    assert regret.main(["--agent", "greedy", "--deals", "15", "--samples", "32", "--out", str(out),
                        "--no-progress"]) == 0  # fmt: skip
    saved = json.loads(out.read_text())
    rows, values = saved["table"], np.array(saved["regret"])
    assert rows[-1]["count"] == len(values) == sum(r["count"] for r in rows[:-1]) > 0
    assert values.min() >= 0 and values.max() > 0
    assert rows[-1]["per_deal"] == pytest.approx(values.sum() / 15)
    assert max(saved["stock"]) <= 48 and "| all |" in capsys.readouterr().out


def test_startup_measures_first_use_in_fresh_processes():
    from quadrat_env.experiments import startup

    cold, warm = startup.measure("quadrat_env/Quadrat-v0", runs=1)
    assert cold > 0 and warm > 0


def test_the_32_card_models_load_and_play_zudecken32_legally():
    from quadrat_env.agents import evaluate
    from quadrat_env.agents.safe_load import load_model
    from quadrat_env.agents.sb3_agent import SB3Agent

    path = ROOT / "experiments" / "models" / "zudecken32" / "Zudecken32-maskable_ppo-exact-seed0.zip"
    model = load_model(path, "maskable_ppo", "quadrat_env/Zudecken32-v0")
    assert model.observation_space.shape == (169,)  # the afterstate network on the 4 x 8 grid
    summary, _ = evaluate("quadrat_env/Zudecken32-v0", SB3Agent(model, "maskable_ppo", masked=True),
                          range(200), progress=False)  # fmt: skip
    assert summary.illegal_rate == 0 and summary.win_rate > 0.4  # greedy wins about 15%
