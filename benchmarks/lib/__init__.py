"""What the benchmarks of more than one folder share.

``paths`` (the repository and the shared corpora), ``sizes`` (``10k``, ``1M``),
``process_tree`` (a child's wall time and its process tree's peak memory),
``synthetic`` (the subtitles-like bitext of bench_scale, bench_floor and the
peers' prefilter part) and ``pair_loop`` (the pipeline's per-pair code in a
plain loop, with no runner).

``detector_tables`` is no measurement: it writes paramine's
``pipelines/stages/filter/rules/detector_tables.py`` from py3langid's own model, and
``tests/pipelines/stages/filter/rules/test_detector_tables.py`` checks that module against it.
"""
