"""Copy finished runs into ``experiments/models/``, where the benchmark finds them.

    python -m quadrat_env.experiments.publish runs/maskable_ppo/*-seed* runs/ppo/*-seed*

    python -m quadrat_env.experiments.publish --best Zudecken-ppo_jax_afterstates

The published seed (seed 0, or the one ``--best`` chose) is the committed model ``<Name>-<algo>.zip``
(with its Monitor logs, for the learning curves); other seeds go to ``seeds/<Name>-<algo>-seed<k>.zip``.
Every run's resolved config and summary go to ``configs/``. ``--best`` makes the committed seed with
the highest validation win rate the published one (chosen on the validation deals, never on the
held-out test deals; ``experiments/common/committed.py``).
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from pathlib import Path

from quadrat_env.agents.safe_load import load_model
from quadrat_env.experiments.common.committed import best_seed, promotion, seed_path, validation_win_rates

from quadrat_env.arguments import description_of
from quadrat_env.extras import command, importing
from quadrat_env.files import data_files, exclusive_folder
from quadrat_env.journal import read_journal, replace_all
from quadrat_env.registry import short_name as env_name

with importing(__name__):  # the 'train' extra: one line naming it, not a traceback, if missing
    import yaml
    from quadrat_env.experiments.benchmark import MODEL_KINDS
    from quadrat_env.experiments.common.slim import slim_model

MODELS = Path(__file__).parent / "models"


def publish(run: Path, models: Path = MODELS) -> Path:
    config_path, model = run / "config.yml", run / "model.zip"
    # train writes summary.json, imitate rounds.json, once the run has finished (model.zip is saved
    # earlier: at each new best validation checkpoint)
    finished = (run / "summary.json").is_file() or (run / "rounds.json").is_file()
    if not config_path.is_file() or not model.is_file() or not finished:
        raise ValueError(f"{run} is not a finished run (needs config.yml, model.zip and summary.json "
                         "or rounds.json)")  # fmt: skip
    config = yaml.safe_load(config_path.read_text())
    kind = kind_of(config)
    try:  # loads without unpickling anything, and checks the model fits the env
        load_model(model, MODEL_KINDS[kind], config["env_id"])
    except Exception as err:  # noqa: BLE001 - whatever is wrong with it, it is not published
        raise ValueError(f"{model} does not load as a {kind} model for {config['env_id']}: {err}") from None
    stem, seed = f"{env_name(config['env_id'])}-{kind}", int(config["seed"])
    target = seed_path(models, stem, seed)
    changes: dict[Path, bytes | None] = {
        target: slim_model(model.read_bytes()),  # what play needs, no optimizer state or last observations
        models / "configs" / f"{stem}-seed{seed}.yml": config_path.read_bytes(),
    }
    for extra in ("summary.json", "rounds.json", "curve.csv"):
        if (run / extra).is_file():
            changes[models / "configs" / f"{stem}-seed{seed}-{extra}"] = (run / extra).read_bytes()
    if target == models / f"{stem}.zip" and (run / "monitor").is_dir():
        changes.update(monitor_logs(run / "monitor", models / "monitor" / stem))
    replace_all(changes, models / JOURNAL)  # all the run's files, or (stopped) none of them
    return target


#: The journal of an unfinished publish (``quadrat_env.journal.replace_all``).
JOURNAL = ".publish-journal.json"


#: The kind of model a run makes, by the ``method`` its config names (td, td_jax, ppo_jax: the JAX
#: learners' names are spelled here, so that publishing does not need JAX; a test checks them).
METHOD_KINDS = {
    "afterstate TD(0) from the reward": "rl",
    "afterstate TD(0) from the reward, JAX": "rl",
    "PPO from the reward, JAX": "ppo_jax",
}


def kind_of(config: dict) -> str:
    """The kind of committed model a run makes (``benchmark.MODEL_KINDS``): ``rl`` for afterstate TD
    runs (MaskablePPO files), ``ppo_jax`` for the JAX PPO runs (``ppo_jax_afterstates`` where the
    policy is an afterstate network), ``td_ppo`` for a MaskablePPO run
    started (``--init``) from a TD run's model (``<Name>-rl.zip`` or ``seeds/<Name>-rl-seed<k>.zip``:
    PPO from the reward on a network that learned from the reward), else the run's algorithm;
    imitation runs train MaskablePPO models."""
    if config.get("method") in METHOD_KINDS:
        kind = METHOD_KINDS[config["method"]]
        # PPO whose policy is an afterstate network is a learner of its own, beside the MLP's row
        return f"{kind}_afterstates" if kind == "ppo_jax" and config.get("features") else kind
    algo = config.get("algo", "maskable_ppo")
    init = config.get("init")
    if algo == "maskable_ppo" and init and re.search(r"-rl(-seed\d+)?$", Path(str(init)).stem):
        return "td_ppo"
    return algo


def monitor_logs(source: Path, target: Path) -> dict[Path, bytes | None]:
    """The changes that put a run's Monitor CSVs, gzipped, into ``target`` (numpy and the plots read
    them as they are), an earlier run's logs there removed (a DummyVecEnv run writes one file per
    env, the batched env one in all)."""
    import io

    changes: dict[Path, bytes | None] = dict.fromkeys(data_files(target, "*.monitor.csv.gz"))
    for csv in data_files(source, "*.monitor.csv"):
        name = f"{csv.name}.gz"  # the name in the gzip header, as when written in place
        buffer = io.BytesIO()
        with gzip.GzipFile(name, "wb", fileobj=buffer, mtime=0) as dst:
            dst.write(csv.read_bytes())
        changes[target / name] = buffer.getvalue()
    return changes


def publish_best(stem: str, models: Path = MODELS) -> str:
    """Make the committed seed of ``stem`` with the best validation win rate the published model."""
    rates = validation_win_rates(models, stem)
    seed = best_seed(models, stem)
    replace_all(promotion(models, stem, seed), models / JOURNAL)
    listed = ", ".join(f"{k}: {v:.2%}" for k, v in rates.items())
    return f"{stem}: seed {seed} is the published model {models / stem}.zip (validation win rates {listed})"


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("runs", nargs="*", type=Path, help="run folders")
    p.add_argument("--best", nargs="+", default=[], metavar="NAME-KIND",
                   help="then publish the committed seed with the best validation win rate")  # fmt: skip
    p.add_argument("--models", type=Path, default=MODELS)
    args = p.parse_args(argv)
    if not args.runs and not args.best:
        p.error("name run folders to publish, or --best NAME-KIND")
    try:  # one writer of a models folder at a time (slim and a second publish are refused)
        with exclusive_folder(args.models):
            read_journal(args.models / JOURNAL)  # a damaged or forged journal: refused before any work
            for run in args.runs:
                print(f"{run} -> {publish(run, args.models)}")
            for stem in args.best:
                print(publish_best(stem, args.models))
    except (ValueError, KeyError) as err:  # FolderBusy and JournalError are ValueErrors
        p.error(str(err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
