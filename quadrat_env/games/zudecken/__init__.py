"""Zudecken: Quadrat"s variant where cards match in suit or rank, in groups of two to four."""

from quadrat_env.games.zudecken.env import ZudeckenEnv, ZudeckenVectorEnv
from quadrat_env.games.zudecken.rules import ZudeckenRules, zudecken
from quadrat_env.registry import GameSpec, register_game

#: The ladder of difficulty: ranks a suit -> the ID of Zudecken with that pack (8: the Skat pack,
#: 13: the full pack).
LADDER = {r: f"quadrat_env/Zudecken{4 * r}-v0" for r in range(4, 13)} | {13: "quadrat_env/Zudecken-v0"}

SPEC = GameSpec(
    name="Zudecken",
    rules=zudecken,
    env_class=ZudeckenEnv,
    vector_env_class=ZudeckenVectorEnv,
    ids={"quadrat_env/Zudecken-v0": {}, "quadrat_env/Zudecken32-v0": {"n_cards": 32}},
    rungs={env_id: {"n_cards": 4 * r} for r, env_id in LADDER.items() if r not in (8, 13)},
    jax_rules="quadrat_env.slots.jax_rules:SlotJaxRules",
    max_episode_steps=200,
)
register_game(SPEC)

__all__ = ["LADDER", "SPEC", "ZudeckenEnv", "ZudeckenRules", "ZudeckenVectorEnv", "zudecken"]
