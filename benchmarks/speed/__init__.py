"""Benchmarks of time and memory: a run at scale, the floor under it, encoding, reading, training.

Each prints its figures; docs/results.md, docs/formats.md and docs/training.md quote them.
"""
