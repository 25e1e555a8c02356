#!/usr/bin/env bash
# The JAX learners' ten-seed rows on one lent GPU (device tool), in calls of at most 10 minutes:
#   here:  bash scripts/gpu_jax.sh wheels      # .whl/: gymnasium, farama-notifications, quadrat-env
#          mkdir -p .gpu && cp -r ~/.cache/quadrat_env/gpu_rows/. .gpu/   # stopped runs, if any
#   there: bash scripts/gpu_rows.sh            # run with carry [".whl", ".gpu"]; all under $OUT
# 1. afterstate TD(0), Zudecken32, seeds 0-9, td_jax.yml as it is (60M moves, 256 deals a step),
#    all at once on the one GPU: each seed's seconds are with the others beside it.
# 2. with the time left: afterstate-policy PPO, Zudecken32, seeds 0-9 at once (ppo_jax_cpu.yml),
#    the largest of 60M/40M/20M/10M/5M/2M moves a seed that the TD seeds' speed says will fit.
# A seed still running at its limit stops on SIGTERM with a checkpoint; carried back in .gpu/ (its
# <learner>/<Env>-seed<k>/ folder), the next call resumes it, and skips a seed that has finished.
# Measured on one H200: the ten TD seeds make about 790,000 moves a second together (three: about
# 800,000; results/td_jax_gpu), after about 75 s of compiling: the ten need two calls.
# Back here: tar xzf runs.tar.gz; keep stopped runs in ~/.cache/quadrat_env/gpu_rows/ for the next
# call; python -m quadrat_env.experiments.td_jax --export DIR writes a finished seed's model.zip.
# THROUGHPUT=S: first the JAX envs' speed table (throughput --jax only), S seconds at most.
# PPO_MOVES: PPO's millions of moves a seed; TD_LIMIT: seconds for the TD seeds (all but 90 s).
# TD_EXTRA, PPO_EXTRA: more options for the runs (a small run on a CPU to try this script).
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 2
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
out="$(realpath -m "${OUT:-runs/gpu}")"
work="${WORK:-/tmp/gpu_rows}"
deadline="${DEADLINE:-520}"  # seconds from now by which every run has stopped
mkdir -p "$out" "$work"
repo=$PWD
[ -d "$repo/.gpu" ] && cp -r "$repo/.gpu/." "$work/"  # runs stopped in an earlier call
cd "$work"  # not the checkout: its quadrat_env/ folder would hide the installed package
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/device.txt"
python3 -c "import jax; print('jax', jax.__version__, jax.devices())" | tee -a "$out/device.txt"
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 15 >"$work/gpu_use.csv" 2>&1 &
smi=$!

seeds() {  # seeds LEARNER ENV LIMIT_S ARGS...: seeds 0-9 at once, each stopped by SIGTERM at LIMIT_S
    local learner=$1 env=$2 limit=$3 pids=() again
    shift 3
    for s in 0 1 2 3 4 5 6 7 8 9; do
        local run="$work/$learner/$env-seed$s"
        [ -f "$run/summary.json" ] && continue  # finished in an earlier call
        again=() && [ -f "$run/checkpoint.npz" ] && again=(--resume)
        timeout -k 60 -s TERM "$limit" python3 -m "quadrat_env.experiments.$learner" --env "$env" \
            --seed "$s" --out "$work" --no-progress "${again[@]}" "$@" >>"$work/$learner-$s.log" 2>&1 &
        pids+=($!)
    done
    [ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
    tail -n 1 "$work/$learner"-*.log
}

if [ -n "${THROUGHPUT:-}" ]; then  # the JAX envs' speed table for docs/speed.md, first
    echo "== throughput of the JAX envs, at $SECONDS s"
    timeout -k 10 "$THROUGHPUT" python3 -m quadrat_env.experiments.throughput --jax only --seconds 1 --out "$out"
fi
td_limit=${TD_LIMIT:-$((deadline - SECONDS - 90))}  # TD first: PPO gets what is left
echo "== afterstate TD(0), Zudecken32, ten seeds at once, for ${td_limit}s at most, at $SECONDS s"
seeds td_jax Zudecken32 "$td_limit" --eval-every 10000000 ${TD_EXTRA:-}
left=$((deadline - SECONDS))
moves=${PPO_MOVES:-$(python3 - "$work" "$left" <<'EOF'
import json, pathlib, sys
rates = [json.loads(p.read_text())["moves_per_second"] for p in pathlib.Path(sys.argv[1]).glob("td_jax/*/summary.json")]
# Assumed: PPO scoring every afterstate makes a quarter of TD's moves a second (2 CPU cores: about a
# fifth); 60 s go to compiling, validating and the held-out deals.
fit = min(rates, default=0) / 4 * (int(sys.argv[2]) - 60) * 0.8
print(next((m for m in (60, 40, 20, 10, 5, 2) if m * 1e6 <= fit), 0))
EOF
)}
echo "== TD rates (moves/s a seed): $(cat "$work"/td_jax/*/summary.json 2>/dev/null | grep -o '"moves_per_second": [0-9]*' | tr '\n' ' ')"
if [ "${moves:-0}" -gt 0 ]; then
    echo "== afterstate-policy PPO, Zudecken32, ten seeds at once, ${moves}M moves each, at $SECONDS s"
    seeds ppo_jax Zudecken32 $((left - 45)) --hyperparams "$repo/experiments/hyperparams/ppo_jax_cpu.yml" \
        --set features=zudecken-afterstates --moves "${moves}000000" --eval-every $((moves * 250000)) ${PPO_EXTRA:-}
else
    echo "== no PPO: ${left}s left"
fi
kill "$smi" 2>/dev/null
echo "== done at $SECONDS s"
tar czf "$out/runs.tar.gz" -C "$work" .
ls -la "$out"
