"""pipelines/core/origins.py: where each record came from, as a short sortable value."""

from __future__ import annotations

import random

from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import Shard


def test_origins_sort_as_the_records_do_and_give_them_back() -> None:
    # URLs that are prefixes of one another, line numbers of 1 to 12
    # digits, pivot languages with subtags, two corpora on one file.
    urls = ["s", "s2", "s/a", "gs://b/x.tsv", "gs://b/x.tsv.gz", "zip://m::a.zip"]
    corpora = ["opus", "ccmatrix", "op"]
    shards = [Shard("tsv", url, corpus, "en", "pl") for url in urls for corpus in corpora[:2]]
    shards.append(Shard("tsv", urls[0], corpora[2], "en", "pl"))
    rng = random.Random(7)
    records = [
        (
            rng.choice(urls),
            rng.choice([0, 1, 9, 10, 99, 100, 12_345, 99_999_999, 123_456_789_012]),
            rng.choice(["en", "en-GB", "ja-Hira", "ja"]),
            rng.choice(corpora),
        )
        for _ in range(2_000)
    ]
    key = ("Yes.", "Tak.", "pl", "en")
    listed = Origins([s.url for s in shards], [s.corpus for s in shards])
    for origins in (listed, Origins()):
        values = [origins.value(*record) for record in records]
        assert sorted(records) == [records[i] for i in sorted(range(2_000), key=values.__getitem__)]
        for record, value in zip(records, values, strict=True):
            pair = origins.pair(key, value)
            assert (pair.shard, pair.line, pair.pivot_lang, pair.corpus) == record
            assert (pair.pivot, pair.candidate, pair.lang) == key[:3]
            assert origins.record(origins.entry(pair)) == pair
    # Named by number: the entry is short whatever the URL's length.
    long_url = "gs://a-bucket/opus/OpenSubtitles/v2018/moses/en-pl/shard-00042.tsv.gz"
    one = Origins([long_url], ["OpenSubtitles"])
    assert len(one.value(long_url, 12_345_678, "en", "OpenSubtitles")) < 20
