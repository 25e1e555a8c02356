"""PPO from scratch in JAX, with action masks: env and learner in one jitted loop (PureJaxRL's design).

    python -m quadrat_env.experiments.ppo_jax --env Zudecken32 --seed 0

Every game. Per update each of ``n_envs`` deals makes ``n_steps`` moves sampled from the policy
(illegal actions masked out), GAE(lambda) gives the advantages, then ``update_epochs`` passes of
clipped PPO over ``n_minibatches`` shuffled minibatches (Adam, gradient norm clipped, the learning
rate falling linearly). The reward is the env's own: sparse (1 for a won deal) unless the YAML's
``env_kwargs`` name ``reward_mode: dense``; a deal cut off by the time limit counts as ended. The
network is SB3's default actor-critic MLP on the observation (``hidden`` tanh units, separate
policy and value networks), started from fresh weights: no other learner's weights, no features
of the game beyond the observation. With ``features: zudecken-afterstates`` (``--set
features=zudecken-afterstates``) the policy is instead ``td``'s afterstate network, its score of a
move's afterstate the move's logit (fresh weights, ``features_kwargs`` its sizes), the critic the
same value MLP; its ``model.zip`` is then the afterstate network alone, as ``td_jax`` writes it.

Settings come from ``experiments/hyperparams/ppo_jax.yml`` keyed by env ID; the run folder
(``runs/ppo_jax/<Name>-seed<k>``) holds what ``td_jax``'s holds: ``config.yml``, ``curve.csv``
(validation win rate, greedy play), ``summary.json`` (with the benchmark's held-out deals),
``weights.npz`` and, where SB3 is installed, ``model.zip`` (a MaskablePPO model, checked to give
the same logits; ``--export RUN_DIR`` writes it later). Checkpoints, Ctrl-C, SIGTERM and
``--resume`` as ``td_jax``.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from quadrat_env.arguments import description_of
from quadrat_env.extras import command, importing
from quadrat_env.registry import env_ids

with importing(__name__):  # the 'jax' and 'train' extras: one line naming the missing one
    import jax
    import numpy as np
    from quadrat_env.experiments.common import checkpoint
    from quadrat_env.experiments.common.jax_learners import cli
    from quadrat_env.experiments.common.jax_learners.cli import Learner
    from quadrat_env.experiments.common.jax_learners.ppo import JaxPPO, afterstate_weights, forward
    from quadrat_env.experiments.common.jax_learners.run import WEIGHTS
    from quadrat_env.experiments.common.runs import RunSettings
    from quadrat_env.experiments.td_jax import write_afterstate_model

HYPERPARAMS = Path(__file__).parent / "hyperparams" / "ppo_jax.yml"
METHOD = "PPO from the reward, JAX"


@dataclass
class Settings(RunSettings):
    """One JAX PPO run, typed; ``config.yml`` is ``config``."""

    env_id: str
    seed: int
    n_moves: int
    n_envs: int = 1024
    #: Moves on every deal per rollout (an update's batch: n_envs x n_steps).
    n_steps: int = 32
    update_epochs: int = 4
    n_minibatches: int = 8
    #: The policy's and the value's hidden layers (tanh), as SB3's net_arch.
    hidden: list[int] = field(default_factory=lambda: [64, 64])
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    learning_rate: float = 2.5e-4
    learning_rate_end: float = 0.0
    eval_every: int = 1_000_000
    eval_deals: int = 2000
    test_deals: int = 10_000
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    #: An afterstate network whose scores are the policy's logits (``td``'s ``features``); none: the MLP.
    features: str | None = None
    #: The afterstate network's sizes (channels, layers, hidden).
    features_kwargs: dict[str, Any] = field(default_factory=dict)
    method: str = METHOD

    def __post_init__(self) -> None:
        wholes = {"seed": 0, "n_moves": 1, "n_envs": 1, "n_steps": 1, "update_epochs": 1, "n_minibatches": 1,
                  "eval_every": 1, "eval_deals": 1, "test_deals": 0}  # fmt: skip
        self.check_numbers(wholes, ("gamma", "gae_lambda", "clip_eps", "ent_coef", "vf_coef", "learning_rate",
                                    "learning_rate_end"))  # fmt: skip
        if (
            not isinstance(self.max_grad_norm, (int, float))
            or isinstance(self.max_grad_norm, bool)
            or not (self.max_grad_norm > 0)
        ):
            raise ValueError(f"max_grad_norm must be a number > 0, got {self.max_grad_norm!r}")
        if not isinstance(self.hidden, list) or not all(
            type(h) is int and 1 <= h <= 4096 for h in self.hidden
        ):
            raise ValueError(f"hidden must be a list of layer widths in 1..4096, got {self.hidden!r}")
        if self.features is not None and not isinstance(self.features, str):
            raise ValueError(f"features must be an afterstate network's name or null, got {self.features!r}")
        if self.features is None and self.features_kwargs:
            raise ValueError("features_kwargs sizes an afterstate policy: name its network in features")
        batch = self.n_envs * self.n_steps
        if batch % self.n_minibatches:
            raise ValueError(
                f"n_envs x n_steps = {batch:,} does not split into {self.n_minibatches} minibatches"
            )
        if batch > self.n_moves:
            raise ValueError(f"one update plays n_envs x n_steps = {batch:,} moves, more than the run's "
                             f"{self.n_moves:,} (--moves): lower --n-envs")  # fmt: skip

    def config(self) -> dict[str, Any]:
        """The settings; the afterstate policy's only where one is chosen (so the runs of the MLP,
        written before it existed, resume)."""
        out = asdict(self)
        if self.features is None:
            del out["features"], out["features_kwargs"]
        return out


def export_model(run_dir: Path) -> Path:
    """``run_dir/model.zip``: the weights of ``run_dir/weights.npz`` in SB3's MaskablePPO
    ``MlpPolicy`` of the same layers, checked to give the same logits; for an afterstate policy the
    afterstate network alone, as ``td_jax`` exports it (the critic is not needed to play)."""
    path = run_dir / WEIGHTS
    meta, arrays = checkpoint.load(path)
    if meta.get("features") is not None:
        return write_afterstate_model(run_dir, meta, afterstate_weights(arrays), path)
    return _export_mlp(run_dir, meta, arrays, path)


def _export_mlp(run_dir: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray], path: Path) -> Path:
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    from quadrat_env.files import save_model

    hidden, env_id = meta.get("net_arch"), meta.get("env_id")
    if meta.get("network") != "mlp" or not isinstance(hidden, list) or env_id not in env_ids():
        raise ValueError(f"{path} names no MLP policy and env (network, net_arch, env_id)")
    env = gym.make(env_id, **(meta.get("env_kwargs") or {}))
    kwargs = {"net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": torch.nn.Tanh}
    model = MaskablePPO("MlpPolicy", env, policy_kwargs=kwargs, seed=int(meta.get("seed", 0)), device="cpu")
    expected = {k: tuple(v.shape) for k, v in model.policy.state_dict().items()}
    if {k: tuple(v.shape) for k, v in arrays.items()} != expected:
        raise ValueError(f"{path}: its arrays are not the {len(expected)} weights of an MLP {hidden}")
    model.policy.load_state_dict({k: torch.from_numpy(np.array(v, np.float32)) for k, v in arrays.items()})
    _check_same_logits(model, arrays, env)
    save_model(model, run_dir / "model.zip")
    return run_dir / "model.zip"


def _check_same_logits(model: Any, arrays: dict[str, np.ndarray], env: Any) -> None:
    """SB3's policy gives the JAX policy's logits (legal actions) and values on 256 opening deals."""
    import torch

    obs = np.stack([env.reset(seed=s)[0] for s in range(256)])
    every = np.ones((len(obs), model.policy.action_net.out_features), bool)  # compare all logits
    params = {k: jax.numpy.asarray(v) for k, v in arrays.items()}
    logits, value = (np.asarray(x) for x in forward(params, obs, every))
    with torch.no_grad():
        o = torch.from_numpy(obs)
        pi, vf = model.policy.mlp_extractor(model.policy.extract_features(o))
        theirs, their_value = model.policy.action_net(pi).numpy(), model.policy.value_net(vf).numpy()[:, 0]
    gap = max(np.abs(logits - theirs).max(), np.abs(value - their_value).max())
    if not gap < 1e-4:
        raise ValueError(f"the exported policy's logits differ from JAX's by {gap:.3g}")


PPO_JAX = Learner("ppo_jax", description_of(__doc__), Settings, HYPERPARAMS, JaxPPO, export_model)
train = PPO_JAX.train


@command
def main(argv: list[str] | None = None) -> int:
    return cli.main(PPO_JAX, argv)


if __name__ == "__main__":
    sys.exit(main())
