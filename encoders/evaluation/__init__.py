"""Evaluation: ``paramine evaluate``, the task suites, their probes and held-out data."""
