"""Airflow DAG: a daily ``paramine refresh``, mining on Dataflow or on the Airflow worker.

Copy into the DAGs folder of an Airflow 2.x deployment whose workers have
paramine installed (or swap the BashOperator for a KubernetesPodOperator
running the worker image). The refresh itself launches the Dataflow job when
its config's ``beam_args`` name ``--runner=DataflowRunner`` and waits for it,
then commits the version; ``max_active_runs=1`` keeps one writer per output
root, which refreshes require (docs/refresh.md).

Airflow Variables:
    paramine_refresh_config: the config's path or URL (gs://BUCKET/refresh.yaml).
    paramine_keep: versions to keep (optional).
"""

from __future__ import annotations

import datetime as dt

from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG(
    dag_id="paramine_refresh",
    description="Mine new or changed bitext shards into a new paramine dataset version",
    schedule="15 3 * * *",
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": dt.timedelta(minutes=30)},
    tags=["paramine"],
) as dag:
    # A killed or failed run leaves _LATEST on the last good version; the
    # retry (or tomorrow's run) mines again and commits.
    refresh = BashOperator(
        task_id="refresh",
        bash_command=(
            "paramine refresh {{ var.value.paramine_refresh_config }} "
            "--keep {{ var.value.get('paramine_keep', 5) }}"
        ),
        env={"OMP_WAIT_POLICY": "PASSIVE", "TOKENIZERS_PARALLELISM": "false"},
        append_env=True,
        execution_timeout=dt.timedelta(hours=23),
    )
