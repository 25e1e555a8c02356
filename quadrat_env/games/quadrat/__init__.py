"""Quadrat (32-card Skat pack, and 52 cards): lay off pairs of one suit."""

from quadrat_env.games.quadrat.env import QuadratEnv, QuadratVectorEnv
from quadrat_env.games.quadrat.rules import quadrat
from quadrat_env.registry import GameSpec, register_game
from quadrat_env.slots.rules import SlotRules, SlotState

SPEC = GameSpec(
    name="Quadrat",
    rules=quadrat,
    env_class=QuadratEnv,
    vector_env_class=QuadratVectorEnv,
    ids={"quadrat_env/Quadrat-v0": {"n_cards": 32}, "quadrat_env/Quadrat52-v0": {"n_cards": 52}},
    jax_rules="quadrat_env.slots.jax_rules:SlotJaxRules",
    max_episode_steps=200,
)
register_game(SPEC)

__all__ = ["SPEC", "QuadratEnv", "QuadratVectorEnv", "SlotRules", "SlotState", "quadrat"]
