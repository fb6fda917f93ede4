"""A device's measured ceilings (peak FLOP/s, memory bandwidth, per-call overhead) and the roofline.

Why about 530 lines: the three ceilings are measured, printed and used for the roofline
and a page's share of its roof (:class:`RoofShare`, :meth:`Ceilings.place`,
:meth:`Ceilings.peak_share`) by one :class:`Ceilings`, whose sweeps depend on the cache
sizes read here and whose own work :meth:`Ceilings.place` times again; some 40 % of the
lines are docstrings.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable
from pathlib import Path

import torch

from compperf import records
from compperf.devices import as_device
from compperf.i18n import Text, paragraph, parts, tr, tr_plural
from compperf.measure import Measurement, measure
from compperf.verdicts import _CONFIDENCE, Verdict, _median_interval, conclude, interleave

__all__ = ["Ceiling", "Ceilings", "RoofShare", "cache_sizes", "ceilings"]

_CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
# The bandwidth sweep's largest working set is at least this many times the last-level cache,
# so that the stream comes from memory, not from a cache.
_LLC_FACTOR = 4
# Used when the system names no cache size (bytes): a larger cache than most CPUs have.
_FALLBACK_LLC = 64 * 2**20
_MATMUL_SIZES = (256, 512, 1024)
_OVERHEAD_ELEMENTS = 1
# The text form wraps here, as compperf.environment's does.
_TEXT_WIDTH = 76
_cache: dict[tuple[str, str, int], Ceilings] = {}
_measure = measure  # the tests replace it with fake timings


@dataclasses.dataclass(frozen=True)
class Ceiling:
    """One measured limit and the interval of its median.

    Attributes
    ----------
    value : float
        FLOP/s for ``"matmul"``, bytes/s for ``"copy"``, seconds per call for ``"overhead"``.
    low, high : float
        The sign test's 95 % interval of that median (same unit).
    detail : str
        What was run for it, e.g. ``"1024x1024 @ 1024x1024"``.
    measurement : Measurement
        The timing it comes from (median, IQR per call, :class:`~compperf.Disturbance`).
    """

    value: float
    low: float
    high: float
    detail: str
    measurement: Measurement


def _rate(measurement: Measurement, work: float, detail: str) -> Ceiling:
    """``work`` per second (FLOP/s or bytes/s) with the interval of its median."""
    low_t, high_t, _ = _median_interval(measurement.times, _CONFIDENCE)
    return Ceiling(work / measurement.median, work / high_t, work / low_t, detail, measurement)


@dataclasses.dataclass(frozen=True)
class RoofShare:
    """What share of its roof one measured operation reaches.

    Attributes
    ----------
    intensity : float
        FLOP per byte moved (the bytes are a lower bound: what the operation must read and write).
    roof : float
        FLOP/s the roofline allows at that intensity: ``min(peak, intensity * bandwidth)``.
    achieved, low, high : float
        FLOP/s reached: at the median time per call, and the interval of that median.
    roof_low, roof_high : float or None
        The roof's own interval (from the intervals of the measured peak and bandwidth);
        the share's interval spans both (:attr:`share_low`, :attr:`share_high`).
    bound : str
        ``"memory"`` when ``intensity`` is below the ridge point, ``"compute"`` otherwise.
    rounds : tuple of float
        From :meth:`Ceilings.place`: the share in each round, against the roof timed in that
        round; the share is their median and its interval the sign test's over them.
        Empty from :meth:`Ceilings.share` and :meth:`Ceilings.peak_share`.
    measurement : Measurement or None
        From :meth:`Ceilings.place`: the operation's own timed blocks.
    disturbed : bool
        From :meth:`Ceilings.place`: the machine was disturbed while the rounds ran.
    within : Verdict or None
        From :meth:`Ceilings.peak_share`: claim ``"below the measured peak"``, "yes" when the
        whole share interval lies below 1, "no" when it lies at or past 1, "unclear" when it
        reaches across 1 or the machine was disturbed. Only "yes" gives a share: a rate at
        or past the peak means the two were measured under different conditions. ``None``
        from :meth:`Ceilings.share`.
    """

    intensity: float
    roof: float
    achieved: float
    low: float
    high: float
    bound: str
    within: Verdict | None = None
    roof_low: float | None = None
    roof_high: float | None = None
    rounds: tuple[float, ...] = ()
    measurement: Measurement | None = None
    disturbed: bool = False

    def __str__(self) -> Text:
        """The rate and its share of the peak, or why the share is unclear (GFLOP/s, %)."""
        values = {
            "rate": self.achieved / 1e9,
            "roof": self.roof / 1e9,
            "share": self.share,
            "low": self.share_low,
            "high": self.share_high,
        }
        if self.within is None or self.within.yes:
            return tr(
                "{rate:.1f} GFLOP/s, {share:.0%} of the measured peak of {roof:.1f} GFLOP/s "
                "({low:.0%} to {high:.0%} from the interval of the median)",
                **values,
            )
        return tr(
            "{rate:.1f} GFLOP/s against a measured peak of {roof:.1f} GFLOP/s: the share of "
            "the peak is unclear here ({low:.0%} to {high:.0%})",
            **values,
        )

    @property
    def share(self) -> float:
        """``achieved / roof`` (dimensionless, 1 is on the roof); the median of :attr:`rounds`."""
        if self.rounds:
            return statistics.median(self.rounds)
        return self.achieved / self.roof

    @property
    def share_low(self) -> float:
        """The low end of the share's interval (the rate's low end over the roof's high end).

        Both the rate and the roof are measured, each with an interval; a share read from
        one end of each would change its verdict from one run to the next on a busy machine.
        With :attr:`rounds`, the low end of their median's interval.
        """
        if self.rounds:
            return _median_interval(self.rounds, _CONFIDENCE)[0]
        return self.low / (self.roof_high or self.roof)

    @property
    def share_high(self) -> float:
        """The high end of the share's interval (the rate's high end over the roof's low end)."""
        if self.rounds:
            return _median_interval(self.rounds, _CONFIDENCE)[1]
        return self.high / (self.roof_low or self.roof)


@dataclasses.dataclass(frozen=True)
class Ceilings:
    """The measured ceilings of one device, dtype and thread count.

    Attributes
    ----------
    device, dtype : str
        Where and in which dtype they were measured, e.g. ``"cpu"``, ``"torch.float32"``.
    num_threads : int
        CPU threads torch used.
    peak : Ceiling
        Best sustained matrix-product FLOP/s over the sizes tried.
    bandwidth : Ceiling
        Copy bandwidth in bytes/s (bytes read plus bytes written) with a working set of
        ``working_set`` bytes.
    overhead : Ceiling
        Seconds per call of an element-wise operation on one element.
    working_set : int
        Bytes the copy touches (source and destination).
    last_level_cache : int or None
        Bytes of the largest cache the system names; ``None`` where it names none.
    peak_size : int or None
        The square size ``n`` whose product gave the peak; ``None`` for ceilings made by
        hand, which :meth:`place` cannot time again.
    """

    device: str
    dtype: str
    num_threads: int
    peak: Ceiling
    bandwidth: Ceiling
    overhead: Ceiling
    working_set: int
    last_level_cache: int | None
    peak_size: int | None = None

    @property
    def ridge(self) -> float:
        """The intensity where the roofline bends, ``peak / bandwidth`` (FLOP per byte)."""
        return self.peak.value / self.bandwidth.value

    @property
    def ridge_interval(self) -> tuple[float, float]:
        """(low, high) of the ridge point, from the intervals of peak and bandwidth."""
        return self.peak.low / self.bandwidth.high, self.peak.high / self.bandwidth.low

    @property
    def disturbed(self) -> bool:
        """True when the machine was disturbed while the peak or the bandwidth was measured."""
        return self.peak.measurement.disturbed or self.bandwidth.measurement.disturbed

    def memory_bound(self, intensity: float, subject: str) -> Verdict:
        """Is an operation of ``intensity`` FLOP/byte memory-bound here? Yes, no or unclear.

        "yes" when ``intensity`` lies below the whole :attr:`ridge_interval`, "no" when it
        lies at or above it, "unclear" inside it (a verdict of claim ``"memory-bound"``).
        """
        low, high = self.ridge_interval
        return conclude("memory-bound", subject, intensity / high, intensity / low, below=1.0,
                        disturbed=self.disturbed, value=intensity)  # fmt: skip

    def roof(self, intensity: float) -> float:
        """FLOP/s the roofline allows at ``intensity`` FLOP per byte."""
        if intensity <= 0:
            raise ValueError(f"intensity must be > 0 FLOP/byte, got {intensity}")
        return min(self.peak.value, intensity * self.bandwidth.value)

    def share(self, measurement: Measurement, flops: float, bytes_moved: float) -> RoofShare:
        """Place a measured operation under its roof.

        Parameters
        ----------
        measurement : Measurement
            Seconds per call of the operation (e.g. from :func:`compperf.measure`).
        flops : float
            FLOP per call (e.g. from ``torch.utils.flop_counter.FlopCounterMode``).
        bytes_moved : float
            Bytes per call the operation must read and write at least.

        Raises
        ------
        ValueError
            If ``flops`` or ``bytes_moved`` is not positive.
        """
        if flops <= 0 or bytes_moved <= 0:
            raise ValueError(f"need flops > 0 and bytes_moved > 0, got {flops}, {bytes_moved}")
        intensity = flops / bytes_moved
        rate = _rate(measurement, flops, measurement.description)
        bound = "memory" if intensity < self.ridge else "compute"
        roof_low = min(self.peak.low, intensity * self.bandwidth.low)
        roof_high = min(self.peak.high, intensity * self.bandwidth.high)
        return RoofShare(
            intensity, self.roof(intensity), rate.value, rate.low, rate.high, bound,
            roof_low=roof_low, roof_high=roof_high,
        )  # fmt: skip

    def place(
        self,
        call: Callable[[], object],
        flops: float,
        bytes_moved: float,
        *,
        description: str,
        budget: float = 1.0,
    ) -> RoofShare:
        """Time an operation in rounds with the ceilings' own work and place it under its roof.

        The ceilings were measured once, maybe minutes earlier; a machine whose speed has
        changed since (a clock change, a neighbour's load) would move a share read against
        them, and decide a verdict one way in one process and the other way in the next.
        Here the operation, the peak's matrix product and the bandwidth's copy take turns
        (:func:`compperf.interleave`): each round gives the share against the roof
        ``min(peak, intensity * bandwidth)`` timed in that round.

        Parameters
        ----------
        call : callable
            The operation, called with no arguments.
        flops : float
            FLOP per call (e.g. from ``torch.utils.flop_counter.FlopCounterMode``).
        bytes_moved : float
            Bytes per call the operation must read and write at least.
        description : str
            What ``call`` does, e.g. ``"a @ b, n = 64"``: the name of its timing.
        budget : float, default 1.0
            Seconds after which no new round starts (at least six rounds run).

        Returns
        -------
        RoofShare
            With :attr:`RoofShare.rounds`, :attr:`RoofShare.measurement` and
            :attr:`RoofShare.disturbed`; ``roof`` is the median of the rounds' roofs.

        Raises
        ------
        ValueError
            If ``flops`` or ``bytes_moved`` is not positive, or these ceilings were made by
            hand (no :attr:`peak_size`).
        """
        if flops <= 0 or bytes_moved <= 0:
            raise ValueError(f"need flops > 0 and bytes_moved > 0, got {flops}, {bytes_moved}")
        if self.peak_size is None:
            raise ValueError("place() times the peak's product again: measure the ceilings "
                             "with compperf.ceilings(), which records its size")  # fmt: skip
        target = torch.device(self.device)
        dtype = getattr(torch, self.dtype.removeprefix("torch."))
        n = self.peak_size
        a = torch.randn(n, n, device=target, dtype=dtype)
        b = torch.randn(n, n, device=target, dtype=dtype)
        itemsize = torch.empty((), dtype=dtype).element_size()
        source = torch.ones(self.working_set // (2 * itemsize), device=target, dtype=dtype)
        destination = torch.empty_like(source)
        peak, copy = self.peak.detail, self.bandwidth.detail
        with records.unnoted():  # the references' timings would crowd out the page's figures
            timed = interleave(
                {description: call, peak: lambda: torch.mm(a, b),
                 copy: lambda: destination.copy_(source)},
                device=target, budget=budget, num_threads=self.num_threads,
            )  # fmt: skip
        intensity = flops / bytes_moved
        roofs = [
            min(2.0 * n**3 / t_peak, intensity * self.working_set / t_copy)
            for t_peak, t_copy in zip(timed.rounds[peak], timed.rounds[copy], strict=True)
        ]
        times = timed.rounds[description]
        shares = [flops / t / roof for t, roof in zip(times, roofs, strict=True)]
        measurement = timed.measurements[description]
        records.note_measurement(measurement)
        rate = _rate(measurement, flops, description)
        return RoofShare(
            intensity, statistics.median(roofs), rate.value, rate.low, rate.high,
            "memory" if intensity < self.ridge else "compute",
            roof_low=min(roofs), roof_high=max(roofs), rounds=tuple(shares),
            measurement=measurement, disturbed=timed.disturbance.disturbed,
        )  # fmt: skip

    def peak_share(self, measurement: Measurement, flops: float) -> RoofShare:
        """The share of the measured peak FLOP/s that an operation reaches.

        For a matrix product or a whole model, whose bytes moved are not counted: only the
        compute roof applies, so :attr:`RoofShare.intensity` is ``math.inf``.

        Parameters
        ----------
        measurement : Measurement
            Seconds per call (e.g. from :func:`compperf.measure` on the same device).
        flops : float
            FLOP per call (e.g. ``2 * n**3`` for an ``n x n`` product, or
            ``torch.utils.flop_counter.FlopCounterMode``'s total).

        Returns
        -------
        RoofShare
            With :attr:`RoofShare.within`, the verdict whether the share can be read at all;
            ``str()`` of it is the sentence a page prints (translated).

        Raises
        ------
        ValueError
            If ``flops`` is not positive.
        """
        if flops <= 0:
            raise ValueError(f"need flops > 0, got {flops}")
        rate = _rate(measurement, flops, measurement.description)
        low, high = rate.low / self.peak.high, rate.high / self.peak.low
        within = conclude(
            "below the measured peak",
            measurement.description,
            low,
            high,
            below=1.0,
            disturbed=self.disturbed or measurement.disturbed,
            value=rate.value / self.peak.value,
        )
        return RoofShare(
            math.inf, self.peak.value, rate.value, rate.low, rate.high, "compute", within,
            roof_low=self.peak.low, roof_high=self.peak.high,
        )  # fmt: skip

    def __str__(self) -> Text:
        with parts():
            threads = tr_plural("{n} thread", "{n} threads", self.num_threads)
            text = tr(
                "Ceilings of {device} ({dtype}, {threads}): peak {peak:.1f} GFLOP/s "
                "({peak_detail}), bandwidth {bandwidth:.1f} GB/s (copy of {working_set:.0f} MiB), "
                "overhead {overhead:.1f} µs per call; ridge point {ridge:.1f} FLOP/byte",
                device=self.device,
                dtype=self.dtype,
                threads=threads,
                peak=self.peak.value / 1e9,
                peak_detail=self.peak.detail,
                bandwidth=self.bandwidth.value / 1e9,
                working_set=self.working_set / 2**20,
                overhead=self.overhead.value * 1e6,
                ridge=self.ridge,
            )
        return paragraph(text, _TEXT_WIDTH)


def cache_sizes(cache_dir: Path = _CACHE_DIR) -> dict[int, int]:
    """Bytes of each data or unified cache level of CPU 0, as Linux names them.

    Returns
    -------
    dict of int to int
        Level (1, 2, 3, ...) to bytes; empty where ``/sys`` names no cache.

    Notes
    -----
    Source: ``/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}`` (sysfs, Linux);
    instruction caches are left out.
    """
    sizes: dict[int, int] = {}
    for index in sorted(cache_dir.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1], 1)
        sizes[level] = int(text.rstrip("KMG")) * scale
    return sizes


def _last_level_cache(device: torch.device) -> int | None:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).L2_cache_size) or None
    sizes = cache_sizes()
    return sizes[max(sizes)] if sizes else None


def ceilings(
    device: str | torch.device | None = None,
    dtype: torch.dtype = torch.float32,
    *,
    num_threads: int | None = None,
    sizes: tuple[int, ...] = _MATMUL_SIZES,
    min_run_time: float = 0.1,
    max_run_time: float = 1.0,
    refresh: bool = False,
) -> Ceilings:
    """Measure (once per process) the peak FLOP/s, bandwidth and per-call overhead of a device.

    Parameters
    ----------
    device : str, torch.device or None
        ``None`` means :func:`compperf.try_gpu`.
    dtype : torch.dtype, default torch.float32
        The dtype of the matrix products and the copy.
    num_threads : int, optional
        CPU threads; defaults to ``torch.get_num_threads()``.
    sizes : tuple of int
        Square matrix sizes ``n`` tried for the peak (``2 * n**3`` FLOP per product).
    min_run_time : float, default 0.1
        Seconds of timed calls per measurement (see :func:`compperf.measure`).
    max_run_time : float, default 1.0
        Seconds after which a measurement stops even if still noisy.
    refresh : bool, default False
        Measure again even if this (device, dtype, threads) was measured before.

    Returns
    -------
    Ceilings
        Cached per (device, dtype, threads): later calls return the same object.

    Raises
    ------
    ValueError
        If the device is not available, ``sizes`` is empty or holds a size below 1.

    Notes
    -----
    Every number is the median of :func:`compperf.measure` (``torch.utils.benchmark``'s
    blocked runs) with the sign test's 95 % interval of the median over its blocks.
    Peak: the best median over ``sizes`` ("maximum achievable matmul FLOPS", as Stas
    Bekman's *Machine Learning Engineering* measures accelerators). Bandwidth: ``copy_``
    between two tensors that together hold at least four times the last-level cache (sysfs on the
    CPU, ``L2_cache_size`` of the CUDA device properties), counted as bytes read plus bytes
    written (a lower bound: write-allocate traffic is not counted), as STREAM's "Copy"
    (McCalpin). Overhead: ``torch.add`` of one-element tensors into a preallocated output.
    """
    target = as_device(device)
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sizes must be a non-empty tuple of sizes >= 1, got {sizes}")
    threads = torch.get_num_threads() if num_threads is None else num_threads
    key = (str(target), str(dtype), threads)
    if not refresh and key in _cache:
        return _cache[key]
    timing = {"device": target, "min_run_time": min_run_time, "max_run_time": max_run_time,
              "num_threads": threads}  # fmt: skip

    best = None
    for n in sizes:
        a = torch.randn(n, n, device=target, dtype=dtype)
        b = torch.randn(n, n, device=target, dtype=dtype)
        detail = f"{n}x{n} @ {n}x{n}"
        timed = _measure(torch.mm, a, b, description=detail, **timing)
        found = _rate(timed, 2.0 * n**3, detail)
        if best is None or found.value > best.value:
            best, best_size = found, n
    assert best is not None
    del a, b

    llc = _last_level_cache(target)
    itemsize = torch.empty((), dtype=dtype).element_size()
    elements = _LLC_FACTOR * (llc or _FALLBACK_LLC) // (2 * itemsize)
    source = torch.ones(elements, device=target, dtype=dtype)
    destination = torch.empty_like(source)
    detail = f"copy_ {elements * itemsize / 2**20:.0f} MiB"
    timed = _measure(destination.copy_, source, description=detail, **timing)
    bandwidth = _rate(timed, 2.0 * elements * itemsize, detail)
    del source, destination

    one = torch.ones(_OVERHEAD_ELEMENTS, device=target, dtype=dtype)
    out = torch.empty_like(one)
    with parts():  # a part of the measurement's line, translated with it
        added = tr("torch.add, 1 element")
    timed = _measure(torch.add, one, one, out=out, description=added, **timing)
    low, high, _ = _median_interval(timed.times, _CONFIDENCE)
    overhead = Ceiling(timed.median, low, high, "torch.add, 1 element", timed)

    found = Ceilings(str(target), str(dtype), threads, best, bandwidth, overhead,
                     2 * elements * itemsize, llc, best_size)  # fmt: skip
    _cache[key] = found
    return found
