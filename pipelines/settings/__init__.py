"""A mining job's settings: what decides its pairs, and where and how it runs.

``MiningSettings`` (``mining.py``) decide the pairs: the graph of
``pipelines/mining/`` takes only these. ``RunSettings`` (``running.py``)
decide where and how a job runs. The launchers (``pipelines/run/``,
``pipelines/refresh/``) hold both; ``job.py`` reads them from a command line
or a job file.
"""

from __future__ import annotations

from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings

__all__ = ["MiningSettings", "RunSettings"]
