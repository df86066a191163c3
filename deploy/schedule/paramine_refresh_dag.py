"""Airflow DAG: a daily ``paramine refresh``, mining on Dataflow or on the Airflow worker.

Copy into the DAGs folder of an Airflow 2.x deployment whose workers have
paramine installed (or swap the BashOperator for a KubernetesPodOperator
running the worker image). The refresh itself launches the Dataflow job when
its config's ``beam_args`` name ``--runner=DataflowRunner`` and waits for it,
then commits to the Delta Lake table. A second refresh of the same table that
overlaps fails at its commit and commits nothing (docs/refresh.md);
``max_active_runs=1`` keeps the schedule from starting one only to lose.

Airflow Variables:
    paramine_refresh_config: the config's path or URL (gs://BUCKET/refresh.yaml).
"""

from __future__ import annotations

import datetime as dt

from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG(
    dag_id="paramine_refresh",
    description="Mine new or changed bitext shards into the paramine Delta Lake table",
    schedule="15 3 * * *",
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": dt.timedelta(minutes=30)},
    tags=["paramine"],
) as dag:
    # A killed or failed run leaves the table at its last commit; the retry
    # (or tomorrow's run) finishes a half-done commit or mines again.
    refresh = BashOperator(
        task_id="refresh",
        bash_command="paramine refresh {{ var.value.paramine_refresh_config }}",
        env={"OMP_WAIT_POLICY": "PASSIVE", "TOKENIZERS_PARALLELISM": "false"},
        append_env=True,
        execution_timeout=dt.timedelta(hours=23),
    )
