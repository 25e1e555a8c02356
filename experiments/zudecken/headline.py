"""The README's headline: each Zudecken player's win rate beside the exact optimum where known.

The benchmark (``--update-docs``) asks every study for its README sections
(:func:`quadrat_env.experiments.studies.readme_sections`); this is Zudecken's.
"""

from __future__ import annotations

from typing import Any

from quadrat_env.registry import short_name as env_name

HEADLINE = ("<!-- headline:start -->", "<!-- headline:end -->")
IDS = ("quadrat_env/Zudecken-v0", "quadrat_env/Zudecken32-v0")
#: The Zudecken players, best last (agent name in the rows -> label).
PLAYERS = {
    "random": "random (uniform over legal moves)",
    "greedy": "greedy (largest group)",
    "ppo": "PPO (training seeds, mean)",
    "maskable_ppo": "MaskablePPO, afterstate network (training seeds, mean)",
    "planner": "planner (samples the unseen cards, searches each sample)",
    "optimal": "optimal policy (agents.zudecken.optimal)",
    "solver (knows the stock)": "a player who knows the stock order",
}


def headline(result: dict[str, Any]) -> str:
    """The README's table: each Zudecken player's win rate beside the exact optimum where known."""
    ids = [i for i in IDS if any(
        r["env_id"] == i for r in result["rows"])]  # fmt: skip
    rate: dict[tuple[str, str], float] = {}
    for s in result["learned"]:
        rate[s["env_id"], s["algo"]] = s["mean_win_rate"]
    optimum: dict[str, float] = {}
    for r in result["rows"]:
        if "algo" not in r:
            rate[r["env_id"], r["agent"]] = r["win_rate"]
        if "exact_optimum" in r:
            optimum[r["env_id"]] = r["exact_optimum"]
    names = [env_name(i) for i in ids]
    lines = ["| player | " + " | ".join(f"{n} win rate | {n}, of the optimum" for n in names) + " |",
             "|---|" + "---:|---:|" * len(ids)]  # fmt: skip
    for agent, label in PLAYERS.items():
        cells = []
        for i in ids:
            value, best = rate.get((i, agent)), optimum.get(i)
            share = None if value is None or best is None or "stock" in agent else value / best
            cells += ["–" if value is None else f"{value:.2%}", "–" if share is None else f"{share:.1%}"]
        if any(c != "–" for c in cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = [
        c for i in ids for c in (("not known", "–") if i not in optimum else (f"{optimum[i]:.2%}", "100%"))
    ]
    lines.append("| **exact optimum** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
