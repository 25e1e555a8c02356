"""Teach a MaskablePPO policy to play Zudecken from the solver's labels (DAgger-style imitation).

    python -m quadrat_env.experiments.zudecken.imitate --seed 0 --out runs/imitate  # 15-25 minutes, 2 cores

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

The policy network is ``quadrat_env.agents.zudecken.features.ZudeckenAfterstates`` (default): one
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
import contextlib
import json
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from quadrat_env.agents import evaluate
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.experiments.common import checkpoint
from quadrat_env.experiments.common.parallel import WorkerFailed, add_ray_argument, check_ray_argument
from quadrat_env.experiments.zudecken.imitate_labels import (
    ENV_ID,
    collect_parallel,
    joined,
    read_labels,
    save_labels,
    shared_labels,
)

from quadrat_env import seeds
from quadrat_env.arguments import description_of
from quadrat_env.extras import command, importing
from quadrat_env.files import atomic_write, finish_run, save_model
from quadrat_env.registry import short_name

with importing(__name__):  # the 'train' extra: one line naming it, not a traceback, if missing
    import yaml
    from quadrat_env.agents.zudecken.features import SCORES
    from quadrat_env.experiments.common.runs import RunInterrupted, open_run_dir, signals_as_exceptions
    from quadrat_env.experiments.zudecken.imitate_settings import Settings

VALIDATION_SEEDS = seeds.VALIDATION.take(2000)
CHECKPOINT = "checkpoint.npz"
#: ``--loss ranked``: label differences this size (0.01, one win in 100 deals) weigh e to 1, and
#: the logits (log-odds: about 0.045 apart for moves 0.01 apart near even odds) are scaled to match.
RANK_TEMPERATURE, RANK_SCALE = 0.01, 20.0


def fit(model: Any, data: dict, epochs: int, batch_size: int, lr: float, seed: int,
        loss_kind: str = "bce", augment: bool = False, lr_end: float | None = None) -> float:  # fmt: skip
    """Supervised steps on the policy and value (winnable). ``bce``: each legal move's logit learns
    P(the move still wins) on its own; ``softmax``: the legal moves' softmax learns the winning
    moves' shares (a ranking within each decision, not each move's level); ``ranked``: ``bce`` and
    each decision's order (``_rank_loss``). ``augment``: every batch with its suits, ranks and
    slots renamed at random (``relabel``).
    ``lr_end``: the learning rate moves linearly from ``lr`` to it over the steps (default: constant)."""
    import torch
    from quadrat_env.agents.zudecken.features import random_renaming, relabel

    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    obs, mask, target = (torch.as_tensor(data[k]) for k in ("obs", "mask", "wins"))
    gen = torch.Generator().manual_seed(seed)
    loss_value = float("nan")
    steps = epochs * -(-len(obs) // batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda t: 1 + ((lr if lr_end is None else lr_end) / lr - 1) * t / steps
    )
    policy.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(obs), generator=gen).split(batch_size):
            batch = obs[idx], mask[idx], target[idx]
            if augment:
                batch = relabel(*batch, *random_renaming(len(idx), gen))
            loss = _loss(policy, *batch, loss_kind)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            loss_value = float(loss.detach())
    policy.eval()
    return loss_value


def _loss(policy: Any, obs: Any, mask: Any, target: Any, loss_kind: str) -> Any:
    """One batch's loss: the move logits against the labels, plus the value head against how
    winnable the position is (its best move's label)."""
    import torch
    from quadrat_env.agents.networks import scores_afterstates
    from torch import nn

    features = policy.extract_features(obs, policy.pi_features_extractor)
    latent_pi, latent_vf = policy.mlp_extractor(features)
    if scores_afterstates(policy.features_extractor):
        latent_vf = latent_vf.detach()  # the features are the move scores: the value must not pull on them
    # Each legal move's logit learns P(the move still wins | what the player sees): the argmax is
    # then the move a sampling planner would pick with unlimited samples.
    logits = policy.action_net(latent_pi)
    m = mask.float()
    if loss_kind == "softmax":
        share = target * m / (target * m).sum(1, keepdim=True)
        log_p = torch.log_softmax(logits.masked_fill(m == 0, -1e9), dim=1)
        loss = -(share * log_p).sum(1).mean()
    else:
        bce = nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
        loss = (bce * m).sum() / m.sum()
    if loss_kind == "ranked":
        loss = loss + _rank_loss(logits, m, target)
    value = policy.value_net(latent_vf).squeeze(1)
    return loss + 0.5 * ((value - (target * m).amax(1)) ** 2).mean()


def _rank_loss(logits: Any, m: Any, target: Any) -> Any:
    """Cross-entropy of the legal moves' softmax (logits times ``RANK_SCALE``) against the
    softmax of their labels at ``RANK_TEMPERATURE``: the best moves' share is pushed up by how
    much better they are. BCE alone fits each move's level, and a decision's moves often differ by
    far less than that fit's error; this term spends the network on the order within each
    decision, which is what play uses."""
    import torch

    labels = target.masked_fill(m == 0, -1e9)
    wanted = torch.softmax((labels - labels.amax(1, keepdim=True)) / RANK_TEMPERATURE, dim=1)
    log_p = torch.log_softmax((RANK_SCALE * logits).masked_fill(m == 0, -1e9), dim=1)
    return -(wanted * log_p).sum(1).mean()


def _learning_rate(settings: Settings, epoch: float) -> float:
    """The learning rate ``epoch`` epochs into a round: constant, or ``cosine`` from the configured
    rate down to 1% of it at the round's end (each round's new data starts high again)."""
    lr = settings.learning_rate
    if settings.lr_decay == "none":
        return lr
    return lr * (0.01 + 0.99 * 0.5 * (1 + np.cos(np.pi * epoch / settings.epochs)))


def validate(model: Any, env_id: str = ENV_ID) -> float:
    summary, _ = evaluate(env_id, SB3Agent(model, "maskable_ppo", masked=True), VALIDATION_SEEDS,
                          progress=False, n_envs=64)  # fmt: skip
    return summary.win_rate


def _new_model(settings: Settings) -> Any:
    import torch
    from quadrat_env.agents.networks import policy_kwargs_with, scores_as_logits
    from quadrat_env.agents.zudecken.features import AFTER_CHANNELS, AFTER_HIDDEN, AFTER_LAYERS
    from sb3_contrib import MaskablePPO

    torch.manual_seed(settings.seed)
    torch.set_num_threads(1)
    policy_kwargs = policy_kwargs_with(settings.features, {"net_arch": settings.net_arch})
    sizes = {"channels": settings.channels, "layers": settings.layers, "hidden": settings.hidden}
    defaults = {"channels": AFTER_CHANNELS, "layers": AFTER_LAYERS, "hidden": AFTER_HIDDEN}
    if settings.features == SCORES and sizes != defaults:
        policy_kwargs["features_extractor_kwargs"] = sizes  # the defaults' files stay as they were
    model = MaskablePPO("MlpPolicy", gym.make(settings.env_id), seed=settings.seed, device="cpu",
                        policy_kwargs=policy_kwargs)  # fmt: skip
    if settings.features == SCORES:
        scores_as_logits(model.policy)
    return model


def run(settings: Settings, run_dir: Path, jobs: int = 1, ray: str | None = None,
        resume: bool = False) -> dict[str, Any]:  # fmt: skip
    """Train; a checkpoint after each validation (network weights, the rounds so far; each round's
    labels are kept once, in ``labels/``). ``resume``: go on from the last one, to the same result."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        atomic_write(run_dir / "config.yml", yaml.safe_dump(settings.config(), sort_keys=False))
    model = _new_model(settings)
    at = checkpoint.resume_imitation(run_dir / CHECKPOINT, model, settings) if resume else None
    data: dict[str, np.ndarray] = {}
    rounds, best = (at["rounds"], at["best"]) if at else ([], -1.0)
    first, start_epoch = (at["round"], at["epoch"]) if at else (0, 0)
    start = time.perf_counter() - (rounds[-1]["seconds"] if rounds else 0.0)
    for r in range(first, settings.rounds):
        data = _with_round_labels(data, r, model, settings, run_dir, jobs, ray, resume and r == first)
        if at is None and r == first:  # the labels are the first checkpoint: a stop before the first
            checkpoint.save_imitation(run_dir / CHECKPOINT, model, settings, rounds, best, r, 0)  # validation
        for e in range(start_epoch if r == first else 0, settings.epochs, settings.eval_every):
            todo = min(settings.eval_every, settings.epochs - e)
            lr = [_learning_rate(settings, x) for x in (e, e + todo)]
            loss = fit(model, data, todo, settings.batch_size, lr[0], settings.seed + 1000 * r + e,
                       settings.loss, settings.augment, lr[1])  # fmt: skip
            win_rate = validate(model, settings.env_id)
            seconds = round(time.perf_counter() - start, 1)
            rounds.append({"round": r, "epochs": e + todo, "samples": len(data["obs"]), "loss": loss,
                           "val_win_rate": win_rate, "seconds": seconds})  # fmt: skip
            print(f"round {r}, epoch {e + todo}: {len(data['obs'])} labelled decisions, loss {loss:.3f}, "
                  f"validation win rate {win_rate:.2%} ({rounds[-1]['seconds']}s)", flush=True)  # fmt: skip
            if win_rate > best:
                best = win_rate
                save_model(model, run_dir / "model.zip")
            done = e + todo == settings.epochs
            checkpoint.save_imitation(run_dir / CHECKPOINT, model, settings, rounds, best, r + done,
                                      0 if done else e + todo)  # fmt: skip
    (run_dir / "behaviour.zip").unlink(missing_ok=True)
    atomic_write(
        run_dir / "config.yml", yaml.safe_dump(settings.config(), sort_keys=False)
    )  # with labels_made
    atomic_write(run_dir / "rounds.json", json.dumps(rounds, indent=2))
    finish_run(run_dir, CHECKPOINT)  # whole (no half-written copies): model.zip and rounds.json
    return {"best_val_win_rate": best, "seconds": round(time.perf_counter() - start, 1), "rounds": rounds}


def _with_round_labels(data: dict, r: int, model: Any, settings: Settings, run_dir: Path, jobs: int,
                       ray: str | None, resuming: bool) -> dict:  # fmt: skip
    """``data`` with round ``r``'s labels added: collected, or read back from ``labels/`` (all rounds
    up to ``r`` when resuming)."""
    folder = run_dir / "labels"
    if resuming:  # the earlier rounds' labels, as they were collected
        for k in range(r):
            data = joined(data, read_labels(folder / f"round-{k}.npz"))
    if (folder / f"round-{r}.npz").is_file() and resuming:
        return joined(data, read_labels(folder / f"round-{r}.npz"))
    per_round = settings.deals_per_round
    deals = seeds.imitation(settings.seed, settings.rounds * per_round)  # training deals differ per seed
    todo = deals[r * per_round : (r + 1) * per_round]
    behaviour = None
    if r == 0 and settings.behaviour:  # round 0 plays a given policy, not the winning moves
        behaviour = Path(settings.behaviour).read_bytes()
    if r > 0:  # the workers get the current network as its saved file's bytes (no shared disk needed)
        save_model(model, run_dir / "behaviour.zip")
        behaviour = (run_dir / "behaviour.zip").read_bytes()
    how = settings.collection(first=behaviour is None)
    if r == 0 and settings.labels:  # the first round's labels, shared between training seeds
        new, settings.labels_made = shared_labels(Path(settings.labels), todo, how, settings.seed, jobs, ray)
    else:
        new = collect_parallel(behaviour, todo, how, (settings.seed, r), jobs, ray)
    folder.mkdir(exist_ok=True)
    save_labels(folder / f"round-{r}.npz", new)
    return joined(data, new)


def _parser() -> argparse.ArgumentParser:
    """The command line: every ``Settings`` option, then how the run is carried out."""
    p = argparse.ArgumentParser(description=description_of(__doc__))
    for f in fields(Settings):
        if "help" not in f.metadata:
            continue
        extra = {k: v for k, v in f.metadata.items() if k not in ("help", "flag")}
        flag = f.metadata.get("flag", "--" + f.name.replace("_", "-"))
        if f.default is False:
            p.add_argument(flag, dest=f.name, action="store_true", help=f.metadata["help"])
        else:
            # the annotation's first word: int, float, str, or list (of ints: net_arch)
            kind = {"int": int, "float": float, "list": int}.get(str(f.type).split("[")[0].split(" ")[0], str)
            p.add_argument(flag, dest=f.name, type=kind, default=f.default, help=f.metadata["help"], **extra)
    p.add_argument("--jobs", type=int, default=2, help="label-collecting processes (no effect on results)")
    p.add_argument("--out", type=Path, default=Path("runs/imitate"))
    again = p.add_mutually_exclusive_group()
    again.add_argument("--overwrite", action="store_true", help="replace an earlier run (kept to the end)")
    again.add_argument("--resume", action="store_true", help="continue the run in the run folder from its "
                       "last checkpoint (same arguments)")  # fmt: skip
    add_ray_argument(p)
    return p


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings of a command line (checked: ``ValueError`` names the first bad one)."""
    settings = Settings(**{f.name: getattr(args, f.name) for f in fields(Settings) if "help" in f.metadata})
    if args.jobs < 1:
        raise ValueError("--rounds, --deals-per-round, --epochs, --eval-every and --jobs must be >= 1")
    settings.check()
    if settings.behaviour:
        from quadrat_env.agents.safe_load import load_model

        try:  # an untrusted file: loaded without unpickling, and refused before any work
            load_model(Path(settings.behaviour), "maskable_ppo", settings.env_id)
        except Exception as err:  # noqa: BLE001 - any reason it cannot play is one line
            raise ValueError(f"--behaviour {settings.behaviour}: {err}") from None
    return settings


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    check_ray_argument(p, args)
    run_dir = args.out / f"{short_name(args.env_id)}-seed{args.seed}"
    with contextlib.ExitStack() as held:  # the run folder, held by this run until it ends
        try:
            settings = settings_from(args)
            open_run_dir(run_dir, settings.config(), CHECKPOINT, args.resume, args.overwrite, held,
                         finished="rounds.json")  # fmt: skip
        except ValueError as err:
            p.error(str(err))
        return _run(settings, run_dir, args)


def _run(settings: Settings, run_dir: Path, args: argparse.Namespace) -> int:
    """The run, and how it ended: its exit status."""
    try:
        with signals_as_exceptions():
            result = run(settings, run_dir, jobs=args.jobs, ray=args.ray, resume=args.resume)
    except RunInterrupted as stop:
        how = (
            "the last checkpoint is kept; continue with the same command and --resume"
            if (run_dir / CHECKPOINT).is_file()
            else "no checkpoint yet; start it again with --overwrite"
        )
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
