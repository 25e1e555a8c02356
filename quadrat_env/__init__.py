"""Gymnasium environments for small patience card games: Quadrat, Zudecken and Quadrille.

``import quadrat_env`` registers the environment IDs; ``gym.make("quadrat_env:quadrat_env/...")``
works without importing first.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

#: Registered IDs -> (entry point, batched entry point, default kwargs, max_episode_steps).
#: ``gym.make_vec(id, num_envs=N)`` uses the batched one (numpy over all N deals at once).
ENV_SPECS: dict[str, tuple[str, str, dict[str, object], int]] = {
    "quadrat_env/Quadrat-v0": ("quadrat_env.envs.quadrat:QuadratEnv",
                               "quadrat_env.vector.slots:QuadratVectorEnv", {"n_cards": 32}, 200),
    "quadrat_env/Quadrat52-v0": ("quadrat_env.envs.quadrat:QuadratEnv",
                                 "quadrat_env.vector.slots:QuadratVectorEnv", {"n_cards": 52}, 200),
    "quadrat_env/Zudecken-v0": ("quadrat_env.envs.zudecken:ZudeckenEnv",
                                "quadrat_env.vector.slots:ZudeckenVectorEnv", {}, 200),
    "quadrat_env/Quadrille-v0": ("quadrat_env.envs.quadrille:QuadrilleEnv",
                                 "quadrat_env.vector.quadrille:QuadrilleVectorEnv", {}, 1000),
}  # fmt: skip
ENV_IDS: tuple[str, ...] = tuple(ENV_SPECS)

for _env_id, (_entry, _vector_entry, _kwargs, _steps) in ENV_SPECS.items():
    if _env_id not in registry:  # importing twice (e.g. via "quadrat_env:...") must not warn
        register(id=_env_id, entry_point=_entry, vector_entry_point=_vector_entry, kwargs=_kwargs,
                 max_episode_steps=_steps)  # fmt: skip
