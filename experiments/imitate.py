"""Teach a MaskablePPO policy to play Zudecken from the solver's labels (DAgger-style imitation).

    python -m experiments.imitate --seed 0 --out runs/imitate

Plain MaskablePPO does not get past the largest-group greedy on Zudecken (about 5%). The solver
knows which moves still win a deal; averaged over many deals, "this move still wins, given what I
can see" is what a sampling planner estimates. Each round:

1. play training deals (seeds below 10^9, never the benchmark's) with the current behaviour policy:
   round 0 plays a random winning move, later rounds the network itself, with some random moves;
2. at every decision where some legal moves win and some do not, record the observation, the
   mask and which moves win (the solver runs on the true deck; the network only sees the
   observation);
3. fit each legal move's logit to whether that move still wins (binary cross-entropy, so the
   logit estimates P(the move wins | what the player sees)) and the value head to "the deal can
   still be won". The policy's argmax is then the move most likely to win.

The result is an ordinary ``MaskablePPO`` model (its policy network trained this way), saved with
``model.save`` and loaded with ``MaskablePPO.load``. A held-out validation set (other training seeds)
picks the best round. The run folder holds ``config.yml``, ``rounds.json`` and ``model.zip``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import yaml

from agents import evaluate
from agents.sb3_agent import SB3Agent
from agents.solver import SlotSearch

ENV_ID = "quadrat_env/Zudecken-v0"
VALIDATION_SEEDS = range(900_000_000, 900_001_000)  # also below the benchmark's 10^9


def label(game: Any, state: Any, moves: np.ndarray, samples: int, rng: np.random.Generator) -> np.ndarray:
    """Per legal move: whether it still wins (``samples=0``: on the true deck) or the share of
    ``samples`` sampled stock orders in which it still wins (what a sampling planner estimates)."""
    wins = np.zeros(game.num_moves + 1, dtype=np.float32)
    seen, stock = state.deck[: state.next], state.deck[state.next :]
    worlds = [state] if samples == 0 else [
        state._replace(deck=seen + tuple(rng.permutation(stock).tolist())) for _ in range(samples)
    ]  # fmt: skip
    for world in worlds:
        search = SlotSearch(game)  # one memo per world, shared by its moves
        for m in moves:
            wins[m] += search.wins(game.play_unchecked(world, int(m)))
    return wins / len(worlds)


def collect(model: Any, seeds: range, epsilon: float, rng: np.random.Generator, samples: int = 0) -> dict:
    """Play ``seeds``; label every informative decision with how often each move still wins.

    ``model=None`` (round 0) follows the labels' best move, else the network plays; a share
    ``epsilon`` of the moves is random, to visit states off the behaviour policy's path.
    """
    env = gym.make(ENV_ID).unwrapped
    game = env.game
    obs_l, mask_l, win_l = [], [], []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = info["action_mask"].astype(bool)
            moves = np.flatnonzero(mask)
            wins = np.zeros(len(mask), dtype=np.float32)
            if len(moves) > 1:
                wins = label(game, env.state, moves, samples, rng)
                if wins[moves].min() < wins[moves].max():  # the choice matters here
                    obs_l.append(obs)
                    mask_l.append(mask)
                    win_l.append(wins)
            if rng.random() < epsilon or len(moves) == 1:
                action = int(rng.choice(moves))
            elif model is None:  # round 0: a move that wins most often
                action = int(rng.choice(moves[wins[moves] == wins[moves].max()]))
            else:
                action = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
            obs, _, done, _, info = env.step(action)
    return {
        "obs": np.array(obs_l, dtype=np.float32).reshape(-1, len(obs)),
        "mask": np.array(mask_l).reshape(-1, len(mask)),
        "wins": np.array(win_l, dtype=np.float32).reshape(-1, len(mask)),
    }


def _collect_job(job: tuple[str | None, range, float, int, int]) -> dict:
    """``collect`` in a worker process: the model comes as a saved file, the RNG as a seed."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    path, seeds, epsilon, samples, rng_seed = job
    model = MaskablePPO.load(path, device="cpu") if path else None
    return collect(model, seeds, epsilon, np.random.default_rng(rng_seed), samples)


def collect_parallel(path: str | None, seeds: range, epsilon: float, samples: int, rng_seed: int,
                     jobs: int) -> dict:  # fmt: skip
    """``collect`` split over ``jobs`` processes (chunks of deals, results in seed order)."""
    chunk = max(1, -(-len(seeds) // (4 * jobs)))
    parts = [(path, seeds[i : i + chunk], epsilon, samples, rng_seed * 1000 + k)
             for k, i in enumerate(range(0, len(seeds), chunk))]  # fmt: skip
    if jobs == 1:
        results = [_collect_job(p) for p in parts]
    else:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(jobs) as pool:
            results = pool.map(_collect_job, parts)
    return {k: np.concatenate([r[k] for r in results]) for k in results[0]}


def fit(model: Any, data: dict, epochs: int, batch_size: int, lr: float, seed: int) -> float:
    """Supervised steps on the policy (cross-entropy to winning moves) and value (winnable)."""
    import torch
    from torch import nn

    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    obs = torch.as_tensor(data["obs"])
    mask = torch.as_tensor(data["mask"])
    target = torch.as_tensor(data["wins"])
    gen = torch.Generator().manual_seed(seed)
    loss_value = float("nan")
    policy.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(obs), generator=gen).split(batch_size):
            features = policy.extract_features(obs[idx], policy.pi_features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            # Each legal move's logit learns P(the move still wins | what the player sees): the
            # argmax is then the move a sampling planner would pick with unlimited samples.
            logits = policy.action_net(latent_pi)
            m = mask[idx].float()
            bce = nn.functional.binary_cross_entropy_with_logits(logits, target[idx], reduction="none")
            loss = (bce * m).sum() / m.sum()
            value = policy.value_net(latent_vf).squeeze(1)
            loss = loss + 0.5 * ((value - 1.0) ** 2).mean()  # labelled states are winnable
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_value = float(loss.detach())
    policy.eval()
    return loss_value


def run(config: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    import torch
    from sb3_contrib import MaskablePPO

    torch.manual_seed(config["seed"])
    torch.set_num_threads(1)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    model = MaskablePPO("MlpPolicy", gym.make(ENV_ID), seed=config["seed"], device="cpu",
                        policy_kwargs={"net_arch": config["net_arch"]})  # fmt: skip
    data: dict[str, np.ndarray] = {}
    rounds, best = [], -1.0
    start = time.perf_counter()
    per_round = config["deals_per_round"]
    first_seed = 100_000_000 * (1 + config["seed"])  # training deals differ per seed
    for r in range(config["rounds"]):
        seeds = range(first_seed + r * per_round, first_seed + (r + 1) * per_round)
        behaviour = None
        if r > 0:  # the workers load the current network from a file
            behaviour = str(run_dir / "behaviour.zip")
            model.save(behaviour)
        new = collect_parallel(behaviour, seeds, config["epsilon"], config["label_samples"],
                               config["seed"] * 100 + r, config["jobs"])  # fmt: skip
        data = new if not data else {k: np.concatenate([data[k], new[k]]) for k in data}
        np.savez_compressed(run_dir / "data.npz", **data)  # to refit without relabelling
        loss = fit(model, data, config["epochs"], config["batch_size"], config["learning_rate"],
                   config["seed"] + r)  # fmt: skip
        summary, _ = evaluate(ENV_ID, SB3Agent(model, "maskable_ppo", masked=True), VALIDATION_SEEDS,
                              progress=False)  # fmt: skip
        rounds.append({"round": r, "samples": len(data["obs"]), "loss": loss,
                       "val_win_rate": summary.win_rate,
                       "seconds": round(time.perf_counter() - start, 1)})  # fmt: skip
        print(
            f"round {r}: {len(data['obs'])} labelled decisions, loss {loss:.3f}, "
            f"validation win rate {summary.win_rate:.2%} ({rounds[-1]['seconds']}s)",
            flush=True,
        )
        if summary.win_rate > best:
            best = summary.win_rate
            model.save(run_dir / "model.zip")
    (run_dir / "rounds.json").write_text(json.dumps(rounds, indent=2))
    return {"best_val_win_rate": best, "seconds": round(time.perf_counter() - start, 1), "rounds": rounds}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--deals-per-round", type=int, default=10000)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--epsilon", type=float, default=0.1, help="share of random moves when collecting")
    p.add_argument(
        "--label-samples",
        type=int,
        default=0,
        help="label by this many sampled stock orders per decision (0: the true deck)",
    )
    p.add_argument("--jobs", type=int, default=1, help="worker processes for labelling")
    p.add_argument("--out", type=Path, default=Path("runs/imitate"))
    args = p.parse_args(argv)
    if min(args.rounds, args.deals_per_round, args.epochs, args.jobs) < 1 or not 0 <= args.epsilon <= 1:
        p.error("--rounds, --deals-per-round, --epochs and --jobs must be >= 1; --epsilon in [0, 1]")
    if args.label_samples < 0:
        p.error(f"--label-samples must be >= 0, got {args.label_samples}")
    method = (
        "per-move BCE on the solver's verdict with the true deck"
        if args.label_samples == 0
        else f"per-move BCE on the share of {args.label_samples} sampled stock orders that still win"
    )
    config = {"env_id": ENV_ID, "algo": "maskable_ppo", "method": method,
              "seed": args.seed, "rounds": args.rounds, "label_samples": args.label_samples,
              "deals_per_round": args.deals_per_round, "epochs": args.epochs, "epsilon": args.epsilon,
              "batch_size": 256, "learning_rate": 1e-3, "net_arch": [256, 256],
              "jobs": args.jobs}  # fmt: skip
    result = run(config, args.out / f"Zudecken-seed{args.seed}")
    print(f"best validation win rate {result['best_val_win_rate']:.2%} after {result['seconds']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
