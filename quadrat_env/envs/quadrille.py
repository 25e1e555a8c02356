"""Quadrille (Captive Queens): queens in the centre, fives building down, sixes building up."""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrat_env.cards import card_symbol
from quadrat_env.envs.base import PatienceEnv
from quadrat_env.rules.quadrille import EMPTY, QuadrilleGame, QuadrilleState, pile_size

#: Action numbers.
DEAL = 0
TO_CENTRE = (1, 2, 3, 4)  # N E S W
TO_COMPASS = (5, 6, 7, 8)  # N E S W
TO_CORNER = (9, 10, 11, 12)  # NE SE SW NW

#: Observation index ranges (card ``c`` = suit*13 + rank sits at offset ``c`` in a 52-block).
IN_HAND = slice(0, 52)
IN_DISCARD = slice(52, 104)
ON_PILES = slice(104, 156)
HAND_ORDER = slice(156, 208)
DISCARD_ORDER = slice(208, 260)
DISCARD_TOP = slice(260, 312)
PILE_SUIT = slice(312, 360)
PILE_FILL = slice(360, 372)
HAND_SIZE, DISCARD_SIZE, REDEALS_LEFT, HAND_KNOWN = 372, 373, 374, 375
OBS_SIZE = 376
_CAPACITY = np.array([1] * 4 + [6] * 8, dtype=np.float32)


class QuadrilleEnv(PatienceEnv):
    """Quadrille (Captive Queens): build eight piles around the four queens from one hand.

    ## Description
    Twelve piles start empty, the whole 52-card deck is the hand, the discard pile is empty. Four
    centre piles hold one queen each and nothing else. Four compass piles N, E, S, W take a five
    first, then build down in suit 4 3 2 A, then the King on the Ace. Four corner piles NE, SE, SW,
    NW take a six first, then build up in suit 7 8 9 T J. Any queen may go to any empty centre pile,
    any five to any empty compass pile, any six to any empty corner pile.

    A deal turns the top card of the hand onto the discard pile; only the discard top may be played.
    When the hand is empty, a deal is a redeal: the discard pile is turned over as the new hand,
    keeping its order (the first card dealt is on top again). `redeals=2` gives three passes.

    Won when all 52 cards are on the piles. Always playing a card that fits is optimal (a play never
    hurts) and wins about 59% of deals.

    ## Action Space
    `Discrete(13)`:

    | action | meaning                                                  |
    |--------|----------------------------------------------------------|
    | 0      | deal the top card of the hand (redeal if the hand is empty) |
    | 1-4    | discard top to centre N, E, S, W                         |
    | 5-8    | discard top to compass N, E, S, W                        |
    | 9-12   | discard top to corner NE, SE, SW, NW                     |

    There is no "end" action: every deal opens with a deal move.

    ## Observation Space
    `Box(0, 1, (376,), float32)`; card `c` (0..51, `suit*13 + rank`, rank 0 = Ace) sits at offset
    `c` of each 52-block.

    | indices       | constant        | meaning                                                    |
    |---------------|-----------------|------------------------------------------------------------|
    | `[0, 52)`     | `IN_HAND`       | card is in the hand                                        |
    | `[52, 104)`   | `IN_DISCARD`    | card is in the discard pile                                |
    | `[104, 156)`  | `ON_PILES`      | card is on one of the twelve piles                         |
    | `[156, 208)`  | `HAND_ORDER`    | after a redeal: (position from the top + 1) / 52, else 0   |
    | `[208, 260)`  | `DISCARD_ORDER` | (depth from the top + 1) / 52 for discard cards            |
    | `[260, 312)`  | `DISCARD_TOP`   | one-hot of the discard top                                 |
    | `[312, 360)`  | `PILE_SUIT`     | pile `p` (order of actions 1-12) suit one-hot at `312+4p+s` |
    | `[360, 372)`  | `PILE_FILL`     | cards on pile `p` / its capacity (1 centre, 6 others)     |
    | `372`         | `HAND_SIZE`     | cards in hand / 52                                         |
    | `373`         | `DISCARD_SIZE`  | cards in the discard pile / 52                             |
    | `374`         | `REDEALS_LEFT`  | redeals left / `redeals` (0 when `redeals=0`)             |
    | `375`         | `HAND_KNOWN`    | 1 after a redeal: the hand's order is known               |

    In the first pass the hand's order is unseen and `HAND_ORDER` is zero; after a redeal a careful
    player knows it, because it is the discard pile they watched being dealt.

    ## Rewards
    `reward_mode="sparse"` (default): +1 on the step that wins, else 0.
    `reward_mode="dense"`: additionally +1/52 for each card placed on a pile.
    An action the mask forbids: `-illegal_penalty` (default 0.01), no change of state.

    ## Episode End
    Terminated when won, or when the hand is empty, no redeal is left and the discard top fits
    nowhere; with `info["won"]` and `info["cards_left"]` (cards not on the piles). Truncated after
    1000 steps (registration).

    ## Arguments
    `gym.make("quadrat_env/Quadrille-v0", redeals=2)`, and
    `render_mode` (None, "ansi", "rgb_array" or "human"), `reward_mode` ("sparse" or "dense"),
    `illegal_action` ("penalize" or "raise" an `IllegalMove`), `illegal_penalty` (>= 0).
    `reset(seed=...)` shuffles with `self.np_random`; `reset(options={"deck": [...]})` replays a deal
    given as card codes, index 0 dealt first. `info["action_mask"]` (int8) and `action_masks()`
    (bool) give the legal actions.

    ## Version History
    * v0: initial version.
    """

    has_end_action = False

    def __init__(self, redeals: int = 2, **kwargs: Any) -> None:
        super().__init__(QuadrilleGame(redeals=redeals), OBS_SIZE, **kwargs)

    def _observe(self, state: QuadrilleState) -> np.ndarray:
        obs = np.zeros(OBS_SIZE, dtype=np.float32)
        hand, discard = list(state.hand), list(state.discard)
        known = state.redeals_left < self.game.redeals
        obs[IN_HAND.start + np.array(hand, dtype=np.int64)] = 1.0
        obs[IN_DISCARD.start + np.array(discard, dtype=np.int64)] = 1.0
        if known and hand:
            obs[HAND_ORDER.start + np.array(hand)] = np.arange(1, len(hand) + 1) / 52
        if discard:
            obs[DISCARD_ORDER.start + np.array(discard)] = np.arange(len(discard), 0, -1) / 52
            obs[DISCARD_TOP.start + discard[-1]] = 1.0
        for p, top in enumerate(state.piles):
            if top != EMPTY:
                obs[PILE_SUIT.start + 4 * p + top // 13] = 1.0
                obs[PILE_FILL.start + p] = pile_size(p, top) / _CAPACITY[p]
        on_piles = np.ones(52, dtype=np.float32)
        on_piles[hand + discard] = 0.0
        obs[ON_PILES] = on_piles
        obs[HAND_SIZE] = len(hand) / 52
        obs[DISCARD_SIZE] = len(discard) / 52
        obs[REDEALS_LEFT] = state.redeals_left / self.game.redeals if self.game.redeals else 0.0
        obs[HAND_KNOWN] = float(known)
        return obs

    def _render_text(self, state: QuadrilleState) -> str:
        def pile(p: int) -> str:
            return card_symbol(state.piles[p]) if state.piles[p] != EMPTY else "··"

        top = card_symbol(state.discard[-1]) if state.discard else "··"
        queens = " ".join(pile(p) for p in range(4))
        return "\n".join(
            [
                f"Quadrille · hand {len(state.hand)} · discard {len(state.discard)} (top {top})"
                f" · redeals left {state.redeals_left}",
                f"  NW:{pile(11)}      N:{pile(4)}      NE:{pile(8)}",
                f"   W:{pile(7)}  queens:{queens}  E:{pile(5)}",
                f"  SW:{pile(10)}      S:{pile(6)}      SE:{pile(9)}",
            ]
        )

    def _render_rgb(self, state: QuadrilleState) -> np.ndarray:
        from quadrat_env.render import quadrille_frame  # Pillow is only needed for pictures

        return quadrille_frame(state)
