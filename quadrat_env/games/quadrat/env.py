"""Quadrat: the German patience with a 32-card Skat pack (or 52 cards); its env and batched env."""

from __future__ import annotations

from typing import Any

from quadrat_env.core.layout import indent
from quadrat_env.core.vector import PatienceVectorEnv
from quadrat_env.games.quadrat.rules import quadrat
from quadrat_env.slots.env import SlotEnv
from quadrat_env.slots.rules import slot_layout

_DOC = """Quadrat: lay off pairs of one suit from a 2x2 square of upcards until the stock is used up.

    ## Description
    Four upcards lie in slots 0-3, a 2x2 square read row by row (0 1 / 2 3), dealt from the top of
    the stock. A move lays off two upcards of the same suit; the two slots are refilled from the
    stock, the lower slot first. With three or four of one suit showing, only two go per move. Once
    the stock is used up, a laid-off slot stays empty. The game ends when no pair shows.

    Won iff the stock is used up. With the 32-card Skat pack (7 8 9 T J Q K A of each suit) that
    means the table is cleared too: every suit has an even number of cards, so the last four are two
    pairs or four of a suit. With 52 cards every suit has 13, an odd number, so the last four upcards
    are one of each suit and the table can never be cleared: "stock used up" is the only attainable
    win (as in Aisleriot's and PySolFC's "Cover"), and a won game ends with 4 cards left.

    The order of lay-offs never changes the outcome: any legal play wins about 22% of 32-card deals
    and about 5% of 52-card deals.

    ## Action Space
    `Discrete(7)`:

    | action | meaning                    |
    |--------|----------------------------|
    | 0-5    | lay off slots (0,1), (0,2), (0,3), (1,2), (1,3), (2,3) |
    | 6      | end the game (legal only when no pair shows at the start) |

    ## Observation Space
    `Box(0, 1, (5P + 5,), float32)` with `P` the pack size (shape 165 for 32 cards, 265 for 52).
    Cards are indexed by their place `k` in the pack (the Skat pack in the order A 7 8 9 T J Q K of
    clubs, then diamonds, hearts, spades; 52 cards as `suit*13 + rank`). 32 cards:

{obs32}

    52 cards:

{obs52}

    The laid-off cards are the ones neither showing nor unseen, so the observation holds all a
    careful player knows.

    ## Rewards
    `reward_mode="sparse"` (default): +1 on the step that ends a won game, else 0.
    `reward_mode="dense"`: additionally +1/P for each card laid off.
    An action the mask forbids: `-illegal_penalty` (default 0.01), no change of state.

    ## Episode End
    Terminated in the step that leaves no pair; with `info["won"]` and `info["cards_left"]` (stock
    plus upcards). A deal that opens with no pair (about one in nine) offers only action 6, which ends
    it as lost. Truncated after 200 steps (registration), reachable only with illegal actions.

    ## Arguments
    `gym.make("quadrat_env/Quadrat-v0")` (32 cards) or `"quadrat_env/Quadrat52-v0"` (52), with
    `n_cards` (32 or 52) and
    `render_mode` (None, "ansi", "rgb_array" or "human"), `reward_mode` ("sparse" or "dense"),
    `illegal_action` ("penalize"; "end": also terminates the episode, lost; or "raise" an
    `IllegalMove`), `illegal_penalty` (>= 0).
    `reset(seed=...)` shuffles with `self.np_random`; `reset(options={{"deck": [...]}})` replays a deal
    given as card codes, index 0 dealt first. `info["action_mask"]` (int8) and `action_masks()`
    (bool) give the legal actions.

    ## Version History
    * v0 (quadrat-env 0.1.0): initial version.
    * quadrat-env 0.2.0: v0 behaves as before (the same behaviour digests for every default);
      `illegal_action="end"` is new, and the batched env shares the single env's step code.
    """


class QuadratEnv(SlotEnv):
    __doc__ = _DOC.format(
        obs32=indent(slot_layout(32, rank_counts=False).table()),
        obs52=indent(slot_layout(52, rank_counts=False).table()),
    )

    rows = 2  # the upcards drawn in a 2x2 square

    def __init__(self, n_cards: int = 32, **kwargs: Any) -> None:
        super().__init__(quadrat(n_cards), **kwargs)


class QuadratVectorEnv(PatienceVectorEnv):
    """``gym.make_vec("quadrat_env/Quadrat-v0", num_envs=N)``: N Quadrat deals stepped at once."""

    single_env_class = QuadratEnv
