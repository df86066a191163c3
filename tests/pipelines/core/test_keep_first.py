"""KeepFirst: the first of equal records by the caller's order, whatever the runner's."""

from __future__ import annotations

import random

import pytest
from paramine.pipelines.core.keep_first import _FirstAndCount, first_of_each


class TestKeepFirst:
    def test_the_first_and_the_count_in_any_order_and_split(self) -> None:

        rng = random.Random(3)
        combine = _FirstAndCount(None)
        for n in (1, 2, 3, 10):
            values = [f"shard\x00{rng.randrange(1000):020d}" for _ in range(n)]
            for _ in range(10):
                rng.shuffle(values)
                cut = rng.randrange(0, n + 1)
                accumulators = []
                for part in (values[:cut], values[cut:]):
                    accumulator = combine.create_accumulator()
                    for value in part:
                        accumulator = combine.add_input(accumulator, value)
                    accumulators.append(accumulator)
                merged = combine.merge_accumulators(accumulators)
                assert combine.extract_output(merged) == (min(values), n)

    def test_a_key_seen_once_holds_its_element_alone(self) -> None:
        # The runner holds one accumulator per distinct key: no tuple beside it.
        combine = _FirstAndCount(len)
        once = combine.add_input(combine.create_accumulator(), "abc")
        assert once == "abc"
        assert combine.merge_accumulators([None, once, None]) == "abc"
        twice = combine.add_input(once, "ab")
        assert combine.extract_output(twice) == ("ab", 2)
        with pytest.raises(TypeError, match="no lists"):
            combine.add_input(once, ["a list"])

    def test_first_of_each_keeps_each_keys_smallest_by_the_order(self) -> None:
        rng = random.Random(5)
        keyed = [(rng.randrange(20), rng.randrange(1000)) for _ in range(500)]
        rng.shuffle(keyed)
        smallest: dict[int, int] = {}
        for key, value in keyed:
            smallest[key] = min(value, smallest.get(key, value))
        assert first_of_each(keyed) == smallest
        largest = first_of_each(keyed, order=lambda value: -value)
        assert largest == {key: max(v for k, v in keyed if k == key) for key in smallest}
