from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from quadrat_env.agents.planner import PlannerAgent, settled

from quadrat_env.slots.kernel import EMPTY

ZU = "quadrat_env/Zudecken-v0"


def decisions_at(deck, actions, samples=6):
    """Replay ``actions`` on ``deck``; return the observation then and the planner's choice."""
    env = gym.make(ZU, illegal_action="raise")
    obs, info = env.reset(options={"deck": list(deck)})
    for a in actions:
        obs, _, _, _, info = env.step(a)
    choice = PlannerAgent(ZU, samples=samples, seed=11).act(obs, info["action_mask"])
    return obs, choice, env.unwrapped.state.next


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_decisions_ignore_the_order_of_unseen_cards(seed):
    env = gym.make(ZU)
    obs, info = env.reset(seed=seed)
    deck, actions = list(env.unwrapped.deck), []
    agent, rng, checked = PlannerAgent(ZU, samples=6, seed=1), np.random.default_rng(seed), 0
    while True:
        obs_here, choice, nxt = decisions_at(deck, actions)
        for _ in range(2):  # same seen cards, unseen stock in another order
            shuffled = deck[:nxt] + list(rng.permutation(deck[nxt:]))
            obs_other, choice_other, _ = decisions_at(shuffled, actions)
            assert np.array_equal(obs_here, obs_other) and choice == choice_other
            checked += 1
        action, _ = agent.predict(obs, action_masks=info["action_mask"])
        obs, _, terminated, _, info = env.step(action)
        actions.append(int(action))
        if terminated or len(actions) > 6:
            break
    assert checked >= 4


def test_decode_recovers_what_the_player_sees():
    env = gym.make(ZU)
    obs, _ = env.reset(seed=9)
    obs, *_ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    state, unseen = PlannerAgent(ZU, samples=1).game.decode(obs)
    true = env.unwrapped.state
    assert state.slots == true.slots and state.next == true.next
    assert sorted(unseen.tolist()) == sorted(true.deck[true.next :])
    assert EMPTY not in state.slots


def test_planner_plays_legal_moves_to_the_end_in_every_game():
    for env_id in ["quadrat_env/Quadrat-v0", ZU, "quadrat_env/Quadrille-v0"]:
        env = gym.make(env_id)
        agent = PlannerAgent(env_id, samples=2)
        obs, info = env.reset(seed=1)
        done = False
        while not done:
            action, _ = agent.predict(obs, action_masks=info["action_mask"])
            obs, _, done, truncated, info = env.step(action)
            assert not info["illegal_action"] and not truncated


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"samples": 0}, "samples"), ({"time_budget": 0}, "time_budget")]
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PlannerAgent(ZU, **kwargs)


def test_stopping_rule():
    # columns are moves, rows samples; True: the move still wins that sampled deal
    same = np.array([[1, 1, 0]] * 34 + [[0, 0, 1]] * 30, dtype=bool)  # the leaders 0 and 1 never differ
    assert settled(same)
    close = np.array([[1, 0]] * 10 + [[0, 1]] * 8 + [[0, 0]] * 46, dtype=bool)  # 10 to 8
    assert not settled(close)
    clear = np.array([[1, 0]] * 20 + [[0, 1]] * 2 + [[1, 1]] * 42, dtype=bool)  # 62 to 44, 22 split
    assert settled(clear)


def test_adaptive_planner_samples_in_batches_within_its_budget():
    obs, mask = first_choice()
    fixed = PlannerAgent(ZU, samples=256, adaptive=False, seed=0)
    adaptive = PlannerAgent(ZU, samples=256, adaptive=True, seed=0)
    for agent in (fixed, adaptive):
        agent.act(obs, mask)
    assert fixed.sampled == 256 and 64 <= adaptive.sampled <= 256 and adaptive.sampled % 64 == 0


def first_choice(seed=0):
    """The opening observation of the first seeded Zudecken deal that opens with a choice, and its mask."""
    env = gym.make(ZU)
    while True:
        obs, info = env.reset(seed=seed)
        if info["action_mask"].sum() > 1:
            return obs, info["action_mask"]
        seed += 1


def test_cut_short_counts_decisions_the_time_budget_ended():
    obs, mask = first_choice()
    hurried = PlannerAgent(ZU, samples=256, adaptive=False, time_budget=1e-9, seed=0)
    patient = PlannerAgent(ZU, samples=256, adaptive=False, time_budget=float("inf"), seed=0)
    for _ in range(2):
        hurried.act(obs, mask), patient.act(obs, mask)
    assert (hurried.cut_short, hurried.sampled) == (2, 2 * 64)  # one batch each, then out of time
    assert (patient.cut_short, patient.sampled) == (0, 2 * 256)


def test_the_search_is_compiled_before_the_first_decision():
    """Compiling inside the first decision could run out its time budget (fewer samples, a shifted
    random stream): the agent compiles the search it decides with, for the rows it draws, up front."""
    agent = PlannerAgent(ZU, samples=64, seed=0)
    dispatcher = agent.game.kernel.wins_after
    compiled = list(dispatcher.signatures)
    agent.act(*first_choice())
    assert compiled and dispatcher.signatures == compiled


def test_the_tools_planner_has_no_time_budget():
    """The benchmark and ``quadrat-bench`` make the planner by name: its moves must not depend on the
    machine's speed. The class keeps its 1 s budget for interactive play."""
    from quadrat_env.agents import make

    assert make("planner", ZU).time_budget == float("inf")
    assert PlannerAgent(ZU, samples=1).time_budget == 1.0
    assert make("planner", ZU, time_budget=2.0).time_budget == 2.0
