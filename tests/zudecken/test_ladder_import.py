"""Seeds trained elsewhere (the GPU script's td_jax and ppo_jax runs) become the ladder's cells."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("sb3_contrib")

from quadrat_env.experiments import ppo_jax, td_jax  # noqa: E402
from quadrat_env.experiments.zudecken import ladder  # noqa: E402

Z16 = "quadrat_env/Zudecken16-v0"
SMALL_NET = {
    "features": "zudecken-afterstates",
    "features_kwargs": {"channels": 8, "layers": 2, "hidden": 16},
}


def gpu_archive(folder):
    """A td_jax seed, an MLP ppo_jax seed, an afterstate ppo_jax seed and a damaged one on rung 4,
    laid out as the GPU script's archive (the MLP's under ladder/), without model.zip (no SB3 there)."""
    runs = {
        folder / "td_jax" / "Zudecken16-seed5": td_jax.Settings(
            env_id=Z16, seed=5, n_moves=2048, n_envs=64, eval_every=1024, eval_deals=32, test_deals=0,
            **SMALL_NET,
        ),
        folder / "ladder" / "ppo_jax" / "Zudecken16-seed5": ppo_jax.Settings(
            env_id=Z16, seed=5, n_moves=2048, n_envs=64, n_steps=16, n_minibatches=4, hidden=[32, 32],
            eval_every=1024, eval_deals=32, test_deals=0,
        ),
    }  # fmt: skip
    for run, settings in runs.items():
        (td_jax if isinstance(settings, td_jax.Settings) else ppo_jax).train(settings, run, progress=False)
        (run / "model.zip").unlink()
        (run / "config.yml").write_text(yaml.safe_dump(settings.config()))  # as the command writes it
    # an afterstate PPO run (another network than the ladder's PPO), refused: its config is enough
    other = folder / "ppo_jax" / "Zudecken16-seed0"
    shutil.copytree(folder / "ladder" / "ppo_jax" / "Zudecken16-seed5", other)
    config = yaml.safe_load((other / "config.yml").read_text())
    (other / "config.yml").write_text(yaml.safe_dump({**config, "features": "zudecken-afterstates"}))
    broken = folder / "td_jax" / "Zudecken16-seed9"  # and one whose config.yml is not YAML
    shutil.copytree(folder / "td_jax" / "Zudecken16-seed5", broken)
    (broken / "config.yml").write_text("env_id: [")


def test_gpu_runs_are_played_here_as_seeds_of_the_ladders_learners(tmp_path, capsys, monkeypatch):
    gpu, work, out = tmp_path / "gpu", tmp_path / "work", tmp_path / "out"
    gpu_archive(gpu)
    argv = ["--import-runs", str(gpu), "--td-moves", "2048", "--ppo-moves", "2048", "--deals", "40",
            "--work", str(work), "--out", str(out), "--no-progress"]  # fmt: skip
    assert ladder.main(argv) == 1  # the afterstate PPO run is refused, the two others are taken
    err = capsys.readouterr().err
    assert "Zudecken16-seed0: not imported: a PPO run with the zudecken-afterstates network" in err
    assert "Zudecken16-seed9: not imported: its config.yml is not YAML" in err
    cells = {
        c["player"]: c for c in json.loads((out / "ladder.json").read_text())["cells"] if c["ranks"] == 4
    }
    assert set(cells) == {"td", "ppo"}
    for player, kind in (("td", "td_jax"), ("ppo", "ppo_jax")):
        cell = cells[player]
        assert cell["seed"] == 5 and cell["moves"] == 2048 and cell["episodes"] == 40
        assert cell["trained_on"].startswith("cpu") and "JAX" in cell["method"]
        assert cell["curve"][0][0] == 0 and cell["curve"][-1][0] >= 2048
        assert (work / "imported" / kind / "Zudecken16-seed5" / "model.zip").is_file()  # exported here
    assert cells["ppo"]["network"] == "mlp 32x32" and cells["td"]["network"] == "zudecken-afterstates"
    assert "1 of them trained on cpu" in (out / "ladder.md").read_text()
    # again: nothing played twice; a run of another budget than the ladder's is refused in one line
    before = json.loads((out / "ladder.json").read_text())["cells"]
    monkeypatch.setattr(ladder.learners, "cell", lambda *a: pytest.fail("an imported run was played again"))
    assert ladder.main(argv) == 1
    assert json.loads((out / "ladder.json").read_text())["cells"] == before
    assert ladder.main([*argv[:2], "--td-moves", "4096", *argv[4:]]) == 1
    assert "it trained 2,048 moves, the ladder's budget there is 4,096" in capsys.readouterr().err


def test_bad_import_arguments_are_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        ladder.main(
            ["--import-runs", str(tmp_path / "none"), "--work", str(tmp_path), "--out", str(tmp_path)]
        )
    assert stop.value.code == 2 and "no such folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        ladder.main(["--import-runs", str(tmp_path), "--tables-only"])
    assert stop.value.code == 2 and "give one of them" in capsys.readouterr().err
