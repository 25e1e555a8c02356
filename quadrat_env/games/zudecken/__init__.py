"""Zudecken: Quadrat"s variant where cards match in suit or rank, in groups of two to four."""

from quadrat_env.games.zudecken.env import ZudeckenEnv, ZudeckenVectorEnv
from quadrat_env.games.zudecken.rules import ZudeckenRules, zudecken
from quadrat_env.registry import GameSpec, register_game

SPEC = GameSpec(
    name="Zudecken",
    rules=zudecken,
    env_class=ZudeckenEnv,
    vector_env_class=ZudeckenVectorEnv,
    ids={"quadrat_env/Zudecken-v0": {}, "quadrat_env/Zudecken32-v0": {"n_cards": 32}},
    jax_rules="quadrat_env.slots.jax_rules:SlotJaxRules",
    max_episode_steps=200,
)
register_game(SPEC)

__all__ = ["SPEC", "ZudeckenEnv", "ZudeckenRules", "ZudeckenVectorEnv", "zudecken"]
