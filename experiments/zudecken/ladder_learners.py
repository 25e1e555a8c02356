"""The ladder's learners: each trains a seed on a rung in its own process (its own command, which
checkpoints and resumes), then its model plays the rung's held-out deals.

* ``td``: afterstate TD(0) from the reward (``quadrat_env.experiments.td``, ``td.yml``'s budget for
  the rung);
* ``imitation``: the afterstate network imitating the exact optimal values
  (``quadrat_env.experiments.zudecken.imitate``) with the settings of the committed 32-card models
  (``experiments/models/configs/Zudecken32-maskable_ppo-seed*.yml``): rungs of up to 10 ranks,
  whose exact tables the optimal agent solves;
* ``ppo``: PPO from the reward with an MLP on the observation (``quadrat_env.experiments.ppo_jax``,
  ``ppo_jax_cpu.yml``'s settings and budget for the rung).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from quadrat_env.agents import evaluate

from quadrat_env import seeds
from quadrat_env.registry import short_name

#: Each learner's module, the file its finished run holds, how it learned (the tables' words) and
#: the folder of its runs in the work folder.
LEARNERS = {
    "td": ("quadrat_env.experiments.td", "summary.json", "the reward", "td"),
    "imitation": ("quadrat_env.experiments.zudecken.imitate", "rounds.json", "exact values", "imitation"),
    "ppo": ("quadrat_env.experiments.ppo_jax", "summary.json", "the reward", "ppo_jax"),
}
#: The PPO runs' settings file (shipped): the small network and step size that learn on a CPU.
PPO_SETTINGS = "ppo_jax_cpu"
#: The committed 32-card imitation's settings (its configs), for every rung.
IMITATION_FLAGS = ("--rounds", "1", "--epochs", "8", "--eval-every", "2", "--loss", "ranked",
                   "--lr-decay", "cosine", "--channels", "64", "--jobs", "1")  # fmt: skip
IMITATION_DEALS = 60_000
GRACE_S = 30.0  # how long a stopped ladder lets its training processes reach their checkpoint


def run_dir(work: Path, learner: str, env_id: str, seed: int) -> Path:
    return work / LEARNERS[learner][3] / f"{short_name(env_id)}-seed{seed}"


def finished(work: Path, learner: str, env_id: str, seed: int) -> bool:
    folder = run_dir(work, learner, env_id, seed)
    return (folder / LEARNERS[learner][1]).is_file() and (folder / "model.zip").is_file()


def command(learner: str, env_id: str, seed: int, work: Path, moves: int | None = None,
            deals: int = IMITATION_DEALS) -> list[str]:  # fmt: skip
    """The learner's command for the run (TD(0), PPO: ``moves`` a seed if given; imitation:
    ``deals`` labelled): ``--resume`` from its checkpoint, ``--overwrite`` of a run that stopped
    before its first checkpoint (nothing finished is there to lose)."""
    folder = run_dir(work, learner, env_id, seed)
    cmd = [sys.executable, "-m", LEARNERS[learner][0], "--env", env_id, "--seed", str(seed)]
    if learner in ("td", "ppo"):
        cmd += ["--out", str(work), "--no-progress", *(["--moves", str(moves)] if moves else [])]
        if learner == "ppo":  # its model plays the held-out deals in cell(), not in the run too
            cmd += ["--hyperparams", PPO_SETTINGS, "--test-deals", "0"]
    else:
        cmd += ["--out", str(work / learner), "--deals-per-round", str(deals), *IMITATION_FLAGS]
    if (folder / "checkpoint.npz").is_file():
        return [*cmd, "--resume"]
    return [*cmd, "--overwrite"] if folder.exists() else cmd


def cell_of(row: dict[str, Any], ranks: int, player: str, seed: int | None, source: str) -> dict[str, Any]:
    """A ladder cell from a summary row (``evaluate``'s, or the benchmark's): what the tables read."""
    keep = ("env_id", "episodes", "wins", "win_rate", "ci_low", "ci_high", "seconds")
    cell = {"ranks": ranks, "player": player, **{k: row[k] for k in keep}, "source": source}
    if seed is not None:
        cell["seed"] = int(seed)
    return cell


def budget(learner: str, env_id: str, args: argparse.Namespace) -> int:
    """A run's budget as the ladder trains it now: TD(0)'s moves (``--td-moves``, else ``td.yml``'s
    for the rung), PPO's (``--ppo-moves``, else ``ppo_jax_cpu.yml``'s), imitation's labelled deals
    (``--imitation-deals``)."""
    if learner == "imitation":
        return args.imitation_deals
    if learner == "ppo":
        import yaml

        path = Path(__file__).parents[1] / "hyperparams" / f"{PPO_SETTINGS}.yml"  # not ppo_jax: no JAX
        return args.ppo_moves or yaml.safe_load(path.read_text(encoding="utf-8"))[env_id]["n_moves"]
    from quadrat_env.experiments.td import load_settings

    return args.td_moves or load_settings(env_id, 0).n_moves


def moves_of(learner: str, args: argparse.Namespace) -> int | None:
    """``--td-moves`` or ``--ppo-moves`` for the learner's runs (None: its settings file's)."""
    return args.ppo_moves if learner == "ppo" else args.td_moves


def cell_budget(cell: dict[str, Any]) -> int | None:
    """The budget a kept cell's run had (None for a player that does not learn)."""
    return cell.get("moves", cell.get("deals_labelled"))


def cell(learner: str, env_id: str, ranks: int, seed: int, args: argparse.Namespace,
         folder: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """A finished run's model (the ladder's own run, or ``folder``'s) on the rung's held-out deals,
    with how it learned and its budget."""
    import torch
    import yaml
    from quadrat_env.agents.sb3_agent import SB3Agent
    from quadrat_env.experiments.benchmark import MODEL_BATCH  # the batch every network's table plays

    torch.set_num_threads(1)
    folder = folder or run_dir(args.work, learner, env_id, seed)
    agent = SB3Agent.load(folder / "model.zip", "maskable_ppo", env_id, name=learner)
    summary, _ = evaluate(env_id, agent, seeds.BENCHMARK.take(args.deals), progress=not args.no_progress,
                          n_envs=MODEL_BATCH)  # fmt: skip
    config = yaml.safe_load((folder / "config.yml").read_text(encoding="utf-8"))
    out = cell_of(summary.as_dict(), ranks, learner, seed, "ladder")
    network = "mlp " + "x".join(map(str, config["hidden"])) if learner == "ppo" else "zudecken-afterstates"
    out.update({"learned_from": LEARNERS[learner][2], "network": network, "run": str(folder)})
    if learner in ("td", "ppo"):
        out["moves"] = config["n_moves"]
    else:
        out["deals_labelled"] = config["deals_per_round"] * config["rounds"]
    return out


def train_all(todo: list[tuple[str, int, str, int]], args: argparse.Namespace,
              keep: Any) -> list[str]:  # fmt: skip
    """Train the runs of ``todo`` (learner, ranks, env ID, seed) not yet finished, ``--jobs`` at
    once (a process each, one core); each finished run's cell goes to ``keep(learner, env_id, seed,
    cell)`` as it ends. Returns the failures."""
    waiting, running, failed = list(todo), [], []
    try:
        while waiting or running:
            while waiting and len(running) < args.jobs:
                learner, ranks, env_id, seed = job = waiting.pop(0)
                proc = None
                if not finished(args.work, learner, env_id, seed):
                    print(f"ladder: training {learner} on {short_name(env_id)}, seed {seed}", flush=True)
                    moves, deals = moves_of(learner, args), args.imitation_deals
                    proc = subprocess.Popen(command(learner, env_id, seed, args.work, moves, deals))
                running.append((job, proc))
            time.sleep(0.2)  # a process's end is seen at once (a poll costs nothing beside training)
            for job, proc in [j for j in running if j[1] is None or j[1].poll() is not None]:
                running.remove((job, proc))
                learner, ranks, env_id, seed = job
                if proc is not None and proc.returncode != 0:
                    failed.append(f"{learner} on {short_name(env_id)} seed {seed}: exited {proc.returncode}")
                    continue
                keep(learner, env_id, seed, cell(learner, env_id, ranks, seed, args))
    finally:  # a stop (or a failure) stops the training processes: each checkpoints, then ends
        _stop([proc for _, proc in running if proc is not None])
    return failed


def _stop(procs: list[subprocess.Popen]) -> None:
    """Stop training processes as Ctrl-C does: a terminal's Ctrl-C reached them already (they stop
    at their next checkpoint), so each gets SIGINT only if it still runs after a grace period (a
    second SIGINT would stop it at once, before its checkpoint); SIGTERM to the ladder alone does
    not reach them, so there they get their one SIGINT."""
    deadline = time.monotonic() + GRACE_S
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            proc.wait()
