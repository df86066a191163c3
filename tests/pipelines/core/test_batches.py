"""Rows: the batch type the reader hands on, and Beam's converter for it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from apache_beam import typehints
from apache_beam.typehints.batch import BatchConverter
from paramine.pipelines.core.batches import RECORD_BYTES, Rows
from paramine.schemas.records import AlignedPair

from tests.paths import ROOT


@pytest.mark.parametrize(
    "element_type", [AlignedPair, str, typehints.Tuple[str, int], typehints.Any]
)
def test_beam_finds_the_converter_for_any_record(element_type: object) -> None:
    converter = BatchConverter.from_typehints(element_type=element_type, batch_type=Rows)
    rows = converter.produce_batch(["a", "b", "c"])
    assert type(rows) is Rows and rows == ["a", "b", "c"]
    assert list(converter.explode_batch(rows)) == ["a", "b", "c"]
    assert converter.get_length(rows) == 3
    assert converter.estimate_byte_size(rows) == 3 * RECORD_BYTES
    combined = converter.combine_batches([rows, Rows(["d"]), Rows()])
    assert type(combined) is Rows and combined == ["a", "b", "c", "d"]


def test_the_same_records_in_rows_meet_the_same_converter() -> None:
    # The runner hands a producer's Rows on whole only where the consumer's
    # converter equals the producer's: same element type, same batch type.
    first = BatchConverter.from_typehints(element_type=AlignedPair, batch_type=Rows)
    again = BatchConverter.from_typehints(element_type=AlignedPair, batch_type=Rows)
    other = BatchConverter.from_typehints(element_type=str, batch_type=Rows)
    assert first == again and first != other


def test_other_batch_types_are_left_to_beam() -> None:
    converter = BatchConverter.from_typehints(element_type=int, batch_type=typehints.List[int])
    assert converter.produce_batch([1, 2]) == [1, 2]
    assert type(converter.produce_batch([1, 2])) is not Rows


def test_a_second_copy_under_another_name_registers_its_own_rows() -> None:
    # With the source tree on sys.path, `pipelines.core.batches` is a second
    # module beside the package's: each finds its own Rows, neither fails.
    script = (
        "import sys; import paramine.pipelines.core.batches as a; sys.path.insert(0, '.');"
        " import pipelines.core.batches as b;"
        " from apache_beam.typehints.batch import BatchConverter as C;"
        " print(*(type(C.from_typehints(element_type=str, batch_type=m.Rows)).__module__"
        " for m in (a, b)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["paramine.pipelines.core.batches", "pipelines.core.batches"]
