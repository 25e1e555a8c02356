"""Gymnasium environments: thin adapters over :mod:`quadrat_env.rules`."""

from __future__ import annotations

from quadrat_env.envs.quadrat import QuadratEnv
from quadrat_env.envs.quadrille import QuadrilleEnv
from quadrat_env.envs.zudecken import ZudeckenEnv

__all__ = ["QuadratEnv", "QuadrilleEnv", "ZudeckenEnv"]
