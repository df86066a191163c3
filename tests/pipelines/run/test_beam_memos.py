"""pipelines/run/beam_memos.py: Beam's views of options and DoFns' state specs, remembered."""

from __future__ import annotations

import gc
import weakref

import apache_beam as beam
from apache_beam.coders import VarIntCoder
from apache_beam.options.pipeline_options import (
    DebugOptions,
    PipelineOptions,
    StandardOptions,
    TypeOptions,
)
from apache_beam.transforms import core, userstate
from apache_beam.transforms.userstate import BagStateSpec
from paramine.pipelines.run import beam_memos

# tests/conftest.py installs it for the whole suite; installing again changes nothing.
beam_memos.install()


COUNT = BagStateSpec("count", VarIntCoder())
COUNT_PARAM = beam.DoFn.StateParam(COUNT)


class _Counting(beam.DoFn):
    def process(self, element, count=COUNT_PARAM):  # type: ignore[no-untyped-def]
        count.add(1)
        yield element


class _Plain(beam.DoFn):
    def process(self, element):  # type: ignore[no-untyped-def]
        yield element


def test_installing_twice_wraps_once() -> None:
    view_as, get_specs = PipelineOptions.view_as, userstate.get_dofn_specs
    beam_memos.install()
    assert PipelineOptions.view_as is view_as and userstate.get_dofn_specs is get_specs
    assert view_as.__wrapped__.__name__ == "view_as"  # type: ignore[attr-defined]


def test_one_view_per_options_and_class_with_the_values_a_new_view_has() -> None:
    flags = ["--runner", "DirectRunner", "--type_check_strictness", "ALL_REQUIRED"]
    options = PipelineOptions(flags)
    view = options.view_as(TypeOptions)
    assert options.view_as(TypeOptions) is view
    assert view.type_check_strictness == "ALL_REQUIRED"
    assert options.view_as(StandardOptions).runner == "DirectRunner"
    # Views share their values: a value set through one is read through every other.
    options.view_as(DebugOptions).experiments = ["x"]
    assert options.view_as(DebugOptions).experiments == ["x"]
    assert options.get_all_options()["experiments"] == ["x"]
    # Another options object has views of its own.
    other = PipelineOptions(["--type_check_strictness", "DEFAULT_TO_ANY"])
    assert other.view_as(TypeOptions) is not view
    assert other.view_as(TypeOptions).type_check_strictness == "DEFAULT_TO_ANY"


def test_a_dofns_specs_are_beams_answer_and_a_fresh_copy_each_time() -> None:
    unremembered = userstate.get_dofn_specs.__wrapped__  # type: ignore[attr-defined]
    counting, plain = _Counting(), _Plain()
    for dofn in (counting, plain):
        assert userstate.get_dofn_specs(dofn) == unremembered(dofn)
    states, timers = userstate.get_dofn_specs(counting)
    assert {spec.name for spec in states} == {"count"} and not timers
    assert userstate.is_stateful_dofn(counting) and not userstate.is_stateful_dofn(plain)
    states.clear()
    assert userstate.get_dofn_specs(counting) == unremembered(counting)


def test_a_methods_arguments_are_beams_answer_bound_or_not_and_a_fresh_copy() -> None:
    unremembered = core.get_function_args_defaults.__wrapped__  # type: ignore[attr-defined]
    counting = _Counting()
    bound, function = counting.process, _Counting.process
    assert (
        core.get_function_args_defaults(bound)
        == unremembered(bound)
        == (
            ["element", "count"],
            [COUNT_PARAM],
        )
    )
    assert core.get_function_args_defaults(function) == unremembered(function)
    assert core.get_function_args_defaults(function)[0] == ["self", "element", "count"]
    # Another instance's method is the same function: the same answer.
    assert core.get_function_args_defaults(_Counting().process)[0] == ["element", "count"]
    args, _ = core.get_function_args_defaults(bound)
    args.clear()
    assert core.get_function_args_defaults(bound)[0] == ["element", "count"]
    # What cannot be weakly referenced is answered by Beam itself each time.
    assert core.get_function_args_defaults(len) == unremembered(len)
    # What Beam's DoFn wrapper reads through it.
    assert core.get_function_arguments(counting, "process") == (["element", "count"], [COUNT_PARAM])


def test_what_is_remembered_goes_with_its_object() -> None:
    dofn, options = _Counting(), PipelineOptions([])
    userstate.get_dofn_specs(dofn)
    options.view_as(TypeOptions)
    gone = [weakref.ref(dofn), weakref.ref(options)]
    del dofn, options
    gc.collect()
    assert [ref() for ref in gone] == [None, None]
