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


def collect(model: Any, seeds: range, epsilon: float, rng: np.random.Generator, first: bool) -> dict:
    """Play ``seeds``; label every informative decision with the moves that still win."""
    env = gym.make(ENV_ID).unwrapped
    game = env.game
    obs_l, mask_l, win_l = [], [], []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        search = SlotSearch(game)  # one memo per deal: every state shares its deck
        done = False
        while not done:
            mask = info["action_mask"].astype(bool)
            moves = np.flatnonzero(mask)
            wins = np.zeros(len(mask), dtype=np.float32)
            if len(moves) > 1:
                for m in moves:
                    wins[m] = search.wins(game.play_unchecked(env.state, int(m)))
                if 0 < wins.sum() < len(moves):
                    obs_l.append(obs)
                    mask_l.append(mask)
                    win_l.append(wins)
            if rng.random() < epsilon or len(moves) == 1:
                action = int(rng.choice(moves))
            elif first:  # round 0: follow a random winning move where there is one
                good = np.flatnonzero(wins)
                action = int(rng.choice(good if len(good) else moves))
            else:
                action = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
            obs, _, done, _, info = env.step(action)
    return {"obs": np.array(obs_l), "mask": np.array(mask_l), "wins": np.array(win_l)}


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
    rng = np.random.default_rng(config["seed"])
    data: dict[str, np.ndarray] = {}
    rounds, best = [], -1.0
    start = time.perf_counter()
    per_round = config["deals_per_round"]
    first_seed = 100_000_000 * (1 + config["seed"])  # training deals differ per seed
    for r in range(config["rounds"]):
        seeds = range(first_seed + r * per_round, first_seed + (r + 1) * per_round)
        new = collect(model, seeds, config["epsilon"], rng, first=r == 0)
        data = new if not data else {k: np.concatenate([data[k], new[k]]) for k in data}
        loss = fit(model, data, config["epochs"], config["batch_size"], config["learning_rate"],
                   config["seed"] + r)  # fmt: skip
        summary, _ = evaluate(ENV_ID, SB3Agent(model, "maskable_ppo", masked=True), VALIDATION_SEEDS,
                              progress=False)  # fmt: skip
        rounds.append({"round": r, "samples": len(data["obs"]), "loss": loss,
                       "val_win_rate": summary.win_rate,
                       "seconds": round(time.perf_counter() - start, 1)})  # fmt: skip
        print(f"round {r}: {len(data['obs'])} labelled decisions, loss {loss:.3f}, "
              f"validation win rate {summary.win_rate:.2%} ({rounds[-1]['seconds']}s)", flush=True)
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
    p.add_argument("--out", type=Path, default=Path("runs/imitate"))
    args = p.parse_args(argv)
    if min(args.rounds, args.deals_per_round, args.epochs) < 1 or not 0 <= args.epsilon <= 1:
        p.error("--rounds, --deals-per-round and --epochs must be >= 1; --epsilon in [0, 1]")
    config = {"env_id": ENV_ID, "algo": "maskable_ppo", "method": "imitation of solver labels (per-move BCE)",
              "seed": args.seed, "rounds": args.rounds,
              "deals_per_round": args.deals_per_round, "epochs": args.epochs, "epsilon": args.epsilon,
              "batch_size": 256, "learning_rate": 1e-3, "net_arch": [256, 256]}  # fmt: skip
    result = run(config, args.out / f"Zudecken-seed{args.seed}")
    print(f"best validation win rate {result['best_val_win_rate']:.2%} after {result['seconds']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
