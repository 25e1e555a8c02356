"""Natively batched environments: ``gym.make_vec(id, num_envs=N)`` steps N deals as numpy arrays."""

from quadrat_env.vector.base import PatienceVectorEnv
from quadrat_env.vector.quadrille import QuadrilleVectorEnv
from quadrat_env.vector.slots import QuadratVectorEnv, SlotVectorEnv, ZudeckenVectorEnv

__all__ = [
    "PatienceVectorEnv",
    "QuadratVectorEnv",
    "QuadrilleVectorEnv",
    "SlotVectorEnv",
    "ZudeckenVectorEnv",
]
