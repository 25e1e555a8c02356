"""Where does a Zudecken player lose? Its regret per decision against sampled estimates, by stock size.

    python -m quadrat_env.experiments.regret --model Zudecken-maskable_ppo --algo maskable_ppo
    python -m quadrat_env.experiments.regret --agent planner          # the noise floor of the estimate

The player plays validation deals (training seeds, never the benchmark's). At every decision with
more than one legal move, each legal move's chance to win is estimated as the share of ``--samples``
sampled unseen orders in which the solver still wins after it (what the planner estimates; the
true stock is not read), and the player's regret is the best move's share minus its own move's.
Regrets summed over a deal estimate how many wins per deal the player's choices give away against
a player who always took the best estimate. Estimates are noisy (about ±1.5 points at 1,024
samples), so a perfect player's measured regret is not 0: the planner's own row shows that floor.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from quadrat_env.agents.safe_load import ALGOS
from quadrat_env.agents.solver import Solver
from quadrat_env.experiments.compare import BUILT_IN, load_agent, published_model

from quadrat_env import seeds
from quadrat_env.core.checks import at_least
from quadrat_env.extras import command
from quadrat_env.files import atomic_write

ZU = "quadrat_env/Zudecken-v0"
#: Stock-size bins of the table (cards still in the stock when the decision is made).
BINS = ((0, 10), (10, 20), (20, 30), (30, 49))


def regrets(agent: Any, deals: range, samples: int, seed: int, progress: bool = True) -> dict[str, Any]:
    """Play ``deals`` with ``agent``; per decision with a choice: its regret and the stock size."""
    from tqdm.auto import tqdm

    env = gym.make(ZU).unwrapped
    solver, rng = Solver(env.game), np.random.default_rng(seed)
    regret, stock, wins = [], [], 0
    for deal in tqdm(deals, unit="deal", desc="regret", disable=None if progress else True):
        obs, info = env.reset(seed=deal)
        done, reward = False, 0.0
        while not done:
            mask = info["action_mask"].astype(bool)
            action = int(agent.predict(obs, action_masks=mask, deterministic=True)[0])
            moves = np.flatnonzero(mask)
            if len(moves) > 1:
                share = solver.win_shares(obs, moves, rng, samples)
                regret.append(float(share.max() - share[np.searchsorted(moves, action)]))
                stock.append(env.state.stock_size)
            obs, reward, done, _, info = env.step(action)
        wins += reward > 0
    return {"regret": np.array(regret), "stock": np.array(stock), "wins": int(wins), "deals": len(deals)}


def table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per stock-size bin and in all: decisions, mean regret, share of decisions with regret > 0.05,
    and regret summed per deal (wins per deal given away)."""
    r, st, n = result["regret"], result["stock"], result["deals"]
    rows = []
    for name, keep in [*((f"stock {lo}-{hi - 1}", (st >= lo) & (st < hi)) for lo, hi in BINS),
                       ("all", np.ones(len(r), dtype=bool))]:  # fmt: skip
        part = r[keep]
        rows.append({"decisions": name, "count": int(keep.sum()),
                     "mean_regret": float(part.mean()) if len(part) else 0.0,
                     "over_5_points": float((part > 0.05).mean()) if len(part) else 0.0,
                     "per_deal": float(part.sum() / n)})  # fmt: skip
    return rows


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", help=f"{', '.join(BUILT_IN)}, or module:factory")
    who.add_argument("--model", type=published_model, help="a saved model, or a shipped one by name")
    p.add_argument("--algo", choices=ALGOS, help="the algorithm of --model")
    p.add_argument("--deals", type=at_least(1), default=400)
    p.add_argument("--samples", type=at_least(2), default=1024, help="sampled unseen orders per decision")
    p.add_argument("--seed", type=at_least(0), default=0, help="the sampling's random seed")
    p.add_argument("--out", type=Path, help="write the table and per-decision regrets here (JSON)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.model is not None and args.algo is None:
        p.error(f"--model needs --algo (one of {', '.join(ALGOS)})")
    try:  # a bad agent or model file is one line, before any play
        agent = load_agent(("model", str(args.model), args.algo) if args.model else ("agent", args.agent), ZU)
    except (ValueError, FileNotFoundError) as err:
        p.error(str(err))
    result = regrets(agent, seeds.VALIDATION.take(args.deals), args.samples, args.seed, not args.no_progress)
    rows = table(result)
    print(f"{agent.name}: won {result['wins']} of {result['deals']} validation deals; regret against "
          f"{args.samples}-sample estimates:")  # fmt: skip
    print("| decisions | count | mean regret | regret > 0.05 | regret per deal |\n|---|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['decisions']} | {row['count']} | {row['mean_regret']:.4f} | "
              f"{row['over_5_points']:.1%} | {row['per_deal']:.4f} |")  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        out = {
            "agent": agent.name,
            "samples": args.samples,
            "wins": result["wins"],
            "deals": result["deals"],
            "table": rows,
            "regret": result["regret"].tolist(),
            "stock": result["stock"].tolist(),
        }
        atomic_write(args.out, json.dumps(out))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
