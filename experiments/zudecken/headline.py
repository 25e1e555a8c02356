"""The Zudecken headline: each player's win rate beside the exact optimum where known (the benchmark
page's table) and its share of the optimum (the README's figure).

Every figure has its spread beside it: a player's 95% Wilson interval over the deals; for a learned
player, its training seeds' interquartile mean with a 95% stratified bootstrap interval (rliable,
as every published row of seeds), their number and range (one seed: said so, its Wilson interval).

The benchmark (``--update-docs``) asks every study for its README sections
(``quadrat_env.experiments.common.studies.readme_sections``); this is Zudecken's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from quadrat_env.registry import short_name as env_name

HEADLINE = ("<!-- headline:start -->", "<!-- headline:end -->")  # the README's figure and its words
TABLE = ("<!-- zudecken:start -->", "<!-- zudecken:end -->")  # the benchmark page's table
IDS = ("quadrat_env/Zudecken-v0", "quadrat_env/Zudecken32-v0")
#: The Zudecken players, best last: agents by name, and learned agents by (kind, what they learned
#: from) -> label. Only reinforcement learning learns from the reward (sparse unless the label says
#: dense: a share for each card placed as well); its network is the one
#: the row names (the afterstate network builds in the game's suit and rank structure).
PLAYERS: dict[str | tuple[str, str], str] = {
    "random": "random (uniform over legal moves)",
    "greedy": "greedy (largest group)",
    ("ppo", "the reward"): "PPO from the reward (MLP on the observation)",
    ("ppo", "the dense reward"): "PPO from the dense reward (MLP on the observation)",
    ("ppo_jax", "the reward"): "PPO from the reward in JAX (MLP on the observation)",
    ("ppo_jax_afterstates", "the reward"): "PPO from the reward in JAX (afterstate network as policy)",
    ("maskable_ppo", "the reward"): "MaskablePPO from the reward",
    ("rl", "the reward"): "afterstate TD(0) from the reward (afterstate network)",
    ("td_ppo", "the reward"): "MaskablePPO from the reward, started from the TD(0) network",
    (
        "maskable_ppo",
        "a clairvoyant solver's labels",
    ): "afterstate network imitating a clairvoyant solver's labels",
    ("maskable_ppo", "exact values"): "afterstate network imitating the exact values",
    "planner": "planner (samples the unseen cards, searches each sample)",
    "optimal": "optimal policy (agents.zudecken.optimal)",
    "solver (knows the stock)": "bound, not a player: one who knows the stock order",
}


class Rate(NamedTuple):
    """A player's win rate and its spread: a 95% Wilson interval, or for a learned player of
    several training seeds (``seeds`` of them) their IQM, its bootstrap interval and their range."""

    mean: float
    low: float
    high: float
    seeds: int = 0
    lowest: float = 0.0
    highest: float = 0.0


def _rates(result: dict[str, Any]) -> dict[tuple[str, Any], Rate]:
    """(env ID, player) -> its rate; learned players by (kind, learned from)."""
    from quadrat_env.experiments.benchmark import MODELS, learned_from
    from quadrat_env.experiments.seed_rows import learned_summary

    rate: dict[tuple[str, Any], Rate] = {}
    for s in learned_summary(result["rows"]):
        how = s.get("learned_from") or learned_from(MODELS, s["env_id"], s["algo"], 0)
        low, high = s["iqm_ci"]
        if s["seeds"] == 1:  # one seed: its Wilson interval over the deals
            row = next(r for r in result["rows"] if r["env_id"] == s["env_id"] and r.get("algo") == s["algo"])
            low, high = row["ci_low"], row["ci_high"]
        rate[s["env_id"], (s["algo"], how)] = Rate(s["iqm_win_rate"], low, high, s["seeds"],
                                                   s["min_win_rate"], s["max_win_rate"])  # fmt: skip
    for r in result["rows"]:
        if "algo" not in r:
            rate[r["env_id"], r["agent"]] = Rate(r["win_rate"], r["ci_low"], r["ci_high"])
    return rate


def _cell(value: Rate | None) -> str:
    """The win rate with its spread: ``[low, high]`` (Wilson; for several seeds the IQM's bootstrap
    interval, then the seeds' count and range)."""
    if value is None:
        return "–"
    if value.seeds == 1:
        return f"{value.mean:.2%} (1 seed) [{value.low:.1%}, {value.high:.1%}]"
    if value.seeds:
        return (f"{value.mean:.2%} [{value.low:.1%}, {value.high:.1%}] ({value.seeds} seeds: "
                f"{value.lowest:.2%}–{value.highest:.2%})")  # fmt: skip
    return f"{value.mean:.2%} [{value.low:.1%}, {value.high:.1%}]"


def _share(player: Any, value: Rate | None, best: float | None) -> str:
    """The share of the optimum, for players only (a bound is none), with the same spread."""
    # (a bound is "solver (knows the stock)": it sees what no player sees)
    if value is None or best is None or "stock" in str(player):
        return "–"
    return f"{value.mean / best:.1%} ({value.low / best:.1%}–{value.high / best:.1%})"


def headline(result: dict[str, Any]) -> str:
    """The benchmark page's table: each Zudecken player's win rate beside the exact optimum where known."""
    ids = [i for i in IDS if any(r["env_id"] == i for r in result["rows"])]
    rate = _rates(result)
    from quadrat_env.experiments.benchmark import exact_optima

    optimum = exact_optima(result)
    names = [env_name(i) for i in ids]
    lines = ["| player | " + " | ".join(f"{n} win rate | {n}, of the optimum" for n in names) + " |",
             "|---|" + "---:|---:|" * len(ids)]  # fmt: skip
    for player, label in PLAYERS.items():
        cells = []
        for i in ids:
            value = rate.get((i, player))
            cells += [_cell(value), _share(player, value, optimum.get(i))]
        if any(c != "–" for c in cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = [
        c for i in ids for c in (("not known", "–") if i not in optimum else (f"{optimum[i]:.2%}", "100%"))
    ]
    lines.append("| **exact optimum** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: The figure's short names of the players (the table's labels say more).
SHORT: dict[str | tuple[str, str], str] = {
    "random": "random",
    "greedy": "greedy",
    ("ppo", "the reward"): "PPO (MLP)",
    ("ppo", "the dense reward"): "PPO, dense reward (MLP)",
    ("ppo_jax", "the reward"): "PPO in JAX (MLP)",
    ("ppo_jax_afterstates", "the reward"): "PPO in JAX (afterstate policy)",
    ("maskable_ppo", "the reward"): "MaskablePPO (MLP)",
    ("rl", "the reward"): "TD(0) from the reward",
    ("td_ppo", "the reward"): "MaskablePPO from TD(0)",
    ("maskable_ppo", "a clairvoyant solver's labels"): "imitating a clairvoyant solver",
    ("maskable_ppo", "exact values"): "imitating the exact values",
    "planner": "planner (sampling search)",
    "optimal": "optimal policy",
}

FIGURE = "zudecken_share.png"


def share_figure(result: dict[str, Any], path: Path) -> None:
    """Each player's share of the exact optimum with its 95% interval, a marker a pack: the README's
    figure (the bound that sees the stock is no player, and packs without a known optimum are left out)."""
    from quadrat_env.experiments.common import plots  # first: it picks matplotlib's file backend

    plots.save(plots.styled(_share_axes)(result), path)  # the figures' text sizes: readable on a phone


def _share_axes(result: dict[str, Any]) -> Any:
    import matplotlib.pyplot as plt
    import numpy as np
    from quadrat_env.experiments.benchmark import exact_optima
    from quadrat_env.experiments.common.plots import WIDTH

    rate, optimum = _rates(result), exact_optima(result)
    ids = [i for i in IDS if i in optimum]
    players = [p for p in SHORT if any((i, p) in rate for i in ids)]
    fig, ax = plt.subplots(figsize=(WIDTH, 1.4 + 0.4 * len(players)), layout="constrained")
    for k, (env_id, marker) in enumerate(zip(ids, "os", strict=False)):
        best = optimum[env_id]
        shown = [(y, rate[env_id, p]) for y, p in enumerate(players) if (env_id, p) in rate]
        ys = [y + (k - (len(ids) - 1) / 2) * 0.28 for y, _ in shown]
        share = np.array([v.mean for _, v in shown]) / best * 100
        spread = np.array([[v.mean - v.low, v.high - v.mean] for _, v in shown]).T / best * 100
        ax.errorbar(share, ys, xerr=np.clip(spread, 0, None), fmt=marker, ms=5, capsize=3,
                    label=f"{env_name(env_id)} (optimum {best:.2%})")  # fmt: skip
    ax.axvline(100, color="tab:red", ls="--", lw=1)
    ax.set_yticks(range(len(players)), [SHORT[p] for p in players])
    ax.invert_yaxis()
    ax.set_xlabel("share of the optimum, % (95% interval)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower left")  # the bottom rows sit near 100%
    return fig


def readme_figure(result: dict[str, Any]) -> str:
    """The README's section: the figure, and what it shows in two sentences."""
    from quadrat_env.experiments.benchmark import exact_optima

    optimum = exact_optima(result)
    known = ", ".join(f"{env_name(i)} {optimum[i]:.2%}" for i in IDS if i in optimum)
    return (
        f"![Each Zudecken player's share of the exact optimum](results/{FIGURE})\n\n"
        f"Each player's win rate on the held-out deals as a share of the exact optimum ({known}), "
        "with its 95% interval: over the deals, or for a learned player over its training seeds "
        "(the interquartile mean's bootstrap interval). The table with every win rate is on the "
        "[benchmark](docs/benchmark.md#zudecken-every-player-beside-the-optimum) page.\n"
    )
