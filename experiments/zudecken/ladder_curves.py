"""The ladder's TD(0) validation curves: where learning from the reward levels off on each rung.

Each TD(0) and PPO cell keeps its run's validation curve (``curve``: moves and the validation win
rate on the validation deals, not the held-out ones), so the record says whether a run still
climbed at its end. The figure draws TD(0)'s from ``ladder.json`` alone: a line a seed as a share
of the rung's optimum, and beside it the share that imitating the exact values reached on that rung
(its seeds' IQM on the held-out deals).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from quadrat_env.experiments.zudecken.ladder_learners import LEARNERS

#: A rung's colour, by ranks a suit (the rungs whose runs the ladder trains and keeps curves of).
COLOURS = {4: "tab:blue", 5: "tab:orange", 6: "tab:green", 7: "tab:red", 9: "tab:purple",
           10: "tab:brown", 11: "tab:pink", 12: "tab:olive"}  # fmt: skip


def read_curve(run: Path) -> list[list[float]] | None:
    """``[[moves, validation win rate], ...]`` from a run folder's ``curve.csv``, or None."""
    try:
        with open(run / "curve.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        return [[int(r["moves"]), float(r["win_rate"])] for r in rows]
    except (OSError, KeyError, ValueError, TypeError):  # missing or not a curve: the cell stays as it is
        return None


#: The learners whose cells keep their run's curve (their runs' folders: ``LEARNERS``).
CURVES = ("td", "ppo")


def with_curve(cell: dict[str, Any], work: Path) -> dict[str, Any]:
    """A TD(0) or PPO cell with its run's curve attached (a cell that has one, or whose run is gone,
    as is)."""
    if cell.get("player") not in CURVES or "curve" in cell or "run" not in cell:
        return cell
    run = Path(cell["run"])
    folder = LEARNERS[cell["player"]][3]
    curve = read_curve(run if run.is_absolute() or run.is_dir() else work / folder / run.name)
    return cell if curve is None else {**cell, "curve": curve}


def figure(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]]) -> bytes | None:
    """The curves as a share of each rung's optimum against moves, imitation's level dashed beside;
    None when no cell has a curve."""
    curves = [c for c in result["cells"] if c.get("player") == "td" and c.get("curve")]
    if not curves:
        return None
    from quadrat_env.experiments.common import plots

    return plots.png(plots.styled(_draw)(result, rows, curves))  # text readable on a phone


def _draw(result: dict[str, Any], rows: dict[tuple[int, str], dict[str, Any]],
          curves: list[dict[str, Any]]) -> Any:  # fmt: skip
    import matplotlib.pyplot as plt
    from quadrat_env.experiments.common.plots import WIDTH

    fig, ax = plt.subplots(figsize=(WIDTH, 6.0), layout="constrained")
    for ranks in sorted({c["ranks"] for c in curves}):
        colour, best = COLOURS.get(ranks, "black"), result["optimum"][str(ranks)]
        for i, c in enumerate(c for c in curves if c["ranks"] == ranks):
            moves, rate = zip(*c["curve"], strict=True)
            ax.plot([m / 1e6 for m in moves], [100 * r / best for r in rate], color=colour, lw=1.2,
                    alpha=0.8, label=f"{ranks} ranks: TD(0) seeds" if i == 0 else None)  # fmt: skip
        if (ranks, "imitation") in rows:
            ax.axhline(100 * rows[ranks, "imitation"]["share"], color=colour, lw=1.2, ls="--",
                       label=f"{ranks} ranks: imitation")  # fmt: skip
    ax.axhline(100, color="black", lw=0.8)
    ax.set_ylim(70, 103)
    ax.set_xlabel("moves trained (millions)")
    ax.set_ylabel("share of the optimum (%)")
    ax.set_title("TD(0) from the reward:\nvalidation win rate on each rung")
    ax.grid(alpha=0.3)
    # below the panel: inside, it hid the curves' first millions; imitation: of the exact values
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    return fig
