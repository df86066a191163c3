#!/usr/bin/env bash
# The one device check of a session that is lent a GPU, prepared to run at once (under 8 minutes
# on an H100): encoding throughput of the real default model (the mining handler's torch fp16
# against plain SentenceTransformer.encode on the same GPU and against OpenVINO on the CPU),
# training steps/s of each recipe, one round of paramine adapt (training and mining on the GPU),
# the GPU's name and the peak GPU memory of each part.
#
#   benchmarks/speed/gpu_check.sh [--dry-run] [OUT]  # figures go to OUT/run-<time> (OUT: $OUT,
#                                                    # default /tmp/gpu-check)
#
# Every run writes into a new folder of its own, so a second try on a lent machine measures
# everything again and never meets the first's checkpoints. --dry-run runs every step on the
# CPU, small, with MODEL (the test's tiny model): the script is tested in CI, so it works when
# a GPU comes. PYTHON (default .venv/bin/python) runs paramine. PARTS (default "encode train
# adapt"; set and empty: none) runs only those parts: a second try need not measure again
# what the first did.
set -euo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    sed -n '2,16s/^# \{0,1\}//p' "$0"  # the comment above
    exit 0
fi
cd "$(dirname "$0")/../.."

dry=0
if [ "${1:-}" = "--dry-run" ]; then
    dry=1
    shift
fi
out=${1:-${OUT:-/tmp/gpu-check}}/run-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$out"
echo "== figures go to $out"
export OMP_WAIT_POLICY=PASSIVE TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
python=${PYTHON:-.venv/bin/python}
model=${MODEL:-e5-small}
start=$(date +%s)
parts=" ${PARTS-encode train adapt} "  # set and empty: no part
part() { [[ $parts == *" $1 "* ]]; }

if [ "$dry" = 1 ]; then
    # A small LSTM: on the CPU the paper's 1024 units are most of a tiny model's step.
    device=cpu sentences=64 steps=2 flags=(--dry-run) lstm=(--lstm-hidden 32)
else
    device=cuda sentences=4000 steps=30 flags=() lstm=()  # the recipes' own LSTM
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
fi

if part encode; then
echo "== encoding: texts/s"
"$python" -m benchmarks.speed.gpu_throughput --model "$model" --sentences "$sentences" \
    --json "$out/throughput.json" "${flags[@]}"
fi

if part train; then
echo "== training: steps/s of each recipe ($steps steps), on the built-in demo mined with"\
    "$model, in one process"
"$python" -m benchmarks.speed.train_recipes "$out/demo" --mine-demo --model "$model" \
    --out "$out" --steps "$steps" --device "$device" --summary "$out/train-summary.txt" \
    "${lstm[@]}" \
    > "$out/train.log" 2>&1 || { tail -n 30 "$out/train.log"; exit 1; }
cat "$out/train-summary.txt"
fi

if part adapt; then
# The demo is Polish, which the base knows (it finds all of the demo's held-out lines): the
# loop would keep the base and train nothing without --known-above 100 (seen on an H200).
echo "== paramine adapt: the first pass, one round of training and its pass"
"$python" -m paramine.pipelines.cli adapt "$(
    "$python" -c 'from paramine.pipelines.run.mine import demo_input; print(demo_input())'
)" --src-lang en --tgt-lang pl --model "$model" --output "$out/adapt" --quiet \
    --device "$device" --rounds 1 --min-gain -100 --min-new 0 --known-above 100 \
    --train-flags "--max-steps $steps --batch-size 16 ${lstm[*]}" > "$out/adapt.log" 2>&1
grep -E "^paramine adapt: round|^  (round|  [0-9])" "$out/adapt.log" || true
fi
echo "== done in $(( $(date +%s) - start )) s; figures in $out"
