#!/usr/bin/env bash
# A daily refresh on Google Cloud: Cloud Scheduler starts a Cloud Run job that
# runs `paramine refresh` in the worker image; the refresh launches its mining
# on Dataflow (beam_args in the config) and commits to the Delta table itself.
#
# Usage: PROJECT=... REGION=... BUCKET=gs://... SA=...@....iam.gserviceaccount.com \
#        deploy/schedule/cloud-scheduler.sh
# The service account needs roles/run.invoker (for Scheduler), and for the job:
# roles/dataflow.admin, roles/iam.serviceAccountUser, storage access to BUCKET.
set -euo pipefail
PROJECT="${PROJECT:?set PROJECT}"
REGION="${REGION:-us-central1}"
BUCKET="${BUCKET:?set BUCKET to gs://bucket holding refresh.yaml}"
SA="${SA:?set SA to the service account email}"
IMAGE="${IMAGE:-${REGION}-docker.pkg.dev/${PROJECT}/paramine/worker:0.1.0}"

# The image's entrypoint is Beam's boot; the job runs paramine instead.
# --parallelism=1 and --max-retries=0: one writer per table (a second would
# fail at its commit), and a failed run is retried by the next schedule (it
# finishes a half-done commit or mines again).
gcloud run jobs create paramine-refresh --project "${PROJECT}" --region "${REGION}" \
  --image "${IMAGE}" --command paramine --args "refresh,${BUCKET}/refresh.yaml" \
  --service-account "${SA}" --tasks 1 --parallelism 1 --max-retries 0 \
  --task-timeout 24h --memory 4Gi --cpu 2

gcloud scheduler jobs create http paramine-refresh-daily --project "${PROJECT}" \
  --location "${REGION}" --schedule "15 3 * * *" --time-zone "Etc/UTC" \
  --uri "https://run.googleapis.com/v2/projects/${PROJECT}/locations/${REGION}/jobs/paramine-refresh:run" \
  --http-method POST --oauth-service-account-email "${SA}"
