"""An element of the global window made once, as Beam makes it each time."""

from __future__ import annotations

from apache_beam.transforms.window import GlobalWindow, GlobalWindows
from paramine.pipelines.core.windows import in_global_window


def test_a_row_is_where_beams_global_windows_put_it_at_the_windows_end() -> None:
    made = in_global_window(("Prefilter", "kept", 3))
    beams = GlobalWindows.windowed_value_at_end_of_window(("Prefilter", "kept", 3))
    assert made == beams
    assert made.windows == (GlobalWindow(),) and made.timestamp == GlobalWindow().max_timestamp()
    # Two rows share the window and the timestamp, not the value.
    other = in_global_window("x")
    assert other.windows is made.windows and other.value == "x"
