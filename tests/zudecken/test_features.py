"""quadrat_env.agents.zudecken.features: the Zudecken feature extractor reads the table as the rules do."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from quadrat_env.agents.solver import Solver  # noqa: E402
from quadrat_env.agents.zudecken.features import (  # noqa: E402
    EXTRA,
    OLD_MOVES,
    PAIRS,
    SLOT_ORDERS,
    UNSCORED,
    ZudeckenAfterstates,
    ZudeckenFeatures,
    ZudeckenMoveFeatures,
    random_renaming,
    relabel,
)

from quadrat_env.slots import reference  # noqa: E402
from quadrat_env.slots.kernel import EMPTY, GROUPS  # noqa: E402

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


def test_renamed_decisions_are_the_decisions_of_the_renamed_deal():
    """``relabel`` with suits, ranks and slots renamed gives what the renamed deal itself shows:
    its observation, its legal moves and, from the solver on its true stock, its winning moves."""
    env = gym.make(ZU).unwrapped
    obs, states = observed_states(deals=12)
    solver = Solver(env.game)
    masks = np.zeros((len(obs), env.game.num_moves + 1), dtype=np.int8)
    wins = np.zeros(masks.shape, dtype=np.float32)
    for k, state in enumerate(states):
        masks[k], wins[k] = legal_and_winning(env.game, solver, state)
    assert 0 < wins.sum() < masks.sum()  # some moves win, some do not
    cards, order = random_renaming(len(obs), torch.Generator().manual_seed(3))
    assert len(set(order.tolist())) > 12  # most slot orders occur
    new_obs, new_masks, new_wins = relabel(torch.as_tensor(obs), torch.as_tensor(masks),
                                           torch.as_tensor(wins), cards, order)  # fmt: skip
    for k, state in enumerate(states):
        new_of = {int(old): new for new, old in enumerate(cards[k])}  # old card -> its new name
        slots = tuple(EMPTY if state.slots[j] == EMPTY else new_of[state.slots[j]]
                      for j in SLOT_ORDERS[order[k]].tolist())  # fmt: skip
        renamed = state._replace(deck=tuple(new_of[c] for c in state.deck), slots=slots)
        assert np.array_equal(new_obs[k].numpy(), reference.observe(renamed, 52, True))
        mask, win = legal_and_winning(env.game, solver, renamed)
        assert np.array_equal(new_masks[k].numpy(), mask) and np.array_equal(new_wins[k].numpy(), win)


def legal_and_winning(game, solver: Solver, state) -> tuple[np.ndarray, np.ndarray]:
    """The action mask (the last action "end" when no group shows) and which legal moves still win."""
    mask, win = np.zeros(game.num_moves + 1, dtype=np.int8), np.zeros(game.num_moves + 1, dtype=np.float32)
    moves = list(game.legal_moves(state))
    mask[moves or [game.num_moves]] = 1
    if moves:  # with no group showing, "end" is all there is and the deal is lost
        win[moves] = solver.wins_after(game.to_row(state), np.array(moves))[0]
    return mask, win


def test_move_features_describe_what_each_move_keeps():
    obs, states = observed_states()
    extractor = ZudeckenMoveFeatures(gym.make(ZU).observation_space)
    out = extractor(torch.as_tensor(obs)).numpy()
    assert out.shape[1] == extractor.features_dim == 269 + EXTRA + 55
    assert np.array_equal(out[:, : 269 + EXTRA], ZudeckenFeatures(gym.make(ZU).observation_space)(
        torch.as_tensor(obs)).numpy())  # fmt: skip
    per_move = out[:, 269 + EXTRA :].reshape(len(obs), len(GROUPS), 5)

    def match(a: int, b: int) -> bool:
        return a // 13 == b // 13 or a % 13 == b % 13

    for k, state in enumerate(states):
        unseen = state.deck[state.next :]
        for m, group in enumerate(GROUPS):
            kept = [state.slots[i] for i in range(4) if i not in group and state.slots[i] != EMPTY]
            pairs = sum(match(a, b) for x, a in enumerate(kept) for b in kept[x + 1 :])
            matches = [sum(match(c, u) for u in unseen) for c in kept]
            stranded = sum(n == 0 and not any(match(c, d) for d in kept if d != c)
                           for c, n in zip(kept, matches, strict=True))  # fmt: skip
            weakest = min(matches, default=15) / 15
            expected = [pairs / 3, len(kept) / 3, sum(matches) / 45, weakest, stranded / 3]
            assert np.allclose(per_move[k, m], expected, atol=1e-5), (state, group)


def test_afterstate_network_scores_exactly_the_legal_groups():
    """Its coverable groups are the rules' legal moves; every other move, and "end", gets UNSCORED."""
    env = gym.make(ZU).unwrapped
    obs, states = observed_states(deals=30)
    net = ZudeckenAfterstates(env.observation_space)
    with torch.no_grad():
        scores = net(torch.as_tensor(obs)).numpy()
    masks = np.array([[m in env.game.legal_moves(state) for m in range(len(GROUPS))] for state in states])
    assert 0 < masks.sum() < masks.size
    assert ((scores[:, : len(GROUPS)] == UNSCORED) == ~masks).all()
    assert (scores[:, len(GROUPS)] == UNSCORED).all()


def test_afterstate_scores_follow_any_renaming_of_suits_ranks_and_slots():
    """Renaming suits, ranks and slots (``relabel``) moves each score to the renamed move and changes
    nothing else: the network reads only which cards are kept and unseen, and how they match."""
    obs, _ = observed_states(deals=12)
    torch.manual_seed(0)
    net = ZudeckenAfterstates(gym.make(ZU).observation_space)
    obs_t = torch.as_tensor(obs)
    cards, order = random_renaming(len(obs), torch.Generator().manual_seed(5))
    dummy = torch.zeros(len(obs), len(GROUPS) + 1)
    renamed, _, _ = relabel(obs_t, dummy, dummy, cards, order)
    with torch.no_grad():
        before, after = net(obs_t), net(renamed)
    assert before.std() > 0.01  # the scores differ between moves and decisions
    assert torch.allclose(after, before.gather(1, OLD_MOVES[order]), atol=1e-5)
