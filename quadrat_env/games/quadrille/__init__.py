"""Quadrille (Captive Queens): queens in the centre, fives building down, sixes building up."""

from quadrat_env.games.quadrille.env import QuadrilleEnv, QuadrilleVectorEnv
from quadrat_env.games.quadrille.rules import QuadrilleRules, QuadrilleState
from quadrat_env.registry import GameSpec, register_game

SPEC = GameSpec(
    name="Quadrille",
    env_class=QuadrilleEnv,
    vector_env_class=QuadrilleVectorEnv,
    ids={"quadrat_env/Quadrille-v0": {}},
    max_episode_steps=1000,
    greedy_is_optimal=True,  # a card fits one kind of pile, and playing it never covers anything
    titles={"quadrat_env/Quadrille-v0": "Quadrille / Captive Queens"},
)
register_game(SPEC)

__all__ = ["SPEC", "QuadrilleEnv", "QuadrilleRules", "QuadrilleState", "QuadrilleVectorEnv"]
