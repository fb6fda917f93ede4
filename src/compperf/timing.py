"""Wall-clock timers in the style of the d2l book, made correct for asynchronous devices."""

from __future__ import annotations

import time
from types import TracebackType

import torch

from compperf import units
from compperf.devices import as_device, synchronizer
from compperf.i18n import Text, parts, tr

__all__ = ["Benchmark", "Timer", "format_time"]

_clock = time.perf_counter


def format_time(seconds: float) -> str:
    """Format a duration with a unit that keeps three significant figures.

    Parameters
    ----------
    seconds : float
        A duration in seconds.

    Returns
    -------
    Text
        For example ``"850 ns"``, ``"12.3 µs"``, ``"4.56 ms"``, ``"1.23 s"``, with the
        unit in the language that ``compperf.use_language`` chose (``"4.56 мс"``).
    """
    with parts():  # a value inside a sentence or table, recorded with it
        return units.seconds(seconds)


class Timer:
    """Record several running times.

    Attributes
    ----------
    times : list of float
        Every interval recorded by :meth:`stop`, in seconds.

    Notes
    -----
    The API of ``d2l.Timer`` (Dive into Deep Learning, section 3.1). It
    reads the host clock only: time GPU work with :class:`Benchmark` or call
    :func:`compperf.synchronize` before :meth:`stop`.
    """

    def __init__(self) -> None:
        self.times: list[float] = []
        self.start()

    def start(self) -> None:
        """Start the clock."""
        self._tik = _clock()

    def stop(self) -> float:
        """Stop the clock, record the interval and return it in seconds."""
        self.times.append(_clock() - self._tik)
        return self.times[-1]

    def avg(self) -> float:
        """Mean of the recorded intervals, in seconds.

        Raises
        ------
        ValueError
            If nothing has been recorded yet.
        """
        if not self.times:
            raise ValueError("Timer.avg() needs at least one interval; call stop() first")
        return sum(self.times) / len(self.times)

    def sum(self) -> float:
        """Total of the recorded intervals, in seconds."""
        return sum(self.times)

    def cumsum(self) -> list[float]:
        """Running totals of the recorded intervals, in seconds."""
        totals, running = [], 0.0
        for interval in self.times:
            running += interval
            totals.append(running)
        return totals


class Benchmark:
    """Time a block of code, synchronizing the device around it.

    Parameters
    ----------
    description : str or Text, optional
        Printed before the time; ``"Done"`` (in the reader's language) by default.
    device : str, torch.device or None
        The device whose queued work must finish before each clock read;
        ``None`` means :func:`compperf.try_gpu`. Checked when the block is
        entered.
    sync : bool, default True
        ``False`` reads the clock without synchronizing, as the book's
        ``d2l.Benchmark`` does: on an asynchronous device that measures how
        long it took to *queue* the work, not to run it.

    Attributes
    ----------
    elapsed : float or None
        Seconds between entering and leaving the block; ``None`` until the
        block has finished.

    Raises
    ------
    ValueError
        If the device is not available (see :func:`compperf.as_device`).

    Notes
    -----
    Prints ``"{description}: {seconds:.4f} sec"`` (in the language chosen with
    ``compperf.use_language``) like ``d2l.Benchmark``
    (Dive into Deep Learning, section 13.2). With ``sync=True`` the device
    is synchronized before the clock starts, so earlier work is not billed
    to this block, and before it stops, so this block's work is.
    """

    def __init__(
        self,
        description: str | Text | None = None,
        device: str | torch.device | None = None,
        sync: bool = True,
    ) -> None:
        self.description = description
        self._device_arg = device
        self.sync = sync
        self.device: torch.device | None = None
        self.elapsed: float | None = None
        self._wait = None
        self._clock = _clock

    def __enter__(self) -> Benchmark:  # noqa: PYI034 (typing.Self needs Python 3.11)
        # Everything is decided before the clock starts: between the two reads there is
        # only the device's own synchronization (none on the CPU).
        self.device = as_device(self._device_arg)
        self.elapsed = None
        self._wait = synchronizer(self.device) if self.sync else None
        self._clock = _clock
        if self._wait is not None:
            self._wait()
        self._start = self._clock()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            return
        if self._wait is not None:
            self._wait()
        self.elapsed = self._clock() - self._start
        with parts():
            description = tr("Done") if self.description is None else self.description
        print(tr("{description}: {seconds:.4f} sec", description=description, seconds=self.elapsed))
