"""The compiled rules against the readable reference rules, deal by deal, on every ID.

The env (which runs the compiled rules) and the reference module play the same seeded deals with
the same random legal moves; states, legal moves, observations, cards left and outcomes must agree
at every step.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import quadrat_env
from quadrat_env.cards import parse_deck
from quadrat_env.games.quadrille import reference as quadrille_ref
from quadrat_env.games.quadrille.rules import QuadrilleRules
from quadrat_env.slots import reference as slots_ref
from quadrat_env.slots.rules import SlotRules


def quadrille_reference(game: QuadrilleRules):
    return quadrille_ref.QuadrilleGame(redeals=game.redeals), lambda s: quadrille_ref.observe(
        s, game.redeals, game.layout
    )


def slots_reference(game: SlotRules):
    ref = slots_ref.SlotGame(game.name, game.pack_size, game.match_rank, game.max_group,
                             game.win_needs_clear, game.num_moves)  # fmt: skip
    return ref, lambda s: slots_ref.observe(s, game.pack_size, game.match_rank)


#: Each engine's rules class and its reference (a new engine adds its line here).
REFERENCES = {QuadrilleRules: quadrille_reference, SlotRules: slots_reference}


def reference_for(env):
    """The reference game and observation function of the env's rules (chosen by their class)."""
    (make,) = [make for cls, make in REFERENCES.items() if isinstance(env.game, cls)]
    return make(env.game)


CASES = [(i, {}) for i in quadrat_env.ENV_IDS] + [
    ("quadrat_env/Zudecken-v0", {"cover": "pairs", "win": "dealt"}),
    ("quadrat_env/Quadrille-v0", {"redeals": 0}),
]


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_compiled_rules_agree_with_the_reference(env_id, kwargs):
    env = gym.make(env_id, **kwargs).unwrapped
    ref, observe = reference_for(env)
    rng = np.random.default_rng(7)
    steps = wins = 0
    for seed in range(60):
        obs, info = env.reset(seed=seed)
        state = ref.start(parse_deck(env.deck))
        while True:
            assert env.state == state, (seed, steps)
            assert np.array_equal(obs, observe(state)), (seed, steps)
            legal = ref.legal_moves(state)
            assert env.game.legal_moves(env.state) == legal
            assert info["cards_left"] == ref.cards_left(state)
            moves = list(legal) or [env.end_action]
            action = int(rng.choice(moves))
            obs, _, terminated, _, info = env.step(action)
            steps += 1
            if legal:
                state = ref.play(state, action)
            if terminated:
                assert info["won"] == ref.is_won(state) and env.state == state
                wins += info["won"]
                break
    assert steps > 200  # the deals went somewhere (Quadrat: about 5 moves a deal)
