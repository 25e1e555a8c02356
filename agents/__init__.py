"""Agents sharing one SB3-compatible ``predict`` interface, and the evaluation loop they share.

Agents by name come from one factory: ``make(name, env_id)`` and ``available(name, env_id)``
(``quadrat_env.agents.registry``); a game's study folder (``agents/zudecken/``) adds its own.
"""

from __future__ import annotations

from quadrat_env.agents.base import Agent
from quadrat_env.agents.evaluate import Episode, Summary, evaluate, play_episode, wilson
from quadrat_env.agents.greedy import GreedyAgent
from quadrat_env.agents.hand import HandRuleAgent
from quadrat_env.agents.planner import PlannerAgent
from quadrat_env.agents.random_agent import RandomAgent
from quadrat_env.agents.registry import available, make, names
from quadrat_env.agents.sb3_agent import SB3Agent

__all__ = [
    "Agent",
    "Episode",
    "GreedyAgent",
    "HandRuleAgent",
    "PlannerAgent",
    "RandomAgent",
    "SB3Agent",
    "Summary",
    "available",
    "evaluate",
    "make",
    "names",
    "play_episode",
    "wilson",
]
