"""Benchmarks of quality: precision and recall of mined pairs on real bitext with planted noise."""
