"""Runs are never mixed or silently replaced; only finished, loadable runs are published; a
one-game benchmark never replaces the all-games tables."""

from __future__ import annotations

import json
import os

import pytest
import yaml

pytest.importorskip("sb3_contrib")

from quadrat_env.experiments import benchmark, publish, train  # noqa: E402
from quadrat_env.experiments.common import slim  # noqa: E402

ZU = "quadrat_env/Zudecken-v0"
ARGV = ["--env", ZU, "--algo", "ppo", "--seed", "1", "--timesteps", "64", "--n-envs", "1", "--no-progress"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    assert train.main([*ARGV, "--out", str(out)]) == 0
    return out, out / "ppo" / "Zudecken-seed1"


def test_a_second_run_into_a_finished_runs_folder_is_refused_and_changes_nothing(finished, capsys):
    out, folder = finished
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as exc:
        train.main([*ARGV, "--out", str(out)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--overwrite" in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_overwrite_starts_the_run_afresh(tmp_path):
    assert train.main([*ARGV, "--out", str(tmp_path)]) == 0
    folder = tmp_path / "ppo" / "Zudecken-seed1"
    (folder / "stray.txt").write_text("from another run")
    assert train.main([*ARGV, "--out", str(tmp_path), "--overwrite"]) == 0
    assert not (folder / "stray.txt").exists() and (folder / "summary.json").is_file()


def test_publish_takes_only_finished_loadable_runs(finished, tmp_path):
    _, folder = finished
    run = tmp_path / "run"
    run.mkdir()
    for name in ("config.yml", "model.zip"):
        (run / name).write_bytes((folder / name).read_bytes())
    with pytest.raises(ValueError, match="not a finished run"):  # no summary.json: still training
        publish.publish(run, tmp_path / "models")
    (run / "summary.json").write_bytes((folder / "summary.json").read_bytes())
    model = (folder / "model.zip").read_bytes()
    (run / "model.zip").write_bytes(model[: len(model) // 2])  # cut short
    with pytest.raises(ValueError, match="does not load"):
        publish.publish(run, tmp_path / "models")
    assert not list((tmp_path / "models").rglob("*.zip"))  # nothing published
    (run / "model.zip").write_bytes(model)
    published = publish.publish(run, tmp_path / "models").read_bytes()
    assert published == slim.slim_model(model) and len(published) < len(model)  # what play needs
    config = tmp_path / "models" / "configs" / "Zudecken-ppo-seed1.yml"
    assert yaml.safe_load(config.read_text())["seed"] == 1


def test_a_one_game_benchmark_may_not_rewrite_the_docs_tables(capsys):
    with pytest.raises(SystemExit) as exc:
        benchmark.main(["--env", ZU, "--update-docs", "--deals", "1"])
    assert exc.value.code == 2 and "without --env" in capsys.readouterr().err


@pytest.mark.parametrize(("how", "jobs"), [("SIGINT", "1"), ("SIGTERM", "2")])
def test_ctrl_c_or_sigterm_is_one_line_and_exit_130_or_143(tmp_path, how, jobs):
    """A command stopped by Ctrl-C or SIGTERM where it has no checkpoint to make: one line, exit 130 /
    143, no traceback; its worker processes stopped (no "leaked semaphore" warning)."""
    import signal
    import subprocess
    import sys
    import time

    # Ctrl-C as at a terminal, even where this suite runs with SIGINT ignored (a shell's background
    # job ignores it, and a child inherits that); set in the child's own code, not by a preexec_fn
    # (a fork of this process, which may hold JAX's threads)
    # ... and it says on stdout when its play starts (past the imports), so the signal comes then
    as_at_a_terminal = (
        "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import quadrat_env.experiments.common.parallel as parallel\n"
        "def marked(*args, _run=parallel.run_tasks, **kwargs):\n"
        "    print('playing', flush=True)\n"
        "    yield from _run(*args, **kwargs)\n"
        "parallel.run_tasks = marked\n"
        "runpy.run_module('quadrat_env.experiments.compare', run_name='__main__', alter_sys=True)"
    )
    out = str(tmp_path / "out")
    cmd = [sys.executable, "-c", as_at_a_terminal, "--env", "Zudecken", "--agent", "planner", "--deals",
           "1000", "--baselines", "greedy", "--jobs", jobs, "--no-progress", "--out", out]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "playing\n", proc.stderr.read()
    time.sleep(2.0)  # into the play (its worker processes started)
    proc.send_signal(getattr(signal, how))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + getattr(signal, how), err
    name = "Ctrl-C" if how == "SIGINT" else how
    assert err.strip().splitlines() == [f"compare: stopped by {name}"], err


def test_each_run_publishes_as_the_kind_that_says_how_it_learned():
    from quadrat_env.experiments.td import METHOD

    assert publish.kind_of({"method": METHOD, "algo": "maskable_ppo"}) == "rl"
    for init in ("experiments/models/Zudecken-rl.zip", "models/seeds/Zudecken32-rl-seed2.zip"):
        assert publish.kind_of({"algo": "maskable_ppo", "init": init}) == "td_ppo"
    assert (
        publish.kind_of({"algo": "maskable_ppo", "init": "models/Zudecken-maskable_ppo.zip"})
        == "maskable_ppo"
    )
    assert publish.kind_of({"algo": "ppo", "init": "models/Zudecken-rl.zip"}) == "ppo"
    assert {publish.kind_of(c) for c in ({"algo": "ppo"}, {"method": METHOD})} <= set(benchmark.MODEL_KINDS)
    assert benchmark.MODEL_KINDS["td_ppo"] == "maskable_ppo"


def test_the_jax_learners_runs_publish_as_td_and_jax_ppo_models():
    pytest.importorskip("jax")
    from quadrat_env.experiments import ppo_jax, td, td_jax

    # publish spells the JAX learners' methods itself (no JAX needed to publish): the same strings
    assert publish.kind_of({"method": td_jax.METHOD, "algo": "maskable_ppo"}) == "rl"
    assert publish.kind_of({"method": td.METHOD}) == "rl"
    assert publish.kind_of({"method": ppo_jax.METHOD, "seed": 0}) == "ppo_jax"
    afterstates = {"method": ppo_jax.METHOD, "features": "zudecken-afterstates"}
    assert publish.kind_of(afterstates) == "ppo_jax_afterstates"
    assert publish.kind_of({"method": ppo_jax.METHOD, "features": None}) == "ppo_jax"  # the MLP
    assert benchmark.MODEL_KINDS["ppo_jax_afterstates"] == "maskable_ppo"
    assert benchmark.MODEL_KINDS["ppo_jax"] == "maskable_ppo"  # ppo_jax exports MaskablePPO files


def test_a_model_says_whether_it_learned_from_the_sparse_or_the_dense_reward(tmp_path):
    configs = tmp_path / "configs"
    configs.mkdir()
    write = {
        "sparse": {"env_kwargs": {}},
        "dense": {"env_kwargs": {"reward_mode": "dense"}},
        "labels": {"method": "imitation of a clairvoyant solver", "env_kwargs": {"reward_mode": "dense"}},
    }
    for seed, config in enumerate(write.values()):
        (configs / f"Zudecken-ppo_jax-seed{seed}.yml").write_text(yaml.safe_dump(config))
    how = [benchmark.learned_from(tmp_path, ZU, "ppo_jax", seed) for seed in range(4)]  # seed 3: no config
    assert how == ["the reward", "the dense reward", "a clairvoyant solver's labels", "the reward"]
    assert benchmark.learned_label("ppo_jax", "the dense reward") == "PPO in JAX (ppo_jax)"
    assert "afterstate policy" in benchmark.learned_label("ppo_jax_afterstates", "the reward")
    assert benchmark.learned_label("maskable_ppo", how[2]).startswith("imitation of")


def test_the_training_table_names_the_dense_reward_and_the_entropy_bonus(tmp_path):
    configs = tmp_path / "configs"
    configs.mkdir()
    summary = {"moves": 1000, "seconds": 2.0, "moves_per_second": 500, "network": "mlp", "net_arch": [64, 64]}
    for seed, extra in enumerate(({"env_kwargs": {"reward_mode": "dense"}}, {"ent_coef": 0.05})):
        config = {"seed": seed, "n_envs": 8, "method": "PPO from the reward, JAX", "env_kwargs": {}, **extra}
        (configs / f"Quadrille-ppo_jax-seed{seed}.yml").write_text(yaml.safe_dump(config))
        (configs / f"Quadrille-ppo_jax-seed{seed}-summary.json").write_text(json.dumps(summary))
    table = benchmark.training_table(tmp_path)
    assert "| Quadrille-ppo_jax | 0 | PPO from the reward, JAX, dense reward, mlp 64x64, 8 envs |" in table
    assert "| Quadrille-ppo_jax | 1 | PPO from the reward, JAX, mlp 64x64, ent_coef 0.05, 8 envs |" in table


def test_a_forged_journal_stops_the_benchmark_before_any_deal_is_played(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / benchmark.JOURNAL).write_text(json.dumps({"state": "renaming", "plan": [[str(victim), None]]}))
    argv = ["--env", ZU, "--deals", "2", "--planner-deals", "0", "--out", str(out), "--no-plots"]
    assert benchmark.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "not a journal this package wrote" in lines[0]
    assert victim.read_text() == "keep me" and not (out / "benchmark.json").exists()


def test_publish_takes_the_models_folder_alone_and_refuses_a_forged_journal(finished, tmp_path, capsys):
    from quadrat_env.files import exclusive_folder

    _, folder = finished
    models = tmp_path / "models"
    with exclusive_folder(models), pytest.raises(SystemExit) as stop:  # another writer holds it
        publish.main([str(folder), "--models", str(models)])
    assert stop.value.code == 2 and "another run is writing" in capsys.readouterr().err
    (models / publish.JOURNAL).write_text(json.dumps({"state": "writing", "plan": [["../x", None]]}))
    with pytest.raises(SystemExit) as stop:
        publish.main([str(folder), "--models", str(models)])
    assert stop.value.code == 2 and "not a journal this package wrote" in capsys.readouterr().err
    assert not list(models.rglob("*.zip"))


def test_a_second_run_into_a_held_run_folder_is_refused_in_one_line(tmp_path, capsys):
    from quadrat_env.experiments import td

    from quadrat_env.files import exclusive_run

    for module, argv, folder in (
        (train, [*ARGV, "--out", str(tmp_path)], tmp_path / "ppo" / "Zudecken-seed1"),
        (td, ["--env", ZU, "--out", str(tmp_path), "--moves", "1000"], tmp_path / "td" / "Zudecken-seed0"),
    ):
        with exclusive_run(folder), pytest.raises(SystemExit) as stop:  # a first run holds it
            module.main(argv)
        assert stop.value.code == 2 and "another run is writing to" in capsys.readouterr().err
        assert not folder.exists()  # the second run claimed nothing


def test_a_file_size_limit_is_one_line_and_exit_1(tmp_path):
    """``ulimit -f`` (as a full disk): the write fails with an OSError the command answers in one line."""
    import subprocess
    import sys

    # the limit set by the child's shell (50 kB: a model is more), not by a preexec_fn (a fork of this
    # process, which may hold JAX's threads)
    train = (
        f"{sys.executable} -m quadrat_env.experiments.train --env Quadrat --algo ppo --timesteps 512 "
        "--n-envs 4 --no-progress --out runs"
    )
    out = subprocess.run(["bash", "-c", f"ulimit -f 50 && exec {train}"], capture_output=True, text=True,
                         cwd=tmp_path)  # fmt: skip
    assert out.returncode == 1, out.stderr[-2000:]
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("train: File too large") and "kept whole" in last and "Traceback" not in out.stderr


def test_an_address_space_limit_too_small_to_start_is_refused_in_one_line_not_a_hang(tmp_path):
    """``ulimit -v`` of about 1 GB: the run would run out of address space while it compiles, where
    OpenBLAS (loaded by numba through scipy) spun for good at its import, and CPython 3.11 can loop
    for good in its exception handling; it is refused at the memory check instead."""
    import subprocess
    import sys

    td = f"{sys.executable} -m quadrat_env.experiments.cli train --algo td --env {ZU} --moves 2000"
    limited = f"ulimit -v 1000000 && exec {td} --no-progress --out runs"
    out = subprocess.run(["bash", "-c", limited], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 2, out.stderr[-2000:]
    last = out.stderr.strip().splitlines()[-1]
    assert "of address space more" in last and "the limit (ulimit -v) leaves" in last, out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "runs").exists()


def test_what_starting_reserves_is_held_against_the_address_limit_only(monkeypatch):
    from quadrat_env.core import checks

    monkeypatch.setattr(checks, "available_memory", lambda: 2**30)
    for left, refused in [(None, False), (2**30, False), (600 * 2**20, True)]:
        monkeypatch.setattr(checks, "address_space_left", lambda left=left: left)
        checks.check_memory(2**20, "x", "lower y")  # no reserves: only the memory counts
        if refused:
            with pytest.raises(ValueError, match="address space more .* leaves 0.6 GiB: raise the limit"):
                checks.check_memory(2**20, "x", "lower y", reserves=640 * 2**20)
        else:
            checks.check_memory(2**20, "x", "lower y", reserves=640 * 2**20)


def test_one_blas_thread_is_set_only_under_an_address_limit_and_a_users_own_setting_stays(monkeypatch):
    import resource

    from quadrat_env.extras import one_blas_thread_under_an_address_limit

    for limit, given, want in [(resource.RLIM_INFINITY, None, None), (10**9, None, "1"), (10**9, "4", "4")]:
        monkeypatch.setattr(resource, "getrlimit", lambda _, limit=limit: (limit, resource.RLIM_INFINITY))
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
        if given is not None:
            monkeypatch.setenv("OPENBLAS_NUM_THREADS", given)
        one_blas_thread_under_an_address_limit()
        assert os.environ.get("OPENBLAS_NUM_THREADS") == want


def test_resume_names_a_checkpoint_that_is_a_folder(tmp_path):
    from quadrat_env.experiments.common.runs import check_resumable

    (tmp_path / "config.yml").write_text("seed: 1\n")
    (tmp_path / "checkpoint.npz").mkdir()
    with pytest.raises(ValueError, match="checkpoint.npz is not a file"):
        check_resumable(tmp_path, {"seed": 1}, "checkpoint.npz")


def test_resume_of_a_finished_run_removes_the_checkpoint_a_kill_left(tmp_path):
    # a run writes its summary, then removes its checkpoint: killed between the two, the finished
    # folder kept a stale checkpoint.npz (and any half-written copy beside it)
    from quadrat_env.experiments.common.runs import check_resumable

    (tmp_path / "config.yml").write_text("seed: 1\n")
    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "checkpoint.npz").write_bytes(b"stale")
    (tmp_path / ".checkpoint.npz.tmp1234").write_bytes(b"half")
    with pytest.raises(ValueError, match="has finished"):
        check_resumable(tmp_path, {"seed": 1}, "checkpoint.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yml", "summary.json"]


def test_overwrite_keeps_the_earlier_run_until_the_new_one_finishes(tmp_path, capsys):
    from quadrat_env.experiments.common.runs import claim_run_dir

    from quadrat_env.files import finish_run, replaced_dir

    run_dir = tmp_path / "td" / "Zudecken32-seed0"
    run_dir.mkdir(parents=True)
    (run_dir / "summary.json").write_text('{"finished": 1}')
    claim_run_dir(run_dir, overwrite=True)  # a new run starts in an empty folder ...
    kept = replaced_dir(run_dir)
    assert list(run_dir.iterdir()) == [] and (kept / "summary.json").read_text() == '{"finished": 1}'
    assert f"kept in {kept}" in capsys.readouterr().err
    (run_dir / "checkpoint.npz").write_bytes(b"partway")  # ... and is stopped on the way, then replaced
    claim_run_dir(run_dir, overwrite=True)  # again: the unfinished one goes, the finished one stays
    assert list(run_dir.iterdir()) == [] and (kept / "summary.json").is_file()
    (run_dir / "summary.json").write_text('{"finished": 2}')
    finish_run(run_dir, "checkpoint.npz")  # the new run is whole: the earlier one is deleted
    assert not kept.parent.exists() and (run_dir / "summary.json").read_text() == '{"finished": 2}'
    assert sorted(p.name for p in (tmp_path / "td").iterdir()) == ["Zudecken32-seed0"]
