"""The Zudecken study's commands: the README headline, imitation from a behaviour model, how well
the game can be played, regret, the 32-card models (a few deals each; no timing)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml
from quadrat_env.agents.sb3_agent import SB3Agent

ROOT = Path(__file__).resolve().parents[2]
ZU = "quadrat_env/Zudecken-v0"


def test_the_headline_table_and_figure_are_the_benchmarks():
    import json

    result = json.loads((ROOT / "results" / "benchmark.json").read_text())
    from quadrat_env.experiments.zudecken.headline import FIGURE, HEADLINE, TABLE, headline, readme_figure

    table = headline(result)
    page = (ROOT / "docs" / "benchmark.md").read_text()
    start, end = (page.index(m) for m in TABLE)
    assert table in page[start:end]  # what the committed results give, as committed
    best = json.loads((ROOT / "results" / "zudecken_optimum.json").read_text())["exact"]
    assert f"| **exact optimum** | {best:.2%} | 100% | 62.29% | 100% |" in table
    readme = (ROOT / "README.md").read_text()
    start, end = (readme.index(m) for m in HEADLINE)
    assert readme_figure(result) in readme[start:end] and f"results/{FIGURE}" in readme[start:end]
    assert (ROOT / "results" / FIGURE).stat().st_size > 10_000


def test_the_figure_draws_a_share_of_the_optimum_a_pack(tmp_path):
    import json

    from quadrat_env.experiments.zudecken import figures

    result = json.loads((ROOT / "results" / "benchmark.json").read_text())
    figures(result, tmp_path)
    from PIL import Image

    assert Image.open(tmp_path / "zudecken_share.png").size[0] == 616  # plots.WIDTH (5.6 in) at 110 dpi


def test_every_kind_of_model_learned_from_the_reward_has_a_headline_row():
    from quadrat_env.experiments.benchmark import MODEL_KINDS
    from quadrat_env.experiments.zudecken.headline import PLAYERS

    assert all((kind, "the reward") in PLAYERS for kind in MODEL_KINDS)


def test_every_committed_zudecken_model_has_a_headline_row_for_what_it_learned_from():
    from quadrat_env.experiments.benchmark import MODEL_KINDS, MODELS, learned_from
    from quadrat_env.experiments.zudecken.headline import PLAYERS

    names = ("Zudecken", "Zudecken32")
    found = {(kind, learned_from(MODELS, f"quadrat_env/{name}-v0", kind, 0)) for name in names
             for kind in MODEL_KINDS if (MODELS / f"{name}-{kind}.zip").is_file()}  # fmt: skip
    assert ("ppo", "the dense reward") in found  # the SB3 PPO models learned from the dense reward
    assert found <= set(PLAYERS)


def test_the_52_card_optimum_once_computed_fills_the_headline_and_the_benchmark_table(tmp_path):
    from quadrat_env.experiments.benchmark import markdown
    from quadrat_env.experiments.zudecken import exact_optima
    from quadrat_env.experiments.zudecken.headline import headline

    result = json.loads((ROOT / "results" / "benchmark.json").read_text())
    result["exact_optima"] = {ZU: 0.5}
    greedy = next(r for r in result["rows"] if r["env_id"] == ZU and r["agent"] == "greedy")
    rate, low, high = greedy["win_rate"], greedy["ci_low"], greedy["ci_high"]
    cells = f"| {rate:.2%} [{low:.1%}, {high:.1%}] | {rate / 0.5:.1%} ({low / 0.5:.1%}–{high / 0.5:.1%}) |"
    assert f"| greedy (largest group) {cells}" in headline(result)
    assert "| **exact optimum** | 50.00% | 100% | 62.29% | 100% |" in headline(result)
    assert "| Zudecken | exact optimum (agents.zudecken.exact) | – | 50.00% |" in markdown(result)
    (tmp_path / "zudecken_optimum.json").write_text('{"exact": null, "lower": 0.25}')
    assert exact_optima(tmp_path) == {}  # not yet computed
    (tmp_path / "zudecken_optimum.json").write_text('{"exact": 0.3}')
    assert exact_optima(tmp_path) == {ZU: 0.3}
    for bad, why in (('{"exact": 2}', "must be a win rate"), ("[", "not a readable optimum file")):
        (tmp_path / "zudecken_optimum.json").write_text(bad)
        with pytest.raises(ValueError, match=why):
            exact_optima(tmp_path)


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


def test_how_well_table(tmp_path, monkeypatch):
    from quadrat_env.agents.planner import SAMPLES
    from quadrat_env.experiments.zudecken import how_well

    monkeypatch.setattr(how_well, "published_models", lambda: [])  # the committed models: below
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


def test_how_well_plays_each_kinds_published_model_named_by_its_seed():
    from quadrat_env.experiments.benchmark import MODEL_KINDS, MODELS
    from quadrat_env.experiments.common.committed import published_seeds
    from quadrat_env.experiments.zudecken import how_well

    rows = how_well.published_models()
    kinds = [k for k in MODEL_KINDS if (MODELS / f"Zudecken-{k}.zip").is_file()]
    assert [path.name for _, path, _ in rows] == [f"Zudecken-{k}.zip" for k in kinds] and len(kinds) >= 2
    seeds = published_seeds(MODELS)
    for (name, _, algo), kind in zip(rows, kinds, strict=True):
        assert name.endswith(f": {kind}, seed {seeds.get(f'Zudecken-{kind}', 0)} (published)")
        assert algo == MODEL_KINDS[kind]
    assert any(seeds.get(f"Zudecken-{k}", 0) != 0 for k in kinds)  # a published seed other than 0 is named


def test_models32_rows_each_kept_model_with_its_share_of_the_optimum(tmp_path):
    import shutil

    from quadrat_env.experiments.benchmark import MODELS
    from quadrat_env.experiments.zudecken import models32

    for seed in (0, 1):  # two seeds of one run, under the names the study keeps
        shutil.copy(MODELS / "zudecken32" / f"Zudecken32-maskable_ppo-exact-seed{seed}.zip", tmp_path)
    (tmp_path / "notes.zip").write_bytes(b"")  # not a model of the study: left out
    assert models32.main(["--deals", "30", "--models", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    data = json.loads((tmp_path / "out" / "zudecken32_models.json").read_text())
    assert [(r["run"], r["seed"]) for r in data["rows"]] == [("exact", 0), ("exact", 1)]
    for r in data["rows"]:
        assert r["ci_low"] <= r["win_rate"] == r["wins"] / 30 <= r["ci_high"]
        assert r["of_optimum"] == pytest.approx(r["win_rate"] / data["exact_optimum"])
    mean = sum(r["win_rate"] for r in data["rows"]) / 2
    md = (tmp_path / "out" / "zudecken32_models.md").read_text()
    assert f"| exact: mean of 2 seeds | | {mean:.2%} | | {mean / data['exact_optimum']:.1%} |" in md


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


def test_an_illegal_action_ends_the_deal_lost_with_all_its_chance_as_regret():
    """A model that plays without the mask may choose an illegal action: the deal ends there, lost (as
    in the benchmark), and does not loop on the same action forever."""
    from quadrat_env.experiments.zudecken import regret

    class Illegal:  # the first illegal action of each decision, deterministically
        def predict(self, obs, action_masks, deterministic=True):  # noqa: ANN001, ANN202
            return np.flatnonzero(~np.asarray(action_masks, bool))[0], None

    result = regret.regrets(Illegal(), range(3), samples=16, seed=0, progress=False)
    assert result["wins"] == 0 and len(result["regret"]) == 3  # one decision a deal, then it ended
    assert (result["regret"] >= 0).all() and (result["regret"] <= 1).all() and result["regret"].max() > 0


def test_a_sampling_policys_regret_says_how_likely_it_was_to_try_the_best_move(tmp_path, capsys):
    """A published PPO model's regrets (sampled values: Zudecken32's exact ones need the whole solved
    table): the probability it gives its own move and the best moves, where its move gives some away."""
    from quadrat_env.experiments.zudecken import regret

    out = tmp_path / "regret.json"
    assert regret.main(["--model", "Zudecken-ppo_jax", "--algo", "maskable_ppo", "--deals", "6",
                        "--samples", "32", "--out", str(out), "--no-progress"]) == 0  # fmt: skip
    saved = json.loads(out.read_text())
    lost = np.array(saved["regret"]) > 0
    p_move, p_best = np.array(saved["p_move"]), np.array(saved["p_best"])
    assert len(p_move) == len(p_best) == len(lost) and lost.any()
    assert ((p_move > 0) & (p_move <= 1 + 1e-6)).all() and (p_best[~lost] >= p_move[~lost] - 1e-6).all()
    assert saved["table"][-1]["p_move"] == pytest.approx(p_move[lost].mean())
    assert saved["table"][-1]["p_best"] == pytest.approx(p_best[lost].mean())
    assert "P(a best move), regret > 0" in capsys.readouterr().out


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


def test_planner_curve_command(tmp_path):
    from quadrat_env.experiments.zudecken import planner_curve

    assert planner_curve.main(["--deals", "2", "--samples", "1", "2", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "planner_curve.json").read_text())
    assert [len(r["won_deals"]) for r in rows] == [2, 2]
    assert all(set(r["won_deals"]) <= {"0", "1"} for r in rows)
    assert [r["won_deals"].count("1") for r in rows] == [r["wins"] for r in rows]
    assert [r["samples"] for r in rows] == [1, 2] and all(r["episodes"] == 2 for r in rows)
    assert [r["cut_short"] for r in rows] == [0, 0]  # one or two samples never take the 1 s budget


def test_the_td_curves_figure_draws_every_published_seed_and_the_optimum(tmp_path, capsys):
    from quadrat_env.experiments.zudecken import td_curves

    configs = tmp_path / "configs"
    configs.mkdir()
    for seed in (0, 1):
        (configs / f"Zudecken32-rl-seed{seed}-curve.csv").write_text(
            "moves,seconds,deals,win_rate,ci_low,ci_high\n0,1,2000,0.14,0.12,0.16\n2000000,9,2000,0.5,0.48,0.52\n"
        )
    assert td_curves.optima(ROOT / "results" / "benchmark.json")["Zudecken32"] == pytest.approx(
        0.6229, abs=1e-4
    )
    result = json.loads((ROOT / "results" / "benchmark.json").read_text()) | {"exact_optima": {ZU: 0.3}}
    (tmp_path / "benchmark.json").write_text(json.dumps(result))
    assert td_curves.optima(tmp_path / "benchmark.json")["Zudecken"] == 0.3  # the exact search's, once known
    out = tmp_path / "td.png"
    assert td_curves.main(["--models", str(tmp_path), "--out", str(out)]) == 0
    assert out.stat().st_size > 0 and "Zudecken32 (2 seed(s))" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        td_curves.main(["--models", str(tmp_path / "none")])


def test_the_headline_gives_a_learned_row_its_iqm_interval_and_range():
    pytest.importorskip("rliable")
    from quadrat_env.experiments import seed_rows
    from quadrat_env.experiments.zudecken.headline import headline

    rates = [0.20, 0.24, 0.25, 0.25, 0.26, 0.26, 0.26, 0.27, 0.27, 0.10]
    rows = [{"env_id": ZU, "algo": "ppo_jax", "train_seed": k, "win_rate": r, "illegal_rate": 0.0,
             "learned_from": "the reward"} for k, r in enumerate(rates)]  # fmt: skip
    table = headline({"rows": rows, "exact_optima": {ZU: 0.2741}})
    iqm, (low, high) = seed_rows.iqm(rates)
    assert iqm == pytest.approx(np.mean(sorted(rates)[2:8]))
    assert f"| {iqm:.2%} [{low:.1%}, {high:.1%}] (10 seeds: 10.00%–27.00%) |" in table
