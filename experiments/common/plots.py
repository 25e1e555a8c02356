"""PNG plots for the benchmark: win rates with intervals per env, the committed models' learning curves."""

from __future__ import annotations

import functools
import io
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import matplotlib

matplotlib.use("Agg")  # files only, no screen
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from quadrat_env.files import atomic_write, data_files

#: How a learned row's label says what it learned from, where that is not the reward.
_FROM = {"a clairvoyant solver's labels": "imitating solver labels", "exact values": "imitating exact values"}


def _label(row: dict[str, Any]) -> str:
    if "train_seed" not in row:  # a bound that sees the stock is no player
        return f"bound: {row['agent']}" if "stock" in row["agent"] else row["agent"]
    how = row.get("learned_from")
    if how is None:  # a result written before rows said how they learned: from the committed configs
        from quadrat_env.experiments.benchmark import MODELS, learned_from

        how = learned_from(MODELS, row["env_id"], row["algo"], row["train_seed"])
    return f"{row['agent']} s{row['train_seed']}" + (f", {_FROM[how]}" if how in _FROM else "")


#: Panels a row: one, so that a figure is drawn about as wide as the docs show it; two panels a row
#: were shown at 53% of their size, legends about 5 px high.
COLUMNS = 1
#: A phone shows the docs' column about 358 CSS px wide (390 px less the page's margins) and shrinks
#: a wider picture to it. Text under 9 px there cannot be read: a figure 6.4 in wide with 10-point
#: labels showed them at 7.8 px, its 7-point legends at 5.4 px.
PHONE_PX, SMALLEST_TEXT_PX = 358, 9.0
#: Every figure's width (inches) and resolution, and the text sizes (points) that keep it readable
#: there: 10.5 points on 5.6 in shrunk to 358 px are 9.3 px; on a desktop the figure is shown whole.
WIDTH, DPI = 5.6, 110
STYLE = {"font.size": 11, "axes.titlesize": 11.5, "figure.titlesize": 11.5, "axes.labelsize": 11,
         "xtick.labelsize": 10.5, "ytick.labelsize": 10.5, "legend.fontsize": 10.5}  # fmt: skip


class SmallText(UserWarning):
    """A figure whose text a phone would show under :data:`SMALLEST_TEXT_PX` (the tests make it an
    error)."""


def smallest_text_px(fig: Any, dpi: float = DPI) -> float:
    """The smallest visible text of ``fig`` in CSS px on a phone: its points at ``dpi``, the picture
    shrunk to :data:`PHONE_PX` where it is wider."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=float("inf")) / 72 * min(dpi, PHONE_PX / fig.get_figwidth())


F = TypeVar("F", bound=Callable[..., Any])


def styled(draw: F) -> F:
    """``draw`` makes its figure with :data:`STYLE`'s text sizes."""

    @functools.wraps(draw)
    def run(*args: Any, **kwargs: Any) -> Any:
        with plt.rc_context(STYLE):
            return draw(*args, **kwargs)

    return run  # type: ignore[return-value]


def png(fig: Any, dpi: float = DPI) -> bytes:
    """``fig`` as PNG bytes, closed; a :class:`SmallText` warning where a phone could not read it."""
    if (px := smallest_text_px(fig, dpi)) < SMALLEST_TEXT_PX:
        warnings.warn(f"a figure's smallest text is {px:.1f} px on a phone (under {SMALLEST_TEXT_PX} px)",
                      SmallText, stacklevel=2)  # fmt: skip
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def save(fig: Any, path: Path, dpi: float = DPI) -> None:
    """``fig`` written to ``path`` whole or not at all (:func:`png`)."""
    atomic_write(path, png(fig, dpi))


@styled
def win_rates(result: dict[str, Any], path: Path, optimum: dict[str, float] | None = None) -> None:
    """One panel per env, each as tall as its rows need: each agent's win rate with its interval and,
    where known (``optimum``: env ID -> win rate), the exact optimum as a dashed line, named in the
    panel's title (a legend inside covered the first rows)."""
    envs = list(dict.fromkeys(r["env_id"] for r in result["rows"]))
    counts = [sum(r["env_id"] == env_id for r in result["rows"]) for env_id in envs]
    heights = [1.1 + ROW_IN * n for n in counts]
    fig, axes = plt.subplots(len(envs), 1, figsize=(WIDTH, sum(heights)), squeeze=False,
                             height_ratios=heights, layout="constrained")  # fmt: skip
    for ax, env_id in zip(axes[:, 0], envs, strict=True):
        rows = [r for r in result["rows"] if r["env_id"] == env_id]
        best = (optimum or {}).get(env_id)
        title = env_id.split("/")[-1]
        if best is not None:
            ax.axvline(best * 100, color="tab:red", ls="--", lw=1.2)
            title += f"\n(dashed: exact optimum {best:.2%})"
        rates = np.array([r["win_rate"] for r in rows]) * 100
        err = np.array([[r["win_rate"] - r["ci_low"], r["ci_high"] - r["win_rate"]] for r in rows]).T * 100
        err = np.clip(err, 0.0, None)  # matplotlib refuses negative error bars
        ax.barh(range(len(rows)), rates, xerr=err, color="tab:green", ecolor="black", capsize=3)
        ax.set_yticks(range(len(rows)), [_label(r) for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)  # the first row on top
        ax.set_xlabel("win rate, % (95% Wilson CI)")
        ax.set_title(title)
    save(fig, path)


#: Height of one bar's row (inches): room for its 10.5-point label.
ROW_IN = 0.24


#: How each kind of committed model is named in a legend.
_KINDS = {
    "ppo": "PPO",
    "maskable_ppo": "MaskablePPO",
    "rl": "afterstate TD(0)",
    "td_ppo": "MaskablePPO from TD(0)",
    "ppo_jax": "PPO in JAX",
    "ppo_jax_afterstates": "PPO in JAX, afterstate policy",
}
_HOW = {"the reward": "from the reward", "the dense reward": "from the dense reward", **_FROM}


def model_curves(models: Path, stem: str, window: int = 2000) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The training curves of the published model ``models/<stem>.zip`` (its seed's), each as (label, x, win
    rate %). From play, x is environment steps: its validation curve (train's and td's ``curve.csv``)
    where published, else the rolling win rate of its Monitor log's training games. From labels, x is
    epochs over the labelled positions (imitate's ``rounds.json``); such labels start with "imitating"."""
    from quadrat_env.experiments.benchmark import learned_from
    from quadrat_env.experiments.common.committed import published_seed

    game, kind = stem.split("-", 1)
    seed = published_seed(models, stem)
    name = f"{_KINDS.get(kind, kind)}, {_HOW[learned_from(models, f'quadrat_env/{game}-v0', kind, seed)]}"
    configs, curves = models / "configs", []
    for csv in data_files(configs, f"{stem}-seed{seed}-curve.csv"):
        data = np.genfromtxt(csv, delimiter=",", names=True, ndmin=1)
        steps = data["moves"] if "moves" in data.dtype.names else data["steps"]
        curves.append((f"{name} (validation deals)", steps, data["win_rate"] * 100))
    for rounds in data_files(configs, f"{stem}-seed{seed}-rounds.json"):
        rows = json.loads(rounds.read_text())
        epochs = np.array([r["epochs"] for r in rows])
        curves.append(
            (f"{name} (validation deals)", epochs, np.array([r["val_win_rate"] for r in rows]) * 100)
        )
    monitor = models / "monitor" / stem
    if not curves and monitor.is_dir():
        started, won = _by_start(monitor, _n_envs(configs / f"{stem}-seed{seed}.yml"))
        k = max(1, min(window, len(won) // 10))  # short runs get a shorter window
        if len(won):
            rolling = np.convolve(won, np.ones(k) / k, mode="valid") * 100
            curves.append((f"{name} (training games, rolling {k})", started[k - 1 :], rolling))
    return curves


def _n_envs(config: Path) -> int:
    import yaml

    return int((yaml.safe_load(config.read_text()) or {}).get("n_envs", 1)) if config.is_file() else 1


def _by_start(monitor: Path, n_envs: int) -> tuple[np.ndarray, np.ndarray]:
    """The games of a Monitor log in the order they started (the step they started at, won flags).
    Ordered by their end, the first games to end are the short ones, mostly lost, and the long ones
    (won) follow: a spike that is no property of the policy. Ordered by their start, every game of one
    moment counts. Left out: games that started too late to have ended whatever their length, and the
    first games, while the steps counted lag behind (each env's first game is still running)."""
    lengths, won = _episodes(monitor, lengths=True)
    ends = np.cumsum(lengths)  # the steps counted when each game ended (as _episodes gives them)
    started = ends - lengths * n_envs  # the envs step together: one step of a game is n_envs in all
    cycle = lengths.max() * n_envs if len(ends) else 0
    keep = (started >= cycle) & (started <= (ends.max() if len(ends) else 0) - cycle)
    order = np.argsort(started[keep], kind="stable")
    return started[keep][order], won[keep][order]


@styled
def learning_curves(models: Path, path: Path, optimum: dict[str, float] | None = None) -> None:
    """Win rate against training of every published model (its own run), labelled by what it learned
    from: one panel per game for the models that learned from play (against environment
    steps) and one for imitation (against epochs), so each panel's x-axis is one quantity; the exact
    optimum (``optimum``: short name -> win rate) as a dashed line where known."""
    stems = sorted(p.stem for p in models.glob("*-*.zip")) if models.is_dir() else []
    panels = []
    for game in dict.fromkeys(stem.split("-")[0] for stem in stems):
        curves = [c for stem in stems if stem.split("-")[0] == game for c in model_curves(models, stem)]
        played, imitated = (
            [c for c in curves if "imitating" not in c[0]],
            [c for c in curves if "imitating" in c[0]],
        )
        panels += [(game, played, "environment steps", "tab:blue")] if played or not imitated else []
        panels += (
            [(f"{game}: imitation", imitated, "epochs over the labelled positions", "tab:red")]
            if imitated
            else []
        )
    panels = panels or [("(no models)", [], "environment steps", "tab:blue")]
    # a panel's legend goes below it, a line an entry (inside, the long labels covered the curves)
    heights = [
        3.0 + ROW_IN * (len(curves) + (title.split(":")[0] in (optimum or {})))
        for title, curves, *_ in panels
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH, sum(heights)), squeeze=False,
                             height_ratios=heights, layout="constrained")  # fmt: skip
    for ax, (title, curves, xlabel, color) in zip(axes[:, 0], panels, strict=True):
        _draw(ax, curves, xlabel, color)
        best = (optimum or {}).get(title.split(":")[0])
        if best is not None:
            _optimum_line(ax, best, color="black", lw=1.0)
        ax.set_title(title)
        ax.set_ylabel("win rate, %")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=STYLE["legend.fontsize"])
    fig.suptitle("Learning curves of the published models\n(their own training runs)")
    save(fig, path)


def _optimum_line(ax: Any, best: float, color: str, lw: float) -> None:
    """The exact optimum (a win rate) as a dashed line, inside the frame: the autoscale margin can
    end at the optimum itself, hiding its line under the frame's edge."""
    ax.axhline(best * 100, color=color, ls="--", lw=lw, label=f"exact optimum {best:.2%}")
    low, high = ax.get_ylim()
    ax.set_ylim(low, max(high, best * 100 + 0.04 * (high - low)))


def _draw(ax: Any, curves: list[tuple[str, np.ndarray, np.ndarray]], xlabel: str, color: str) -> None:
    styles = iter(["-", "--", ":", "-."])
    for label, x, rate in curves:
        ax.plot(
            x,
            rate,
            label=label,
            lw=1.2,
            color=color,
            ls=next(styles, "-"),
            marker="o" if len(rate) < 40 else None,
            ms=3,
        )
    if curves:
        ax.set_xlabel(xlabel, color=color)


@styled
def seed_curves(curves: dict[str, list[Path]], path: Path, optimum: dict[str, float]) -> None:
    """Validation win rate against moves of every training seed (``curves``: a panel title to its
    seeds' curve.csv files, each named ``...-seed<k>...`` or in a run folder ``<Name>-seed<k>``),
    with the exact optimum as a dashed line where ``optimum`` knows it."""
    # constrained layout makes room for each legend below its panel: inside, ten seeds' legend hid
    # the optimum's line and the curves' ends
    fig, axes = plt.subplots(len(curves), 1, figsize=(WIDTH, 4.6 * len(curves)), squeeze=False,
                             layout="constrained")  # fmt: skip
    for ax, (title, files) in zip(axes[:, 0], curves.items(), strict=True):
        for csv in files:
            data = np.genfromtxt(csv, delimiter=",", names=True, ndmin=1)
            named = csv.stem if "-seed" in csv.stem else csv.parent.name
            seed = named.rsplit("-seed", 1)[1].split("-")[0]
            ax.plot(
                data["moves"] / 1e6, data["win_rate"] * 100, marker="o", ms=3, lw=1.2, label=f"seed {seed}"
            )
        if title in optimum:
            _optimum_line(ax, optimum[title], color="tab:red", lw=1.2)
        ax.set_title(title)
        ax.set_xlabel("moves, millions (all deals)")
        ax.set_ylabel("validation win rate, % (2,000 deals)")
        handles = ax.get_legend_handles_labels()[0]
        if handles:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=min(len(handles), 3))
    save(fig, path)


#: What reading a damaged or half-written (gzipped) CSV raises.
UNREADABLE = (OSError, EOFError, ValueError, UnicodeDecodeError)


def _monitor_log(csv: Path) -> Any:
    """A Monitor log's columns (a pandas frame): pandas' C parser reads the published models' 2.5M
    games in a second where numpy's genfromtxt took 5 to 15; ``round_trip`` parses each number as
    Python does."""
    import pandas as pd

    data = pd.read_csv(csv, skiprows=1, float_precision="round_trip")
    missing = {"t", "l"} - set(data.columns) or ({"r"} - set(data.columns) if "won" not in data else set())
    if missing:
        raise ValueError(f"no column {', '.join(sorted(missing))}")
    return data


def _episodes(run: Path, lengths: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative steps (``lengths``: each game's length) and won flags of all episodes of a run, in the
    order they ended."""
    parts = []
    for csv in data_files(run, "*.monitor.csv*"):  # plain or gzipped
        try:
            data = _monitor_log(csv)
        except UNREADABLE as err:  # a damaged log: a warning, not the end of the plot
            warnings.warn(f"{csv}: skipped, not a readable Monitor log ({type(err).__name__}: {err})",
                          stacklevel=2)  # fmt: skip
            continue
        # the "won" column (info_keywords); older logs: a return of 1 or more means won
        won = data["won"].astype(str) == "True" if "won" in data else data["r"] >= 1.0
        parts.append((data["t"].to_numpy(), data["l"].to_numpy(), won.to_numpy(bool)))
    if not parts:
        return np.zeros(0), np.zeros(0)
    t, steps, won = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.lexsort((won, steps, t))  # by wall time: the envs ran side by side
    steps, won = steps[order], won[order]
    return (steps if lengths else np.cumsum(steps)), won.astype(float)
