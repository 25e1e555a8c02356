"""PPO and MaskablePPO on an afterstate network: its scores are the logits, the critic is not linear
in them, and the model loads through the safe loader (a dict ``net_arch``)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

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


def run(tmp_path, *args: str, **entry) -> int:  # noqa: ANN001, ANN003
    hp = tmp_path / "hp.yml"
    hp.write_text(yaml.safe_dump({Z32: {**ENTRY, **entry}}))
    return train.main(["--env", Z32, "--algo", "maskable_ppo", "--hyperparams", str(hp),
                       "--out", str(tmp_path), "--no-progress", *args])  # fmt: skip


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


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads this process's open files in /proc")
@pytest.mark.parametrize("vec_env", ["native", "dummy"])
def test_a_finished_run_leaves_none_of_its_logs_open(tmp_path, vec_env):
    """The run closes its envs and their Monitor logs as it ends (they stayed open until the garbage
    collector came by, which it does not while collection is off, as here)."""
    gc.disable()
    try:
        assert run(tmp_path, vec_env=vec_env) == 0
        fds = Path("/proc/self/fd").iterdir()
        still_open = [os.path.realpath(fd) for fd in fds]
    finally:
        gc.enable()
    assert not [f for f in still_open if f.startswith(str(tmp_path.resolve()))]


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


def test_a_run_from_a_saved_model_may_give_its_critic_its_own_network(tmp_path):
    """``share_features_extractor: false`` with ``--init``: actor and critic each have a copy of the
    network, both starting from the saved weights, and the critic its own layers."""
    from quadrat_env.agents.networks import afterstate_model

    from quadrat_env.files import save_model

    saved = tmp_path / "rl.zip"  # as the TD(0) learner saves its models: net_arch [], a linear critic
    save_model(afterstate_model(Z32, 3, "zudecken-afterstates"), saved)
    start = SB3Agent.load(saved, "maskable_ppo", Z32).model.policy
    critic = {"share_features_extractor": False, "net_arch": {"pi": [], "vf": [32]}}
    assert run(tmp_path, "--init", str(saved), features=None, learning_rate=0.0, policy_kwargs=critic) == 0
    policy = SB3Agent.load(tmp_path / "maskable_ppo" / "Zudecken32-seed0" / "model.zip", "maskable_ppo",
                           Z32).model.policy  # fmt: skip
    assert (
        not policy.share_features_extractor
        and policy.vf_features_extractor is not policy.pi_features_extractor
    )
    for name, value in start.features_extractor.state_dict().items():  # learning rate 0: both copies as saved
        assert torch.equal(policy.pi_features_extractor.state_dict()[name], value)
        assert torch.equal(policy.vf_features_extractor.state_dict()[name], value)
    assert sum(isinstance(m, torch.nn.Linear) for m in policy.mlp_extractor.value_net) == 1


def test_a_run_from_a_saved_model_may_not_change_its_actor():
    from quadrat_env.experiments.common.starting import start_kwargs

    saved = {"net_arch": [], "ortho_init": False}
    assert start_kwargs(saved, {"share_features_extractor": False})["share_features_extractor"] is False
    assert start_kwargs(saved, {"ortho_init": False}) == saved  # the same value is no change
    with pytest.raises(ValueError, match="only the critic's"):
        start_kwargs(saved, {"net_arch": {"pi": [64], "vf": [64]}})
    with pytest.raises(ValueError, match="may change only"):
        start_kwargs(saved, {"activation_fn": "tanh", "ortho_init": True})
