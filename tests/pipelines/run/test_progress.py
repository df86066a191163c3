"""run/progress.py's RunProgress: the launcher's progress line, fed by the workers' taps."""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from paramine.pipelines.core.accounting import progress_file
from paramine.pipelines.core.tap import count_reads, tap_for
from paramine.pipelines.run.progress import RunProgress, silence_third_party


def _worker(path: str, n: int) -> None:
    tap = tap_for(path)
    for _ in range(n):
        tap.add(nbytes=10, pairs=1)
    tap.flush()


def _next_line(stream: io.StringIO, start: str, seconds: float = 20.0) -> str:
    """The progress thread's last line once it starts with ``start`` (a loaded machine is slow)."""
    deadline = time.monotonic() + seconds
    while True:
        lines = stream.getvalue().splitlines()
        if (lines and lines[-1].startswith(start)) or time.monotonic() > deadline:
            return lines[-1] if lines else ""
        time.sleep(0.05)


class TestProgress:
    @pytest.mark.pipeline
    def test_worker_processes_report_to_the_launcher(self) -> None:
        stream = io.StringIO()
        progress = RunProgress(4000, stream=stream, log_seconds=0.2, capture_output=False)
        # Named, not made: a tap before the run counts nothing.
        assert not os.path.exists(progress.path)
        with progress:
            # The workers know the file only by the name they were given
            # (the stages' DoFns carry it); nothing is in their environment.
            assert not any(progress.path in value for value in os.environ.values())
            context = multiprocessing.get_context("spawn")
            workers = [context.Process(target=_worker, args=(progress.path, 100)) for _ in range(3)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            time.sleep(0.7)
        assert not os.path.exists(progress.path)
        assert (progress.totals.bytes, progress.totals.pairs) == (3000, 300)
        lines = stream.getvalue().splitlines()
        assert lines and lines[-1].startswith("paramine: read  75.0% (3.0 KB of 4.0 KB), 300 pairs")

    def test_after_reading_the_line_names_the_running_stage(self) -> None:
        stream = io.StringIO()
        with RunProgress(100, stream=stream, log_seconds=0.2, capture_output=False) as progress:
            _worker(progress.path, 10)  # all 100 bytes read
            before = _next_line(stream, "paramine: read 100.0%")
            tap = tap_for(progress.path)
            tap.add_out("prefilter", "aligned pair", 9)
            tap.add_out("encoding", "text", 12)
            tap.flush()
            _next_line(stream, "paramine: encoding:")
        assert before.startswith("paramine: read 100.0%") and "ETA none (reading done)" in before
        assert progress.running is not None and progress.running.stage == "encoding"
        assert progress.stages["prefilter"].n == 9
        last = stream.getvalue().splitlines()[-1]
        assert last.startswith("paramine: encoding: 12 texts out ("), last
        assert "read 100.0% (100 B of 100 B), 10 pairs;" in last

    def test_quiet_shows_nothing_and_no_run_counts_nothing(self) -> None:
        stream = io.StringIO()
        with RunProgress(100, quiet=True, stream=stream, capture_output=False) as progress:
            _worker(progress.path, 5)
        assert stream.getvalue() == "" and progress.totals.pairs == 5
        raw = io.BytesIO(b"abc")
        assert count_reads(raw) is raw  # no shard being read: readers pay nothing
        with tap_for("").reading():
            assert count_reads(raw) is raw  # a graph without progress: nothing either

    def test_the_pipelines_options_name_the_file_to_the_stages(self, tmp_path: Path) -> None:
        progress = RunProgress(100, quiet=True, capture_output=False)
        assert progress_file(beam.Pipeline(options=PipelineOptions(progress.beam_args))) == (
            progress.path
        )
        assert progress_file(beam.Pipeline(options=PipelineOptions([]))) == ""
        data = tmp_path / "input.txt"
        data.write_bytes(b"x" * 1000)
        with progress:
            tap = tap_for(progress.path)
            with tap.reading(), open(data, "rb") as raw:
                counted = count_reads(raw)
                assert counted is not raw and len(counted.read()) == 1000
            tap.flush()
            with open(data, "rb") as raw:
                assert count_reads(raw) is raw  # the shard's reading is over
        assert progress.totals.bytes == 1000

    def test_the_bar_and_third_party_bars(self) -> None:
        from transformers.utils import logging as hf_logging

        stream = io.StringIO()
        try:
            with RunProgress(1000, stream=stream, force_bar=True, capture_output=False) as progress:
                _worker(progress.path, 50)
                time.sleep(0.7)
                assert not hf_logging.is_progress_bar_enabled()
        finally:
            hf_logging.enable_progress_bar()
            hf_logging.set_verbosity_warning()
        assert "paramine: reading" in stream.getvalue() and "50 pairs" in stream.getvalue()
        assert "500/1.00k" in stream.getvalue()
        silence_third_party()
        hf_logging.enable_progress_bar()
        hf_logging.set_verbosity_warning()

    def test_a_signal_while_it_starts_leaves_nothing_switched(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """launch.py's handler raises Stopped wherever the main thread is: here, fd 2 captured."""
        from paramine.pipelines.run import progress as progress_module
        from paramine.pipelines.run.launch import Stopped

        def signal_arrives(_: object) -> bool:
            raise Stopped("SIGTERM")

        monkeypatch.setattr(progress_module, "_isatty", signal_arrives)
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
        before, env = os.fstat(2), dict(os.environ)
        progress = RunProgress(100)
        with pytest.raises(Stopped), progress:
            pytest.fail("the run went on")
        after = os.fstat(2)
        # stderr is stderr again (the stop's one line must reach the user)...
        assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
        assert progress.stream is sys.stderr
        # ...and neither the progress file nor the run's log is left, the environment as it was.
        assert os.listdir(tmp_path) == []
        assert dict(os.environ) == env

    # A multi-process run's progress is checked on the suite's one such run:
    # test_mine_multiprocess.py.
