"""Teach a MaskablePPO policy to play Zudecken from the solver's labels (DAgger-style imitation).

    python -m quadrat_env.experiments.imitate --seed 0 --out runs/imitate     # about 15-25 minutes on 2 cores

The defaults (one round of 150,000 deals, 4 epochs, the afterstate network) are how the
committed Zudecken models were trained (``experiments/models/configs/Zudecken-maskable_ppo-seed*.yml``).

Plain MaskablePPO does not get past the largest-group greedy on Zudecken (about 5%). The solver
knows which moves still win a deal; averaged over many deals, "this move still wins, given what I
can see" is what a sampling planner estimates. Each round:

1. play training deals (seeds below 10^9, never the benchmark's) with the current behaviour policy:
   round 0 plays a random winning move, later rounds the network itself, with some random moves;
   ``--jobs`` worker processes share the deals (``--ray`` / ``--ray ADDRESS``: Ray tasks, locally or
   on a cluster; the labels are the same wherever they are made);
2. at every decision where some legal moves win and some do not, record the observation, the
   mask and which moves win (the solver runs on the true deck; the network only sees the
   observation);
3. fit each legal move's logit to whether that move still wins (binary cross-entropy, so the
   logit estimates P(the move wins | what the player sees)) and the value head to "the deal can
   still be won". The policy's argmax is then the move most likely to win.

The policy network is :class:`quadrat_env.agents.features.ZudeckenAfterstates` (default): one
network scores every legal move by the cards the table keeps and the cards still unseen after it,
on the suit-by-rank grid, and those scores are the logits. ``--features zudecken`` (an MLP over the
observation plus its suit, rank and pair-match structure), ``zudecken-moves`` or ``none`` (the bare
observation) train MLP policies, with ``--net-arch``.
Validation deals (other training seeds) are played every ``--eval-every`` epochs, and the best
checkpoint is kept. The result is an ordinary ``MaskablePPO`` model, saved with ``model.save`` and
loaded with ``MaskablePPO.load``. The run folder holds ``config.yml``, ``rounds.json`` and ``model.zip``.

A run checkpoints after each validation (``checkpoint.npz``; each round's labels in ``labels/``);
Ctrl-C or SIGTERM stops it (exit 130 / 143) and ``--resume`` goes on to the uninterrupted result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import yaml
from quadrat_env.agents import evaluate
from quadrat_env.agents.features import NAMES as FEATURE_NAMES
from quadrat_env.agents.features import SCORES
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.agents.solver import Solver
from quadrat_env.experiments import checkpoint
from quadrat_env.experiments.parallel import WorkerFailed, add_ray_argument, check_ray_argument, run_tasks
from quadrat_env.experiments.runs import RunInterrupted, check_resumable, claim_run_dir, signals_as_exceptions

from quadrat_env import seeds
from quadrat_env.files import atomic_open, atomic_write, save_model

ENV_ID = "quadrat_env/Zudecken-v0"
VALIDATION_SEEDS = seeds.VALIDATION.take(2000)
CHECKPOINT = "checkpoint.npz"
CHUNK = 2500  # deals per collection task; each task has its own generator, so --jobs never matters
LOSSES = ("bce", "softmax")


def collect(model: Any, seeds: range, epsilon: float, rng: np.random.Generator, first: bool,
            label_samples: int = 0, width: int = 0) -> dict:  # fmt: skip
    """Play ``seeds``; label every informative decision with the moves that still win: in the true
    deal (``label_samples=0``), or the share of ``label_samples`` sampled unseen orders in which the
    move still wins (what the planner estimates; the true order is not read). ``width`` > 0: the
    network plays ``width`` deals side by side (:func:`play_side_by_side`)."""
    if isinstance(model, bytes):  # in a worker (a process or a Ray task): the behaviour policy's file
        import tempfile

        from quadrat_env.agents.safe_load import load_model

        with tempfile.TemporaryDirectory() as folder:
            atomic_write(Path(folder) / "behaviour.zip", model)
            model = load_model(Path(folder) / "behaviour.zip", "maskable_ppo", ENV_ID)
    env = gym.make(ENV_ID).unwrapped
    solver = Solver(env.game)
    data: dict[str, list] = {"obs": [], "mask": [], "wins": []}

    def label(env: Any, obs: np.ndarray, mask: np.ndarray, moves: np.ndarray, rng: Any) -> np.ndarray:
        """Which legal moves still win (or their shares); the decision is kept if they differ."""
        wins = np.zeros(len(mask), dtype=np.float32)
        if len(moves) > 1:
            if label_samples:
                wins[moves] = solver.win_shares(obs, moves, rng, label_samples)
            else:
                wins[moves] = solver.wins_after(env.game.to_row(env.state), moves)[0]
            if wins[moves].min() < wins[moves].max():  # some moves better than others
                for key, value in zip(data, (obs, mask, wins), strict=True):
                    data[key].append(value)
        return wins

    if width and not first:
        play_side_by_side(model, seeds, epsilon, rng, label, width)
        return {k: np.array(v) for k, v in data.items()}
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = info["action_mask"].astype(bool)
            moves = np.flatnonzero(mask)
            wins = label(env, obs, mask, moves, rng)
            if rng.random() < epsilon or len(moves) == 1:
                action = int(rng.choice(moves))
            elif first and label_samples:  # round 0: play as the planner would (best share, then greedy)
                best = np.zeros_like(info["action_mask"])
                best[moves[wins[moves] == wins[moves].max()]] = 1
                action = env.game.greedy(best)
            elif first:  # round 0: follow a random winning move where there is one
                good = np.flatnonzero(wins)
                action = int(rng.choice(good if len(good) else moves))
            else:
                action = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
            obs, _, done, _, info = env.step(action)
    return {k: np.array(v) for k, v in data.items()}


def play_side_by_side(model: Any, seeds: range, epsilon: float, rng: np.random.Generator, label: Any,
                      width: int) -> None:  # fmt: skip
    """The network plays ``width`` deals at a time, one batched ``predict`` per step (one-observation
    calls dominate a DAgger round otherwise), calling ``label`` at every decision. Deal ``seed``'s
    random moves come from its own generator, seeded by one draw from ``rng`` and ``seed``, so the
    labels do not depend on ``width`` (only their order does)."""
    base, pending = int(rng.integers(2**62)), iter(seeds)

    def deal(env: Any) -> list | None:
        seed = next(pending, None)
        if seed is None:
            return None
        return [env, np.random.default_rng((base, seed)), *env.reset(seed=seed)]

    games = [g for g in (deal(gym.make(ENV_ID).unwrapped) for _ in range(width)) if g]
    while games:
        masks = np.array([g[3]["action_mask"].astype(bool) for g in games])
        chosen = model.predict(np.array([g[2] for g in games]), action_masks=masks, deterministic=True)[0]
        for i, (env, deal_rng, obs, _) in enumerate(games):
            moves = np.flatnonzero(masks[i])
            label(env, obs, masks[i], moves, deal_rng)
            explore = deal_rng.random() < epsilon or len(moves) == 1
            action = int(deal_rng.choice(moves)) if explore else int(chosen[i])
            obs, _, done, _, info = env.step(action)
            games[i] = deal(env) if done else [env, deal_rng, obs, info]
        games = [g for g in games if g]


def _collect_task(task: tuple[Any, int, int, float, tuple[int, ...], bool, int, int]) -> dict:
    model, lo, hi, epsilon, rng_key, first, label_samples, width = task
    import torch

    torch.set_num_threads(1)
    return collect(model, range(lo, hi), epsilon, np.random.default_rng(rng_key), first, label_samples, width)


def _describe(task: tuple[Any, ...]) -> str:
    return f"labelling deals {task[1]}..{task[2] - 1}"


def collect_parallel(model: Any, seeds: range, epsilon: float, key: tuple[int, ...], first: bool,
                     jobs: int, label_samples: int = 0, ray: str | None = None,
                     width: int = 0) -> dict:  # fmt: skip
    """``collect`` over ``seeds`` in chunks of ``CHUNK`` deals on ``jobs`` processes, with a progress
    bar; chunk ``k`` uses the generator ``default_rng((*key, k))``, so the data does not depend on jobs.
    ``width``: the network's deals played side by side (:func:`play_side_by_side`)."""
    from tqdm.auto import tqdm

    tasks = [(model, lo, min(lo + CHUNK, seeds.stop), epsilon, (*key, k), first, label_samples, width)
             for k, lo in enumerate(range(seeds.start, seeds.stop, CHUNK))]  # fmt: skip
    parts = []
    with tqdm(total=len(seeds), unit="deal", desc="solver labels", disable=None) as bar:
        for task, part in zip(tasks, run_tasks(_collect_task, tasks, jobs, _describe, ray), strict=True):
            parts.append(part)
            bar.update(task[2] - task[1])
    return {k: np.concatenate([p[k] for p in parts if len(p[k])]) for k in ("obs", "mask", "wins")}


def shared_labels(path: Path, deals: range, config: dict[str, Any], jobs: int,
                  ray: str | None = None) -> dict:  # fmt: skip
    """Round 0's labels from ``path`` if it holds them, else collected on ``deals`` and saved there.
    Round 0 plays the planner's choice (or a random winning move), not the network, so every training
    seed may learn from the same labels; the file records how and on which deals they were made."""
    how = {"deals": [deals.start, deals.stop], "epsilon": config["epsilon"],
           "label_samples": config.get("label_samples", 0)}  # fmt: skip
    if path.is_file():
        try:
            with np.load(path) as saved:
                made = json.loads(str(saved["how"]))
                labels = {k: saved[k] for k in ("obs", "mask", "wins")}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
            # a damaged file is a lost cache, not a lost result: the labels are made again
            print(f"imitate: {path} cannot be read ({type(err).__name__}: {err}); making the labels again",
                  file=sys.stderr, flush=True)  # fmt: skip
        else:
            if any(made.get(k) != how[k] for k in ("epsilon", "label_samples")):
                raise ValueError(f"{path} holds labels made {made}, not {how}")
            config["labels_made"] = made
            return labels
    data = collect_parallel(None, deals, config["epsilon"], (config["seed"], 0), True, jobs,
                            how["label_samples"], ray)  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as f:  # a file object: numpy adds no ".npz" to the name
        np.savez_compressed(f, how=json.dumps(how), **data)
    config["labels_made"] = how
    return data


def fit(model: Any, data: dict, epochs: int, batch_size: int, lr: float, seed: int,
        loss_kind: str = "bce", augment: bool = False, lr_end: float | None = None) -> float:  # fmt: skip
    """Supervised steps on the policy and value (winnable). ``bce``: each legal move's logit learns
    P(the move still wins) on its own; ``softmax``: the legal moves' softmax learns the winning
    moves' shares (a ranking within each decision, not each move's level). ``augment``: every batch
    with its suits, ranks and slots renamed at random (:func:`~quadrat_env.agents.features.relabel`).
    ``lr_end``: the learning rate moves linearly from ``lr`` to it over the steps (default: constant)."""
    import torch
    from quadrat_env.agents.features import ZudeckenAfterstates, random_renaming, relabel
    from torch import nn

    policy = model.policy
    afterstates = isinstance(policy.features_extractor, ZudeckenAfterstates)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    obs = torch.as_tensor(data["obs"])
    mask = torch.as_tensor(data["mask"])
    target = torch.as_tensor(data["wins"])
    gen = torch.Generator().manual_seed(seed)
    loss_value = float("nan")
    steps = epochs * -(-len(obs) // batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda t: 1 + ((lr if lr_end is None else lr_end) / lr - 1) * t / steps)
    policy.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(obs), generator=gen).split(batch_size):
            batch_obs, batch_mask, batch_target = obs[idx], mask[idx], target[idx]
            if augment:
                renaming = random_renaming(len(idx), gen)
                batch_obs, batch_mask, batch_target = relabel(batch_obs, batch_mask, batch_target, *renaming)
            features = policy.extract_features(batch_obs, policy.pi_features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            if afterstates:  # the features are the move scores: the value head must not pull on them
                latent_vf = latent_vf.detach()
            # Each legal move's logit learns P(the move still wins | what the player sees): the
            # argmax is then the move a sampling planner would pick with unlimited samples.
            logits = policy.action_net(latent_pi)
            m = batch_mask.float()
            if loss_kind == "softmax":
                share = batch_target * m / (batch_target * m).sum(1, keepdim=True)
                log_p = torch.log_softmax(logits.masked_fill(m == 0, -1e9), dim=1)
                loss = -(share * log_p).sum(1).mean()
            else:
                bce = nn.functional.binary_cross_entropy_with_logits(logits, batch_target, reduction="none")
                loss = (bce * m).sum() / m.sum()
            value = policy.value_net(latent_vf).squeeze(1)
            # the value head learns how winnable the position is: its best move's label
            loss = loss + 0.5 * ((value - (batch_target * m).amax(1)) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            loss_value = float(loss.detach())
    policy.eval()
    return loss_value


def _learning_rate(config: dict[str, Any], epoch: float) -> float:
    """The learning rate ``epoch`` epochs into a round: constant, or ``cosine`` from the configured
    rate down to 1% of it at the round's end (each round's new data starts high again)."""
    lr = config["learning_rate"]
    if config.get("lr_decay", "none") == "none":
        return lr
    return lr * (0.01 + 0.99 * 0.5 * (1 + np.cos(np.pi * epoch / config["epochs"])))


def validate(model: Any) -> float:
    summary, _ = evaluate(ENV_ID, SB3Agent(model, "maskable_ppo", masked=True), VALIDATION_SEEDS,
                          progress=False, n_envs=64)  # fmt: skip
    return summary.win_rate


def run(config: dict[str, Any], run_dir: Path, jobs: int = 1, ray: str | None = None,
        resume: bool = False) -> dict[str, Any]:  # fmt: skip
    """Train; a checkpoint after each validation (network weights, the rounds so far; each round's
    labels are kept once, in ``labels/``). ``resume``: go on from the last one, to the same result."""
    import torch
    from quadrat_env.agents.features import policy_kwargs_with, scores_as_logits
    from sb3_contrib import MaskablePPO

    torch.manual_seed(config["seed"])
    torch.set_num_threads(1)
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        atomic_write(run_dir / "config.yml", yaml.safe_dump(config, sort_keys=False))
    policy_kwargs = policy_kwargs_with(config["features"], {"net_arch": config["net_arch"]})
    model = MaskablePPO("MlpPolicy", gym.make(ENV_ID), seed=config["seed"], device="cpu",
                        policy_kwargs=policy_kwargs)  # fmt: skip
    if config["features"] == SCORES:
        scores_as_logits(model.policy)
    at = checkpoint.resume_imitation(run_dir / CHECKPOINT, model, config) if resume else None
    data: dict[str, np.ndarray] = {}
    rounds, best = (at["rounds"], at["best"]) if at else ([], -1.0)
    first, start_epoch = (at["round"], at["epoch"]) if at else (0, 0)
    start = time.perf_counter() - (rounds[-1]["seconds"] if rounds else 0.0)
    for r in range(first, config["rounds"]):
        data = _with_round_labels(data, r, model, config, run_dir, jobs, ray, resume and r == first)
        for e in range(start_epoch if r == first else 0, config["epochs"], config["eval_every"]):
            todo = min(config["eval_every"], config["epochs"] - e)
            lr = [_learning_rate(config, x) for x in (e, e + todo)]
            loss = fit(model, data, todo, config["batch_size"], lr[0], config["seed"] + 1000 * r + e,
                       config.get("loss", "bce"), config.get("augment", False), lr[1])  # fmt: skip
            win_rate = validate(model)
            seconds = round(time.perf_counter() - start, 1)
            rounds.append({"round": r, "epochs": e + todo, "samples": len(data["obs"]), "loss": loss,
                           "val_win_rate": win_rate, "seconds": seconds})  # fmt: skip
            print(f"round {r}, epoch {e + todo}: {len(data['obs'])} labelled decisions, loss {loss:.3f}, "
                  f"validation win rate {win_rate:.2%} ({rounds[-1]['seconds']}s)", flush=True)  # fmt: skip
            if win_rate > best:
                best = win_rate
                save_model(model, run_dir / "model.zip")
            done = e + todo == config["epochs"]
            checkpoint.save_imitation(run_dir / CHECKPOINT, model, config, rounds, best, r + done,
                                      0 if done else e + todo)  # fmt: skip
    (run_dir / "behaviour.zip").unlink(missing_ok=True)
    atomic_write(run_dir / "config.yml", yaml.safe_dump(config, sort_keys=False))  # with labels_made
    atomic_write(run_dir / "rounds.json", json.dumps(rounds, indent=2))
    (run_dir / CHECKPOINT).unlink(missing_ok=True)  # the run is whole: model.zip and rounds.json
    return {"best_val_win_rate": best, "seconds": round(time.perf_counter() - start, 1), "rounds": rounds}


def _with_round_labels(data: dict, r: int, model: Any, config: dict[str, Any], run_dir: Path, jobs: int,
                       ray: str | None, resuming: bool) -> dict:  # fmt: skip
    """``data`` with round ``r``'s labels added: collected, or read back from ``labels/`` (all rounds
    up to ``r`` when resuming)."""
    folder = run_dir / "labels"
    if resuming:  # the earlier rounds' labels, as they were collected
        for k in range(r):
            data = _joined(data, _read_labels(folder / f"round-{k}.npz"))
    if (folder / f"round-{r}.npz").is_file() and resuming:
        return _joined(data, _read_labels(folder / f"round-{r}.npz"))
    per_round = config["deals_per_round"]
    deals = seeds.imitation(config["seed"], config["rounds"] * per_round)  # training deals differ per seed
    todo = deals[r * per_round : (r + 1) * per_round]
    behaviour = None
    if r == 0 and config.get("behaviour"):  # round 0 plays a given policy, not the winning moves
        behaviour = Path(config["behaviour"]).read_bytes()
    if r > 0:  # the workers get the current network as its saved file's bytes (no shared disk needed)
        save_model(model, run_dir / "behaviour.zip")
        behaviour = (run_dir / "behaviour.zip").read_bytes()
    if r == 0 and config.get("labels"):  # the first round's labels, shared between training seeds
        new = shared_labels(Path(config["labels"]), todo, config, jobs, ray)
    else:
        new = collect_parallel(behaviour, todo, config["epsilon"], (config["seed"], r), behaviour is None,
                               jobs, config.get("label_samples", 0), ray,
                               config.get("play_batch", 0))  # fmt: skip
    folder.mkdir(exist_ok=True)
    with atomic_open(folder / f"round-{r}.npz", "wb") as f:
        np.savez_compressed(f, **new)
    return _joined(data, new)


def _joined(data: dict, new: dict) -> dict:
    return new if not data else {k: np.concatenate([data[k], new[k]]) for k in data}


def _read_labels(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as saved:
        return {k: saved[k] for k in ("obs", "mask", "wins")}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=1, help="round 0 follows winning moves, later rounds "
                   "the network (DAgger); each round's labels join the earlier ones")
    p.add_argument("--deals-per-round", type=int, default=150_000)
    p.add_argument("--epochs", type=int, default=4, help="passes over the data, per round")
    p.add_argument("--eval-every", type=int, default=1, help="epochs between validation checkpoints")
    p.add_argument("--epsilon", type=float, default=0.1, help="share of random moves when collecting")
    p.add_argument("--features", choices=FEATURE_NAMES, default=SCORES)
    p.add_argument("--loss", choices=LOSSES, default="bce",
                   help="bce: each move's P(still wins); softmax: the winning moves' shares per decision")
    p.add_argument("--augment", action="store_true",
                   help="train on copies of each decision with suits, ranks and slots renamed at random")
    p.add_argument("--lr-decay", choices=("none", "cosine"), default="none",
                   help="learning rate over each round's epochs: constant, or cosine down to 1%%")
    p.add_argument("--net-arch", type=int, nargs="+", metavar="UNITS",
                   help="hidden layer sizes of the policy and value networks (default: 256 256; "
                        "none with --features zudecken-afterstates, whose outputs are the logits)")
    p.add_argument("--label-samples", type=int, default=0,
                   help="label each move with its win share over this many sampled unseen orders "
                        "(0: whether it wins the true deal)")
    p.add_argument("--behaviour", type=Path, metavar="MODEL",
                   help="round 0 plays this MaskablePPO model (10%% random moves) instead of following "
                        "winning moves: labels where a player that cannot see the stock goes")
    p.add_argument("--labels", type=Path,
                   help="round 0's labels: loaded from this .npz if it exists, else made and saved there")
    p.add_argument("--play-batch", type=int, default=0, metavar="N",
                   help="later rounds: the network plays N deals side by side, one batched prediction per "
                        "step (much faster; other random moves than the default 0, one deal at a time)")
    p.add_argument("--jobs", type=int, default=2, help="label-collecting processes (no effect on results)")
    p.add_argument("--out", type=Path, default=Path("runs/imitate"))
    again = p.add_mutually_exclusive_group()
    again.add_argument("--overwrite", action="store_true", help="delete an earlier run in the folder first")
    again.add_argument("--resume", action="store_true",
                       help="continue the run in the run folder from its last checkpoint (same arguments)")
    add_ray_argument(p)
    args = p.parse_args(argv)
    check_ray_argument(p, args)
    if args.label_samples < 0:
        p.error("--label-samples must be >= 0")
    if args.behaviour:
        if args.labels:
            p.error("--behaviour and --labels exclude each other (shared labels follow winning moves)")
        from quadrat_env.agents.safe_load import load_model

        try:  # an untrusted file: loaded without unpickling, and refused before any work
            load_model(args.behaviour, "maskable_ppo", ENV_ID)
        except Exception as err:  # noqa: BLE001 - any reason it cannot play is one line
            p.error(f"--behaviour {args.behaviour}: {err}")
    if args.play_batch < 0:
        p.error(f"--play-batch must be >= 0, got {args.play_batch}")
    if min(args.rounds, args.deals_per_round, args.epochs, args.eval_every, args.jobs) < 1:
        p.error("--rounds, --deals-per-round, --epochs, --eval-every and --jobs must be >= 1")
    if args.features == SCORES and args.net_arch:
        p.error(f"--net-arch does not apply to --features {SCORES} (its outputs are the logits)")
    if args.net_arch is None:
        args.net_arch = [] if args.features == SCORES else [256, 256]
    if args.net_arch and min(args.net_arch) < 1:
        p.error("--net-arch sizes must be >= 1")
    if not 0 <= args.epsilon <= 1:
        p.error(f"--epsilon must be in [0, 1], got {args.epsilon}")
    run_dir = args.out / f"Zudecken-seed{args.seed}"
    try:
        seeds.imitation(args.seed, args.rounds * args.deals_per_round)
    except ValueError as err:
        p.error(str(err))
    config = {"env_id": ENV_ID, "algo": "maskable_ppo", "method": "imitation of solver labels (per-move BCE)",
              "seed": args.seed, "rounds": args.rounds, "deals_per_round": args.deals_per_round,
              "epochs": args.epochs, "eval_every": args.eval_every, "epsilon": args.epsilon,
              "features": args.features, "batch_size": 256, "learning_rate": 1e-3,
              "net_arch": args.net_arch, "loss": args.loss, "augment": args.augment,
              "lr_decay": args.lr_decay,
              "label_samples": args.label_samples, "play_batch": args.play_batch,
              "labels": str(args.labels) if args.labels else None,
              "behaviour": str(args.behaviour) if args.behaviour else None}  # fmt: skip
    try:
        if args.resume:
            check_resumable(run_dir, config, CHECKPOINT, finished="rounds.json")
        else:
            claim_run_dir(run_dir, args.overwrite)
    except ValueError as err:
        p.error(str(err))
    try:
        with signals_as_exceptions():
            result = run(config, run_dir, jobs=args.jobs, ray=args.ray, resume=args.resume)
    except RunInterrupted as stop:
        how = ("the last checkpoint is kept; continue with the same command and --resume"
               if (run_dir / CHECKPOINT).is_file() else "no checkpoint yet; start it again with --overwrite")
        print(f"imitate: stopped by {stop.name}; {how}", file=sys.stderr)
        return 128 + stop.signum
    except (OSError, ValueError, KeyError) as err:  # a labels file that is not ours
        print(f"imitate: {err}", file=sys.stderr)
        return 2
    except WorkerFailed as err:
        print(f"imitate: {err}", file=sys.stderr)
        return 1
    print(f"best validation win rate {result['best_val_win_rate']:.2%} after {result['seconds']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
