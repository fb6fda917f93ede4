"""Per-call timing statistics (median, IQR) on any device, built on torch.utils.benchmark.

Why a little over 350 lines: :class:`Measurement` and the :func:`measure` and
:func:`compare` that make and print it are one unit; most of the length is their
docstrings (units, errors, sources).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.utils.benchmark as torch_benchmark

from compperf import records
from compperf.devices import as_device, synchronize, synchronizer
from compperf.disturbance import Disturbance, watch
from compperf.i18n import Text, parts, table, tr, tr_plural
from compperf.timing import format_time

__all__ = ["Measurement", "compare", "measure"]

# measure() keeps timing until the IQR is below this fraction of the median;
# a result still above it is marked noisy.
_IQR_WARN_THRESHOLD = 0.1
# Fewer timed blocks than this make the IQR meaningless; such a result is marked noisy too.
_MIN_RUNS = 4

_clock = time.perf_counter


@dataclasses.dataclass(frozen=True)
class Measurement:
    """Timing statistics of one callable on one device.

    Attributes
    ----------
    description : str
        What was timed.
    device : str
        The device that was synchronized around each timed block, e.g. ``"cuda:0"``.
    median, iqr, mean : float
        Seconds per call: median, interquartile range and mean over the timed blocks.
    runs : int
        Number of timed blocks.
    number_per_run : int
        Calls per block; each entry of ``times`` is a block's time divided by it.
    times : tuple of float
        Seconds per call, one entry per block.
    warmup : int
        Calls made before timing started (not counted in ``times``).
    num_threads : int
        Threads torch used for intra-op parallelism on the CPU during timing.
    disturbance : Disturbance or None
        What the machine reported about contention while the blocks ran
        (:func:`compperf.watch`); ``None`` for samples timed elsewhere.
    """

    description: str
    device: str
    median: float
    iqr: float
    mean: float
    runs: int
    number_per_run: int
    times: tuple[float, ...]
    warmup: int
    num_threads: int
    disturbance: Disturbance | None = None

    def __post_init__(self) -> None:
        records.note_measurement(self)  # a key figure (compperf.records)

    @classmethod
    def from_times(
        cls,
        times: Sequence[float],
        *,
        description: str,
        device: str | torch.device,
        number_per_run: int = 1,
        warmup: int = 0,
        num_threads: int | None = None,
        disturbance: Disturbance | None = None,
    ) -> Measurement:
        """Summarize seconds-per-call samples timed elsewhere, e.g. by a :class:`Timer`.

        Parameters
        ----------
        times : sequence of float
            Seconds per call, one sample per timed block.
        description : str
            What was timed.
        device : str or torch.device
            The device the work ran on.
        number_per_run : int, default 1
            Calls behind each sample.
        warmup : int, default 0
            Calls made before the samples, reported as is.
        num_threads : int, optional
            Defaults to ``torch.get_num_threads()``.
        disturbance : Disturbance, optional
            What the machine reported while the samples were timed.

        Raises
        ------
        ValueError
            If ``times`` is empty.

        Notes
        -----
        Median, IQR and mean as ``torch.utils.benchmark.Measurement`` computes them.
        """
        if not times:
            raise ValueError(f"Measurement.from_times() needs samples for {description!r}")
        stats = torch_benchmark.Measurement(
            number_per_run=1,
            raw_times=list(times),
            task_spec=torch_benchmark.TaskSpec(stmt=description, setup=""),
        )
        return cls(
            description=description,
            device=str(device),
            median=stats.median,
            iqr=stats.iqr,
            mean=stats.mean,
            runs=len(times),
            number_per_run=number_per_run,
            times=tuple(times),
            warmup=warmup,
            num_threads=torch.get_num_threads() if num_threads is None else num_threads,
            disturbance=disturbance,
        )

    @property
    def quartiles(self) -> tuple[float, float]:
        """The 25th and 75th percentiles of ``times`` in seconds per call.

        The middle half of the timed blocks lies between them and ``iqr`` is their
        difference, so a figure can draw them as error bars that never go below zero.
        """
        q1, q3 = torch.tensor(self.times, dtype=torch.float64).quantile(
            torch.tensor([0.25, 0.75], dtype=torch.float64)
        )
        return q1.item(), q3.item()

    @property
    def disturbed(self) -> bool:
        """True when the machine reported contention while the blocks ran."""
        return self.disturbance is not None and self.disturbance.disturbed

    @property
    def noisy(self) -> bool:
        """True when the IQR exceeds 10 % of the median or there are fewer than four runs."""
        return self.runs < _MIN_RUNS or self.iqr > _IQR_WARN_THRESHOLD * self.median

    def __str__(self) -> Text:
        if not self.noisy:
            return self._summary()
        # The note and the summary are one message: a translation may reorder them.
        with parts():
            summary = self._summary()
        if self.runs < _MIN_RUNS:
            return tr(
                "{measurement}; noisy: too few runs for a meaningful IQR (fewer than {min_runs})",
                measurement=summary,
                min_runs=_MIN_RUNS,
            )
        return tr(
            "{measurement}; noisy: IQR is {share:.0%} of the median",
            measurement=summary,
            share=self.iqr / self.median,
        )

    def _summary(self) -> Text:
        with parts():
            counts = {
                "runs": tr_plural("{n} run", "{n} runs", self.runs),
                "calls": tr_plural("{n} call", "{n} calls", self.number_per_run),
                "warmup": tr_plural("{n} warm-up call", "{n} warm-up calls", self.warmup),
                "threads": tr_plural("{n} thread", "{n} threads", self.num_threads),
            }
        return tr(
            "{description} on {device}: median {median} per call, IQR {iqr} "
            "({runs} of {calls}, {warmup}, {threads})",
            description=self.description,
            device=self.device,
            median=format_time(self.median),
            iqr=format_time(self.iqr),
            **counts,
        )

    def __repr__(self) -> str:
        return f"<Measurement {self}>"


def _synchronizing_clock(device: torch.device) -> Callable[[], float]:
    """A clock that first waits for ``device``; the plain clock on the CPU.

    The synchronizing call is chosen here, once: each read does nothing else.
    """
    read = _clock
    wait = synchronizer(device)
    if wait is None:
        return read

    def clock() -> float:
        wait()
        return read()

    return clock


def measure(
    fn: Callable[..., Any],
    *args: Any,
    device: str | torch.device | None = None,
    description: str | None = None,
    min_run_time: float = 0.2,
    max_run_time: float = 2.0,
    warmup: int = 1,
    num_threads: int | None = None,
    **kwargs: Any,
) -> Measurement:
    """Time ``fn(*args, **kwargs)`` per call, with the device synchronized at each clock read.

    Parameters
    ----------
    fn : callable
        The work to time. Its return value is ignored.
    *args, **kwargs
        Passed to ``fn`` on every call.
    device : str, torch.device or None
        The device the work runs on; ``None`` means :func:`compperf.try_gpu`.
    description : str, optional
        Label for reports; defaults to ``fn.__name__``.
    min_run_time : float, default 0.2
        Seconds of timed blocks to collect at least (and at least four blocks).
    max_run_time : float, default 2.0
        Seconds after which timing stops even if the IQR is still above
        10 % of the median or fewer than four blocks ran; the result is then
        marked ``noisy``.
    warmup : int, default 1
        Calls made before timing, so that one-off costs (allocation, kernel
        selection, compilation) are not counted. torch.utils.benchmark adds
        its own calls while it sizes the blocks.
    num_threads : int, optional
        Threads torch may use on the CPU while timing; defaults to
        ``torch.get_num_threads()``, what the calling code uses (unlike
        torch.utils.benchmark, whose default is 1).

    Returns
    -------
    Measurement
        With the machine's :class:`~compperf.Disturbance` during the timed blocks.

    Raises
    ------
    ValueError
        If the device is not available, ``min_run_time`` is not positive or
        above ``max_run_time``, ``warmup`` is negative or ``num_threads`` is below 1.

    Notes
    -----
    Method: ``torch.utils.benchmark.Timer.adaptive_autorange`` (PyTorch),
    which runs the call in blocks long enough to hide the clock's overhead,
    adds blocks until the IQR falls below 10 % of the median or
    ``max_run_time`` is spent, and reports median and IQR over blocks. Its own clock synchronizes only
    ``torch.accelerator``; here the clock synchronizes the given device, so
    the time of every block includes the work the block queued.
    """
    target = as_device(device)
    if not 0 < min_run_time <= max_run_time:
        raise ValueError(
            "need 0 < min_run_time <= max_run_time (seconds), "
            f"got min_run_time={min_run_time}, max_run_time={max_run_time}"
        )
    if warmup < 0:
        raise ValueError(f"warmup must be >= 0 calls, got {warmup}")
    threads = torch.get_num_threads() if num_threads is None else num_threads
    if threads < 1:
        raise ValueError(f"num_threads must be >= 1, got {threads}")
    label = description or getattr(fn, "__name__", "call")

    def call() -> None:
        fn(*args, **kwargs)

    for _ in range(warmup):
        call()
    synchronize(target)
    timer = torch_benchmark.Timer(
        stmt="call()",
        globals={"call": call},
        timer=_synchronizing_clock(target),
        num_threads=threads,
        description=label,
    )
    with watch() as watched:
        result = timer.adaptive_autorange(
            threshold=_IQR_WARN_THRESHOLD, min_run_time=min_run_time, max_run_time=max_run_time
        )
    return Measurement.from_times(
        result.times,
        description=label,
        device=target,
        number_per_run=result.number_per_run,
        warmup=warmup,
        num_threads=threads,
        disturbance=watched.disturbance,
    )


def compare(measurements: Sequence[Measurement], title: str | Text | None = None) -> Text:
    """Lay several measurements side by side as a plain-text table.

    Parameters
    ----------
    measurements : sequence of Measurement
        Rows, in order. The first row is the baseline of the ``vs first`` column.
    title : str, optional
        A line printed above the table; made with ``compperf.tr``, it is shown
        in the reader's language, as the header is.

    Returns
    -------
    str
        One row per measurement: description, device, median and IQR per
        call, median relative to the first row, runs x calls, threads.

    Raises
    ------
    ValueError
        If ``measurements`` is empty.
    """
    if not measurements:
        raise ValueError("compare() needs at least one Measurement")
    baseline = measurements[0].median
    with parts():
        header = [
            "",
            tr("device"),
            tr("median"),
            tr("IQR"),
            tr("vs first"),
            tr("runs x calls"),
            tr("threads"),
        ]
        rows = [
            (
                m.description,
                m.device,
                format_time(m.median),
                format_time(m.iqr),
                tr("{ratio:.2f}×", ratio=m.median / baseline),  # noqa: RUF001 (as a Ratio writes it)
                f"{m.runs} x {m.number_per_run}",
                str(m.num_threads),
            )
            for m in measurements
        ]
    return table(header, rows, title=title)
