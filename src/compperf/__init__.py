"""Timing and device helpers that stay correct on CUDA, Apple MPS and CPU."""

from __future__ import annotations

from compperf.devices import as_device, num_gpus, synchronize, try_all_gpus, try_gpu
from compperf.environment import Environment, environment
from compperf.i18n import language, say, tr, tr_plural, use_language
from compperf.measure import Measurement, compare, measure
from compperf.reporting import shown_warnings
from compperf.timing import Benchmark, Timer, format_time

__all__ = [
    "Benchmark",
    "Environment",
    "Measurement",
    "Timer",
    "as_device",
    "compare",
    "environment",
    "format_time",
    "language",
    "measure",
    "num_gpus",
    "say",
    "shown_warnings",
    "synchronize",
    "tr",
    "tr_plural",
    "try_all_gpus",
    "try_gpu",
    "use_language",
]

__version__ = "0.1.0"
