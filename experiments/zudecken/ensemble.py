"""Do several afterstate networks, their values averaged, play better than each of them?

    python -m quadrat_env.experiments.zudecken.ensemble --models experiments/models/Zudecken-rl.zip \
        experiments/models/seeds/Zudecken-rl-seed1.zip experiments/models/seeds/Zudecken-rl-seed2.zip \
        --held-out --out results/ensemble

Plays each network as the benchmark plays it (``SB3Agent``, its best move, 1,024 deals side by
side) and ``agents.zudecken.ensemble.EnsembleAgent`` over all of them (``--average``: the mean
win probability, or the mean logit) on the same deals: the planner curve's, or with
``--held-out`` the benchmark's. Writes ``<out>/ensemble-<first model>-<k>-<average>[-held-out].
{json,md}`` (``--overwrite`` replaces one): each player's win rate with its Wilson interval, and
against the best network the deals only one of them won with the exact McNemar p-value; each
deal's outcome is kept.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from quadrat_env import seeds
from quadrat_env.arguments import description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_write

BATCH = 1024  # the benchmark's MODEL_BATCH: each network wins exactly the benchmark's deals


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--models", type=Path, nargs="+", required=True, help="afterstate networks' model.zip")
    p.add_argument("--env", default="quadrat_env/Zudecken-v0",
                   choices=["quadrat_env/Zudecken-v0", "quadrat_env/Zudecken32-v0"])  # fmt: skip
    p.add_argument("--average", default="probability", choices=["probability", "logit"])
    p.add_argument("--deals", type=int, default=10_000)
    p.add_argument("--held-out", action="store_true", help="the benchmark's held-out deals")
    p.add_argument("--out", type=Path, default=Path("results/ensemble"))
    p.add_argument("--overwrite", action="store_true", help="replace a record of the same settings")
    p.add_argument("--no-progress", action="store_true")
    return p


def measure(args: argparse.Namespace) -> dict:
    """Every network and the ensemble on the same deals; the record."""
    import torch
    from quadrat_env.agents import evaluate, wilson
    from quadrat_env.agents.sb3_agent import SB3Agent
    from quadrat_env.agents.zudecken.ensemble import EnsembleAgent
    from quadrat_env.experiments.compare import mcnemar

    torch.set_num_threads(1)  # the figures then do not depend on the machine's threads
    members = [SB3Agent.load(path, None, args.env, name=str(path)) for path in args.models]
    ensemble = EnsembleAgent([m.model.policy.features_extractor for m in members], args.average)
    deals = (seeds.BENCHMARK if args.held_out else seeds.PLANNER_CURVE).take(args.deals)
    players = {}
    for agent in (*members, ensemble):
        summary, episodes = evaluate(args.env, agent, deals, progress=not args.no_progress, n_envs=BATCH)
        won = np.array([e.won for e in episodes])
        low, high = wilson(int(won.sum()), len(won))
        players[agent.name] = {"wins": int(won.sum()), "win_rate": float(won.mean()), "ci_low": low,
                               "ci_high": high, "seconds": summary.seconds,
                               "won": "".join("1" if w else "0" for w in won)}  # fmt: skip
    best = max(map(str, args.models), key=lambda name: players[name]["wins"])
    a, b = (np.array([c == "1" for c in players[k]["won"]]) for k in (best, "ensemble"))
    only_best, only_ensemble = int((a & ~b).sum()), int((b & ~a).sum())
    return {"env": args.env, "models": [str(m) for m in args.models], "average": args.average,
            "deals": args.deals, "first_seed": deals.start, "players": players, "best_network": best,
            "only_best_network": only_best, "only_ensemble": only_ensemble,
            "p": mcnemar(only_best, only_ensemble)}  # fmt: skip


def table(r: dict) -> str:
    pct = "{:.2%}".format
    rows = [f"| {name} | {pct(s['win_rate'])} | [{pct(s['ci_low'])}, {pct(s['ci_high'])}] | "
            f"{s['seconds']:.0f} |" for name, s in r["players"].items()]  # fmt: skip
    return "\n".join([
        f"{len(r['models'])} afterstate networks and their ensemble (the mean {r['average']}) on {r['env']}, "
        f"{r['deals']:,} deals from seed {r['first_seed']:,}.", "",
        "| player | win rate | 95% CI (Wilson) | seconds |", "|---|---:|---|---:|", *rows, "",
        f"Against the best network (`{r['best_network']}`): {r['only_ensemble']} deals won only by the "
        f"ensemble, {r['only_best_network']} only by the network; exact McNemar p = {r['p']:.3g}.",
        ""])  # fmt: skip


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.deals < 1:
        p.error("--deals must be >= 1")
    if len(args.models) < 2 or len(set(args.models)) < len(args.models):
        p.error("--models needs at least two different model files")
    missing = [str(m) for m in args.models if not m.is_file()]
    if missing:
        p.error(f"--models: no such file: {', '.join(missing)}")
    stem = f"ensemble-{args.models[0].stem}-{len(args.models)}-{args.average}"
    stem += "-held-out" if args.held_out else ""
    if (args.out / f"{stem}.json").exists() and not args.overwrite:
        p.error(f"{args.out / stem}.json exists: pass --overwrite to replace it")
    try:
        record = measure(args)
    except ValueError as err:  # a model of another env, or not an afterstate network: one line
        p.error(str(err))
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / f"{stem}.json", json.dumps(record, indent=1) + "\n")
    atomic_write(args.out / f"{stem}.md", table(record))
    print(table(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
