"""A user's policy module for quadrat-bench's --agent module:factory (used by test_compare.py)."""

from __future__ import annotations

from quadrat_env.agents import RandomAgent


def make(env_id: str) -> RandomAgent:
    return RandomAgent(seed=3)


def not_an_agent(env_id: str) -> object:
    return object()
