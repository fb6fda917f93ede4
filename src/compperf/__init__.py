"""Timing and device helpers that stay correct on CUDA, Apple MPS and CPU."""

from __future__ import annotations

from compperf import records
from compperf.ceilings import Ceiling, Ceilings, RoofShare, cache_sizes, ceilings
from compperf.devices import as_device, num_gpus, synchronize, try_all_gpus, try_gpu
from compperf.disturbance import Disturbance, watch
from compperf.environment import Environment, environment
from compperf.i18n import language, say, tr, tr_plural, use_language
from compperf.launch import RankResults, run_ranks
from compperf.measure import Measurement, compare, measure
from compperf.records import compare_published
from compperf.reporting import shown_warnings
from compperf.timing import Benchmark, Timer, format_time
from compperf.verdicts import Comparison, Ratio, Verdict, conclude, crossover, interleave

__all__ = [
    "Benchmark",
    "Ceiling",
    "Ceilings",
    "Comparison",
    "Disturbance",
    "Environment",
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

__version__ = "0.1.0"
