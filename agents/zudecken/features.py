"""Card-structure features for the Zudecken policy network (an SB3 features extractor).

Zudecken's observation gives each upcard as a one-hot over 52 cards. Whether two upcards match
(same suit or same rank) is then a product of two 52-wide one-hots, which an MLP has to learn
from data pair by pair; with the ~10^5 labelled decisions imitation provides, it does not. This
extractor computes what a player reads off the table at a glance, as a fixed function of the
observation (no learned weights, nothing the observation does not hold):

==================  =====  ======================================================
piece               width  meaning
==================  =====  ======================================================
observation         269    the env's observation, unchanged
slot suit           4x4    per slot: suit one-hot (all 0 if the slot is empty)
slot rank           4x13   per slot: rank one-hot
slot empty          4      per slot: 1 if empty
pair match          6x2    per slot pair (0,1) (0,2) (0,3) (1,2) (1,3) (2,3): same suit, same rank
unseen suits        4      unseen cards per suit / 13
unseen ranks        13     unseen cards per rank / 4
==================  =====  ======================================================

It is used through ``policy_kwargs={"features_extractor_class": ZudeckenFeatures}``; configs name it
(``features: zudecken``) and ``policy_kwargs_with`` resolves the name. A model saved with it loads
with ``MaskablePPO.load`` wherever ``quadrat_env`` is installed.
"""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from quadrat_env.cards import PACKS
from quadrat_env.registry import rules_for
from quadrat_env.slots.kernel import GROUPS, MATCH, NUM_SLOTS, PAIR_SLOTS

ZU = "quadrat_env/Zudecken-v0"  # the game (its 32-card pack: n_cards=32), reached through the registry
LAYOUT = rules_for(ZU).layout  # the observation's pieces, as the env declares them
PACK = 52
UPCARDS = LAYOUT["upcards"].slice  # four 52-wide one-hots
UNSEEN = LAYOUT["unseen"].slice
PER_SLOT = (LAYOUT["suit_match"].slice, LAYOUT["rank_match"].slice)  # one entry per slot
PAIRS = list(PAIR_SLOTS)  # actions 0-5, in action order
EXTRA = NUM_SLOTS * 4 + NUM_SLOTS * 13 + NUM_SLOTS + len(PAIRS) * 2 + 4 + 13
#: Where the "slot empty" and "pair match" pieces sit in the extra features (after the observation).
EMPTY_AT = slice(NUM_SLOTS * (4 + 13), NUM_SLOTS * (4 + 13 + 1))  # after slot suit and slot rank
PAIR_AT = slice(EMPTY_AT.stop, EMPTY_AT.stop + len(PAIRS) * 2)


class ZudeckenFeatures(BaseFeaturesExtractor):
    """Observation plus the suit/rank structure of the upcards and of the unseen cards."""

    def __init__(self, observation_space: gym.spaces.Box) -> None:
        if observation_space.shape != (LAYOUT.size,):
            raise ValueError(f"ZudeckenFeatures expects Zudecken's (269,) observation, got "
                             f"{observation_space.shape}")  # fmt: skip
        super().__init__(observation_space, features_dim=observation_space.shape[0] + EXTRA)
        cards = torch.arange(PACK)
        # card c = suit*13 + rank: fixed 0/1 maps from the card one-hot to suit and rank one-hots
        self.register_buffer("to_suit", nn.functional.one_hot(cards // 13, 4).float(), persistent=False)
        self.register_buffer("to_rank", nn.functional.one_hot(cards % 13, 13).float(), persistent=False)
        self.pairs = PAIRS

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        up = observations[:, UPCARDS].reshape(-1, NUM_SLOTS, PACK)
        suit, rank = up @ self.to_suit, up @ self.to_rank  # (n, 4, 4), (n, 4, 13)
        empty = 1.0 - up.sum(-1)
        pair = [torch.stack([(suit[:, i] * suit[:, j]).sum(-1), (rank[:, i] * rank[:, j]).sum(-1)], -1)
                for i, j in self.pairs]  # fmt: skip
        unseen = observations[:, UNSEEN]
        return torch.cat([observations, suit.flatten(1), rank.flatten(1), empty,
                          torch.cat(pair, -1), unseen @ self.to_suit / 13, unseen @ self.to_rank / 4],
                         dim=1)  # fmt: skip


#: KEEP[m, i]: move m (a group of GROUPS) leaves slot i showing; KEEP_PAIR[m, p]: it leaves both
#: slots of pair p showing.
KEEP = torch.tensor([[float(i not in g) for i in range(NUM_SLOTS)] for g in GROUPS])
KEEP_PAIR = torch.tensor([[float(i not in g and j not in g) for i, j in PAIRS] for g in GROUPS])
#: IN_PAIR[p, i]: slot i is one of pair p's two slots.
IN_PAIR = torch.tensor([[float(i in pair) for i in range(NUM_SLOTS)] for pair in PAIRS])
MOVE_EXTRA = len(GROUPS) * 5


class ZudeckenMoveFeatures(ZudeckenFeatures):
    """``ZudeckenFeatures`` plus, per group move, what the table keeps after it (the cards it
    does not take away), so the network need not work that out for each move from the slots:

    ======================  ========================================================================
    per move (11 x 5)       meaning
    ======================  ========================================================================
    kept matching pairs     pairs of kept upcards that match each other (a move that stays open) / 3
    kept cards              kept upcards / 3
    kept matches            unseen cards matching a kept upcard (suit or rank), summed / 45
    weakest kept card       the fewest unseen cards any kept upcard matches / 15 (1 if none kept)
    stranded kept cards     kept upcards that no unseen card and no other kept card matches / 3
    ======================  ========================================================================
    """

    def __init__(self, observation_space: gym.spaces.Box) -> None:
        super().__init__(observation_space)
        self._features_dim += MOVE_EXTRA
        self.register_buffer("keep", KEEP, persistent=False)
        self.register_buffer("keep_pair", KEEP_PAIR, persistent=False)
        self.register_buffer("in_pair", IN_PAIR, persistent=False)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        base = super().forward(observations)
        n, extra = len(observations), base[:, LAYOUT.size :]
        present = 1.0 - extra[:, EMPTY_AT]  # slot shows a card
        pair = extra[:, PAIR_AT].reshape(n, len(PAIRS), 2).amax(-1)  # slot pair matches in suit or rank
        # unseen cards matching each upcard: its suit's (obs: / 12) plus its rank's (obs: / 3)
        matches = (observations[:, PER_SLOT[0]] * 12 + observations[:, PER_SLOT[1]] * 3) * present
        kept = present[:, None, :] * self.keep  # (n, 11, 4)
        # partner[n, m, i]: after move m, slot i's card has a kept card that matches it
        partner = ((self.keep_pair * pair[:, None, :]) @ self.in_pair).clamp(max=1)
        weakest = torch.where(kept > 0, matches[:, None, :], torch.full_like(kept, 15.0)).amin(-1)
        stranded = (kept * (matches[:, None, :] == 0) * (1 - partner)).sum(-1)
        per_move = torch.stack([pair @ self.keep_pair.T / 3, kept.sum(-1) / 3,
                                (kept * matches[:, None, :]).sum(-1) / 45, weakest.clamp(max=15) / 15,
                                stranded / 3], dim=-1)  # fmt: skip
        return torch.cat([base, per_move.flatten(1)], dim=1)


#: MEMBER[m, i]: move m (a group of GROUPS) covers slot i.
MEMBER = 1.0 - KEEP
#: The afterstate network's size, fixed so that a saved model needs no extractor arguments.
AFTER_CHANNELS, AFTER_LAYERS, AFTER_HIDDEN = 32, 4, 64  # the defaults; kwargs of the extractor
#: The largest sizes the afterstate network accepts (a model file cannot make us allocate more).
AFTER_LIMITS = {"channels": 512, "layers": 16, "hidden": 4096}
#: The score of a move the afterstate network does not evaluate (not a coverable group, or "end"):
#: a logit of "this move does not win"; the action mask decides legality, not this.
UNSCORED = -10.0


class SuitRankLayer(nn.Module):
    """One exchangeable layer over the 4 x 13 suit-by-rank grid (Hartford et al., 2018, "Deep models
    of interactions across sets"): a cell's new features see its own, its suit's mean, its rank's
    mean and the whole grid's mean. Renaming suits or ranks permutes its output the same way, and
    "same suit" and "same rank" are exactly what Zudecken's matches ask."""

    def __init__(self, inputs: int, outputs: int) -> None:
        super().__init__()
        self.own = nn.Linear(inputs, outputs)
        self.suit, self.rank, self.grid = (nn.Linear(inputs, outputs, bias=False) for _ in range(3))

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # h: (n, 4 suits, ranks, channels)
        return (self.own(h) + self.suit(h.mean(2, keepdim=True)) + self.rank(h.mean(1, keepdim=True))
                + self.grid(h.mean((1, 2), keepdim=True)))  # fmt: skip


class ZudeckenAfterstates(BaseFeaturesExtractor):
    """Each move's logit, scored by one network from what the table is after the move.

    After a group is covered, what decides the rest of the deal is the set of upcards the move
    keeps and the set of unseen cards (the covered slots refill from a random order of them, and
    slots are all alike). So one network ``V(kept, unseen)`` scores every move, learning from all
    moves of all decisions at once, on the suit-by-rank grid (4 x 13; 4 x 8 for the 32-card pack)
    with 4 channels per card: unseen, kept, stock size / its largest (48; 28), kept upcards / 4;
    ``layers`` residual ``SuitRankLayer`` layers of ``channels`` channels (default 4 of 32),
    then the grid's mean and the kept cards' sum into a ``hidden``-unit head (default 64). Its
    weights do not depend on the pack's size.

    Output (12 features, the move logits): entry ``m`` < 11 is ``V`` after move ``m`` when group
    ``m`` can be covered (every card in it matches another in suit or rank), else
    ``UNSCORED``, as is entry 11 ("end"). Use it with ``net_arch=[]`` and the action net set
    to pass the scores through (``quadrat_env.agents.networks.scores_as_logits``). It is an
    afterstate network (``scored_moves``, ``afterstates``, ``value``): ``quadrat_env.experiments.td``
    learns it from the reward alone.
    """

    #: Its keyword arguments and their largest values (what a model file may ask for).
    kwarg_limits = AFTER_LIMITS
    #: Its keyword arguments' defaults (a training table names only the sizes that differ).
    kwarg_defaults = {"channels": AFTER_CHANNELS, "layers": AFTER_LAYERS, "hidden": AFTER_HIDDEN}

    def __init__(self, observation_space: gym.spaces.Box, channels: int = AFTER_CHANNELS,
                 layers: int = AFTER_LAYERS, hidden: int = AFTER_HIDDEN) -> None:  # fmt: skip
        for name, value in (("channels", channels), ("layers", layers), ("hidden", hidden)):
            if type(value) is not int or not 1 <= value <= AFTER_LIMITS[name]:
                raise ValueError(f"ZudeckenAfterstates {name} must be a whole number in "
                                 f"1..{AFTER_LIMITS[name]}, got {value!r}")  # fmt: skip
        sizes = {rules_for(ZU, n_cards=p).layout.size: p for p in PACKS}  # 269: 52 cards, 169: 32 cards
        if len(observation_space.shape) != 1 or observation_space.shape[0] not in sizes:
            raise ValueError(f"ZudeckenAfterstates expects a Zudecken observation, {tuple(sizes)}, got "
                             f"{observation_space.shape}")  # fmt: skip
        super().__init__(observation_space, features_dim=len(GROUPS) + 1)
        # the pack's cards in observation order, suit by suit: the grid is 4 suits x pack / 4 ranks
        self.pack = sizes[observation_space.shape[0]]
        layout, cards = rules_for(ZU, n_cards=self.pack).layout, list(PACKS[self.pack])
        self.upcards, self.unseen = layout["upcards"].slice, layout["unseen"].slice
        same = torch.as_tensor(MATCH[1][np.ix_(cards, cards)])  # the rules' table: same suit or rank
        self.register_buffer("same", same.float(), persistent=False)
        self.register_buffer("other", 1 - torch.eye(NUM_SLOTS), persistent=False)  # not its own match
        self.register_buffer("keep", KEEP, persistent=False)
        self.register_buffer("member", MEMBER, persistent=False)
        widths = [4] + [channels] * layers
        self.layers = nn.ModuleList(SuitRankLayer(i, o) for i, o in zip(widths, widths[1:], strict=False))
        self.head = nn.Sequential(nn.Linear(2 * channels, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def coverable(self, up: torch.Tensor) -> torch.Tensor:
        """(n, 11) bool: every card of the group matches another card of it (the rules' legal groups)."""
        match = (up @ self.same @ up.transpose(1, 2)) * self.other  # (n, 4, 4), 0 if empty
        partner = (match[:, None] * self.member[None, :, None, :]).sum(-1) > 0  # (n, 11, 4)
        return (partner | (self.member == 0)).all(-1)

    def scored_moves(self, observations: torch.Tensor) -> torch.Tensor:
        """(n, 12) bool: the moves ``forward`` scores with ``value`` (the coverable groups)."""
        up = observations[:, self.upcards].reshape(-1, NUM_SLOTS, self.pack)
        return torch.nn.functional.pad(self.coverable(up), (0, 1))  # "end" is never scored

    def afterstates(self, observations: torch.Tensor, rows: torch.Tensor,
                    moves: torch.Tensor) -> torch.Tensor:  # fmt: skip
        """The afterstates of ``moves`` in ``observations[rows]``: (k, 4 suits, ranks, 4)."""
        obs, pack = observations[rows], self.pack
        kept = (obs[:, self.upcards].reshape(-1, NUM_SLOTS, pack) * self.keep[moves][:, :, None]).sum(1)
        unseen = obs[:, self.unseen]
        stock = unseen.sum(1) / (pack - NUM_SLOTS)
        scalars = torch.stack([stock, kept.sum(1) / 4], 1)[:, None, :].expand(-1, pack, 2)
        return torch.cat([torch.stack([unseen, kept], -1), scalars], -1).reshape(-1, 4, pack // 4, 4)

    def value(self, grid: torch.Tensor) -> torch.Tensor:
        """The logit that the deal can still be won from each afterstate."""
        h = grid
        for depth, layer in enumerate(self.layers):
            out = torch.relu(layer(h))
            h = out if depth == 0 else h + out
        kept = grid[..., 1:2]
        return self.head(torch.cat([h.mean((1, 2)), (h * kept).sum((1, 2)) / NUM_SLOTS], -1)).squeeze(-1)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        rows, moves = torch.nonzero(self.scored_moves(observations), as_tuple=True)  # moves that exist
        scores = torch.full((len(observations), self.features_dim), UNSCORED, dtype=observations.dtype,
                            device=observations.device)  # fmt: skip
        scores[rows, moves] = self.value(self.afterstates(observations, rows, moves))
        return scores


def _old_moves() -> torch.Tensor:
    """``OLD[p, b]``: with the slots permuted by ``p`` (new slot ``i`` shows old slot ``p[i]``), new
    move ``b`` takes away the cards of old move ``OLD[p, b]``; "end" (the last move) stays itself."""
    index = {g: m for m, g in enumerate(GROUPS)}
    table = [[index[tuple(sorted(p[i] for i in g))] for g in GROUPS] + [len(GROUPS)]
             for p in itertools.permutations(range(NUM_SLOTS))]  # fmt: skip
    return torch.tensor(table)


SLOT_ORDERS = torch.tensor(list(itertools.permutations(range(NUM_SLOTS))))
OLD_MOVES = _old_moves()


def random_renaming(n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` random renamings for ``relabel``: ``cards[k, c]`` is the old card that new card ``c``
    is (suits renamed among themselves, ranks among themselves), ``order[k]`` a row of
    ``SLOT_ORDERS`` (new slot ``i`` shows old slot ``SLOT_ORDERS[order[k], i]``)."""
    suits = torch.rand(n, 4, generator=generator).argsort(1)
    ranks = torch.rand(n, 13, generator=generator).argsort(1)
    cards = (suits[:, :, None] * 13 + ranks[:, None, :]).reshape(n, PACK)
    return cards, torch.randint(len(SLOT_ORDERS), (n,), generator=generator)


def relabel(obs: torch.Tensor, masks: torch.Tensor, labels: torch.Tensor, cards: torch.Tensor,
            order: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Each decision as it looks with its suits, ranks and slots renamed (``random_renaming``):
    the same decision, so the same moves win. Zudecken's rules treat every suit alike, every rank
    alike (cards match by equality, never by order) and every slot alike (a move refills its
    slots with the same stock cards whichever slots they are), so imitation can train on renamed
    copies: correctly labelled decisions its data never held. ``masks`` and ``labels`` are per
    move; they follow the slots."""
    n = len(obs)
    slots = SLOT_ORDERS[order]
    out = obs.clone()
    up = obs[:, UPCARDS].reshape(n, NUM_SLOTS, PACK).gather(1, slots[:, :, None].expand(n, NUM_SLOTS, PACK))
    out[:, UPCARDS] = up.gather(2, cards[:, None, :].expand(n, NUM_SLOTS, PACK)).reshape(n, -1)
    out[:, UNSEEN] = obs[:, UNSEEN].gather(1, cards)
    for piece in PER_SLOT:
        out[:, piece] = obs[:, piece].gather(1, slots)
    moves = OLD_MOVES[order]
    return out, masks.gather(1, moves), labels.gather(1, moves)


#: The features a config may name (registered in this package's ``__init__``).
SCORES = "zudecken-afterstates"
EXTRACTORS = {
    "zudecken": ZudeckenFeatures,
    "zudecken-moves": ZudeckenMoveFeatures,
    SCORES: ZudeckenAfterstates,
}


def torch_batch(agent: object, observation: np.ndarray, action_masks: np.ndarray | None
                ) -> tuple[torch.Tensor, torch.Tensor, bool]:  # fmt: skip
    """What an afterstate player's ``predict`` plays on: observations as an (n, obs) float tensor, the
    masks as (n, actions) booleans, and whether one observation came (to answer with one action)."""
    if action_masks is None:
        raise ValueError(f"{type(agent).__name__}.predict needs action_masks= (env.action_masks())")
    obs = torch.as_tensor(np.asarray(observation), dtype=torch.float32)
    single = obs.ndim == 1
    obs = obs.reshape(-1, obs.shape[-1])
    return obs, torch.as_tensor(np.asarray(action_masks)).reshape(len(obs), -1).bool(), single
