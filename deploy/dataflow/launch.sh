#!/usr/bin/env bash
# Launch paramine on Dataflow. Usage: deploy/dataflow/launch.sh COMMAND [extra paramine flags]
#
# Commands (each is defined below; docs/runbook.md walks through them):
#   build-image     build the worker image (deploy/dataflow/Dockerfile) and push it
#   build-template  write the Flex Template spec to $TEMPLATE (gs://)
#   run-template    start a job from the Flex Template
#   dry-run         check the options `run` would launch with; launch nothing
#   run             launch from this machine with `paramine mine --runner=DataflowRunner`
#
# Settings come from the environment; defaults in ${VAR:-default} below.
set -euo pipefail
cd "$(dirname "$0")/../.."

PROJECT="${PROJECT:?set PROJECT to your Google Cloud project id}"
REGION="${REGION:-us-central1}"
BUCKET="${BUCKET:?set BUCKET to a gs://bucket (no trailing slash) for temp files and output}"
IMAGE="${IMAGE:-${REGION}-docker.pkg.dev/${PROJECT}/paramine/worker:0.1.0}"
TEMPLATE="${TEMPLATE:-${BUCKET}/templates/paramine-mine.json}"
INPUT="${INPUT:-${BUCKET}/bitext/*.tsv}"
OUTPUT="${OUTPUT:-${BUCKET}/datasets/paramine-$(date -u +%Y%m%dT%H%M%SZ)}"
MODEL="${MODEL:-e5-small}"
GPU_TYPE="${GPU_TYPE:-nvidia-l4}"
GPU_MODE="${GPU_MODE:-one_sdk_process}"
MAX_WORKERS="${MAX_WORKERS:-4}"

mine_flags() {
  echo "--output=${OUTPUT}" "--model=${MODEL}" \
    --runner=DataflowRunner "--project=${PROJECT}" "--region=${REGION}" \
    "--temp_location=${BUCKET}/tmp" "--max_num_workers=${MAX_WORKERS}" \
    "--gpu-type=${GPU_TYPE}" "--gpu-mode=${GPU_MODE}" "--worker-image=${IMAGE}"
}

command="${1:-}"
shift || true
case "${command}" in
  build-image)
    docker build -f deploy/dataflow/Dockerfile -t "${IMAGE}" .
    docker push "${IMAGE}"
    ;;
  build-template)
    gcloud dataflow flex-template build "${TEMPLATE}" \
      --image "${IMAGE}" --sdk-language PYTHON \
      --metadata-file deploy/dataflow/metadata.json --project "${PROJECT}"
    ;;
  run-template)
    # ^~^ makes "~" the separator, so the input list may hold commas.
    gcloud dataflow flex-template run "paramine-$(date -u +%Y%m%d-%H%M%S)" \
      --template-file-gcs-location "${TEMPLATE}" --project "${PROJECT}" --region "${REGION}" \
      --temp-location "${BUCKET}/tmp" --max-workers "${MAX_WORKERS}" \
      --parameters "^~^input=${INPUT}~output=${OUTPUT}~model=${MODEL}~gpu_type=${GPU_TYPE}~gpu_mode=${GPU_MODE}~worker_image=${IMAGE}" \
      "$@"
    ;;
  dry-run)
    # shellcheck disable=SC2046 # mine_flags prints one word per flag
    paramine mine "${INPUT}" $(mine_flags) --deploy-dry-run "$@"
    ;;
  run)
    # shellcheck disable=SC2046
    paramine mine "${INPUT}" $(mine_flags) "$@"
    ;;
  *)
    sed -n '2,12p' "$0"
    exit 2
    ;;
esac
