"""The ladder's record, table and figure (``quadrat ladder`` writes them; ``ladder.py`` plays the cells).

A row a rung; each player's win rate on the rung's held-out deals as a share of the rung's exact
optimum; a learner's row is the interquartile mean (IQM) of its seeds with its 95% stratified
bootstrap interval (rliable, as the benchmark's learned rows), a fixed player's its Wilson interval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quadrat_env.experiments.common.pages import updated_page
from quadrat_env.experiments.zudecken import ladder_curves

from quadrat_env.journal import replace_all

#: The players' names in the table and figure, in the table's order.
NAMES = {
    "optimal": "optimal policy",
    "planner": "planner",
    "imitation": "imitating the exact values",
    "td": "TD(0) from the reward",
    "ppo": "PPO from the reward (MLP)",
    "greedy": "greedy",
    "random": "random",
    "solver": "clairvoyant (knows the stock)",
}
#: The learners: a cell a training seed, their row the seeds' IQM.
LEARNED = ("imitation", "td", "ppo")
JOURNAL = ".ladder-journal.json"
#: Where ``--update-docs`` puts the tables (relative to the repository root), between these markers.
PAGE = Path("docs") / "ladder.md"
MARKERS = ("<!-- ladder:start -->", "<!-- ladder:end -->")


def summary(result: dict[str, Any]) -> dict[tuple[int, str], dict[str, Any]]:
    """(ranks, player) -> its win rate, interval, share of the optimum, deals, seeds (and budget)."""
    from quadrat_env.experiments.seed_rows import iqm

    out = {}
    for ranks_text, best in result["optimum"].items():
        ranks = int(ranks_text)
        for player in NAMES:
            cells = [c for c in result["cells"] if c["ranks"] == ranks and c["player"] == player]
            if not cells:
                continue
            if player in LEARNED and len(cells) > 1:
                rate, (low, high) = iqm([c["win_rate"] for c in cells])
            else:  # a player that learned nothing, or one seed so far: the interval over its deals
                rate, low, high = cells[0]["win_rate"], cells[0]["ci_low"], cells[0]["ci_high"]
            row = {"win_rate": rate, "ci": [low, high], "share": rate / best,
                   "share_ci": [low / best, high / best], "deals": cells[0]["episodes"],
                   "seeds": len(cells) if player in LEARNED else None}  # fmt: skip
            budgets = {_budget(c) for c in cells}
            if player in LEARNED and "" not in budgets:
                row["budget"] = sorted(budgets)
            elsewhere = [c["trained_on"] for c in cells if "trained_on" in c]  # imported seeds
            if elsewhere:
                row["imported"] = {"seeds": len(elsewhere), "trained_on": sorted(set(elsewhere))}
            out[ranks, player] = row
    return out


def _budget(cell: dict[str, Any]) -> str:
    """A learner's budget in words: TD(0)'s moves, imitation's labelled deals."""
    if "moves" in cell:
        return f"{cell['moves'] / 1e6:g}M moves"
    if "deals_labelled" in cell:
        return f"{cell['deals_labelled'] / 1e3:g}k deals labelled"
    return ""


def share_table(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]]) -> str:
    """Each player's share of the rung's optimum (what the figure draws)."""
    players = [p for p in NAMES if p != "solver"]
    head = ["ranks", "cards", "exact optimum", *(NAMES[p] for p in players)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for ranks_text, best in result["optimum"].items():
        ranks = int(ranks_text)
        cells = []
        for p in players:
            row = rows.get((ranks, p))
            cells.append("" if row is None else f"{row['share']:.1%}")
        lines.append(f"| {ranks} | {4 * ranks} | {best:.2%} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rate_table(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]]) -> str:
    """Every cell's win rate with its 95% interval, deals, and a learner's seeds and budget."""
    lines = ["| ranks | player | win rate | 95% interval | share of the optimum | deals | seeds, budget |",
             "|---:|---|---:|---|---:|---:|---|"]  # fmt: skip
    for ranks_text in result["optimum"]:
        ranks = int(ranks_text)
        for p, name in NAMES.items():
            row = rows.get((ranks, p))
            if row is None:
                continue
            low, high = row["ci"]
            seeds = row["seeds"]
            budget = "" if seeds is None else f"{seeds} (IQM)" if seeds > 1 else "1 (its deals' interval)"
            if row.get("budget"):
                budget += ", " + " / ".join(row["budget"])
            if row.get("imported"):
                budget += f"; {row['imported']['seeds']} of them trained on " + ", ".join(
                    row["imported"]["trained_on"]
                )
            lines.append(f"| {ranks} | {name} | {row['win_rate']:.2%} | [{low:.2%}, {high:.2%}] | "
                         f"{row['share']:.1%} | {row['deals']:,} | {budget} |")  # fmt: skip
    return "\n".join(lines)


#: Each player's colour, the same in both panels and from run to run.
COLOURS = {"optimal": "tab:blue", "planner": "tab:orange", "imitation": "tab:green", "td": "tab:red",
           "ppo": "tab:olive", "greedy": "tab:purple", "random": "tab:brown"}  # fmt: skip
#: The figure's panels: the players near the optimum (zoomed), then PPO and the rules of thumb.
PANELS = (
    (("optimal", "planner", "imitation", "td"), "osPD", (78, 108)),
    (("ppo", "greedy", "random"), "X^v", (0, 105)),
)


def figure(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]]) -> bytes:
    """Share of the optimum against ranks a suit, a line per player with its 95% intervals; a line
    joins neighbouring rungs only (a rung not played yet leaves a gap, not a straight line)."""
    from quadrat_env.experiments.common import plots

    return plots.png(plots.styled(_draw)(result, rows))  # the figures' text sizes: readable on a phone


def _draw(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]]) -> Any:
    import matplotlib.pyplot as plt
    from quadrat_env.experiments.common.plots import WIDTH

    ranks = [int(r) for r in result["optimum"]]
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH, 6.4), sharex=True, height_ratios=(3, 2))
    for ax, (players, markers, limits) in zip(axes, PANELS, strict=True):
        for p, marker in zip(players, markers, strict=True):
            got = {r: row for (r, q), row in rows.items() if q == p}
            if not got:
                continue
            y = [100 * got[r]["share"] if r in got else float("nan") for r in ranks]
            low = [100 * (got[r]["share"] - got[r]["share_ci"][0]) if r in got else 0.0 for r in ranks]
            high = [100 * (got[r]["share_ci"][1] - got[r]["share"]) if r in got else 0.0 for r in ranks]
            ax.errorbar(
                ranks, y, yerr=[low, high], marker=marker, capsize=3, label=NAMES[p], color=COLOURS[p]
            )
        ax.axhline(100, color="black", lw=0.8)
        ax.set_ylim(*limits)
        ax.set_ylabel("share of the optimum (%)")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left" if ax is axes[0] else "upper right", ncol=2)  # where no line runs
    axes[0].axhline(98, color="grey", lw=0.8, ls=":")
    axes[1].set_xlabel("ranks a suit (cards = 4 x ranks)")
    axes[1].set_xticks(ranks)
    axes[0].set_title("Zudecken ladder: share of the exact optimum\non held-out deals")
    fig.tight_layout()
    return fig


def page_table(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]]) -> str:
    """The docs page's part: the share table; every cell's win rate stays in ``results/ladder.md``."""
    return "\n\n".join([
        f"Held-out deals: {result['deals']:,} a rung (the planner {result['planner_deals']:,}); rungs 8 "
        "and 13 are the benchmark's rows. Each player's share of the rung's exact optimum (every cell's "
        "win rate, 95% interval, seeds and budget: `results/ladder.md`):",
        share_table(result, rows),
    ]) + "\n"  # fmt: skip


def tables(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]]) -> str:
    return "\n\n".join([
        f"Held-out deals: {result['deals']:,} a rung (the planner {result['planner_deals']:,}); rungs 8 "
        "and 13 are the benchmark's rows. Each player's share of the rung's exact optimum:",
        share_table(result, rows),
        "Every cell's win rate with its 95% interval (a learner: the IQM of its seeds), its deals, and a "
        "learner's seeds and budget a seed:",
        rate_table(result, rows),
    ]) + "\n"  # fmt: skip


def write_result(result: dict[str, Any], out: Path, update_docs: bool = False, command: str = "") -> None:
    """``ladder.json``, ``ladder.md``, ``ladder.png`` and ``ladder_curves.png`` (``ladder_curves``)
    into ``out`` (with ``update_docs`` the tables into ``docs/ladder.md`` too), as one change: a stop
    leaves the earlier files or the new ones, never a mix."""
    rows = summary(result)
    changes = {
        out / "ladder.json": (json.dumps(result, indent=1) + "\n").encode(),
        out / "ladder.md": f"# The Zudecken ladder\n\nBy `{command}`.\n\n{tables(result, rows)}".encode(),
        out / "ladder.png": figure(result, rows),
    }
    curves = ladder_curves.figure(result, rows)
    if curves is not None:
        changes[out / "ladder_curves.png"] = curves
    if update_docs:
        text = updated_page(
            PAGE.read_text(encoding="utf-8"), page_table(result, rows), command, MARKERS, PAGE
        )
        changes[PAGE] = text.encode()
    replace_all(changes, (Path(".") if update_docs else out) / JOURNAL)
