"""Quantities written with a unit that keeps three significant figures: 12.3 µs, 1.5 MiB.

A message formats a value with a unit through its format spec: ``{t:time}`` (seconds),
``{b:bytes}`` (bytes) and ``{f:flops}`` (floating-point operations per second), so that
an example passes the number itself (``compperf.say("took {t:time}", t=seconds)``) and
the unit is chosen, written in the reader's language and recorded with the message. The
words of the units are messages of compperf's catalog (``"{value:.3g} ms"``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compperf.i18n import Text

__all__ = ["SPECS", "bytes_", "flops", "record", "seconds"]


def _tr() -> Callable[..., Text]:
    from compperf.i18n import tr  # compperf.i18n formats with this module: import late

    return tr


def seconds(value: float) -> Text:
    """A duration: ``"850 ns"``, ``"12.3 µs"``, ``"4.56 ms"``, ``"1.23 s"``.

    Parameters
    ----------
    value : float
        Seconds (negative values keep their sign).
    """
    tr = _tr()
    if abs(value) >= 1.0:
        return tr("{value:.3g} s", value=value)
    if abs(value) >= 1e-3:
        return tr("{value:.3g} ms", value=value / 1e-3)
    if abs(value) >= 1e-6:
        return tr("{value:.3g} µs", value=value / 1e-6)
    return tr("{value:.3g} ns", value=value / 1e-9)


def bytes_(value: float) -> Text:
    """A size in binary units: ``"512 B"``, ``"1.5 KiB"``, ``"144 MiB"``, ``"2 GiB"``.

    Parameters
    ----------
    value : float
        Bytes.
    """
    tr = _tr()
    if abs(value) >= 2**30:
        return tr("{value:.3g} GiB", value=value / 2**30)
    if abs(value) >= 2**20:
        return tr("{value:.3g} MiB", value=value / 2**20)
    if abs(value) >= 2**10:
        return tr("{value:.3g} KiB", value=value / 2**10)
    return tr("{value:.3g} B", value=value)


def flops(value: float) -> Text:
    """A rate of floating-point operations: ``"850 MFLOP/s"``, ``"12.3 GFLOP/s"``.

    Parameters
    ----------
    value : float
        Floating-point operations per second.
    """
    tr = _tr()
    if abs(value) >= 1e12:
        return tr("{value:.3g} TFLOP/s", value=value / 1e12)
    if abs(value) >= 1e9:
        return tr("{value:.3g} GFLOP/s", value=value / 1e9)
    return tr("{value:.3g} MFLOP/s", value=value / 1e6)


# A message's format spec to the function that writes its value with a unit.
SPECS: dict[str, Callable[[float], Text]] = {"time": seconds, "bytes": bytes_, "flops": flops}


def record(spec: str, value: object) -> dict[str, Any]:
    """The record of ``value`` written with the unit of format spec ``spec``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a tensor must be turned into one first,
        e.g. with ``float(t)`` or ``t.item()``).
    ValueError
        If ``value`` is NaN, or ``spec`` is not one of :data:`SPECS`.
    """
    if spec not in SPECS:
        raise ValueError(f"unknown unit format spec {spec!r} (known: {', '.join(SPECS)})")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{{...:{spec}}} formats a number, got {type(value).__name__} {value!r}")
    if math.isnan(float(value)):
        raise ValueError(f"{{...:{spec}}} got NaN")
    from compperf.recording import parts

    with parts():  # a value inside the message that is being made
        return SPECS[spec](float(value)).record
