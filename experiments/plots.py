"""PNG plots for the benchmark: win rates with intervals per env, learning curves from Monitor logs."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no screen
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from quadrat_env.files import atomic_path, data_files

#: How a learned row's label says what it learned from, where that is not the reward.
_FROM = {"a clairvoyant solver's labels": "imitating solver labels", "exact values": "imitating exact values"}


def _label(row: dict[str, Any]) -> str:
    if "train_seed" not in row:
        return row["agent"]
    how = row.get("learned_from")
    if how is None:  # a result written before rows said how they learned: from the committed configs
        from quadrat_env.experiments.benchmark import MODELS, learned_from

        how = learned_from(MODELS, row["env_id"], row["algo"], row["train_seed"])
    return f"{row['agent']} s{row['train_seed']}" + (f", {_FROM[how]}" if how in _FROM else "")


#: Panels a row in the win-rate grid: two stay legible at the docs' width (about 800 px).
COLUMNS = 2


def win_rates(result: dict[str, Any], path: Path) -> None:
    """One panel per env in a grid of :data:`COLUMNS`, each agent's win rate with its interval and,
    where known, the exact optimum as a dashed line."""
    envs = list(dict.fromkeys(r["env_id"] for r in result["rows"]))
    nrows = -(-len(envs) // COLUMNS)
    fig, axes = plt.subplots(nrows, COLUMNS, figsize=(6.4 * COLUMNS, 3.6 * nrows), squeeze=False)
    for ax in axes.flat[len(envs) :]:
        ax.set_visible(False)
    for ax, env_id in zip(axes.flat, envs, strict=False):
        rows = [r for r in result["rows"] if r["env_id"] == env_id]
        optimum = next((r["exact_optimum"] for r in rows if "exact_optimum" in r), None)
        if optimum is not None:
            ax.axvline(optimum * 100, color="tab:red", ls="--", lw=1.2, label=f"exact optimum {optimum:.2%}")
            ax.legend(fontsize=8, loc="upper right")
        labels = [_label(r) for r in rows]
        rates = np.array([r["win_rate"] for r in rows]) * 100
        err = np.array([[r["win_rate"] - r["ci_low"], r["ci_high"] - r["win_rate"]] for r in rows]).T * 100
        err = np.clip(err, 0.0, None)  # matplotlib refuses negative error bars
        ax.barh(range(len(rows)), rates, xerr=err, color="tab:green", ecolor="black", capsize=3)
        ax.set_yticks(range(len(rows)), labels, fontsize=9)
        ax.invert_yaxis()
        ax.set_xlabel("win rate, % (95% Wilson CI)")
        ax.set_title(env_id.split("/")[-1])
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)


def learning_curves(monitor_root: Path, path: Path, window: int = 2000) -> None:
    """Rolling win rate against training steps, one panel per game, from the Monitor logs."""
    runs = sorted(p for p in monitor_root.glob("*") if p.is_dir()) if monitor_root.is_dir() else []
    games = sorted({run.name.split("-")[0] for run in runs}) or ["(no runs)"]
    fig, axes = plt.subplots(1, len(games), figsize=(4.5 * len(games), 3.8), squeeze=False)
    for ax, game in zip(axes[0], games, strict=True):
        for run in (r for r in runs if r.name.split("-")[0] == game):
            steps, won = _episodes(run)
            if not len(won):
                continue
            k = max(1, min(window, len(won) // 10))  # short runs get a shorter window
            rolling = np.convolve(won, np.ones(k) / k, mode="valid") * 100
            ax.plot(steps[k - 1 :], rolling, label=f"{run.name.split('-', 1)[1]} (window {k})", lw=1.2)
        ax.set_title(game)
        ax.set_xlabel("training steps")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    axes[0][0].set_ylabel("win rate, % (rolling)")
    fig.suptitle("Learning curves of the committed models (Monitor logs)")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)


#: What reading a damaged or half-written (gzipped) CSV raises.
UNREADABLE = (OSError, EOFError, ValueError, UnicodeDecodeError)


def _episodes(run: Path) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative steps and won flags of all episodes of a run, in the order they ended."""
    rows = []
    for csv in data_files(run, "*.monitor.csv*"):  # plain or gzipped
        try:
            data = np.genfromtxt(csv, delimiter=",", skip_header=1, names=True, ndmin=1, dtype=None,
                                 encoding="utf-8")  # fmt: skip
        except UNREADABLE as err:  # a damaged log: a warning, not the end of the plot
            warnings.warn(f"{csv}: skipped, not a readable Monitor log ({type(err).__name__}: {err})",
                          stacklevel=2)  # fmt: skip
            continue
        if data.size:
            # the "won" column (info_keywords); older logs: a return of 1 or more means won
            won = data["won"].astype(str) == "True" if "won" in data.dtype.names else data["r"] >= 1.0
            rows += zip(data["t"], data["l"], won, strict=True)
    rows.sort()  # by wall time: the envs ran side by side
    if not rows:
        return np.zeros(0), np.zeros(0)
    _, lengths, won = map(np.array, zip(*rows, strict=True))
    return np.cumsum(lengths), won.astype(float)
