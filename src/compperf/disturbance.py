"""How much the machine disturbed a measurement: CPU steal, CPU pressure and a probe's drift."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from types import TracebackType

from compperf.i18n import Text, parts, tr

__all__ = ["Disturbance", "watch"]

_PROC_STAT = Path("/proc/stat")
_CPU_PRESSURE = Path("/proc/pressure/cpu")
# A run is disturbed when the hypervisor took more than this share of the CPU time ...
_STEAL_THRESHOLD = 0.05
# ... or some runnable task of the machine waited for a CPU more than this share of the time
# (Linux PSI "some", which counts every task, ours included) ...
_PRESSURE_THRESHOLD = 0.25
# ... or the reference probe ran this much slower (or faster) after than before. A quiet
# machine drifts up to ~1.5 times (caches and branch predictors cooled by the watched work), so
# only a doubling counts: a throttled CPU or a busy sibling hyperthread.
_DRIFT_THRESHOLD = 2.0
# The probe: a fixed piece of pure-Python work, timed this many times after one untimed
# run; the fastest run counts (a stall lengthens one run, a slower machine all of them).
# Each run takes about 0.2 ms on a current CPU: ~2 ms before and after the watched work.
_PROBE_REPEATS = 7
_PROBE_SIZE = 4000

_clock = time.perf_counter


def _read_steal() -> tuple[int, int] | None:
    """(steal, total) jiffies summed over all CPUs; ``None`` where /proc/stat is absent."""
    try:
        first = _PROC_STAT.read_text(encoding="ascii").split("\n", 1)[0].split()
    except OSError:
        return None
    if len(first) < 9 or first[0] != "cpu":
        return None
    values = [int(v) for v in first[1:]]
    # Fields: user nice system idle iowait irq softirq steal [guest guest_nice], and the
    # guest times are already counted in user and nice.
    return values[7], sum(values[:8])


def _read_pressure() -> float | None:
    """Microseconds some task waited for a CPU since boot (PSI "some total")."""
    try:
        for line in _CPU_PRESSURE.read_text(encoding="ascii").splitlines():
            if line.startswith("some"):
                return float(line.rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None
    return None


def _probe_once() -> float:
    start = _clock()
    total = 0
    for i in range(_PROBE_SIZE):
        total += i * i % 7
    return _clock() - start


def _probe() -> float:
    """Seconds of the fixed reference work: the fastest of a few runs after a warm-up."""
    _probe_once()
    return min(_probe_once() for _ in range(_PROBE_REPEATS))


@dataclasses.dataclass(frozen=True)
class Disturbance:
    """What the system reported about contention while some work ran.

    Attributes
    ----------
    seconds : float
        Wall-clock seconds watched.
    steal : float or None
        Share (0–1) of all CPUs' time that the hypervisor gave to other machines
        (``/proc/stat``, field ``steal``); ``None`` where the system does not report it.
    pressure : float or None
        Share (0–1) of the wall time during which at least one runnable task waited for a
        CPU (``/proc/pressure/cpu``, ``some``); ``None`` where the system does not report it.
    probe_before, probe_after : float
        Fastest seconds of a fixed reference computation before and after the work.

    Notes
    -----
    Steal and pressure are Linux's own accounts (``proc(5)``, PSI in the kernel's
    ``Documentation/accounting/psi.rst``); the probe catches what they miss (frequency
    changes, contention elsewhere) as a drift of its time. Thresholds: steal above 5 %,
    pressure above 25 %, or a drift beyond 2× either way mark the work as disturbed.
    """

    seconds: float
    steal: float | None
    pressure: float | None
    probe_before: float
    probe_after: float

    @property
    def drift(self) -> float:
        """The probe's drift, ``probe_after / probe_before`` (1 when the machine ran alike)."""
        return self.probe_after / self.probe_before if self.probe_before > 0 else 1.0

    @property
    def reasons(self) -> tuple[str, ...]:
        """The signals over their threshold, among ``"steal"``, ``"pressure"``, ``"drift"``."""
        found = []
        if self.steal is not None and self.steal > _STEAL_THRESHOLD:
            found.append("steal")
        if self.pressure is not None and self.pressure > _PRESSURE_THRESHOLD:
            found.append("pressure")
        if not 1 / _DRIFT_THRESHOLD <= self.drift <= _DRIFT_THRESHOLD:
            found.append("drift")
        return tuple(found)

    @property
    def disturbed(self) -> bool:
        """True when any signal crossed its threshold (see :attr:`reasons`)."""
        return bool(self.reasons)

    def combine(self, other: Disturbance) -> Disturbance:
        """One account of two watched periods: time-weighted shares, the wider drift."""
        total = self.seconds + other.seconds

        def weighted(a: float | None, b: float | None) -> float | None:
            if a is None or b is None or total <= 0:
                return a if b is None else b
            return (a * self.seconds + b * other.seconds) / total

        drifts = sorted([self, other], key=lambda d: abs(d.drift - 1))
        return Disturbance(
            seconds=total,
            steal=weighted(self.steal, other.steal),
            pressure=weighted(self.pressure, other.pressure),
            probe_before=drifts[-1].probe_before,
            probe_after=drifts[-1].probe_after,
        )

    def record(self) -> dict[str, object]:
        """A JSON-able summary, as the docs build keeps it per example."""
        return {
            "seconds": round(self.seconds, 4),
            "steal": None if self.steal is None else round(self.steal, 4),
            "pressure": None if self.pressure is None else round(self.pressure, 4),
            "drift": round(self.drift, 3),
            "disturbed": self.disturbed,
            "reasons": list(self.reasons),
        }

    def __str__(self) -> Text:
        with parts():  # shares as messages, so that each language writes its numbers
            if self.steal is None:
                steal = tr("not reported")
            else:
                steal = tr("{share:.1%}", share=self.steal)
            if self.pressure is None:
                pressure = tr("not reported")
            else:
                pressure = tr("{share:.0%}", share=self.pressure)
        values = {"steal": steal, "pressure": pressure, "drift": self.drift}
        if self.disturbed:
            return tr(
                "disturbed: CPU steal {steal}, CPU pressure {pressure}, "
                "reference probe {drift:.2f}× after/before",
                **values,
            )
        return tr(
            "quiet: CPU steal {steal}, CPU pressure {pressure}, "
            "reference probe {drift:.2f}× after/before",
            **values,
        )


class watch:  # lower case: used as a function, `with compperf.watch() as watched:`
    """Watch the machine while a block runs; ``.disturbance`` holds the account after it.

    Parameters
    ----------
    probe : bool, default True
        Time the reference probe before and after the block (about 2 ms each).

    Examples
    --------
    >>> with compperf.watch() as watched:  # doctest: +SKIP
    ...     run_the_experiment()
    >>> watched.disturbance.disturbed  # doctest: +SKIP
    False
    """

    disturbance: Disturbance | None

    def __init__(self, *, probe: bool = True) -> None:
        self._use_probe = probe
        self.disturbance = None

    def __enter__(self) -> watch:  # noqa: PYI034 - no typing_extensions dependency
        self._probe_before = _probe() if self._use_probe else 0.0
        self._steal = _read_steal()
        self._pressure = _read_pressure()
        self._start = _clock()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        seconds = _clock() - self._start
        steal_now, pressure_now = _read_steal(), _read_pressure()
        probe_after = _probe() if self._use_probe else 0.0
        steal = None
        if self._steal is not None and steal_now is not None:
            stolen, total = (now - then for now, then in zip(steal_now, self._steal, strict=True))
            steal = stolen / total if total > 0 else 0.0
        pressure = None
        if self._pressure is not None and pressure_now is not None and seconds > 0:
            pressure = min(1.0, (pressure_now - self._pressure) / 1e6 / seconds)
        self.disturbance = Disturbance(
            seconds=seconds,
            steal=steal,
            pressure=pressure,
            probe_before=self._probe_before,
            probe_after=probe_after,
        )
