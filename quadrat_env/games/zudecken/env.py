"""Zudecken: cover upcards that match in suit or rank (52 cards); its env and batched env."""

from __future__ import annotations

from typing import Any

from quadrat_env.core.layout import indent
from quadrat_env.core.vector import PatienceVectorEnv
from quadrat_env.games.zudecken.rules import zudecken
from quadrat_env.slots.env import SlotEnv
from quadrat_env.slots.rules import slot_layout

_DOC = """Zudecken: cover groups of upcards that match in suit or rank until every card is gone.

    ## Description
    Four upcards lie in a row, slots 0-3, dealt from the top of a 52-card stock (`Zudecken-v0`) or
    of the 32-card Skat pack, 7 8 9 T J Q K A of each suit (`Zudecken32-v0`). The ladder of
    difficulty: a pack of the `r` highest ranks of each suit, Ace high, for `r` = 4..13, is
    `Zudecken{{4r}}-v0` (`Zudecken16-v0`: J Q K A, ..., `Zudecken48-v0`: 3 to A), with `Zudecken32-v0`
    its rung 8 and `Zudecken-v0` its rung 13. A move covers a
    group of two or more upcards in which every card matches at least one other card of the group in
    suit or in rank, so three or even all four may be covered at once. Each covered slot receives the
    next stock card, in ascending slot order. Once the stock is used up a covered card is laid off
    and its slot stays empty. The game ends when no group can be covered.

    Won iff the stock is used up and every slot is empty (`win="cleared"`, default), or iff the stock
    is used up (`win="dealt"`). `cover="pairs"` allows only pairs (actions 0-5).

    Unlike Quadrat, choices matter here: covering the largest group wins about 5% of deals, a player
    who knew the stock order about 80%.

    ## Action Space
    `Discrete(12)`:

    | action | slots covered                                     |
    |--------|---------------------------------------------------|
    | 0-5    | (0,1), (0,2), (0,3), (1,2), (1,3), (2,3)          |
    | 6-9    | (0,1,2), (0,1,3), (0,2,3), (1,2,3)                |
    | 10     | (0,1,2,3)                                         |
    | 11     | end the game (legal only when no group shows at the start) |

    ## Observation Space
    `Box(0, 1, (5P + 9,), float32)` with `P` the pack size (shape 269 for 52 cards, 169 for 32, 89
    for 16). Cards are indexed by their place `k` in the pack (52 cards: `suit*13 + rank`, rank 0 =
    Ace; a pack of `r` ranks in the order A, then its other ranks from the lowest up, of clubs, then
    diamonds, hearts, spades: the Skat pack A 7 8 9 T J Q K). 52 cards:

{obs52}

    32 cards (every pack of `r` ranks alike, with `P` = 4r in place of 32 and `r - 1` in place of 7):

{obs32}

    Covered cards are the ones neither showing nor unseen, so the observation holds all a careful
    player knows; the match counts are derived from it, as a player would count.

    ## Rewards
    `reward_mode="sparse"` (default): +1 on the step that ends a won game, else 0.
    `reward_mode="dense"`: additionally +1/P for each card covered.
    An action the mask forbids: `-illegal_penalty` (default 0.01), no change of state.

    ## Episode End
    Terminated in the step that leaves no coverable group; with `info["won"]` and
    `info["cards_left"]` (stock plus upcards). A deal that opens with no group offers only action
    11, which ends it as lost. Truncated after 200 steps (registration).

    ## Arguments
    `gym.make("quadrat_env/Zudecken-v0", win="cleared", cover="groups")` (52 cards) or
    `"quadrat_env/Zudecken32-v0"` (32), with `ranks` (4..13) or `n_cards` (4 x ranks: 16, 20, ...,
    52), so `gym.make("quadrat_env/Zudecken-v0", ranks=6)` plays `Zudecken24-v0`'s rules, and
    `render_mode` (None, "ansi", "rgb_array" or "human"), `reward_mode` ("sparse" or "dense"),
    `illegal_action` ("penalize"; "end": also terminates the episode, lost; or "raise" an
    `IllegalMove`), `illegal_penalty` (>= 0).
    `reset(seed=...)` shuffles with `self.np_random`; `reset(options={{"deck": [...]}})` replays a deal
    given as card codes, index 0 dealt first. `info["action_mask"]` (int8) and `action_masks()`
    (bool) give the legal actions.

    ## Version History
    * v0 (quadrat-env 0.1.0): initial version.
    * quadrat-env 0.2.0: v0 behaves as before (the same behaviour digests for every default); new:
      `illegal_action="end"`, the 32-card pack as `n_cards=32` and its ID `Zudecken32-v0`.
    * quadrat-env 0.3.0: v0 behaves as before; new: packs of 4 to 13 ranks (`ranks`, `n_cards` 16 to
      52) and their IDs `Zudecken16-v0` ... `Zudecken48-v0`.
    """


class ZudeckenEnv(SlotEnv):
    __doc__ = _DOC.format(obs52=indent(slot_layout(52, rank_counts=True).table()),
                          obs32=indent(slot_layout(32, rank_counts=True).table()))  # fmt: skip

    rows = 1  # the upcards drawn in one row

    def __init__(self, win: str = "cleared", cover: str = "groups", n_cards: int | None = None,
                 ranks: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(zudecken(win=win, cover=cover, n_cards=n_cards, ranks=ranks), **kwargs)


class ZudeckenVectorEnv(PatienceVectorEnv):
    """``gym.make_vec("quadrat_env/Zudecken-v0", num_envs=N)``: N Zudecken deals stepped at once."""

    single_env_class = ZudeckenEnv
