"""The README's headline: each Zudecken player's win rate beside the exact optimum where known.

The benchmark (``--update-docs``) asks every study for its README sections
(``quadrat_env.experiments.studies.readme_sections``); this is Zudecken's.
"""

from __future__ import annotations

from typing import Any

from quadrat_env.registry import short_name as env_name

HEADLINE = ("<!-- headline:start -->", "<!-- headline:end -->")
IDS = ("quadrat_env/Zudecken-v0", "quadrat_env/Zudecken32-v0")
#: The Zudecken players, best last: agents by name, and learned agents by (kind, what they learned
#: from) -> label. Only reinforcement learning learns from the reward.
PLAYERS: dict[str | tuple[str, str], str] = {
    "random": "random (uniform over legal moves)",
    "greedy": "greedy (largest group)",
    ("ppo", "the reward"): "PPO from the reward (training seeds, mean)",
    ("maskable_ppo", "the reward"): "MaskablePPO from the reward (training seeds, mean)",
    ("rl", "the reward"): "afterstate TD(0) from the reward (training seeds, mean)",
    (
        "td_ppo",
        "the reward",
    ): "MaskablePPO from the reward, started from the TD(0) network (training seeds, mean)",
    (
        "maskable_ppo",
        "a clairvoyant solver's labels",
    ): "afterstate network imitating a clairvoyant solver's labels (training seeds, mean)",
    ("maskable_ppo", "exact values"): "afterstate network imitating the exact values (training seeds, mean)",
    "planner": "planner (samples the unseen cards, searches each sample)",
    "optimal": "optimal policy (agents.zudecken.optimal)",
    "solver (knows the stock)": "a player who knows the stock order",
}


def _rates(result: dict[str, Any]) -> dict[tuple[str, Any], tuple[float, float, float]]:
    """(env ID, player) -> (win rate, interval low, high); learned players by (kind, learned from)."""
    from quadrat_env.experiments.benchmark import MODELS, learned_from

    rate: dict[tuple[str, Any], tuple[float, float, float]] = {}
    for s in result["learned"]:
        how = s.get("learned_from") or learned_from(MODELS, s["env_id"], s["algo"], 0)
        rate[s["env_id"], (s["algo"], how)] = (s["mean_win_rate"], s["min_win_rate"], s["max_win_rate"])
    for r in result["rows"]:
        if "algo" not in r:
            rate[r["env_id"], r["agent"]] = (r["win_rate"], r["ci_low"], r["ci_high"])
    return rate


def _share(player: Any, value: tuple[float, float, float] | None, best: float | None) -> str:
    """The share of the optimum; over 100% it shows its interval (a 95% Wilson interval, or the seeds'
    range for learned players): within noise of the optimum, not above it."""
    if value is None or best is None or "stock" in str(player):
        return "–"
    share = f"{value[0] / best:.1%}"
    return share if value[0] <= best else f"{share} ({value[1] / best:.1%}–{value[2] / best:.1%})"


def headline(result: dict[str, Any]) -> str:
    """The README's table: each Zudecken player's win rate beside the exact optimum where known."""
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
            cells += ["–" if value is None else f"{value[0]:.2%}", _share(player, value, optimum.get(i))]
        if any(c != "–" for c in cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = [
        c for i in ids for c in (("not known", "–") if i not in optimum else (f"{optimum[i]:.2%}", "100%"))
    ]
    lines.append("| **exact optimum** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
