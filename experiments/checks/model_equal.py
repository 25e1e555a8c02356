"""Does a JAX learner's exported model play as its JAX policy? Decision by decision, same deals.

    python -m quadrat_env.experiments.checks.model_equal runs/ppo_jax/Zudecken32-seed1 --deals 10000

For a finished ``td_jax`` or ``ppo_jax`` run: the compiled env with the run's ``model.zip`` (through
SB3, as the benchmark plays it) and the JAX env with its ``weights.npz`` (through the learner's own
scoring) start from the same held-out decks, and both follow the compiled side's moves, so they see
the same states: at every decision the observations must agree bit for bit. Where the two sides'
best moves differ, the tool records how far apart each side scored its two best legal moves (JAX:
the scores; torch: the log-probabilities, the same differences), beside the median gap at the
decisions where they agree. A gap many times smaller than that is a near tie that float rounding
breaks either way (the network scores mirror-image afterstates alike); a gap of the usual size
would be a different policy. Then each side plays the deals on its own: the JAX run's
``test_win_rate`` way, and the benchmark's (1,024 deals a batch). Writes ``--out`` as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from quadrat_env import seeds
from quadrat_env.arguments import description_of
from quadrat_env.extras import command, importing
from quadrat_env.files import atomic_write

with importing(__name__):  # the 'jax' and 'train' extras: one line naming them, not a traceback
    import gymnasium as gym
    import jax
    import jax.numpy as jnp
    import yaml
    from quadrat_env.agents import SB3Agent
    from quadrat_env.agents.evaluate import evaluate
    from quadrat_env.experiments import ppo_jax, td_jax
    from quadrat_env.experiments.benchmark import MODEL_BATCH
    from quadrat_env.experiments.common import checkpoint
    from quadrat_env.experiments.common.jax_learners import run as jax_run

LEARNERS = {ppo_jax.METHOD: ppo_jax.PPO_JAX, td_jax.METHOD: td_jax.TD_JAX}
BATCH = MODEL_BATCH  # deals side by side, as the benchmark plays a model


def load_run(run: Path) -> tuple[Any, Any, dict[str, jax.Array]]:
    """The run's settings, its learner's jitted core and its trained weights."""
    config = yaml.safe_load((run / "config.yml").read_text()) if (run / "config.yml").is_file() else None
    if not isinstance(config, dict) or config.get("method") not in LEARNERS:
        raise ValueError(f"{run} is not a td_jax or ppo_jax run (its config.yml names no such method)")
    if not (run / "model.zip").is_file() or not (run / jax_run.WEIGHTS).is_file():
        raise ValueError(f"{run} has no model.zip and {jax_run.WEIGHTS}: not a finished run")
    learner = LEARNERS[config["method"]]
    meta, arrays = checkpoint.load(run / jax_run.WEIGHTS)
    names = {f.name for f in dataclasses.fields(learner.settings)}
    # an early td_jax run's config.yml left out its network; its weights' header names it
    network = {"features": meta.get("features", meta.get("network"))} if "network" in meta else {}
    try:
        settings = learner.settings(**{k: v for k, v in {**network, **config}.items() if k in names})
    except (TypeError, ValueError) as err:
        raise ValueError(f"{run}/config.yml: {err}") from None
    return settings, learner.core(settings), {k: jnp.asarray(v) for k, v in arrays.items()}


def jax_scores(core: Any, params: dict[str, jax.Array]) -> Any:
    """The JAX policy's legal moves' scores of a batch of states (its argmax is its move)."""
    return jax.jit(lambda env: core.move_scores(params, env))


def gap(scores: np.ndarray, legal: np.ndarray) -> float | None:
    """How far apart the two best legal scores are (none with one legal move)."""
    top = np.sort(scores[legal])[-2:]
    return float(top[-1] - top[0]) if len(top) == 2 else None


def lockstep(settings: Any, core: Any, params: Any, agent: Any, deals: range) -> dict[str, Any]:
    """Both sides on the same states (the compiled side's moves); where their best moves part."""
    import torch as th

    score, step = jax_scores(core, params), jax.jit(jax.vmap(core.core.step))
    # jitted: called eagerly, each of their ops would compile on its own
    observe, deal = jax.jit(jax.vmap(core.core.observe)), jax.jit(jax.vmap(core.core.init_deck))
    envs = [gym.make(settings.env_id, **settings.env_kwargs) for _ in range(len(deals))]
    obs = np.stack([e.reset(seed=s)[0] for e, s in zip(envs, deals, strict=True)])
    state = deal(jnp.asarray(jax_run.decks(settings, deals)))
    alive, decisions, parted, agreed, deals_parted = np.ones(len(deals), bool), 0, [], [], set()
    while alive.any():
        if not (np.asarray(observe(state))[alive] == obs[alive]).all():
            raise AssertionError("the JAX env's observation differs from the compiled env's")
        masks = np.stack([e.unwrapped.action_masks() for e in envs])
        mine = np.asarray(score(state))
        with th.no_grad():
            dist = agent.model.policy.get_distribution(
                agent.model.policy.obs_to_tensor(obs)[0], action_masks=masks
            )
            theirs = dist.distribution.logits.cpu().numpy()  # log-probabilities: the logits' differences
        moves = theirs.argmax(1)
        for i in np.flatnonzero(alive):
            gaps, parts = (gap(mine[i], masks[i]), gap(theirs[i], masks[i])), mine[i].argmax() != moves[i]
            if gaps[0] is not None:
                (parted if parts else agreed).append(gaps)
                deals_parted.update([int(i)] if parts else [])
        decisions += int(alive.sum())
        for i in np.flatnonzero(alive):
            obs[i], _, terminated, truncated, _ = envs[i].step(int(moves[i]))
            alive[i] = not (terminated or truncated)
        state = step(state, jnp.asarray(moves))
    return {"decisions": decisions, "parted_decisions": len(parted), "parted_deals": len(deals_parted),
            "largest_gap_jax": max((p[0] for p in parted), default=0.0),
            "largest_gap_torch": max((p[1] for p in parted), default=0.0),
            "agreed_gaps_jax": [p[0] for p in agreed]}  # fmt: skip


def compare(run: Path, n_deals: int) -> dict[str, Any]:
    settings, core, params = load_run(run)
    agent = SB3Agent.load(run / "model.zip", None, settings.env_id)
    deals = seeds.BENCHMARK.take(n_deals)
    out: dict[str, Any] = {"run": str(run), "env_id": settings.env_id, "deals": n_deals}
    for at in range(0, n_deals, BATCH):
        part = lockstep(settings, core, params, agent, deals[at : at + BATCH])
        for key, value in part.items():
            out[key] = (
                max(out.get(key, 0.0), value)
                if key.startswith("largest")
                else out.get(key, type(value)()) + value
            )
    # the scale of the scores' differences where the two sides agree: a parting gap far below it is a tie
    out["median_gap_jax"] = float(np.median(out.pop("agreed_gaps_jax") or [0.0]))
    decks = jax_run.decks(settings, deals)
    out["wins_jax"] = sum(int(np.asarray(core.play(params, decks[at : at + BATCH])).sum())
                          for at in range(0, n_deals, BATCH))  # fmt: skip
    out["wins_compiled"] = evaluate(settings.env_id, agent, deals, progress=False, n_envs=BATCH)[0].wins
    return out


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("runs", nargs="+", type=Path, help="finished td_jax or ppo_jax run folders")
    p.add_argument("--deals", type=int, default=1000, help="held-out deals (the benchmark's first N)")
    p.add_argument("--out", type=Path, help="write the results here (JSON)")
    args = p.parse_args(argv)
    try:
        seeds.BENCHMARK.take(args.deals)
        for run in args.runs:
            load_run(run)
    except ValueError as err:
        p.error(str(err))
    results = []
    for run in args.runs:
        r = compare(run, args.deals)
        results.append(r)
        print(f"{run}: {r['parted_decisions']} of {r['decisions']:,} decisions part ({r['parted_deals']} "
              f"deals), the two best moves there at most {r['largest_gap_jax']:.3g} apart (JAX; "
              f"{r['largest_gap_torch']:.3g} torch; elsewhere the median gap {r['median_gap_jax']:.3g}); "
              f"won {r['wins_jax']} (JAX), {r['wins_compiled']} (compiled)")  # fmt: skip
    if args.out:
        atomic_write(args.out, json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
