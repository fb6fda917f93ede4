"""Timing and device helpers that stay correct on CUDA, Apple MPS and CPU."""

from __future__ import annotations

from compperf.devices import as_device, num_gpus, synchronize, try_all_gpus, try_gpu
from compperf.environment import Environment, environment
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
    "measure",
    "num_gpus",
    "shown_warnings",
    "synchronize",
    "try_all_gpus",
    "try_gpu",
]

__version__ = "0.1.0"
