"""Agents sharing one SB3-compatible ``predict`` interface, and the evaluation loop they share."""

from __future__ import annotations

from quadrat_env.agents.base import Agent
from quadrat_env.agents.evaluate import Episode, Summary, evaluate, play_episode, wilson
from quadrat_env.agents.greedy import GreedyAgent
from quadrat_env.agents.random_agent import RandomAgent

__all__ = [
    "Agent",
    "Episode",
    "GreedyAgent",
    "RandomAgent",
    "Summary",
    "evaluate",
    "play_episode",
    "wilson",
]
