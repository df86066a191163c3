"""paramine beside its peers (issue 46): ``bench_peers`` and the parts it runs."""
