"""Env-steps per second, all measured in one run on this machine: single envs, vector envs, greedy, PPO.

    python -m quadrat_env.experiments.throughput                # about twelve minutes on 2 cores
    python -m quadrat_env.experiments.throughput --update-docs

Measures, with random legal actions unless said otherwise (the action choice is inside the timing):

* ``gym.make`` single env for each game, and ``Blackjack-v1`` the same way as the reference;
* ``gym.make_vec(id, N, vectorization_mode="sync")`` and the native batched env (``gym.make_vec(id, N)``)
  at N = 64, 1024 and 4096;
* greedy play of 100,000 deals of each ID on the batched env (4,000 envs x 25 deals);
* training steps/s of MaskablePPO and PPO on every ID: the YAML defaults (the batched env through the
  SB3 adapter, large batches) against the 8-env DummyVecEnv configuration the committed models used;
* the JAX rules of every ID (where jax is installed; ``--jax only`` measures just them, as on a GPU
  machine: ``--jax only --jax-sizes 4096,1048576``), written with the device's name to
  ``throughput_jax_<cpu|gpu>.{json,md}``.

Machines are noisy, so the table gives ratios measured side by side, not just absolute numbers.
Writes ``<out>/throughput.json`` and ``<out>/throughput.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from quadrat_env.agents.greedy import GreedyAgent
from quadrat_env.experiments.common.jax_speed import (
    jax_device,
    jax_rows,
    jax_table,
    spread_pairs,
    timed,
    vector_env,
)
from quadrat_env.experiments.common.pages import docs_page, write_tables

import quadrat_env
from quadrat_env.arguments import description_of
from quadrat_env.extras import command

SIZES = (64, 1024, 4096)
PAGE = Path("docs") / "speed.md"  # --update-docs, from the repository root
MARKERS = ("<!-- throughput:start -->", "<!-- throughput:end -->")


def single_env(env_id: str, seconds: float) -> float:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    masked = "action_mask" in info
    n = int(env.action_space.n)
    state = {"info": info}

    def chunk() -> int:
        info = state["info"]
        for _ in range(1000):
            if masked:
                legal = np.flatnonzero(info["action_mask"])
                action = legal[rng.integers(len(legal))]
            else:  # Blackjack: every action is legal
                action = rng.integers(n)
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                _, info = env.reset()
        state["info"] = info
        return 1000

    return timed(chunk, seconds)


def greedy_deals(env_id: str, deals: int = 100_000, num_envs: int = 4000) -> dict[str, float]:
    """Greedy play of ``deals`` deals of ``env_id``, ``deals / num_envs`` per env; time and win rate."""
    per_env = deals // num_envs
    venv = gym.make_vec(env_id, num_envs=num_envs)
    greedy = GreedyAgent(env_id)
    start = time.perf_counter()
    _, info = venv.reset(seed=0)
    finished = np.zeros(num_envs, dtype=np.int64)
    wins = steps = 0
    while (finished < per_env).any():
        actions = greedy.act_batch(info["action_mask"])
        _, _, terminated, truncated, info = venv.step(actions)
        counting = finished < per_env  # an env past its quota plays on, uncounted
        steps += int(counting.sum())
        ended = (terminated | truncated) & counting
        wins += int((info["won"] & ended).sum())
        finished += ended
    seconds = time.perf_counter() - start
    total = per_env * num_envs
    return {"deals": total, "seconds": seconds, "win_rate": wins / total, "steps": steps}


#: The configuration the committed models were trained with: SB3's DummyVecEnv over 8 single envs.
DUMMY8 = {"vec_env": "dummy", "n_envs": 8, "n_steps": 256, "batch_size": 512, "n_epochs": 4}


def ppo_steps(env_id: str, algo: str, timesteps: int, overrides: dict[str, Any]) -> float:
    """Training steps/s of ``algo`` on ``env_id``: the YAML's config, with ``overrides``."""
    import tempfile

    from quadrat_env.experiments.train import Settings, load_hyperparams, train

    config = {"env_id": env_id, "algo": algo, "seed": 0, **load_hyperparams(algo, env_id), **overrides}
    # at least two rollouts, so the measurement includes the learner's updates
    config["n_timesteps"] = max(timesteps, 2 * config["n_envs"] * config["n_steps"])
    with tempfile.TemporaryDirectory() as tmp:
        return float(train(Settings.from_config(config), Path(tmp), progress=False)["steps_per_second"])


def cpu_rows(seconds: float, ppo_timesteps: int) -> list[tuple[str, Callable[[], Any]]]:
    """The measurements of the compiled envs and of training (everything but JAX)."""
    tasks: list[tuple[str, Callable[[], Any]]] = []
    for env_id in (*quadrat_env.MAIN_IDS, "Blackjack-v1"):
        tasks.append((f"single {env_id}", lambda e=env_id: single_env(e, seconds)))
    for env_id in quadrat_env.MAIN_IDS:
        for n in SIZES:
            for mode in ("sync", None):
                label = f"{'sync' if mode else 'native'} {env_id} x{n}"
                tasks.append((label, lambda e=env_id, n=n, m=mode: vector_env(e, n, m, seconds)))
    for env_id in quadrat_env.MAIN_IDS:
        tasks.append((f"greedy 100k {env_id}", lambda e=env_id: greedy_deals(e)))
    if ppo_timesteps:
        for env_id in quadrat_env.MAIN_IDS:
            for algo in ("maskable_ppo", "ppo"):
                for config, overrides in (("default", {}), ("dummy8", DUMMY8)):
                    tasks.append(
                        (
                            f"train {algo} {env_id} {config}",
                            lambda e=env_id, a=algo, o=overrides: ppo_steps(e, a, ppo_timesteps, o),
                        )
                    )
    return tasks


def run(tasks: list[tuple[str, Callable[[], Any]]], progress: bool = True) -> dict[str, Any]:
    from tqdm.auto import tqdm

    results: dict[str, Any] = {}
    bar = tqdm(tasks, unit="task", disable=None if progress else True)
    for label, task in bar:
        bar.set_description(label)
        results[label] = task()
    return results


def table(r: dict[str, Any]) -> str:
    bj, mid = r["single Blackjack-v1"], SIZES[1]
    head = " | ".join(f"native x{n}" for n in SIZES)
    lines = [f"| env | single env steps/s | x Blackjack-v1 | {head} | native / sync x{mid} |",
             "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for env_id in quadrat_env.MAIN_IDS:
        one = r[f"single {env_id}"]
        native = [r[f"native {env_id} x{n}"] for n in SIZES]
        ratio = r[f"native {env_id} x{mid}"] / r[f"sync {env_id} x{mid}"]
        lines.append(f"| {env_id.split('/')[1]} | {one:,.0f} | {one / bj:.2f} | "
                     + " | ".join(f"{v:,.0f}" for v in native)
                     + f" | **{ratio:.0f}** |")  # fmt: skip
    lines.append(f"| Blackjack-v1 (reference) | {bj:,.0f} | 1.00 | | | | |")
    lines += ["", "| sync vector env | " + " | ".join(f"x{n}" for n in SIZES) + " |", "|---|---:|---:|---:|"]
    for env_id in quadrat_env.MAIN_IDS:
        lines.append(
            f"| {env_id.split('/')[1]} | "
            + " | ".join(f"{r[f'sync {env_id} x{n}']:,.0f}" for n in SIZES)
            + " |"
        )
    lines += ["", "| greedy on the batched env | deals | seconds | env-steps/s | win rate |",
              "|---|---:|---:|---:|---:|"]  # fmt: skip
    for env_id in quadrat_env.MAIN_IDS:
        g = r[f"greedy 100k {env_id}"]
        lines.append(f"| {env_id.split('/')[1]} | {g['deals']:,} | **{g['seconds']:.2f}** | "
                     f"{g['steps'] / g['seconds']:,.0f} | {g['win_rate']:.2%} |")  # fmt: skip
    if any(key.startswith("train ") for key in r):
        lines += [
            "",
            "Training steps/s (SB3 / sb3-contrib, 2 cores): the YAML defaults (batched env, "
            "1,024 envs x 16 steps, batch 4,096, 4 epochs) against the configuration the committed "
            "models were trained with (DummyVecEnv, 8 envs x 256 steps, batch 512, 4 epochs), "
            "in the same run:",
            "",
            "| env | algorithm | default | DummyVecEnv x8 | speed-up |",
            "|---|---|---:|---:|---:|",
        ]
        for env_id in quadrat_env.MAIN_IDS:
            for algo in ("maskable_ppo", "ppo"):
                new, old = r[f"train {algo} {env_id} default"], r[f"train {algo} {env_id} dummy8"]
                name = env_id.split("/")[1]
                lines.append(f"| {name} | {algo} | {new:,.0f} | {old:,.0f} | **{new / old:.1f}x** |")
    return "\n".join(lines) + "\n"


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--seconds", type=float, default=1.5, help="time per env-steps measurement")
    p.add_argument("--ppo-timesteps", type=int, default=65536, help="per training measurement; 0 skips it")
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument(
        "--update-docs", action="store_true", help=f"write the table into {PAGE} (repository root)"
    )
    p.add_argument("--jax", choices=("also", "only", "off"), default="also",
                   help="the JAX rules too (default, where jax is installed), only them, or not")  # fmt: skip
    p.add_argument("--jax-sizes", type=_sizes, default=None,
                   help="envs a batch for JAX, comma-separated (default 4096,65536 on a CPU, "
                        "4096,65536,1048576,4194304 on a GPU)")  # fmt: skip
    args = p.parse_args(argv)
    if args.update_docs:
        docs_page(p, PAGE)
    if not args.seconds > 0 or args.ppo_timesteps < 0:
        p.error("--seconds must be > 0 and --ppo-timesteps >= 0")
    if args.jax != "off" and not _has_jax(args.jax == "only"):
        print("throughput: jax is not installed: the JAX rules are not measured (the 'jax' extra)")
        args.jax = "off"
    if args.jax != "only":
        results = run(cpu_rows(args.seconds, args.ppo_timesteps))
        write_tables(args.out, "throughput", results, table(results), PAGE if args.update_docs else None,
                     "python -m quadrat_env.experiments.throughput --update-docs", MARKERS)  # fmt: skip
    if args.jax != "off":
        write_jax(args, argv)
    return 0


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers separated by commas, got {text!r}"
        ) from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"every size must be >= 1, got {text!r}")
    return sizes


def _has_jax(required: bool) -> bool:
    try:
        import jax  # noqa: F401
    except ImportError:
        if required:  # --jax only: the command's one line naming the extra
            raise
        return False
    return True


def write_jax(args: argparse.Namespace, argv: list[str] | None) -> None:
    """The JAX measurements into ``<out>/throughput_jax_<platform>.{json,md}`` (and the docs)."""
    import jax

    platform = jax.devices()[0].platform
    sizes = args.jax_sizes or ((4096, 65536) if platform == "cpu" else (4096, 65536, 1 << 20, 1 << 22))
    results = {
        "jax device": jax_device(),
        "jax version": jax.__version__,
        **spread_pairs(run(jax_rows(sizes, args.seconds))),
    }
    command = "python -m quadrat_env.experiments.throughput " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    markers = (f"<!-- throughput-jax-{platform}:start -->", f"<!-- throughput-jax-{platform}:end -->")
    page = PAGE if args.update_docs and markers[0] in PAGE.read_text() else None
    write_tables(args.out, f"throughput_jax_{platform}", results, jax_table(results), page, command, markers)


if __name__ == "__main__":
    sys.exit(main())
