"""ThresholdFilter: the cut as a side input, and its books."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.stages.cut.threshold_filter import ThresholdFilter

from tests.pipelines.stages.helpers import check_stage, scored

pytestmark = pytest.mark.pipeline


class TestThresholdFilter:
    def test_fixed_cut(self) -> None:
        elements = [scored("a", "b", 0.5), scored("c", "d", 0.84), scored("e", "f", 0.85)]
        check_stage(
            ThresholdFilter(0.84),
            elements,
            equal_to(elements[1:]),
            {"in": 3, "kept": 2, "dropped": {"below_threshold": 1}},
        )

    def test_cut_from_a_side_input(self) -> None:
        with TestPipeline(runner="FnApiRunner") as p:
            cut = p | "Cut" >> beam.Create([0.6])
            scores = p | "Scores" >> beam.Create([scored("a", "b", 0.5), scored("c", "d", 0.7)])
            result = scores | ThresholdFilter(cut)
            assert_that(result.kept | beam.Map(lambda s: s.score), equal_to([0.7]))
