"""PNG plots for the benchmark: win rates with intervals per env, learning curves from Monitor logs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no screen
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def win_rates(result: dict[str, Any], path: Path) -> None:
    envs = list(dict.fromkeys(r["env_id"] for r in result["rows"]))
    fig, axes = plt.subplots(1, len(envs), figsize=(4.2 * len(envs), 4), squeeze=False)
    for ax, env_id in zip(axes[0], envs, strict=True):
        rows = [r for r in result["rows"] if r["env_id"] == env_id]
        labels = [r["agent"] + (f" s{r['train_seed']}" if "train_seed" in r else "") for r in rows]
        rates = np.array([r["win_rate"] for r in rows]) * 100
        err = np.array([[r["win_rate"] - r["ci_low"], r["ci_high"] - r["win_rate"]] for r in rows]).T * 100
        ax.barh(range(len(rows)), rates, xerr=err, color="tab:green", ecolor="black", capsize=3)
        ax.set_yticks(range(len(rows)), labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("win rate, % (95% Wilson CI)")
        ax.set_title(env_id.split("/")[-1])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def learning_curves(monitor_root: Path, path: Path, window: int = 2000) -> None:
    """Rolling win rate (an episode is won when its return reached 1) against training steps."""
    runs = sorted(p for p in monitor_root.glob("*") if p.is_dir()) if monitor_root.is_dir() else []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for run in runs:
        lengths, wins = [], []
        for csv in sorted(run.glob("*.monitor.csv")):
            data = np.genfromtxt(csv, delimiter=",", skip_header=1, names=True, ndmin=1, dtype=None,
                                 encoding="utf-8")  # fmt: skip
            if data.size:
                order = np.argsort(data["t"])  # by wall time, as the envs ran side by side
                lengths.append(data["l"][order])
                # the "won" column (info_keywords); older logs: a return of 1 or more means won
                if "won" in data.dtype.names:
                    wins.append(data["won"][order].astype(str) == "True")
                else:
                    wins.append(data["r"][order] >= 1.0)
        if not lengths:
            continue
        steps = np.cumsum(np.concatenate(lengths))
        won = np.concatenate(wins).astype(float)
        k = min(window, len(won))
        rolling = np.convolve(won, np.ones(k) / k, mode="valid") * 100
        ax.plot(steps[k - 1 :], rolling, label=run.name, lw=1.2)
    ax.set_xlabel("training steps (approx., all envs)")
    ax.set_ylabel(f"win rate, %, rolling {window} episodes")
    ax.set_title("Learning curves of the committed models (Monitor logs)")
    if runs:
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
