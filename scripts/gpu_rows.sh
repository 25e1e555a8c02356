#!/usr/bin/env bash
# The JAX learners' ten-seed rows on one lent GPU (device tool), in calls of at most 10 minutes:
#   here:  bash scripts/gpu_jax.sh wheels      # .whl/: gymnasium, farama-notifications, quadrat-env
#          mkdir -p .gpu && cp -r ~/.cache/quadrat_env/gpu_rows/. .gpu/   # stopped runs, if any
#   there: bash scripts/gpu_rows.sh            # run with carry [".whl", ".gpu"]; all under $OUT
# ROWS: the rows, in order, as learner:Env (default: td_jax:Zudecken32 ppo_jax:Zudecken32
# td_jax:Zudecken ppo_jax:Zudecken; the ladder's rungs: td_jax:Zudecken40 ppo_mlp:Zudecken40 ...,
# brought back by `quadrat ladder --import-runs DIR`, DIR where runs.tar.gz was unpacked); each
# row's ten seeds train as one vmapped program (--seed 0 1 ... 9; PER_SEED=1: a process a seed, as
# before) until they finish or the call's time is up; a row starts only with at least ROW_MIN seconds
# (default 150) left. Settings, fixed so a stopped seed resumes:
#   td_jax   td_jax.yml as it is (Zudecken32 60M moves, Zudecken 30M; 256 deals a step)
#   ppo_mlp  ppo_jax_cpu.yml as it is, as the ladder trains PPO (the MLP, 16M moves a rung), its runs
#            under ladder/ppo_jax/
#   ppo_jax  ppo_jax_cpu.yml with the afterstate network as the policy and TD(0)'s moves on the same
#            game (the fair budget; PPO_MOVES=N: N million instead), entropy bonus 0.05 (ten seeds of
#            1M moves on 2 CPU cores: IQM 53.12% against 0.01's 42.87%; results/ppo_jax_afterstates_ent0.05);
#            PPO_SET="k=v ...": settings for the PPO runs instead (each passed as --set, the same in
#            every call; PPO_SET="": the YAML's 0.01)
# TD_SET="k=v ...": settings for the TD runs (as --set; default none: td_jax.yml as it is). With
# TAG=name every run of the call goes to <work>/name/ (and counts as committed in
# results/<learner>_gpu_name/), apart from the published rows: a sweep, e.g. TAG=wide
# TD_SET='features_kwargs={"channels":64,"hidden":128}' ROWS=td_jax:Zudecken SEEDS="0 1 2"
# (a value holds no spaces: the settings are split at them).
# SWEEP='tag1 k=v ...; tag2 k=v ...': each td_jax row trains every entry at once, each its own
# program (as TAG=tag1 TD_SET="k=v ..."), sharing the GPU: several networks' seeds in one call, e.g.
# SWEEP='wide64 features_kwargs={"channels":64}; head128 features_kwargs={"hidden":128}'.
# Seeds still running at the limit stop on SIGTERM with a checkpoint each; carried back in .gpu/ (each
# seed's <learner>/<Env>-seed<k>/ folder), the next call resumes them together (a group resumes
# only with the same seeds), and skips seeds that have finished (there, or committed in
# results/<learner>_gpu/<Env>-seed<k>/).
# Measured on one H200 (results/td_jax_gpu): with a process a seed the ten Zudecken32 TD seeds made
# about 790,000 moves a second together (three: about 800,000); as one program seven made 1.83M
# (60M moves each in 250 s, compiling included) and ten Zudecken seeds 1.27M (30M each in 279 s
# over two calls).
# Back here: tar xzf runs.tar.gz; keep stopped runs in ~/.cache/quadrat_env/gpu_rows/ for the next
# call; python -m quadrat_env.experiments.td_jax --export DIR writes a finished seed's model.zip.
# THROUGHPUT=S: first the JAX envs' speed table (throughput --jax only), S seconds at most.
# DEADLINE: seconds from the start by which every run has stopped (520). SEEDS: which (0-9).
# EXTRA: more options for every run (a small run on a CPU to try this script).
set -uo pipefail
cd "$(dirname "$0")/.."
# every setting checked before any work: one line and exit 2 (a row that cannot run is no result)
for r in ${ROWS:-td_jax:Zudecken32}; do
    [[ "$r" =~ ^(td_jax|ppo_jax|ppo_mlp):[A-Za-z0-9]+$ ]] || { echo "gpu_rows: ROWS: '$r' is not td_jax:<Env>, ppo_jax:<Env> or ppo_mlp:<Env>" >&2; exit 2; }
done
for s in ${SEEDS:-0}; do
    [[ "$s" =~ ^[0-9]+$ ]] || { echo "gpu_rows: SEEDS: '$s' is not a whole number" >&2; exit 2; }
done
if [ -n "${TAG:-}" ] && { ! [[ "$TAG" =~ ^[A-Za-z0-9_.-]+$ ]] || [[ "$TAG" =~ ^\.+$ ]]; }; then
    echo "gpu_rows: TAG: '$TAG' must be a plain name (letters, digits, _ . -), not a path" >&2; exit 2
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 2
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
out="$(realpath -m "${OUT:-runs/gpu}")"
work="${WORK:-/tmp/gpu_rows}"
deadline="${DEADLINE:-520}"
rows="${ROWS:-td_jax:Zudecken32 ppo_jax:Zudecken32 td_jax:Zudecken ppo_jax:Zudecken}"
mkdir -p "$out" "$work"
repo=$PWD
[ -d "$repo/.gpu" ] && cp -r "$repo/.gpu/." "$work/"  # runs stopped in an earlier call
cd "$work"  # not the checkout: its quadrat_env/ folder would hide the installed package
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/device.txt"
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 15 >"$work/gpu_use.csv" 2>&1 &
fi
python3 -c "import jax; print('jax', jax.__version__, jax.devices())" | tee -a "$out/device.txt"

td_moves() {  # td_moves ENV: the moves td_jax.yml gives the game (PPO's fair budget)
    python3 - "$repo/experiments/hyperparams/td_jax.yml" "$1" <<'EOF'
import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))[f"quadrat_env/{sys.argv[2]}-v0"]["n_moves"])
EOF
}

row() {  # row LEARNER ENV LIMIT_S: its seeds at once, each stopped by SIGTERM at LIMIT_S
    local learner=$1 env=$2 limit=$3 pids=() args module=$1
    local base="$work${TAG:+/$TAG}" kept="$repo/results/${learner}_gpu${TAG:+_$TAG}"
    [ "$learner" = ppo_mlp ] && base="$base/ladder"  # its runs apart from the afterstate PPO's of ppo_jax
    mkdir -p "$base"
    if [ "$learner" = td_jax ]; then
        args=(--eval-every $(($(td_moves "$env") / 6)))
        for kv in ${TD_SET:-}; do args+=(--set "$kv"); done
    elif [ "$learner" = ppo_mlp ]; then  # the ladder's PPO: ppo_jax_cpu.yml as it is (the MLP, its budget)
        module=ppo_jax
        args=(--hyperparams "$repo/experiments/hyperparams/ppo_jax_cpu.yml")
    else
        local moves=$((${PPO_MOVES:-0} * 1000000)) && [ "$moves" -gt 0 ] || moves=$(td_moves "$env")
        args=(--hyperparams "$repo/experiments/hyperparams/ppo_jax_cpu.yml" --set features=zudecken-afterstates
              --moves "$moves" --eval-every $((moves / 6)))
        for kv in ${PPO_SET-ent_coef=0.05}; do args+=(--set "$kv"); done
    fi
    local again=() fresh=()  # seeds stopped in an earlier call (one program: resumed together), new ones
    for s in ${SEEDS:-0 1 2 3 4 5 6 7 8 9}; do
        local run="$base/$module/$env-seed$s"
        [ -f "$run/summary.json" ] && continue  # finished in an earlier call
        [ -f "$kept/$env-seed$s/summary.json" ] && continue  # committed already
        if [ -f "$run/checkpoint.npz" ]; then again+=("$s"); else fresh+=("$s"); fi
    done
    local group flags
    for group in "${again[*]}" "${fresh[*]}"; do
        [ -n "$group" ] || continue
        flags=(--overwrite) && [ "$group" = "${again[*]}" ] && flags=(--resume)  # no checkpoint: nothing to keep
        if [ -n "${PER_SEED:-}" ]; then set -- $group; else set -- "$group"; fi  # PER_SEED=1: a process a seed
        for seeds in "$@"; do
            # shellcheck disable=SC2086  # EXTRA: several options; $seeds: several seeds
            timeout -k 60 -s TERM "$limit" python3 -m "quadrat_env.experiments.$module" --env "$env" \
                --seed $seeds --out "$base" --no-progress "${flags[@]}" "${args[@]}" ${EXTRA:-} \
                >>"$base/$learner-$env-${seeds// /_}.log" 2>&1 &
            pids+=($!)
        done
    done
    local pid rc failed=0
    for pid in "${pids[@]}"; do  # each program's own status: 124/143 is the time limit (checkpointed)
        wait "$pid"; rc=$?
        case $rc in 0|124|143) ;; *) failed=1 ;; esac
    done
    tail -qn 10 "$base/$learner-$env"-*.log | grep -v '^ ' | tail -n 12
    return $failed
}

sweep() {  # sweep ENV LIMIT_S: every SWEEP entry's td_jax seeds at once, a program an entry
    local entry tag kv pids=() entries
    IFS=';' read -ra entries <<<"$SWEEP"
    for entry in "${entries[@]}"; do
        read -r tag kv <<<"$entry"
        [ -n "$tag" ] || continue
        (TAG=$tag TD_SET=$kv row td_jax "$1" "$2" | sed "s/^/[$tag] /") &
        pids+=($!)
    done
    local pid failed=0
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    return $failed
}

if [ -n "${THROUGHPUT:-}" ]; then  # the JAX envs' speed table for docs/speed.md, first
    echo "== throughput of the JAX envs, at $SECONDS s"
    timeout -k 10 "$THROUGHPUT" python3 -m quadrat_env.experiments.throughput --jax only --seconds 1 --out "$out"
fi
failures=()
for r in $rows; do
    left=$((deadline - SECONDS))
    if [ "$left" -lt "${ROW_MIN:-150}" ]; then
        echo "== not started: $r (${left}s left)"
        continue
    fi
    echo "== $r, seeds ${SEEDS:-0-9} at once${SWEEP:+ (sweep)}, for $((left - 30))s at most, at $SECONDS s"
    if [ -n "${SWEEP:-}" ] && [ "${r%%:*}" = td_jax ]; then
        sweep "${r##*:}" $((left - 30)) || failures+=("$r")
    else
        row "${r%%:*}" "${r##*:}" $((left - 30)) || failures+=("$r")
    fi
done
pkill -f "nvidia-smi --query-gpu=timestamp" 2>/dev/null
echo "== moves/s a seed: $(find "$work" -name summary.json -exec grep -ho '"moves_per_second": [0-9]*' {} + 2>/dev/null | tr '\n' ' ')"
echo "== done at $SECONDS s"
tar czf "$out/runs.tar.gz" -C "$work" . || { echo "gpu_rows: the archive $out/runs.tar.gz could not be written" >&2; exit 1; }
ls -la "$out"
if [ ${#failures[@]} -gt 0 ]; then
    echo "gpu_rows: these rows failed (their logs are in the archive): ${failures[*]}" >&2
    exit 1
fi
