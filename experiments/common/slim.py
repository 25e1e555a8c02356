"""Keep only what play needs in saved SB3 models: weights, spaces and the settings the loader reads.

    python -m quadrat_env.experiments.common.slim experiments/models

An SB3 zip as saved after training also carries the optimizer's moment estimates (as large as the
weights, twice over) and the last observations of every training env, pickled into ``data`` (1,024
envs of 376 floats: 2 MB for Quadrille). Play never reads either, and they made the committed
models four fifths of the repository. ``slim_model`` drops the last observations and episode
buffers from ``data``, keeps the optimizer's settings but not its state (SB3's loader wants the
member; an optimizer without state loads as a fresh one) and compresses every member. The policy's
weights (``policy.pth``) are copied byte for byte, so a slim model plays exactly as before;
``publish`` writes every model slim. Files already slim are left as they are.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zipfile
from pathlib import Path

from quadrat_env.arguments import description_of
from quadrat_env.extras import command
from quadrat_env.files import data_files, exclusive_folder
from quadrat_env.journal import replace_all

#: Fields of ``data`` that only training reads (SB3 restores each as None when absent).
TRAINING_ONLY = ("_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer",
                 "ep_success_buffer")  # fmt: skip
OPTIMIZER = "policy.optimizer.pth"
#: The journal of an unfinished slimming (``quadrat_env.journal.replace_all``).
JOURNAL = ".slim-journal.json"


def _fresh_optimizer(member: bytes) -> bytes:
    """The optimizer's state dict with its settings (``param_groups``) and no per-weight state."""
    import torch

    state = torch.load(io.BytesIO(member), map_location="cpu", weights_only=True)
    if not (isinstance(state, dict) and "param_groups" in state):
        raise ValueError(f"{OPTIMIZER} is not an optimizer's state dict")
    out = io.BytesIO()
    torch.save({"state": {}, "param_groups": state["param_groups"]}, out)
    return out.getvalue()


def slim_model(model: bytes) -> bytes:
    """A saved SB3 model's bytes without what only training reads (see the module docstring)."""
    with zipfile.ZipFile(io.BytesIO(model)) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for info, body in members:
            if info.filename == "data":
                kept = {k: v for k, v in json.loads(body).items() if k not in TRAINING_ONLY}
                body = json.dumps(kept, indent=4).encode()
            elif info.filename == OPTIMIZER:
                body = _fresh_optimizer(body)
            # a fixed date: the same model gives the same bytes
            archive.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), body,
                             compress_type=zipfile.ZIP_DEFLATED)  # fmt: skip
    return out.getvalue()


def is_slim(model: bytes) -> bool:
    """Whether ``slim_model`` would leave these bytes as they are."""
    return slim_model(model) == model


def slim_folder(models: Path) -> list[tuple[Path, int, int]]:
    """Every model under ``models`` made slim, all or (stopped) none of them: (path, bytes before,
    bytes after) for each one changed."""
    changes: dict[Path, bytes | None] = {}
    sizes = []
    with exclusive_folder(models):  # one writer at a time
        for path in data_files(models, "**/*.zip"):
            before = path.read_bytes()
            try:
                after = slim_model(before)
            except (ValueError, KeyError, zipfile.BadZipFile, RuntimeError, EOFError) as err:
                raise ValueError(f"{path} is not a saved SB3 model ({err}); nothing was changed") from None
            if after != before:
                changes[path] = after
                sizes.append((path, len(before), len(after)))
        if changes:
            replace_all(changes, models / JOURNAL)
    return sizes


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("models", type=Path, help="a folder of saved models (searched with its subfolders)")
    args = p.parse_args(argv)
    if not args.models.is_dir():
        p.error(f"{args.models} is not a folder")
    try:
        sizes = slim_folder(args.models)
    except ValueError as err:
        p.error(str(err))
    before, after = sum(s[1] for s in sizes), sum(s[2] for s in sizes)
    print(f"{len(sizes)} model(s) made slim: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
