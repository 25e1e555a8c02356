"""Several afterstate networks as one player: each move valued by their mean win probability.

Each network (``ZudeckenAfterstates``, trained on its own: other seeds, other learners) scores
every coverable group's afterstate with a logit ``V``; ``EnsembleAgent`` plays the legal move
with the highest mean of ``sigmoid(V)`` over the networks (``average="logit"``: the mean of the
logits instead). Averaging removes what the networks get wrong independently of one another, and
nothing they share. It sees only the observation, as each network does, and costs one forward
pass a network.
"""

from __future__ import annotations

import torch
from quadrat_env.agents.base import Agent
from quadrat_env.agents.zudecken.features import torch_batch

AVERAGES = ("probability", "logit")


class EnsembleAgent(Agent):
    """Afterstate networks of one pack, their values averaged; the best legal move by the mean."""

    def __init__(self, nets: list[torch.nn.Module], average: str = "probability",
                 name: str = "ensemble") -> None:  # fmt: skip
        if len(nets) < 2:
            raise ValueError(f"an ensemble needs at least two networks, got {len(nets)}")
        if any(not hasattr(net, "scored_moves") for net in nets):
            raise ValueError("every network must score afterstates (ZudeckenAfterstates)")
        if len({net.pack for net in nets}) > 1:
            raise ValueError(f"the networks are of other packs: {sorted({net.pack for net in nets})} cards")
        if average not in AVERAGES:
            raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
        self.nets, self.average, self.name = nets, average, name

    def scores(self, obs: torch.Tensor) -> torch.Tensor:
        """(n, 12): the mean value of each move over the networks; -inf where no network scores it."""
        logits = torch.stack([net(obs) for net in self.nets])  # (networks, n, 12)
        mean = (torch.sigmoid(logits) if self.average == "probability" else logits).mean(0)
        return mean.masked_fill(~self.nets[0].scored_moves(obs), -torch.inf)

    def predict(self, observation, state=None, episode_start=None, deterministic=True,
                action_masks=None):  # fmt: skip
        obs, masks, single = torch_batch(self, observation, action_masks)
        with torch.no_grad():
            scores = self.scores(obs)
            # a move that no network scores ("end") only where nothing else is legal
            legal = torch.where(masks, scores, torch.tensor(-torch.inf))
            fallback = masks.float().argmax(1)
            actions = torch.where(torch.isfinite(legal).any(1), legal.argmax(1), fallback)
        out = actions.numpy()
        return (out[0] if single else out), state
