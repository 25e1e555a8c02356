"""Quadrille (Captive Queens): queens in the centre, fives building down, sixes building up."""

from quadrat_env.games.quadrille.env import QuadrilleEnv, QuadrilleVectorEnv
from quadrat_env.games.quadrille.rules import QuadrilleRules, QuadrilleState
from quadrat_env.registry import GameSpec, register_game

SPEC = GameSpec(
    name="Quadrille",
    rules=QuadrilleRules,
    env_class=QuadrilleEnv,
    vector_env_class=QuadrilleVectorEnv,
    ids={"quadrat_env/Quadrille-v0": {}},
    jax_rules="quadrat_env.games.quadrille.jax_rules:QuadrilleJaxRules",
    max_episode_steps=1000,
)
register_game(SPEC)

__all__ = ["SPEC", "QuadrilleEnv", "QuadrilleRules", "QuadrilleState", "QuadrilleVectorEnv"]
