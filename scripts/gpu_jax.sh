#!/usr/bin/env bash
# The JAX envs' GPU figures, as one prepared run for a lent GPU machine (device tool):
#   here:  bash scripts/gpu_jax.sh wheels     # .whl/: gymnasium, farama-notifications, quadrat-env
#   there: bash scripts/gpu_jax.sh run        # run with carry [".whl"]; results under $OUT
#   the learners' seeds: scripts/gpu_rows.sh
# The GPU machines have python3 3.12 with jax (CUDA), optax, numpy, numba, tqdm and PyYAML, not
# gymnasium or SB3. Then copy $OUT/throughput_jax_gpu.{json,md} into results/ and the table into
# docs/speed.md.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
wheels)
    grep -qx '/.whl/' .git/info/exclude || echo /.whl/ >>.git/info/exclude
    rm -rf .whl && mkdir .whl
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_17_x86_64 -d .whl gymnasium==1.4.0 farama-notifications==0.0.4
    python3 -m pip wheel -q --no-deps -w .whl .
    ls -la .whl
    ;;
run)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
    out="$(realpath -m "${OUT:-runs/gpu}")"
    mkdir -p "$out"
    cd /tmp  # not the checkout: its quadrat_env/ folder would hide the installed package
    nvidia-smi --query-gpu=name,memory.total --format=csv | tee "$out/device.txt"
    timeout 420 python3 -m quadrat_env.experiments.throughput --jax only --seconds 1 --out "$out"
    timeout 150 python3 -m quadrat_env.experiments.checks.jax_equal --deals 2000 --out "$out"
    ;;
*)
    echo "usage: bash scripts/gpu_jax.sh wheels|run" >&2
    exit 2
    ;;
esac
