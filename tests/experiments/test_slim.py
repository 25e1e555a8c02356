"""Slim models keep what play needs: the same weights, the same moves, loadable by the safe loader."""

import zipfile

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from quadrat_env.agents.sb3_agent import SB3Agent  # noqa: E402
from quadrat_env.experiments.common import slim  # noqa: E402
from quadrat_env.experiments.publish import MODELS  # noqa: E402

import quadrat_env  # noqa: E402, F401


def _fat(path, tmp_path):
    """The committed model with the optimizer state and last observations training leaves."""
    import torch

    model = SB3Agent.load(path, "maskable_ppo", "quadrat_env/Zudecken32-v0").model
    model.policy.optimizer.state[next(iter(model.policy.parameters()))] = {"step": torch.tensor(3.0)}
    model._last_obs = np.ones((4, 169), dtype=np.float32)
    fat = tmp_path / "fat.zip"
    model.save(fat)
    return fat


def test_a_slim_model_plays_the_same_moves_and_slimming_again_changes_nothing(tmp_path):
    fat = _fat(MODELS / "Zudecken32-rl.zip", tmp_path)
    thin = tmp_path / "thin.zip"
    thin.write_bytes(slim.slim_model(fat.read_bytes()))
    assert thin.stat().st_size < fat.stat().st_size
    assert slim.is_slim(thin.read_bytes()) and not slim.is_slim(fat.read_bytes())
    with zipfile.ZipFile(fat) as a, zipfile.ZipFile(thin) as b:
        assert a.read("policy.pth") == b.read("policy.pth")  # the weights, byte for byte
        assert b"_last_obs" in a.read("data") and b"_last_obs" not in b.read("data")
    agents = [SB3Agent.load(p, None, "quadrat_env/Zudecken32-v0") for p in (fat, thin)]
    env = gym.make("quadrat_env/Zudecken32-v0")
    for seed in range(10):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            moves = {agent.act(obs, info["action_mask"]) for agent in agents}
            assert len(moves) == 1
            obs, _, terminated, truncated, info = env.step(moves.pop())
            done = terminated or truncated


def test_every_committed_model_is_slim():
    # The repository travels to other machines: a model with training state is 4-8 times larger.
    fat = [p.relative_to(MODELS) for p in sorted(MODELS.glob("**/*.zip")) if not slim.is_slim(p.read_bytes())]
    assert not fat, f"run python -m quadrat_env.experiments.common.slim {MODELS}: {fat}"


def test_slim_folder_rewrites_only_what_changes(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    fat = _fat(MODELS / "Zudecken32-rl.zip", tmp_path)
    (models / "a.zip").write_bytes(fat.read_bytes())
    (models / "b.zip").write_bytes(slim.slim_model(fat.read_bytes()))
    changed = slim.slim_folder(models)
    assert [c[0].name for c in changed] == ["a.zip"]
    assert (models / "a.zip").read_bytes() == (models / "b.zip").read_bytes()
    assert not list(models.glob(".*pending*")) and not (models / slim.JOURNAL).exists()


def test_the_command_refuses_a_damaged_model_in_one_line(tmp_path, capsys):
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(SystemExit) as stop:
        slim.main([str(tmp_path)])
    assert stop.value.code == 2
    assert "bad.zip" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        slim.main([str(tmp_path / "none")])
    assert stop.value.code == 2
