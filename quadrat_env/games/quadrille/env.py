"""Quadrille (Captive Queens): queens in the centre, fives building down, sixes building up."""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrat_env.core.env import PatienceEnv
from quadrat_env.core.layout import indent
from quadrat_env.core.vector import PatienceVectorEnv
from quadrat_env.games.quadrille.kernel import LAYOUT
from quadrat_env.games.quadrille.picture import quadrille_frame, quadrille_text
from quadrat_env.games.quadrille.rules import QuadrilleRules, QuadrilleState

_DOC = """Quadrille (Captive Queens): build eight piles around the four queens from one hand.

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

{obs}

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
    `illegal_action` ("penalize"; "end": also terminates the episode, lost; or "raise" an
    `IllegalMove`), `illegal_penalty` (>= 0).
    `reset(seed=...)` shuffles with `self.np_random`; `reset(options={{"deck": [...]}})` replays a deal
    given as card codes, index 0 dealt first. `info["action_mask"]` (int8) and `action_masks()`
    (bool) give the legal actions.

    ## Version History
    * v0 (quadrat-env 0.1.0): initial version.
    * quadrat-env 0.2.0: v0 behaves as before (the same behaviour digests for every default);
      `illegal_action="end"` is new, and the compiled pile tables are built from each pile's
      sequence of ranks (checked against the reference rules for every pile, top and card).
    """


class QuadrilleEnv(PatienceEnv):
    __doc__ = _DOC.format(obs=indent(LAYOUT.table()))

    has_end_action = False

    def __init__(self, redeals: int = 2, **kwargs: Any) -> None:
        super().__init__(QuadrilleRules(redeals=redeals), **kwargs)

    def draw_text(self, state: QuadrilleState) -> str:
        return quadrille_text(state)

    def draw_rgb(self, state: QuadrilleState) -> np.ndarray:
        return quadrille_frame(state)


class QuadrilleVectorEnv(PatienceVectorEnv):
    """``gym.make_vec("quadrat_env/Quadrille-v0", num_envs=N)``: N Quadrille deals stepped at once."""

    single_env_class = QuadrilleEnv
