"""One-ply lookahead over an afterstate network: the next stock cards sampled, the network's best
move after them averaged (expectimax one chance level deep, TD-Gammon's "2-ply" on a one-player game).

A Zudecken afterstate is the kept upcards and the unseen cards; the move's covered slots are then
refilled from a random order of the unseen cards (the stock's order is hidden, so every order is
equally likely given the observation). ``LookaheadAgent`` values a move by ``samples`` such orders:
after each, the next decision's best ``sigmoid(V)`` over its coverable groups (1 or 0 where the deal
has ended, won or lost), averaged. The same orders serve every move of a decision (common random
numbers: a move covering k slots draws the order's first k cards), so the moves are compared on the
same draws. It plays the network's own best move unless another move's mean advantage over it, on
those draws, exceeds ``z`` standard errors (``z=0``: the move with the highest mean). It sees only
the observation, as the network does.
"""

from __future__ import annotations

import numpy as np
import torch
from quadrat_env.agents.base import Agent
from quadrat_env.agents.zudecken.features import torch_batch

from quadrat_env.slots.kernel import GROUPS, NUM_SLOTS

MOVES = len(GROUPS)  # the group moves; "end" (the last action) is never scored


class LookaheadAgent(Agent):
    """An afterstate network (``ZudeckenAfterstates``) with sampled one-ply lookahead."""

    def __init__(self, net: torch.nn.Module, samples: int = 64, z: float = 2.0, seed: int = 0,
                 name: str = "lookahead") -> None:  # fmt: skip
        if type(samples) is not int or samples < 2:
            raise ValueError(
                f"samples must be a whole number >= 2 (a standard error needs two), got {samples!r}"
            )
        if not np.isfinite(z) or z < 0:
            raise ValueError(f"z must be a finite number >= 0, got {z!r}")
        self.net, self.samples, self.z, self.name = net, samples, float(z), name
        self.generator = torch.Generator().manual_seed(seed)
        self.decisions = self.parted = 0  # decisions with a choice; of them, where lookahead left the network
        # over the legal moves of those decisions: the sum of (lookahead value - sigmoid(V)), and how many
        self.bias_sum, self.bias_count = 0.0, 0

    def predict(self, observation, state=None, episode_start=None, deterministic=True,
                action_masks=None):  # fmt: skip
        obs, masks, single = torch_batch(self, observation, action_masks)
        with torch.no_grad():
            scores = self.net(obs).masked_fill(~masks, -torch.inf)
            actions = scores.argmax(1)
            legal = self.net.scored_moves(obs)[:, :MOVES] & masks[:, :MOVES]
            choose = legal.sum(1) > 1
            if choose.any():
                actions[choose] = self._choose(obs[choose], legal[choose], scores[choose])
        out = actions.numpy()
        return (out[0] if single else out), state

    def _choose(self, obs: torch.Tensor, legal: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        n, rows, best = len(obs), torch.arange(len(obs)), scores.argmax(1)
        values = self.sampled_values(obs, legal)  # (n, MOVES, samples), NaN where not legal
        diff = values - values[rows, best][:, None, :]
        z = torch.nan_to_num(diff.mean(-1) / (diff.std(-1) / self.samples**0.5 + 1e-12), nan=-torch.inf)
        z[rows, best] = 0.0
        top, other = z.max(1)
        chosen = torch.where(top > self.z, other, best)
        own = torch.sigmoid(scores[:, :MOVES])  # the network's values (0 where masked)
        self.decisions += n
        self.parted += int((chosen != best).sum())
        gaps = (values.mean(-1) - own)[legal]
        self.bias_sum += float(gaps.double().sum())
        self.bias_count += len(gaps)
        return chosen

    @torch.no_grad()
    def sampled_values(self, obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """(n, MOVES, samples): each legal move's value after each sampled stock order."""
        net, n, s = self.net, len(obs), self.samples
        pack = net.pack
        up = obs[:, net.upcards].reshape(n, NUM_SLOTS, pack)
        unseen = obs[:, net.unseen]
        # a random order of each deal's unseen cards: they sort first (keys < 1), the rest after
        keys = torch.rand(n, s, pack, generator=self.generator) + 2 * (1 - unseen[:, None, :])
        order = keys.argsort(-1)
        rows, moves = torch.nonzero(legal, as_tuple=True)
        slots, rest = self._refill(up[rows], unseen[rows], order[rows], moves)
        k = len(rows)
        nxt = torch.zeros(k * s, obs.shape[1])
        nxt[:, net.upcards] = slots.reshape(k * s, -1)
        nxt[:, net.unseen] = rest.reshape(k * s, pack)
        best = self._best_next(nxt, slots.reshape(k * s, -1), rest.reshape(k * s, pack))
        out = torch.full((n, MOVES, s), torch.nan)
        out[rows, moves] = best.reshape(k, s)
        return out

    def _refill(self, up: torch.Tensor, unseen: torch.Tensor, order: torch.Tensor,
                moves: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        """The upcards (k, samples, 4, pack) and unseen cards (k, samples, pack) after each move
        and each order: covered slots, in ascending order, take the order's next cards (the
        rules' order; the network does not tell slots apart) or stay empty once the stock is out."""
        k, s, pack = order.shape
        covered = self.net.member[moves] > 0  # (k, 4)
        draw = covered.long().cumsum(1) - 1  # which card of the order slot i takes
        stock = unseen.sum(1).long()
        slots = up[:, None].expand(k, s, NUM_SLOTS, pack).clone()
        rest = unseen[:, None].expand(k, s, pack).clone()
        for i in range(NUM_SLOTS):
            card = order[torch.arange(k), :, draw[:, i].clamp(min=0)]  # (k, samples)
            dealt = (covered[:, i] & (draw[:, i] < stock)).float()[:, None, None]
            new = torch.nn.functional.one_hot(card, pack).float() * dealt
            slots[:, :, i] = torch.where(covered[:, i, None, None], new, slots[:, :, i])
            rest = rest - new
        return slots, rest

    @torch.no_grad()
    def _best_next(self, obs: torch.Tensor, slots: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        """The next decision's value: its best move's ``sigmoid(V)``, or the deal's outcome (won:
        no upcard and no unseen card left) where no group can be covered."""
        net = self.net
        can = net.scored_moves(obs)[:, :MOVES]
        rows, moves = torch.nonzero(can, as_tuple=True)
        values = torch.zeros(len(obs), MOVES)
        values[rows, moves] = torch.sigmoid(net.value(net.afterstates(obs, rows, moves)))
        won = ((slots.sum(1) + rest.sum(1)) == 0).float()
        return torch.where(can.any(1), values.max(1).values, won)
