#!/usr/bin/env bash
# The JAX envs' GPU figures, as one prepared run for a lent GPU machine (device tool):
#   here:  bash scripts/gpu_jax.sh wheels     # .whl/: gymnasium, farama-notifications, quadrat-env
#   there: bash scripts/gpu_jax.sh run        # run with carry [".whl"]; results under $OUT
#   there: bash scripts/gpu_jax.sh learn      # Zudecken32, one seed: td_jax; ppo_jax, afterstate policy
# The GPU machines have python3 3.12 with jax (CUDA), optax, numpy, numba, tqdm and PyYAML, not
# gymnasium or SB3. Then copy $OUT/throughput_jax_gpu.{json,md} into results/ and the table into
# docs/speed.md; make the runs' model.zip here: python -m quadrat_env.experiments.td_jax --export DIR.
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
run | learn)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
    out="${OUT:-runs/gpu}"
    mkdir -p "$out"
    nvidia-smi --query-gpu=name,memory.total --format=csv | tee "$out/device.txt"
    if [ "$1" = learn ]; then  # a stopped run keeps its curve and checkpoint (SIGTERM), for --resume
        timeout -s TERM 240 python3 -m quadrat_env.experiments.td_jax --env Zudecken32 --n-envs 4096 \
            --eval-every 10000000 --out "$out/runs" --no-progress || true
        timeout -s TERM 240 python3 -m quadrat_env.experiments.ppo_jax --env Zudecken32 \
            --set features=zudecken-afterstates --eval-every 10000000 --out "$out/runs" --no-progress || true
        exit 0
    fi
    timeout 420 python3 -m quadrat_env.experiments.throughput --jax only --seconds 1 --out "$out"
    timeout 150 python3 -m quadrat_env.experiments.jax_equal --deals 2000 --out "$out"
    ;;
*)
    echo "usage: bash scripts/gpu_jax.sh wheels|run|learn" >&2
    exit 2
    ;;
esac
