"""paramine's benchmarks: scripts that measure it and print their figures.

- ``speed/``: time and memory (``bench_scale``, ``bench_floor``, ``bench_mine``,
  ``bench_encode``, ``bench_read_memory``, ``bench_train``, ``bench_evaluate``,
  ``gpu_throughput`` and ``gpu_check.sh``);
- ``quality/``: what the mined pairs are worth (``bench_quality`` and the noisy
  corpora it plants; ``peers/``, paramine beside the tools users would pick instead);
- ``studies/``: frozen studies, each behind a decision already made, whose
  figures live in docs/; their tests are not in the default test run;
- ``lib/``: what scripts of more than one folder import.

Each script is a module of this package, run from the repository root::

    python -m benchmarks.speed.bench_scale --sizes 10k

and imports what it shares by its full name (``from benchmarks.lib.synthetic
import write_tsv``). A script that starts a child of itself starts it the same
way (``python -m``), in the same working directory.
"""
