"""The optimal Zudecken player: each legal move's exact value from :mod:`quadrat_env.agents.exact`."""

from __future__ import annotations

import numpy as np
from quadrat_env.agents.base import Agent
from quadrat_env.agents.exact import ExactSolver


class OptimalAgent(Agent):
    """Plays the optimal policy of a Zudecken variant from any position: each legal group's exact
    value, the best one covered (ties within 1e-12 to the lowest action). Values are computed as play
    reaches them and kept: the first 32-card decision solves most (24.4M positions, ~70 s, 1.3 GB),
    later ones are look-ups. Packs over ``max_ranks`` ranks a suit are refused."""

    name = "optimal"

    def __init__(self, env_id: str, max_ranks: int = 8, **env_kwargs: object) -> None:
        from quadrat_env.agents.greedy import rules_of

        from quadrat_env.slots.kernel import GROUPS

        game = rules_of(env_id, **env_kwargs)
        if not getattr(game, "match_rank", False):
            raise ValueError(f"{env_id}: OptimalAgent solves games whose cards match in suit or rank")
        ranks = sorted({c % 13 for c in game.pack})
        if len(ranks) > max_ranks:
            raise ValueError(f"{env_id}: {len(ranks)} ranks a suit; the exact table fits in memory up to "
                             f"{max_ranks} (32 cards); use the planner for larger packs")  # fmt: skip
        self.env_id, self.game, self.groups = env_id, game, GROUPS
        win = "cleared" if game.win_needs_clear else "dealt"
        self.solver = ExactSolver(len(ranks), win, "groups" if game.max_group == 4 else "pairs")
        # the env's card number -> the solver's (suit * ranks + the rank's place among the pack's)
        self.bit = {c: 1 << (c // 13 * len(ranks) + ranks.index(c % 13)) for c in game.pack}

    def masks(self, observation: np.ndarray) -> tuple[int, int]:
        """The solver's (table, unseen) card masks of an observation."""
        state, unseen = self.game.decode(observation)
        table = sum(self.bit[c] for c in state.slots if c >= 0)
        return table, sum(self.bit[int(c)] for c in unseen)

    def action_values(self, observation: np.ndarray, mask: np.ndarray) -> dict[int, float]:
        """Each legal group action's optimal win probability."""
        table, unseen = self.masks(observation)
        state, _ = self.game.decode(observation)
        out = {}
        for a in np.flatnonzero(np.asarray(mask)[: len(self.groups)]):
            group = sum(self.bit[state.slots[i]] for i in self.groups[a])
            out[int(a)] = self.solver.value(table & ~group, unseen)
        return out

    def move_values(self, observation: np.ndarray, mask: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """:meth:`action_values` for ``moves``, in their order ("end": 0)."""
        values = self.action_values(observation, mask)
        return np.array([values.get(int(m), 0.0) for m in moves])

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        values = self.action_values(observation, mask)
        if not values:  # only "end" is legal
            return int(np.flatnonzero(mask)[0])
        # moves whose values differ only by rounding (sums taken in another order) are ties: the
        # lowest action among them, so the choice does not depend on the order of summation
        best = max(values.values())
        return min(a for a, v in values.items() if v >= best - 1e-12)

    def __repr__(self) -> str:
        return f"OptimalAgent({self.env_id!r})"


def solvable(env_id: str, max_ranks: int = 8) -> bool:
    """Whether :class:`OptimalAgent` plays ``env_id`` (a suit-or-rank game of at most ``max_ranks``
    ranks a suit)."""
    try:
        OptimalAgent(env_id, max_ranks=max_ranks)
    except ValueError:
        return False
    return True
