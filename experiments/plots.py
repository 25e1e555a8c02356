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


def win_rates(result: dict[str, Any], path: Path) -> None:
    envs = list(dict.fromkeys(r["env_id"] for r in result["rows"]))
    fig, axes = plt.subplots(1, len(envs), figsize=(4.2 * len(envs), 4), squeeze=False)
    for ax, env_id in zip(axes[0], envs, strict=True):
        rows = [r for r in result["rows"] if r["env_id"] == env_id]
        labels = [r["agent"] + (f" s{r['train_seed']}" if "train_seed" in r else "") for r in rows]
        rates = np.array([r["win_rate"] for r in rows]) * 100
        err = np.array([[r["win_rate"] - r["ci_low"], r["ci_high"] - r["win_rate"]] for r in rows]).T * 100
        err = np.clip(err, 0.0, None)  # matplotlib refuses negative error bars
        ax.barh(range(len(rows)), rates, xerr=err, color="tab:green", ecolor="black", capsize=3)
        ax.set_yticks(range(len(rows)), labels, fontsize=8)
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
