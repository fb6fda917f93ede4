"""Timing and device helpers that stay correct on CUDA, Apple MPS and CPU."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

# compperf.i18n (and the modules it is made of) needs no torch: a docs build that executes
# nothing (another language, a rebuild) uses it without paying torch's seconds of import.
from compperf.i18n import language, say, tr, tr_plural, use_language

if TYPE_CHECKING:
    from compperf.ceilings import Ceiling, Ceilings, RoofShare, cache_sizes, ceilings
    from compperf.devices import as_device, num_gpus, synchronize, try_all_gpus, try_gpu
    from compperf.disturbance import Disturbance, watch
    from compperf.environment import Environment, environment
    from compperf.inductor_cache import InductorCache, inductor_cache
    from compperf.launch import RankResults, run_ranks
    from compperf.measure import Measurement, compare, measure
    from compperf.records import compare_published
    from compperf.reporting import shown_warnings
    from compperf.timing import Benchmark, Timer, format_time
    from compperf.verdicts import Comparison, Ratio, Verdict, conclude, crossover, interleave

# The other public names, imported (with torch) the first time one of them is used.
_LAZY = {
    "compperf.ceilings": ["Ceiling", "Ceilings", "RoofShare", "cache_sizes", "ceilings"],
    "compperf.devices": ["as_device", "num_gpus", "synchronize", "try_all_gpus", "try_gpu"],
    "compperf.disturbance": ["Disturbance", "watch"],
    "compperf.environment": ["Environment", "environment"],
    "compperf.inductor_cache": ["InductorCache", "inductor_cache"],
    "compperf.launch": ["RankResults", "run_ranks"],
    "compperf.measure": ["Measurement", "compare", "measure"],
    "compperf.records": ["compare_published"],
    "compperf.reporting": ["shown_warnings"],
    "compperf.timing": ["Benchmark", "Timer", "format_time"],
    "compperf.verdicts": ["Comparison", "Ratio", "Verdict", "conclude", "crossover", "interleave"],
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        if f"compperf.{name}" not in _LAZY:
            raise AttributeError(f"module 'compperf' has no attribute {name!r}")
        return importlib.import_module(f"compperf.{name}")  # a submodule, e.g. compperf.verdicts
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


class _Package(types.ModuleType):
    """compperf itself: ``compperf.ceilings`` and ``compperf.environment`` stay the functions.

    Importing a submodule binds it on its package; for these two the function of the same
    name is the public one (as when this module imported everything at once).
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _MODULE_OF.get(name) == value.__name__:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "Benchmark",
    "Ceiling",
    "Ceilings",
    "Comparison",
    "Disturbance",
    "Environment",
    "InductorCache",
    "Measurement",
    "RankResults",
    "Ratio",
    "RoofShare",
    "Timer",
    "Verdict",
    "as_device",
    "cache_sizes",
    "ceilings",
    "compare",
    "compare_published",
    "conclude",
    "crossover",
    "environment",
    "format_time",
    "inductor_cache",
    "interleave",
    "language",
    "measure",
    "num_gpus",
    "records",
    "run_ranks",
    "say",
    "shown_warnings",
    "synchronize",
    "tr",
    "tr_plural",
    "try_all_gpus",
    "try_gpu",
    "use_language",
    "watch",
]

__version__ = "0.1.1"
