"""Does one-ply lookahead over the next stock cards improve an afterstate network's play?

    python -m quadrat_env.experiments.zudecken.lookahead --model experiments/models/Zudecken-rl.zip \
        --deals 2000 --samples 64 --z 2 --out results/lookahead

Plays the network as it is (its best move, as the benchmark plays it) and with
``agents.zudecken.lookahead.LookaheadAgent`` on the same deals (the planner curve's, or with
``--held-out`` the benchmark's; ``--offset`` skips that many of them, so that processes can share
a range), and writes ``<out>/lookahead-<model>-s<samples>-z<z>[-held-out][-from<offset>].{json,md}``:
both win rates, the deals only one of them won with the exact McNemar p-value, the decisions
where lookahead left the network's move, and the mean of (lookahead value - the network's own
value) over the legal moves of the decisions with a choice: 0 where the network's values are
consistent with its values one card later. Each deal's outcome is kept, and ``--merge A.json
B.json ... --out DIR`` joins records of the same settings on other deals into one.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from quadrat_env import seeds
from quadrat_env.arguments import description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_write

N_ENVS = 256  # deals played side by side (the lookahead's random draws depend on it)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--model", type=Path, help="an afterstate network's model.zip")
    p.add_argument("--env", default="quadrat_env/Zudecken-v0",
                   choices=["quadrat_env/Zudecken-v0", "quadrat_env/Zudecken32-v0"])  # fmt: skip
    p.add_argument("--deals", type=int, default=2000)
    p.add_argument("--samples", type=int, default=64, help="stock orders a decision")
    p.add_argument("--z", type=float, default=2.0, help="leave the network's move only this many SEs better")
    p.add_argument("--seed", type=int, default=0, help="of the sampled stock orders")
    p.add_argument("--held-out", action="store_true", help="the benchmark's held-out deals")
    p.add_argument(
        "--offset", type=int, help="deals of the range to skip (the record's name says where it starts)"
    )
    p.add_argument("--merge", type=Path, nargs="+", help="records to join (nothing is played)")
    p.add_argument("--out", type=Path, default=Path("results/lookahead"))
    p.add_argument("--no-progress", action="store_true")
    return p


def _network(path: Path, env_id: str) -> tuple[Any, Any]:
    from quadrat_env.agents.sb3_agent import SB3Agent
    from quadrat_env.agents.zudecken.features import ZudeckenAfterstates

    agent = SB3Agent.load(path, None, env_id, name="network")
    net = agent.model.policy.features_extractor
    if not isinstance(net, ZudeckenAfterstates):
        raise ValueError(f"{path}: not an afterstate network (its features are {type(net).__name__})")
    return agent, net


def measure(args: argparse.Namespace) -> dict:
    """Both agents on the same deals; the record."""
    import torch
    from quadrat_env.agents import evaluate
    from quadrat_env.agents.zudecken.lookahead import LookaheadAgent

    torch.set_num_threads(1)  # both agents' figures then do not depend on the machine's threads
    network, net = _network(args.model, args.env)
    look = LookaheadAgent(net, samples=args.samples, z=args.z, seed=args.seed)
    deals = (seeds.BENCHMARK if args.held_out else seeds.PLANNER_CURVE).take(
        args.deals, offset=args.offset or 0
    )
    played = {}
    for agent in (network, look):
        summary, episodes = evaluate(args.env, agent, deals, progress=not args.no_progress, n_envs=N_ENVS)
        played[agent.name] = (summary, np.array([e.won for e in episodes]))
    (s0, a), (s1, b) = played["network"], played["lookahead"]
    return _paired({"env": args.env, "model": str(args.model), "deals": args.deals, "first_seed": deals.start,
                    "samples": args.samples, "z": args.z, "seed": args.seed,
                    "seconds": {"network": s0.seconds, "lookahead": s1.seconds},
                    "won": {"network": _bits(a), "lookahead": _bits(b)},
                    "decisions_with_a_choice": look.decisions, "decisions_parted": look.parted,
                    "bias_sum": look.bias_sum, "bias_count": look.bias_count})  # fmt: skip


def _bits(won: np.ndarray) -> str:
    return "".join("1" if w else "0" for w in won)


def _paired(r: dict) -> dict:
    """The record's figures from its per-deal outcomes."""
    from quadrat_env.agents.evaluate import wilson
    from quadrat_env.experiments.compare import mcnemar

    a, b = (np.array([c == "1" for c in r["won"][k]]) for k in ("network", "lookahead"))
    for name, won in (("network", a), ("lookahead", b)):
        low, high = wilson(int(won.sum()), len(won))
        r[name] = {"wins": int(won.sum()), "win_rate": float(won.mean()), "ci_low": low, "ci_high": high,
                   "seconds": r["seconds"][name]}  # fmt: skip
    r["only_network"], r["only_lookahead"] = int((a & ~b).sum()), int((b & ~a).sum())
    r["p"] = mcnemar(r["only_network"], r["only_lookahead"])
    r["mean_lookahead_minus_own_value"] = r["bias_sum"] / max(r["bias_count"], 1)
    return r


SAME = ("env", "model", "samples", "z", "seed")  # what records must share to be joined


def merge(paths: list[Path]) -> dict:
    """One record from records of the same settings on consecutive deals (in the order given)."""
    parts = [json.loads(path.read_text()) for path in paths]
    first = parts[0]
    for path, part in zip(paths, parts, strict=True):
        if any(part.get(k) != first.get(k) for k in SAME):
            raise ValueError(f"{path}: other settings than {paths[0]} ({', '.join(SAME)})")
    for before, after, path in zip(parts, parts[1:], paths[1:], strict=False):
        if after["first_seed"] != before["first_seed"] + before["deals"]:
            raise ValueError(f"{path}: its deals do not follow the previous record's")
    joined = {k: first[k] for k in SAME}
    joined |= {
        "deals": sum(p["deals"] for p in parts),
        "first_seed": first["first_seed"],
        "merged": len(parts),
    }
    for key in ("decisions_with_a_choice", "decisions_parted", "bias_sum", "bias_count"):
        joined[key] = sum(p[key] for p in parts)
    joined["seconds"] = {k: sum(p["seconds"][k] for p in parts) for k in ("network", "lookahead")}
    joined["won"] = {k: "".join(p["won"][k] for p in parts) for k in ("network", "lookahead")}
    return _paired(joined)


def table(r: dict) -> str:
    pct = "{:.2%}".format
    return "\n".join([
        f"One-ply lookahead over `{r['model']}` on {r['env']}, {r['deals']:,} deals from seed "
        f"{r['first_seed']:,}; {r['samples']} stock orders a decision, z = {r['z']}.", "",
        "| agent | win rate | 95% CI (Wilson) | deals won only by it | seconds |", "|---|---:|---|---:|---:|",
        *(f"| {name} | {pct(s['win_rate'])} | [{pct(s['ci_low'])}, {pct(s['ci_high'])}] | {only} | "
          f"{s['seconds']:.0f} |"
          for name, s, only in (("network", r["network"], r["only_network"]),
                                ("lookahead", r["lookahead"], r["only_lookahead"]))),
        "", f"Exact McNemar p = {r['p']:.3g}. Lookahead left the network's move at "
        f"{r['decisions_parted']:,} of {r['decisions_with_a_choice']:,} decisions with a choice; over "
        f"their legal moves its value was the network's own value {r['mean_lookahead_minus_own_value']:+.4f} "
        "on average.", ""])  # fmt: skip


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.deals < 1 or args.samples < 2 or not args.z >= 0 or (args.offset or 0) < 0:
        p.error("--deals must be >= 1, --samples >= 2, --z >= 0 and --offset >= 0")
    if args.merge is None and (args.model is None or not args.model.is_file()):
        p.error(f"--model {args.model}: no such file" if args.model else "--model or --merge is needed")
    try:
        record = merge(args.merge) if args.merge else measure(args)
    except (ValueError, OSError, KeyError, TypeError) as err:  # a record that is not one: one line
        p.error(f"{type(err).__name__}: {err}" if isinstance(err, KeyError | TypeError) else str(err))
    stem = f"lookahead-{Path(record['model']).stem}-s{record['samples']}-z{record['z']:g}"
    stem += ("-held-out" if record["first_seed"] >= seeds.BENCHMARK.start else "") + (
        f"-from{record['first_seed']}" if args.offset is not None and not args.merge else ""
    )
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / f"{stem}.json", json.dumps(record, indent=1) + "\n")
    atomic_write(args.out / f"{stem}.md", table(record))
    print(table(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
