"""Where does a Zudecken player lose? Its regret per decision, by stock size: exact where the exact
solver plays the pack (Zudecken32), against sampled estimates elsewhere.

    python -m quadrat_env.experiments.zudecken.regret --model Zudecken-maskable_ppo --algo maskable_ppo
    python -m quadrat_env.experiments.zudecken.regret --agent planner       # the noise floor of the estimate
    python -m quadrat_env.experiments.zudecken.regret --env Zudecken32 --agent greedy     # exact regrets

With ``--env Zudecken32`` each legal move's value is its exact optimal win probability
(``quadrat_env.agents.zudecken.optimal.OptimalAgent``), so the regret (the best move's value minus the
chosen one's) is exact, and summed over a deal it is the share of a win the player's choices gave
away in that deal. For 52 cards:

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
from quadrat_env.agents import names as agent_names
from quadrat_env.agents.safe_load import ALGOS
from quadrat_env.agents.solver import Solver
from quadrat_env.experiments.compare import load_agent, published_model

from quadrat_env import seeds
from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_write

ZU = "quadrat_env/Zudecken-v0"
ENVS = ("Zudecken", "Zudecken32")
#: Stock-size bins of the table (cards still in the stock when the decision is made).
BINS = ((0, 10), (10, 20), (20, 30), (30, 49))


def move_values(env_id: str, samples: int, seed: int) -> tuple[Any, str]:
    """``values(obs, moves) -> array``: each legal move's win probability, exact where the exact
    solver plays the pack, else its share of ``samples`` sampled unseen orders; and which it is."""
    from quadrat_env.agents.zudecken.optimal import OptimalAgent, solvable

    if solvable(env_id):
        return OptimalAgent(env_id).move_values, "exact optimal values"
    solver, rng = Solver(gym.make(env_id).unwrapped.game), np.random.default_rng(seed)

    def sampled(obs: np.ndarray, mask: np.ndarray, moves: np.ndarray) -> np.ndarray:
        return solver.win_shares(obs, moves, rng, samples)

    return sampled, f"{samples}-sample estimates"


def regrets(agent: Any, deals: range, samples: int, seed: int, progress: bool = True,
            env_id: str = ZU) -> dict[str, Any]:  # fmt: skip
    """Play ``deals`` with ``agent``; per decision with a choice (or an illegal action, which ends the
    deal lost: its regret is all the deal's chance): its regret and the stock size, and
    for a policy that samples (an SB3 model: ``agent.probabilities``) the probability it gives its
    own move and the best moves (what its training would sample there)."""
    from tqdm.auto import tqdm

    # an illegal action (a model that plays without the mask) ends the deal, lost, as in the
    # benchmark: the env's default would leave the state as it was, for the same action again
    env = gym.make(env_id, illegal_action="end").unwrapped
    values, how = move_values(env_id, samples, seed)
    sampling = hasattr(agent, "probabilities")
    regret, stock, p_move, p_best, wins = [], [], [], [], 0
    for deal in tqdm(deals, unit="deal", desc="regret", disable=None if progress else True):
        obs, info = env.reset(seed=deal)
        done, reward = False, 0.0
        while not done:
            mask = info["action_mask"].astype(bool)
            action = int(agent.predict(obs, action_masks=mask, deterministic=True)[0])
            moves = np.flatnonzero(mask)
            if len(moves) > 1 or not mask[action]:
                # 'end' alone (no move left: the deal is lost) is worth nothing; else each move's value
                share = np.zeros(1) if moves[0] >= env.game.num_moves else values(obs, mask, moves)
                own = share[np.searchsorted(moves, action)] if mask[action] else 0.0  # illegal: lost
                regret.append(float(share.max() - own))
                stock.append(env.state.stock_size)
                if sampling:
                    probs = agent.probabilities(obs, mask)
                    p_move.append(float(probs[action]))
                    p_best.append(float(probs[moves[share >= share.max() - 1e-9]].sum()))
            obs, reward, done, _, info = env.step(action)
        wins += reward > 0
    return {"regret": np.array(regret), "stock": np.array(stock), "wins": int(wins), "deals": len(deals),
            "values": how, "p_move": np.array(p_move), "p_best": np.array(p_best)}  # fmt: skip


def table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per stock-size bin and in all: decisions, mean regret, share of decisions with regret > 0.05,
    and regret summed per deal (wins per deal given away); for a sampling policy also, over the
    decisions where its move gives something away (regret > 0), the mean probability it gives its
    move and the best moves."""
    r, st, n = result["regret"], result["stock"], result["deals"]
    rows = []
    for name, keep in [*((f"stock {lo}-{hi - 1}", (st >= lo) & (st < hi)) for lo, hi in BINS),
                       ("all", np.ones(len(r), dtype=bool))]:  # fmt: skip
        part = r[keep]
        if not len(part) and name != "all":  # a bin the pack never reaches (32 cards: stock <= 28)
            continue
        rows.append({"decisions": name, "count": int(keep.sum()),
                     "mean_regret": float(part.mean()) if len(part) else 0.0,
                     "over_5_points": float((part > 0.05).mean()) if len(part) else 0.0,
                     "per_deal": float(part.sum() / n)})  # fmt: skip
        if len(result.get("p_move", ())):
            lost = keep & (r > 0)
            rows[-1].update(p_move=float(result["p_move"][lost].mean()) if lost.any() else None,
                            p_best=float(result["p_best"][lost].mean()) if lost.any() else None)  # fmt: skip
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table; with a sampling policy's two columns where it has them."""
    sampling = "p_move" in rows[-1]
    head = "| decisions | count | mean regret | regret > 0.05 | regret per deal |"
    extra = " P(its move), regret > 0 | P(a best move), regret > 0 |"
    lines = [
        head + (extra if sampling else ""),
        "|---|---:|---:|---:|---:|" + ("---:|---:|" if sampling else ""),
    ]
    for row in rows:
        line = (f"| {row['decisions']} | {row['count']} | {row['mean_regret']:.4f} | "
                f"{row['over_5_points']:.1%} | {row['per_deal']:.4f} |")  # fmt: skip
        if sampling:
            line += "".join(" – |" if row[k] is None else f" {row[k]:.3f} |" for k in ("p_move", "p_best"))
        lines.append(line)
    return "\n".join(lines) + "\n"


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", help=f"{', '.join(agent_names())}, or module:factory")
    who.add_argument("--model", type=published_model, help="a saved model, or a shipped one by name")
    p.add_argument("--algo", choices=ALGOS, help="the algorithm of --model")
    p.add_argument("--env", choices=ENVS, default="Zudecken",
                   help="Zudecken32: exact regrets (the exact solver: about 30 s first)")  # fmt: skip
    p.add_argument("--deals", type=at_least(1), default=400)
    p.add_argument("--samples", type=at_least(2), default=1024, help="sampled unseen orders per decision")
    p.add_argument("--seed", type=at_least(0), default=0, help="the sampling's random seed")
    p.add_argument("--out", type=Path, help="write the table and per-decision regrets here (JSON)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.model is not None and args.algo is None:
        p.error(f"--model needs --algo (one of {', '.join(ALGOS)})")
    try:  # a bad agent or model file is one line, before any play
        env_id = f"quadrat_env/{args.env}-v0"
        who = ("model", str(args.model), args.algo) if args.model else ("agent", args.agent)
        agent = load_agent(who, env_id)
    except (ValueError, FileNotFoundError) as err:
        p.error(str(err))
    result = regrets(agent, seeds.VALIDATION.take(args.deals), args.samples, args.seed, not args.no_progress,
                     env_id)  # fmt: skip
    rows = table(result)
    print(f"{agent.name} on {args.env}: won {result['wins']} of {result['deals']} validation deals; regret "
          f"against {result['values']}:")  # fmt: skip
    print(markdown(rows), end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        out = {
            "agent": agent.name,
            "env_id": env_id,
            "values": result["values"],
            "samples": args.samples,
            "wins": result["wins"],
            "deals": result["deals"],
            "table": rows,
            "regret": result["regret"].tolist(),
            "stock": result["stock"].tolist(),
            "p_move": result["p_move"].tolist(),
            "p_best": result["p_best"].tolist(),
        }
        atomic_write(args.out, json.dumps(out))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
