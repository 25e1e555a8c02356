"""The JAX afterstate network scores every move as the torch network does with the same weights."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("sb3_contrib")

import gymnasium as gym  # noqa: E402
import jax  # noqa: E402
import torch  # noqa: E402
from quadrat_env.agents.networks import jax_afterstate_network  # noqa: E402
from quadrat_env.agents.zudecken import jax_afterstates as ja  # noqa: E402
from quadrat_env.agents.zudecken.features import ZudeckenAfterstates  # noqa: E402

Z32, Z52 = "quadrat_env/Zudecken32-v0", "quadrat_env/Zudecken-v0"


def positions(env_id: str, deals: int, seed: int, moves: int) -> tuple[object, np.ndarray]:
    """The batched env and its observations over ``moves`` random legal moves from ``deals`` deals."""
    venv = gym.make_vec(env_id, num_envs=deals, vectorization_mode="vector_entry_point").unwrapped
    obs, _ = venv.reset(seed=seed)
    rng, seen = np.random.default_rng(seed), [obs]
    for _ in range(moves):
        masks = venv.action_masks()
        obs, *_ = venv.step((rng.random(masks.shape) * masks).argmax(1))
        seen.append(obs)
    return venv, np.concatenate(seen)


@pytest.mark.parametrize("env_id", [Z32, Z52])
def test_the_jax_network_scores_as_the_torch_network_with_the_same_weights(env_id):
    """Positions from random play, a few moves deep (every kind of group coverable or not)."""
    venv, obs = positions(env_id, 64, seed=7, moves=8)
    net = ZudeckenAfterstates(venv.single_observation_space, channels=8, layers=3, hidden=16)
    params = {k: jax.numpy.asarray(v.numpy()) for k, v in net.state_dict().items()}
    view = jax_afterstate_network("zudecken-afterstates", obs.shape[1])  # found by name, as learners do
    grids, coverable = jax.vmap(view.afterstates)(jax.numpy.asarray(obs))
    mine = np.asarray(view.scores(params, grids, coverable))
    with torch.no_grad():
        theirs = net(torch.from_numpy(obs)).numpy()
    assert (mine == ja.UNSCORED).sum() == (theirs == ja.UNSCORED).sum() > 0
    np.testing.assert_allclose(mine, theirs, atol=1e-5)
    # new weights have the torch network's names and shapes
    fresh = ja.init_params(jax.random.key(0), 8, 3, 16)
    assert {k: v.shape for k, v in fresh.items()} == {k: tuple(v.shape) for k, v in net.state_dict().items()}


def test_a_non_zudecken_observation_or_size_is_refused():
    with pytest.raises(ValueError, match="expects a Zudecken observation"):
        ja.Afterstates(100)
    with pytest.raises(ValueError, match="channels must be a whole number in 1..512"):
        ja.sizes(channels=0)


@pytest.mark.parametrize("env_id", [Z32, Z52, "quadrat_env/Zudecken16-v0"])
def test_valuing_the_coverable_afterstates_only_gives_every_score(env_id):
    # the learners' batch path values a buffer of 4 or 6 afterstates a decision, or all 11 when the
    # batch's count does not fit: each branch scores as the plain path does
    obs = jax.numpy.asarray(positions(env_id, 32, seed=3, moves=3)[1])
    view = jax_afterstate_network("zudecken-afterstates", obs.shape[1])
    params = ja.init_params(jax.random.key(1), 8, 2, 16)
    grids, coverable = jax.vmap(view.afterstates)(obs)
    n, branches = len(obs), set()
    compact = jax.jit(view.scores_of_coverable)
    for k in (None, 3, 5, 11):  # the positions' own coverable groups, then k a decision
        mask = coverable if k is None else jax.numpy.asarray(np.arange(11)[None].repeat(n, 0) < k)
        np.testing.assert_allclose(compact(params, grids, mask), view.scores(params, grids, mask), atol=1e-6)
        branches.add(int(mask.sum() > 4 * n) + int(mask.sum() > 6 * n))
    assert branches == {0, 1, 2}  # every buffer's branch was taken
