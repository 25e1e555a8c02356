"""A planner that plays from what a player sees: perfect-information Monte Carlo over the unseen cards.

At each decision with a choice it decodes the observation (the upcards and the set of unseen
cards; never the stock order), deals the unseen cards in ``samples`` random orders, lets the exact
solver decide for every legal move whether that sampled deal can still be won, and plays the move
that wins in the most samples. Ties go to a fixed preference: largest group, then lowest action.

Quadrille needs no sampling: playing a card that fits is optimal there (see ``agents.solver``),
so the planner plays it. ``time_budget`` (seconds per decision) stops sampling early.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np

from agents.base import Agent, legal
from agents.greedy import largest_group, play_else_deal
from agents.solver import SlotSearch
from quadrat_env.cards import PACKS
from quadrat_env.envs.slots import SlotLayout
from quadrat_env.rules import GROUPS, SlotGame
from quadrat_env.rules.slots import EMPTY, SlotState


class PlannerAgent(Agent):
    name = "planner"

    def __init__(
        self, env_id: str, samples: int = 32, time_budget: float = 1.0, seed: int | None = 0
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples!r}")
        if not time_budget > 0:
            raise ValueError(f"time_budget must be > 0 seconds, got {time_budget!r}")
        env = gym.make(env_id).unwrapped
        self.env_id, self.game = env_id, env.game
        self.layout: SlotLayout | None = getattr(env, "layout", None)  # slot games only
        self.samples, self.time_budget = samples, time_budget
        self.rng = np.random.default_rng(seed)
        self.pack = np.array(PACKS[self.game.pack_size])

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        moves = legal(mask)
        if not isinstance(self.game, SlotGame):
            return play_else_deal(mask)
        if len(moves) == 1:
            return int(moves[0])
        state, unseen = self.decode(observation)
        wins = np.zeros(len(moves))
        deadline = time.perf_counter() + self.time_budget
        for _ in range(self.samples):
            order = tuple(int(c) for c in self.rng.permutation(unseen))
            sample = state._replace(deck=state.deck + order)
            search = SlotSearch(self.game)  # one memo per sampled deal, shared by its moves
            for i, m in enumerate(moves):
                wins[i] += search.wins(self.game.play_unchecked(sample, int(m)))
            if time.perf_counter() > deadline:
                break
        best = moves[wins == wins.max()]
        tie_mask = np.zeros_like(mask)
        tie_mask[best] = 1
        return largest_group(tie_mask) if self.game.num_moves == len(GROUPS) else int(best[0])

    def decode(self, observation: np.ndarray) -> tuple[SlotState, np.ndarray]:
        """The visible state with the stock left out (``deck`` holds only the cards gone by)."""
        lay = self.layout
        p = lay.pack_size
        obs = np.asarray(observation)
        slots = []
        for i in range(4):
            block = obs[i * p : (i + 1) * p]
            slots.append(int(self.pack[block.argmax()]) if block.max() > 0.5 else EMPTY)
        is_unseen = obs[lay.unseen] > 0.5
        unseen, seen = self.pack[is_unseen], self.pack[~is_unseen]
        state = SlotState(tuple(int(c) for c in seen), len(seen), tuple(slots))  # type: ignore[arg-type]
        return state, unseen
