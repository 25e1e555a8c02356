"""Copy finished runs into ``experiments/models/``, where the benchmark finds them.

    python -m quadrat_env.experiments.publish runs/maskable_ppo/*-seed* runs/ppo/*-seed*

Seed 0 becomes the committed model ``<Name>-<algo>.zip`` with its Monitor logs (for the learning
curves) and config; other seeds go to ``seeds/<Name>-<algo>-seed<k>.zip``. Every run's resolved
config and summary go to ``configs/``.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

from quadrat_env.agents.safe_load import load_model

from quadrat_env.extras import command, importing
from quadrat_env.files import atomic_open, atomic_write, data_files
from quadrat_env.registry import short_name as env_name

with importing(__name__):  # the 'train' extra: one line naming it, not a traceback, if missing
    import yaml

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
    algo = config.get("algo", "maskable_ppo")  # imitation runs train a MaskablePPO model
    try:  # loads without unpickling anything, and checks the model fits the env
        load_model(model, algo, config["env_id"])
    except Exception as err:  # noqa: BLE001 - whatever is wrong with it, it is not published
        raise ValueError(f"{model} does not load as a {algo} model for {config['env_id']}: {err}") from None
    stem = f"{env_name(config['env_id'])}-{algo}"
    seed = int(config["seed"])
    (models / "seeds").mkdir(parents=True, exist_ok=True)
    (models / "configs").mkdir(parents=True, exist_ok=True)
    target = models / f"{stem}.zip" if seed == 0 else models / "seeds" / f"{stem}-seed{seed}.zip"
    atomic_write(target, model.read_bytes())
    atomic_write(models / "configs" / f"{stem}-seed{seed}.yml", config_path.read_bytes())
    for extra in ("summary.json", "rounds.json"):
        if (run / extra).is_file():
            atomic_write(models / "configs" / f"{stem}-seed{seed}-{extra}", (run / extra).read_bytes())
    if seed == 0 and (run / "monitor").is_dir():
        gzip_monitor_logs(run / "monitor", models / "monitor" / stem)
    return target


def gzip_monitor_logs(source: Path, target: Path) -> None:
    """Monitor CSVs, gzipped (numpy and the plots read them as they are); an earlier run's logs in
    ``target`` go (a DummyVecEnv run writes one file per env, the batched env one in all)."""
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.monitor.csv.gz"):
        old.unlink()
    for csv in data_files(source, "*.monitor.csv"):
        name = f"{csv.name}.gz"  # the name in the gzip header, as when written in place
        with atomic_open(target / name, "wb") as f, gzip.GzipFile(name, "wb", fileobj=f, mtime=0) as dst:
            dst.write(csv.read_bytes())


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path, help="run folders")
    p.add_argument("--models", type=Path, default=MODELS)
    args = p.parse_args(argv)
    for run in args.runs:
        try:
            print(f"{run} -> {publish(run, args.models)}")
        except (ValueError, KeyError) as err:
            p.error(str(err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
