"""quadrat_env.agents.features: the Zudecken feature extractor reads the table as the rules do."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from quadrat_env.agents.features import EXTRA, PAIRS, ZudeckenFeatures  # noqa: E402

from quadrat_env.games.quadrat.kernel import EMPTY  # noqa: E402

ZU = "quadrat_env/Zudecken-v0"


def observed_states(deals: int = 30) -> tuple[np.ndarray, list]:
    """Observations and rules states along random legal play of a few deals."""
    env = gym.make(ZU).unwrapped
    rng = np.random.default_rng(1)
    obs_l, states = [], []
    for seed in range(deals):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            obs_l.append(obs.copy())
            states.append(env.state)
            action = rng.choice(np.flatnonzero(info["action_mask"]))
            obs, _, done, _, info = env.step(action)
    return np.array(obs_l), states


def test_features_match_the_rules_state():
    obs, states = observed_states()
    space = gym.make(ZU).observation_space
    extractor = ZudeckenFeatures(space)
    out = extractor(torch.as_tensor(obs)).numpy()
    assert out.shape == (len(obs), 269 + EXTRA) and extractor.features_dim == 269 + EXTRA
    assert np.array_equal(out[:, :269], obs)  # the observation passes unchanged
    extra = out[:, 269:]
    suit, rank = extra[:, :16].reshape(-1, 4, 4), extra[:, 16:68].reshape(-1, 4, 13)
    empty, pair = extra[:, 68:72], extra[:, 72:84].reshape(-1, 6, 2)
    unseen_suits, unseen_ranks = extra[:, 84:88] * 13, extra[:, 88:101] * 4
    for k, state in enumerate(states):
        slots = state.slots
        for i, c in enumerate(slots):
            assert empty[k, i] == (c == EMPTY)
            if c != EMPTY:
                assert suit[k, i].argmax() == c // 13 and rank[k, i].argmax() == c % 13
            else:
                assert not suit[k, i].any() and not rank[k, i].any()
        for p, (i, j) in enumerate(PAIRS):
            a, b = slots[i], slots[j]
            both = a != EMPTY and b != EMPTY
            assert pair[k, p, 0] == (both and a // 13 == b // 13)
            assert pair[k, p, 1] == (both and a % 13 == b % 13)
        unseen = state.deck[state.next :]
        assert np.allclose(unseen_suits[k], np.bincount([c // 13 for c in unseen], minlength=4))
        assert np.allclose(unseen_ranks[k], np.bincount([c % 13 for c in unseen], minlength=13))


def test_features_refuse_another_observation_space():
    with pytest.raises(ValueError, match="269"):
        ZudeckenFeatures(gym.make("quadrat_env/Quadrat-v0").observation_space)
