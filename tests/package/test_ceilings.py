"""compperf.ceilings with fake timings: what it computes from the seconds it is given."""

from __future__ import annotations

import dataclasses
import importlib

import pytest
import torch

import compperf

ceilings_module = importlib.import_module("compperf.ceilings")

PEAK = 100e9  # FLOP/s of the fake machine
BANDWIDTH = 10e9  # bytes/s
OVERHEAD = 2e-6  # seconds per call


@pytest.fixture
def fake_machine(monkeypatch):
    """Timings of a machine with the constants above; 1 MiB of last-level cache."""
    calls = []

    def fake_measure(fn, *args, description, device, num_threads, **timing):
        calls.append((description, num_threads, timing))
        if "@" in description:  # a matrix product: n x n @ n x n
            n = args[0].shape[0]
            seconds = 2 * n**3 / (PEAK * (n / 1024))  # small products reach less of the peak
        elif description.startswith("copy_"):
            seconds = 2 * args[0].numel() * args[0].element_size() / BANDWIDTH
        else:
            seconds = OVERHEAD
        times = [seconds * factor for factor in (0.98, 0.99, 1.0, 1.0, 1.01, 1.02, 1.0)]
        return compperf.Measurement.from_times(
            times, description=description, device=device, num_threads=num_threads
        )

    monkeypatch.setattr(ceilings_module, "_measure", fake_measure)
    monkeypatch.setattr(ceilings_module, "cache_sizes", lambda: {1: 32 * 2**10, 3: 2**20})
    monkeypatch.setattr(ceilings_module, "_cache", {})
    return calls


def test_ceilings_come_from_the_timings(fake_machine):
    found = compperf.ceilings("cpu", sizes=(256, 1024), num_threads=1)
    assert found.peak.value == pytest.approx(PEAK)
    assert found.peak.detail == "1024x1024 @ 1024x1024"  # the best size wins
    assert found.bandwidth.value == pytest.approx(BANDWIDTH)
    assert found.overhead.value == pytest.approx(OVERHEAD)
    assert found.peak.low <= found.peak.value <= found.peak.high
    assert found.bandwidth.low < found.bandwidth.value < found.bandwidth.high
    assert found.ridge == pytest.approx(PEAK / BANDWIDTH)
    low, high = found.ridge_interval
    assert low < found.ridge < high


def test_the_copy_holds_four_times_the_last_level_cache(fake_machine):
    found = compperf.ceilings("cpu", sizes=(64,))
    assert found.last_level_cache == 2**20
    assert found.working_set == 4 * 2**20


def test_ceilings_are_measured_once_per_device_dtype_and_threads(fake_machine):
    first = compperf.ceilings("cpu", sizes=(64,), num_threads=1)
    assert compperf.ceilings("cpu", sizes=(64,), num_threads=1) is first
    count = len(fake_machine)
    other = compperf.ceilings("cpu", torch.float64, sizes=(64,), num_threads=1)
    assert other is not first
    assert other.dtype == "torch.float64"
    assert len(fake_machine) == 2 * count
    compperf.ceilings("cpu", sizes=(64,), num_threads=1, refresh=True)
    assert len(fake_machine) == 3 * count
    assert {threads for _, threads, _ in fake_machine} == {1}


def test_roofline_and_share(fake_machine):
    found = compperf.ceilings("cpu", sizes=(1024,))
    assert found.roof(1.0) == pytest.approx(BANDWIDTH)  # under the slope
    assert found.roof(1e3) == pytest.approx(PEAK)  # under the flat roof
    measured = compperf.Measurement.from_times([1e-3] * 5, description="op", device="cpu")
    share = found.share(measured, flops=2e6, bytes_moved=1e6)  # 2 FLOP/byte, 2 GFLOP/s
    assert share.intensity == pytest.approx(2.0)
    assert share.bound == "memory"
    assert share.roof == pytest.approx(2 * BANDWIDTH)
    assert share.share == pytest.approx(2e9 / (2 * BANDWIDTH))
    assert share.share_low <= share.share <= share.share_high


def test_memory_bound_is_three_way(fake_machine):
    found = compperf.ceilings("cpu", sizes=(1024,))
    low, high = found.ridge_interval
    assert found.memory_bound(low / 2, "low").yes
    assert found.memory_bound(high * 2, "high").no
    assert found.memory_bound(found.ridge, "ridge").unclear


def test_text_names_the_ceilings(fake_machine):
    text = str(compperf.ceilings("cpu", sizes=(1024,), num_threads=1))
    assert "100.0 GFLOP/s" in text
    assert "10.0 GB/s" in text
    assert "2.0 µs" in text


@pytest.mark.parametrize("sizes", [(), (0, 8)])
def test_bad_sizes_are_refused(fake_machine, sizes):
    with pytest.raises(ValueError, match="sizes must be"):
        compperf.ceilings("cpu", sizes=sizes)


def test_share_needs_positive_work(fake_machine):
    found = compperf.ceilings("cpu", sizes=(64,))
    measured = compperf.Measurement.from_times([1e-3] * 5, description="op", device="cpu")
    with pytest.raises(ValueError, match="flops > 0"):
        found.share(measured, flops=0, bytes_moved=1)
    with pytest.raises(ValueError, match="intensity must be"):
        found.roof(0)


def test_cache_sizes_read_sysfs(tmp_path):
    for index, (level, kind, size) in enumerate(
        [
            (1, "Data", "32K"),
            (1, "Instruction", "32K"),
            (2, "Unified", "512K"),
            (3, "Unified", "32768K"),
        ]
    ):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    assert compperf.cache_sizes(tmp_path) == {1: 32 * 2**10, 2: 512 * 2**10, 3: 32 * 2**20}
    assert compperf.cache_sizes(tmp_path / "missing") == {}


def test_peak_share_is_the_share_of_the_measured_peak(fake_machine):
    found = compperf.ceilings("cpu", sizes=(1024,))
    flops = 2 * 512**3
    half_speed = compperf.Measurement.from_times(
        [flops / (PEAK / 2)] * 5, description="512 matmul", device="cpu"
    )
    share = found.peak_share(half_speed, flops)
    assert share.share == pytest.approx(0.5)
    assert share.roof == pytest.approx(PEAK)
    assert share.bound == "compute"
    with pytest.raises(ValueError, match="flops > 0"):
        found.peak_share(half_speed, 0)
    assert share.within.yes
    assert str(share).startswith("50.0 GFLOP/s, 50% of the measured peak of 100.0 GFLOP/s")


def test_a_share_past_the_peak_is_unclear(fake_machine):
    found = compperf.ceilings("cpu", sizes=(1024,))
    flops = 2 * 512**3
    # Half the calls faster than the peak allows: the interval of the median reaches past it.
    mixed = compperf.Measurement.from_times(
        [flops / (PEAK * factor) for factor in (0.8, 0.9, 1.1, 1.2, 1.3)],
        description="512 matmul",
        device="cpu",
    )
    share = found.peak_share(mixed, flops)
    assert share.within.unclear
    assert "unclear here" in str(share)


def test_environment_includes_the_ceilings_when_asked(fake_machine):
    plain = compperf.environment("cpu")
    assert plain.ceilings is None
    assert "Ceilings of" not in str(plain)
    described = compperf.environment("cpu", with_ceilings=True)
    assert described.ceilings is compperf.ceilings("cpu")  # measured once, then cached
    first, second = str(described).split("\n", 1)
    assert first.startswith("Measured on cpu") or "Measured on cpu" in str(described)
    assert "Ceilings of cpu" in second


def test_a_share_spans_the_roofs_own_interval(fake_machine):
    found = compperf.ceilings("cpu", sizes=(1024,))
    flops = 2 * 512**3
    steady = compperf.Measurement.from_times(
        [flops / (PEAK / 2)] * 5, description="512 matmul", device="cpu"
    )
    share = found.peak_share(steady, flops)
    # The rate has no spread here; the share's interval is the measured peak's.
    assert share.share_low == pytest.approx(share.achieved / found.peak.high)
    assert share.share_high == pytest.approx(share.achieved / found.peak.low)
    assert share.share_low < share.share < share.share_high


def test_place_reads_each_round_against_the_roof_timed_with_it(fake_machine, monkeypatch):
    """A machine twice as slow as when its ceilings were measured: the share read against
    the stored ceilings halves, the share placed in rounds with the ceilings' work does not."""
    found = compperf.ceilings("cpu", sizes=(1024,), num_threads=1)
    flops, slow = 2e6, 2.0
    seconds = flops / (0.4 * PEAK)  # the operation reaches 40 % of the peak at full speed

    def fake_interleave(variants, *, device, budget, num_threads):
        names = tuple(variants)
        assert names[1:] == (found.peak.detail, found.bandwidth.detail)
        base = {names[0]: seconds, names[1]: 2 * 1024**3 / PEAK}
        base[names[2]] = found.working_set / BANDWIDTH
        # The machine slows down during the rounds: every variant alike.
        rounds = {n: tuple(t * slow * (1 + r / 10) for r in range(6)) for n, t in base.items()}
        measurements = {
            n: compperf.Measurement.from_times(list(times), description=n, device="cpu")
            for n, times in rounds.items()
        }
        quiet = compperf.Disturbance(1.0, 0.0, 0.0, 1e-4, 1e-4)
        return compperf.Comparison(names, rounds, measurements, "cpu", quiet)

    monkeypatch.setattr(ceilings_module, "interleave", fake_interleave)
    placed = found.place(lambda: None, flops, bytes_moved=1.0, description="op")
    assert placed.bound == "compute"
    assert placed.share == pytest.approx(0.4)
    assert (placed.share_low, placed.share_high) == pytest.approx((0.4, 0.4))
    assert not placed.disturbed
    assert placed.measurement.description == "op"
    stale = found.share(placed.measurement, flops, bytes_moved=1.0)
    assert stale.share_high < 0.25  # what reading against the stored ceilings would say


def test_place_needs_ceilings_it_can_time_again(fake_machine):
    found = compperf.ceilings("cpu", sizes=(256,), num_threads=1)
    by_hand = dataclasses.replace(found, peak_size=None)
    with pytest.raises(ValueError, match=r"compperf\.ceilings\(\)"):
        by_hand.place(lambda: None, 1.0, 1.0, description="op")
    with pytest.raises(ValueError, match="flops > 0"):
        found.place(lambda: None, 0.0, 1.0, description="op")
