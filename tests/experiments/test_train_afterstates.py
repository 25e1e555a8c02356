"""PPO and MaskablePPO on an afterstate network: its scores are the logits, the critic is not linear
in them, and the model loads through the safe loader (a dict ``net_arch``)."""

from __future__ import annotations

import pytest
import torch
import yaml

pytest.importorskip("sb3_contrib")

from quadrat_env.agents import SB3Agent  # noqa: E402
from quadrat_env.agents.networks import AFTERSTATE_NET_ARCH  # noqa: E402
from quadrat_env.agents.safe_load import UnsafeModelFile, _net_arch  # noqa: E402
from quadrat_env.experiments import train  # noqa: E402

Z32 = "quadrat_env/Zudecken32-v0"
ENTRY = {"vec_env": "native", "n_envs": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 1,
         "features": "zudecken-afterstates", "n_timesteps": 256}  # fmt: skip


def run(tmp_path, **entry) -> int:  # noqa: ANN001, ANN003
    hp = tmp_path / "hp.yml"
    hp.write_text(yaml.safe_dump({Z32: {**ENTRY, **entry}}))
    return train.main(["--env", Z32, "--algo", "maskable_ppo", "--hyperparams", str(hp),
                       "--out", str(tmp_path), "--no-progress"])  # fmt: skip


def test_train_passes_the_scores_through_as_logits_and_the_critic_has_layers(tmp_path):
    assert run(tmp_path) == 0
    agent = SB3Agent.load(tmp_path / "maskable_ppo" / "Zudecken32-seed0" / "model.zip", "maskable_ppo", Z32)
    policy = agent.model.policy
    assert torch.equal(policy.action_net.weight, torch.eye(12)) and not policy.action_net.bias.any()
    assert policy.net_arch == AFTERSTATE_NET_ARCH
    assert sum(isinstance(m, torch.nn.Linear) for m in policy.mlp_extractor.value_net) == 2
    obs = torch.rand(5, 169).round()
    with torch.no_grad():
        logits = policy.get_distribution(obs).distribution.logits
        scores = policy.features_extractor(obs)
    assert torch.allclose(logits, torch.log_softmax(scores, -1), atol=1e-5)


def test_an_afterstate_policy_with_an_actor_layer_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        run(tmp_path, policy_kwargs={"net_arch": [64]})
    assert stop.value.code == 2 and "pi: []" in capsys.readouterr().err


@pytest.mark.parametrize(
    "arch", [[], [64, 64], {"pi": [], "vf": [64, 64]}, {"pi": [32], "vf": []}, "[128, 128]"]
)
def test_the_safe_loader_takes_every_net_arch_sb3_writes(arch):
    assert _net_arch(arch) is not None


@pytest.mark.parametrize("arch", [{"pi": [0]}, {"pi": "x"}, {"qf": []}, {}, [True], {"pi": [8000, 8000]}])
def test_the_safe_loader_refuses_other_net_archs(arch):
    with pytest.raises(UnsafeModelFile):
        _net_arch(arch)
