"""The sections of ``paramine mine --help``, which the settings place their fields in.

The parsers of the options are with the stages that declare them (each
stage's options class); those of the run's own settings in ``running.py``.
"""

from __future__ import annotations

IO, BAD, MODEL, FILTERS, DEPLOY = (
    "input and output",
    "bad input",
    "model and scoring",
    "filters and pairing",
    "deployment (Dataflow, Flink, Spark)",
)
