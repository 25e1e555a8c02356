"""Agents sharing one SB3-compatible ``predict`` interface, and the evaluation loop they share."""

from __future__ import annotations

from agents.base import Agent
from agents.evaluate import Episode, Summary, evaluate, play_episode, wilson
from agents.greedy import GreedyAgent
from agents.random_agent import RandomAgent

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
