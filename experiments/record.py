"""Record an episode as an animated GIF (or the final table as a PNG) drawn by ``rgb_array``.

python -m quadrat_env.experiments.record Zudecken --agent planner --seed 7 --out zudecken.gif
python -m quadrat_env.experiments.record Quadrille --agent experiments/models/Quadrille-maskable_ppo.zip
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from quadrat_env.agents import Agent
from quadrat_env.agents import registry as agent_registry
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.experiments.play import GAMES

from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_path


def make_agent(spec: str, env_id: str) -> Agent:
    """An agent by name (``agents.make``) or a saved model .zip (its algorithm read from the file)."""
    path = Path(spec)
    if path.suffix == ".zip":
        return SB3Agent.load(path, None, env_id)  # nothing in the file is unpickled (agents/safe_load.py)
    if spec not in agent_registry.names():
        known = list(agent_registry.names())
        raise ValueError(f"--agent must be one of {known} or a saved model .zip, got {spec!r}")
    return agent_registry.make(spec, env_id)


def record(env_id: str, agent: Agent, seed: int, out: Path, fps: float) -> dict[str, object]:
    import imageio.v3 as iio

    env = gym.make(env_id, render_mode="rgb_array")
    obs, info = env.reset(seed=seed)
    frames = [env.render()]
    done = False
    while not done:
        action, _ = agent.predict(obs, deterministic=True, action_masks=info["action_mask"])
        obs, _, terminated, truncated, info = env.step(action)
        frames.append(env.render())
        done = terminated or truncated or info["illegal_action"]
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".gif":
        # hold the last frame a while so the outcome can be seen
        durations = [int(1000 / fps)] * (len(frames) - 1) + [2000]
        with atomic_path(out) as tmp:
            iio.imwrite(tmp, np.stack(frames), duration=durations, loop=0)
    else:
        with atomic_path(out) as tmp:
            iio.imwrite(tmp, frames[-1])
    return {"frames": len(frames), "won": bool(info["won"]), "cards_left": int(info["cards_left"])}


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("game", choices=sorted(GAMES))
    p.add_argument("--agent", default="greedy", help="an agent name (greedy, planner, ...) or a model .zip")
    p.add_argument("--seed", type=at_least(0), default=0)
    p.add_argument("--fps", type=float, default=4.0)
    p.add_argument("--out", type=Path, help="a .gif for the episode, a .png for the final table")
    args = p.parse_args(argv)
    out = args.out or Path(f"{args.game.lower()}-seed{args.seed}.gif")
    if out.suffix.lower() not in (".gif", ".png"):
        p.error(f"--out must end in .gif or .png, got {out}")
    if args.fps <= 0:
        p.error("--fps must be > 0")
    try:
        agent = make_agent(args.agent, GAMES[args.game])
    except (ValueError, FileNotFoundError) as err:
        p.error(str(err))
    result = record(GAMES[args.game], agent, args.seed, out, args.fps)
    print(
        f"wrote {out}: {result['frames']} frames, {'won' if result['won'] else 'lost'}, "
        f"{result['cards_left']} cards left"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
