"""Afterstate TD(0) from the reward alone in JAX: env, policy and learner in one jitted loop.

    python -m quadrat_env.experiments.td_jax --env Zudecken32 --seed 0

The learner of ``quadrat_env.experiments.td`` (same network, same targets, same exploration), with
the game's JAX rules instead of the compiled batched env, so that one GPU plays and learns at once
(unchanged on a CPU, slower). Per update every one of ``n_envs`` deals makes ``steps_per_update``
epsilon-greedy moves on the network's scores; each chosen afterstate's target is the reward if the
deal ended, else ``max V`` at the next decision; then one Adam step on binary cross-entropy over
those afterstates. A deal that ends is replaced by a new random deal (drawn from the run's JAX key:
its training deals are not the compiled env's seeded deals, and like those never the held-out
ones except by a chance of about 1 in 10^35 for a 32-card deck).

Settings come from ``experiments/hyperparams/td_jax.yml`` keyed by env ID. The run folder
(``runs/td_jax/<Name>-seed<k>``) holds ``config.yml``, ``curve.csv`` (validation win rate every
``eval_every`` moves, the validation deals of every learner), ``summary.json`` (with the win rate
on the benchmark's first ``test_deals`` held-out deals), ``weights.npz`` (the network, named as the
torch network's ``state_dict``) and, where SB3 is installed, ``model.zip``: the same network as a
MaskablePPO model for ``quadrat-bench --model``, ``SB3Agent.load`` and the benchmark (``--export``
makes it later from ``weights.npz``, e.g. on a machine with SB3 after a GPU run). Checkpoints
every ``--checkpoint-minutes``; Ctrl-C or SIGTERM checkpoints and stops; ``--resume`` continues to
the weights an uninterrupted run reaches.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
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
    from quadrat_env.experiments.common.jax_learners.run import WEIGHTS
    from quadrat_env.experiments.common.jax_learners.td import JaxTD
    from quadrat_env.experiments.td import TDSettings

HYPERPARAMS = Path(__file__).parent / "hyperparams" / "td_jax.yml"
METHOD = "afterstate TD(0) from the reward, JAX"


@dataclass
class Settings(TDSettings):
    """One JAX TD run, typed (``td``'s settings, its batch given by ``steps_per_update``)."""

    #: Moves on every deal between two updates (an update's batch: n_envs x steps_per_update).
    steps_per_update: int = 1
    #: The benchmark's held-out deals the finished run plays (the summary's test_win_rate).
    test_deals: int = 10_000
    method: str = METHOD

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_numbers({"steps_per_update": 1, "test_deals": 0}, ())
        if self.n_envs * self.steps_per_update > self.n_moves:
            raise ValueError(f"one update plays n_envs x steps_per_update = "
                             f"{self.n_envs * self.steps_per_update:,} moves, more than the run's "
                             f"{self.n_moves:,} (--moves): lower --n-envs")  # fmt: skip


def export_model(run_dir: Path) -> Path:
    """``run_dir/model.zip``: the weights of ``run_dir/weights.npz`` in the torch afterstate network
    of an SB3 MaskablePPO model (what ``td`` writes), checked to give the same scores."""
    path = run_dir / WEIGHTS
    meta, arrays = checkpoint.load(path)
    return write_afterstate_model(run_dir, meta, arrays, path)


def write_afterstate_model(run_dir: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray],
                           path: Path) -> Path:  # fmt: skip
    """``run_dir/model.zip`` from an afterstate network's weights ``arrays`` and the ``meta`` that
    names it (features, features_kwargs, env_id, env_kwargs, seed), read from ``path``."""
    import torch
    from quadrat_env.agents.networks import afterstate_model, afterstate_names

    from quadrat_env.files import save_model

    features, size, env_id = meta.get("features"), meta.get("features_kwargs"), meta.get("env_id")
    if features not in afterstate_names() or not isinstance(size, dict) or env_id not in env_ids():
        raise ValueError(f"{path} names no afterstate network and env (features, features_kwargs, env_id)")
    env_kwargs = meta.get("env_kwargs") or {}
    model = afterstate_model(env_id, int(meta.get("seed", 0)), features, size, env_kwargs)
    net = model.policy.features_extractor
    expected = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    if {k: tuple(v.shape) for k, v in arrays.items()} != expected:
        raise ValueError(f"{path}: its arrays are not the {len(expected)} weights of {features} {size}")
    net.load_state_dict({k: torch.from_numpy(np.array(v, np.float32)) for k, v in arrays.items()})
    params = {k: jax.numpy.asarray(v, jax.numpy.float32) for k, v in arrays.items()}
    _check_same_scores(net, params, features, env_id, env_kwargs)
    save_model(model, run_dir / "model.zip")
    return run_dir / "model.zip"


def _check_same_scores(net: Any, params: Any, features: str, env_id: str, env_kwargs: dict[str, Any]) -> None:
    """The torch network scores the moves of 512 opening deals as the JAX one does."""
    import torch
    from quadrat_env.agents.networks import jax_afterstate_network

    from quadrat_env.functional import make

    core = make(env_id, **env_kwargs)
    obs = jax.vmap(core.observe)(jax.vmap(core.init)(jax.random.split(jax.random.key(0), 512)))
    view = jax_afterstate_network(features, core.observation_shape[0])
    mine = np.asarray(view.scores(params, *jax.vmap(view.afterstates)(obs)))
    with torch.no_grad():
        theirs = net(torch.from_numpy(np.array(obs))).numpy()
    if not np.allclose(mine, theirs, atol=1e-4):
        raise ValueError(
            f"the exported network's scores differ from JAX's by {np.abs(mine - theirs).max():.3g}"
        )


TD_JAX = Learner("td_jax", description_of(__doc__), Settings, HYPERPARAMS, JaxTD, export_model)
train = TD_JAX.train


@command
def main(argv: list[str] | None = None) -> int:
    return cli.main(TD_JAX, argv)


if __name__ == "__main__":
    sys.exit(main())
