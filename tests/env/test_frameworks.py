"""Other frameworks train and play with masks, zero illegal actions: the scripts of docs/frameworks/
(TorchRL's PPO on the batched env, Tianshou's masked DQN) and rl-zoo3 through quadrat_env.zoo."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "frameworks"
ZU = "quadrat_env/Zudecken-v0"


def doc_script(page: str, tmp_path: Path) -> Path:
    """The page's one Python block, as a file: the test runs what the reader copies."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.S)
    assert len(blocks) == 1, f"{page} should hold one complete script"
    path = tmp_path / page.replace(".md", "_example.py")  # not torchrl.py: it would shadow the package
    path.write_text(blocks[0])
    return path


def run(args: list[str], cwd: Path) -> str:
    out = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.parametrize(
    ("page", "args"),
    [
        ("torchrl.md", ["--steps", "4096", "--envs", "16"]),
        ("tianshou.md", ["--steps", "2048", "--envs", "4"]),
    ],
)
def test_doc_script_trains_with_masks_and_no_illegal_action(page, args, tmp_path):
    out = run([str(doc_script(page, tmp_path)), *args], tmp_path)
    found = re.search(r"steps (\d+), episodes (\d+), won (\d+), illegal actions (\d+)", out)
    assert found, out[-2000:]
    steps, episodes, _, illegal = map(int, found.groups())
    assert steps >= 2048 and episodes > 50 and illegal == 0


def test_rl_zoo3_trains_evaluates_and_plays_ppo_mask_with_masks(tmp_path):
    run(
        [
            "-m",
            "quadrat_env.zoo",
            "train",
            "--algo",
            "ppo_mask",
            "--env",
            ZU,
            "-n",
            "4096",
            "--eval-freq",
            "2048",
            "--eval-episodes",
            "10",
            "-f",
            "logs",
            "--hyperparams",
            "n_envs:4",
            "n_steps:256",
            "batch_size:512",
        ],
        tmp_path,
    )  # the project's YAML, smaller rollouts; fmt: skip
    (run_dir,) = (tmp_path / "logs" / "ppo_mask").iterdir()
    evaluations = np.load(run_dir / "evaluations.npz")
    # unmasked, a fresh policy repeats illegal actions: 200 steps and a negative return per episode
    assert evaluations["results"].min() >= 0 and evaluations["ep_lengths"].max() < 100
    assert evaluations["successes"].shape[1] == 10  # each evaluation's episodes: won or not
    assert 1 <= len(list(run_dir.glob("*.monitor.csv"))) <= 4 + 1  # one per env (and the eval env)
    out = run(["-m", "quadrat_env.zoo", "enjoy", "--algo", "ppo_mask", "--env", ZU, "-f", "logs",
               "--no-render", "-n", "300", "--env-kwargs", "illegal_action:'raise'"], tmp_path)  # fmt: skip
    assert "Episode Reward" in out


def test_the_zoo_gets_the_projects_hyperparameters_with_a_dummy_vec_env_sized_rollout():
    import yaml

    from quadrat_env.zoo import ZOO_ROLLOUT, shipped_config

    table = yaml.safe_load(Path(shipped_config("ppo_mask")).read_text())
    entry = table[ZU]
    assert {k: entry[k] for k in ZOO_ROLLOUT} == ZOO_ROLLOUT  # 8 envs (8 Monitor files), not 1,024
    assert "vec_env" not in entry and entry["n_epochs"] == 4


def test_zoo_without_a_command_is_one_line_and_exit_2(capsys):
    from quadrat_env.zoo import main

    with pytest.raises(SystemExit) as exc:
        main(["fly"])
    assert exc.value.code == 2 and "must be one of" in capsys.readouterr().err


def test_rl_zoo3_trains_plain_ppo_with_the_mask_in_its_observation(tmp_path):
    """ppo.yml's observe_mask reaches the zoo as the single-env MaskInObservation wrapper."""
    import gymnasium as gym
    from quadrat_env.agents.sb3_agent import SB3Agent

    from quadrat_env.wrappers import mask_observation_space

    run(["-m", "quadrat_env.zoo", "train", "--algo", "ppo", "--env", "quadrat_env/Quadrat-v0", "-n", "2048",
         "-f", "logs", "--hyperparams", "n_envs:4", "n_steps:256", "batch_size:512"], tmp_path)  # fmt: skip
    (model,) = (tmp_path / "logs" / "ppo").glob("*/quadrat_env-Quadrat-v0.zip")
    # our own file: trust it (the zoo pickles its learning-rate schedule, which the safe loader refuses)
    agent = SB3Agent.load(model, "ppo", "quadrat_env/Quadrat-v0", trust=True)
    env = gym.make("quadrat_env/Quadrat-v0")
    assert agent.observes_mask
    expected = mask_observation_space(env.observation_space, int(env.action_space.n))
    assert agent.model.observation_space == expected
