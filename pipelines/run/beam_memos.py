"""Three answers Beam's Python SDK works out again and again while it builds and runs a graph, kept.

Beam (2.77) asks three questions many times a transform whose answers cannot
change during a run:

- ``PipelineOptions.view_as(cls)`` makes a new view each time: an argparse
  parser with ``cls``'s flags, and the run's flags parsed again. The type
  checks ask for ``TypeOptions`` on every ``apply`` and every
  ``is_consistent_with``: about 1,490 views for ``paramine mine``'s graph on
  the demo.
- ``userstate.get_dofn_specs(dofn)`` reads the signature of every method of
  a DoFn (about 30 each) to find its state and timer parameters; the
  transform, its runner-API form and each bundle's signature ask again, about
  eight times a DoFn (1,260 calls for the demo's graph).
- ``core.get_function_args_defaults(f)`` reads a method's signature (its
  arguments and their defaults) for every DoFn method each bundle's runner
  wraps: about 13,700 calls for the demo's graph, 14% of the run's CPU in a
  profile.

A view shares its values with the options it was made from (that is how
views work: ``_all_options`` is one dict), so one view per options object
and class answers as a new one would; a DoFn's state and timer parameters
are the defaults of its methods' signatures, fixed once the object exists;
a method's signature is its function's (bound or not). ``install()``
remembers the answers, per object (weakly: an object that goes away takes
its answers with it). Measured on the demo with the tiny
model, three runs each in one process: 4.11 CPU-s a mine before, 3.23 with
the views remembered, 3.44 with the specs (docs/results.md, "The suite's
time"). Nothing about the run changes but its cost: the same graph, the same
pairs (the tests mine with it installed and compare pair_ids with runs made
before it).

Every local run installs it (``run/launch.py``), and so does the test
suite for the pipelines its tests build themselves (tests/conftest.py).
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any

_INSTALLED = "_paramine_remembers"


def install() -> None:
    """Remember views of options and DoFns' state specs from now on, in this process; idempotent."""
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.transforms import core, userstate

    if not getattr(PipelineOptions.view_as, _INSTALLED, False):
        PipelineOptions.view_as = _remember_views(PipelineOptions.view_as)  # type: ignore[method-assign,assignment]
    if not getattr(userstate.get_dofn_specs, _INSTALLED, False):
        userstate.get_dofn_specs = _remember_per_object(userstate.get_dofn_specs)  # type: ignore[assignment]
    if not getattr(core.get_function_args_defaults, _INSTALLED, False):
        core.get_function_args_defaults = _remember_signatures(core.get_function_args_defaults)  # type: ignore[assignment]


def _remember_views(view_as: Callable[[Any, type], Any]) -> Callable[[Any, type], Any]:
    views: weakref.WeakKeyDictionary[Any, dict[type, Any]] = weakref.WeakKeyDictionary()

    @functools.wraps(view_as)
    def remembered(options: Any, cls: type) -> Any:
        made = views.setdefault(options, {})
        if cls not in made:
            made[cls] = view_as(options, cls)
        return made[cls]

    setattr(remembered, _INSTALLED, True)
    return remembered


def _remember_per_object(
    get_specs: Callable[[Any], tuple[set[Any], set[Any]]],
) -> Callable[[Any], tuple[set[Any], set[Any]]]:
    answers: weakref.WeakKeyDictionary[Any, tuple[set[Any], set[Any]]] = weakref.WeakKeyDictionary()

    @functools.wraps(get_specs)
    def remembered(dofn: Any) -> tuple[set[Any], set[Any]]:
        try:
            states, timers = answers[dofn]
        except KeyError:
            states, timers = answers[dofn] = get_specs(dofn)
        except TypeError:  # a DoFn that cannot be weakly referenced or hashed
            return get_specs(dofn)
        return set(states), set(timers)  # copies: a caller may change what it is given

    setattr(remembered, _INSTALLED, True)
    return remembered


def _remember_signatures(
    args_defaults: Callable[[Any], tuple[list[str], list[Any]]],
) -> Callable[[Any], tuple[list[str], list[Any]]]:
    answers: weakref.WeakKeyDictionary[Any, dict[bool, tuple[list[str], list[Any]]]] = (
        weakref.WeakKeyDictionary()
    )

    @functools.wraps(args_defaults)
    def remembered(f: Any) -> tuple[list[str], list[Any]]:
        # A bound method is made anew at each attribute read; its function is not.
        bound = inspect.ismethod(f)
        function = f.__func__ if bound else f
        try:
            made = answers.setdefault(function, {})
        except TypeError:  # a builtin that cannot be weakly referenced
            return args_defaults(f)
        if bound not in made:
            made[bound] = args_defaults(f)
        args, defaults = made[bound]
        return list(args), list(defaults)  # copies: a caller may change what it is given

    setattr(remembered, _INSTALLED, True)
    return remembered
