"""Play seeded deals of every game with the greedy and random agents and print the outcome.

python -m quadrat_env.experiments.demo                 # one deal shown move by move, 500 deals measured
python -m quadrat_env.experiments.demo --deals 20000   # the README's win rates
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import gymnasium as gym
from quadrat_env.agents import Agent, GreedyAgent, RandomAgent, Summary, evaluate

import quadrat_env  # noqa: F401  (registers the games)
from quadrat_env import seeds
from quadrat_env.arguments import description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_write
from quadrat_env.registry import env_ids

SEED_BASE = seeds.DEMO.start  # demo deals: seeds SEED_BASE, SEED_BASE + 1, ...


def show_deal(env_id: str, agent: Agent, seed: int) -> None:
    """Print one deal move by move, as text pictures."""
    env = gym.make(env_id, render_mode="ansi")
    obs, info = env.reset(seed=seed)
    print(f"--- {env_id}, seed {seed}, {agent.name} play ---\n{env.render()}")
    done, steps = False, 0
    while not done:
        action, _ = agent.predict(obs, action_masks=info["action_mask"])
        obs, _, terminated, truncated, info = env.step(action)
        steps += 1
        done = terminated or truncated
        if done or steps <= 3:
            print(f"action {int(action)} ->\n{env.render()}")
        elif steps == 4:
            print("...")
    outcome = "won" if info["won"] else "lost"
    print(f"{outcome} after {steps} actions, {info['cards_left']} cards left\n")


def table(rows: list[Summary]) -> str:
    lines = [
        "| env | agent | deals | win rate | 95% CI (Wilson) | mean cards left |",
        "|---|---|---:|---:|---|---:|",
    ]
    lines += [
        f"| {r.env_id} | {r.agent} | {r.episodes} | {r.win_rate:.2%} | "
        f"[{r.ci_low:.2%}, {r.ci_high:.2%}] | {r.mean_cards_left:.2f} |"
        for r in rows
    ]
    return "\n".join(lines)


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description_of(__doc__))
    parser.add_argument("--deals", type=int, default=500, help="seeded deals per game and agent")
    parser.add_argument("--show", type=int, default=1, help="deals per game to print move by move")
    parser.add_argument("--env", choices=env_ids(), action="append",
                        help="only this env ID (repeatable); default: each game's own")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the summaries to this JSON file")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.show < 0:
        parser.error("--deals must be >= 1 and --show >= 0")
    chosen = args.env or list(env_ids(rungs=False))
    rows: list[Summary] = []
    for env_id in chosen:
        for i in range(args.show):
            show_deal(env_id, GreedyAgent(env_id), SEED_BASE + i)
        for agent in (GreedyAgent(env_id), RandomAgent(seed=0)):
            summary, _ = evaluate(env_id, agent, seeds.DEMO.take(args.deals),
                                  progress=not args.no_progress)  # fmt: skip
            rows.append(summary)
            print(f"{env_id:<26} {agent.name:<7} won {summary.wins}/{summary.episodes} "
                  f"= {summary.win_rate:.2%} in {summary.seconds:.1f}s", flush=True)  # fmt: skip
    print("\n" + table(rows))
    if args.json:
        atomic_write(args.json, json.dumps([r.as_dict() for r in rows], indent=2))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
