"""Frozen studies: each measured a choice that has been made, and its figures live in docs/.

They are kept so that a figure in the docs can be traced to the code that
measured it and measured again by hand; their tests (``tests/benchmarks/studies/``)
are not in the default test run (pyproject.toml, ``norecursedirs``):
``pytest tests/benchmarks/studies`` runs them.

- ``langid/``: which language detector, and which rule (docs/filters.md, issues 29 and 44);
- ``bench_length``: the prefilter's length unit in every script (docs/filters.md, issue 44);
- ``bench_close_languages``: close languages told apart by measurement
  (docs/filters.md, issue 52);
- ``bench_signals``: signals beyond the default checks, not built (docs/thresholds.md).
"""
