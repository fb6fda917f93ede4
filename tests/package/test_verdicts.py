from __future__ import annotations

import importlib
import itertools

import pytest

import compperf

verdicts = importlib.import_module("compperf.verdicts")
disturbance = importlib.import_module("compperf.disturbance")


def test_median_interval_is_the_sign_test_interval():
    values = list(range(1, 11))  # n = 10: k = 2 gives 1 - 2 * 11/1024 = 97.9 %
    low, high, achieved = verdicts._median_interval(values, 0.95)
    assert (low, high) == (2, 9)
    assert achieved == pytest.approx(1 - 2 * 11 / 1024)


def test_median_interval_with_few_values_is_min_to_max_at_lower_confidence():
    low, high, achieved = verdicts._median_interval([3.0, 1.0, 2.0], 0.95)
    assert (low, high) == (1.0, 3.0)
    assert achieved == pytest.approx(0.75)


def test_one_stalled_round_cannot_decide_a_ratio():
    ratios = [1.0] * 9 + [0.01]  # one round in which the baseline stalled
    ratio = compperf.Ratio.from_rounds("a", "b", ratios)
    assert ratio.estimate == 1.0
    assert (ratio.low, ratio.high) == (1.0, 1.0)


def test_ratio_needs_two_rounds():
    with pytest.raises(ValueError, match="at least two rounds"):
        compperf.Ratio.from_rounds("a", "b", [1.0])


@pytest.mark.parametrize(
    ("low", "high", "outcome"),
    [(0.5, 0.9, "yes"), (1.0, 1.2, "no"), (0.9, 1.1, "unclear"), (0.95, 0.95, "yes")],
)
def test_conclude_is_three_way(low, high, outcome):
    verdict = compperf.conclude("faster", "a vs b", low, high, below=0.96)
    assert verdict.outcome == outcome
    assert [verdict.yes, verdict.no, verdict.unclear].count(True) == 1


def test_a_disturbed_machine_decides_nothing():
    verdict = compperf.conclude("faster", "a vs b", 0.5, 0.6, below=1, disturbed=True)
    assert verdict.unclear
    assert verdict.disturbed


def test_a_verdict_is_not_a_bool():
    verdict = compperf.conclude("faster", "a vs b", 0.5, 0.6, below=1)
    with pytest.raises(TypeError, match=r"verdict\.unclear"):
        bool(verdict)


def test_conclude_refuses_an_inverted_interval():
    with pytest.raises(ValueError, match="low <= high"):
        compperf.conclude("faster", "a vs b", 2, 1, below=1)


def _verdict(outcome):
    low, high = {"yes": (0.5, 0.6), "no": (1.0, 1.1), "unclear": (0.9, 1.1)}[outcome]
    return compperf.conclude("faster", "x", low, high, below=0.95)


@pytest.mark.parametrize(
    ("outcomes", "expected", "value"),
    [
        (["no", "no", "yes", "yes"], "yes", 64),
        (["no", "unclear", "yes", "yes"], "unclear", 64),
        (["yes", "yes", "yes", "yes"], "no", 1),  # faster everywhere: no crossover inside
        (["yes", "no", "no", "no"], "no", None),
        (["no", "no", "no", "unclear"], "unclear", None),
    ],
)
def test_crossover(outcomes, expected, value):
    sizes = [1, 8, 64, 512]
    result = compperf.crossover(sizes, [_verdict(o) for o in outcomes], subject="compile")
    assert result.claim == "crossover"
    assert result.outcome == expected
    assert result.value == value


def test_verdicts_are_recorded_while_recording():
    verdicts.start_recording()
    try:
        compperf.conclude("overlapped", "copy and compute", 0.5, 0.7, below=0.9)
    finally:
        records = verdicts.stop_recording()
    assert records == [
        {
            "claim": "overlapped",
            "subject": "copy and compute",
            "outcome": "yes",
            "low": 0.5,
            "high": 0.7,
            "threshold": 0.9,
            "disturbed": False,
            "value": None,
        }
    ]
    compperf.conclude("overlapped", "not recorded", 0.5, 0.7, below=0.9)
    assert verdicts.stop_recording() == []


class FakeClock:
    """A clock that each fake variant advances by its own cost per call."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _variants(clock, costs, stall_at=None):
    counter = itertools.count()

    def make(cost):
        def call():
            step = next(counter)
            clock.now += cost + (1.0 if step == stall_at else 0.0)

        return call

    return {name: make(cost) for name, cost in costs.items()}


@pytest.fixture
def clock(monkeypatch, tmp_path):
    fake = FakeClock()
    monkeypatch.setattr(verdicts, "_clock", fake)
    monkeypatch.setattr(disturbance, "_clock", fake)
    # A quiet machine: the real counters, read over fake seconds, would look disturbed.
    monkeypatch.setattr(disturbance, "_PROC_STAT", tmp_path / "absent")
    monkeypatch.setattr(disturbance, "_CPU_PRESSURE", tmp_path / "absent")
    return fake


def test_interleave_finds_the_faster_variant_despite_a_stall(clock):
    variants = _variants(clock, {"eager": 2e-3, "compiled": 1e-3}, stall_at=40)
    comparison = compperf.interleave(variants, device="cpu", budget=10.0)
    ratio = comparison.ratio("compiled", "eager")
    assert ratio.estimate == pytest.approx(0.5)
    assert ratio.high < 0.6
    assert comparison.faster("compiled", "eager").yes
    assert comparison.faster("eager", "compiled").no
    assert comparison.measurements["eager"].median == pytest.approx(2e-3)
    assert comparison.disturbance is not None


def test_pays_back_after_the_calls_that_repay_the_one_off_cost(clock):
    variants = _variants(clock, {"eager": 2e-3, "compiled": 1e-3})
    comparison = compperf.interleave(variants, device="cpu", budget=10.0)
    verdict = comparison.pays_back("compiled", "eager", 1.0)  # saves 1 ms per call
    assert verdict.claim == "pays back"
    assert verdict.yes
    assert verdict.value == pytest.approx(1000)
    assert verdict.low <= verdict.value <= verdict.high
    never = comparison.pays_back("eager", "compiled", 1.0)
    assert never.no
    assert never.value is None
    with pytest.raises(ValueError, match="one_off"):
        comparison.pays_back("compiled", "eager", -1.0)


def test_pays_back_is_unclear_when_faster_is():
    ratios = {"a": (1.0,) * 6, "b": (0.5, 0.5, 0.5, 1.5, 1.5, 1.5)}
    comparison = compperf.Comparison(
        names=("a", "b"),
        rounds=ratios,
        measurements={},
        device="cpu",
        disturbance=disturbance.Disturbance(1.0, None, None, 1.0, 1.0),
    )
    assert comparison.faster("b", "a").unclear
    assert comparison.pays_back("b", "a", 1.0).unclear


def test_interleave_stops_at_the_budget(clock):
    variants = _variants(clock, {"a": 1e-3, "b": 1e-3})
    comparison = compperf.interleave(variants, device="cpu", budget=0.001, min_rounds=6)
    assert len(comparison.rounds["a"]) == 6  # the minimum, though the budget is spent


def test_interleave_checks_its_arguments():
    with pytest.raises(ValueError, match="at least two variants"):
        compperf.interleave({"a": lambda: None}, device="cpu")
    with pytest.raises(ValueError, match="budget > 0"):
        compperf.interleave({"a": int, "b": int}, device="cpu", budget=0)
    with pytest.raises(KeyError, match="not a variant"):
        compperf.interleave({"a": int, "b": int}, device="cpu", budget=0.05).ratio("a", "c")


def test_disturbance_reasons(monkeypatch):
    quiet = compperf.Disturbance(1.0, steal=0.0, pressure=0.01, probe_before=1, probe_after=1)
    assert not quiet.disturbed
    assert quiet.reasons == ()
    stolen = compperf.Disturbance(1.0, steal=0.2, pressure=None, probe_before=1, probe_after=1)
    assert stolen.reasons == ("steal",)
    drifted = compperf.Disturbance(1.0, steal=None, pressure=None, probe_before=1, probe_after=3)
    assert drifted.reasons == ("drift",)
    assert quiet.combine(stolen).steal == pytest.approx(0.1)
    assert str(quiet).startswith("quiet")
    assert str(stolen).startswith("disturbed")


def test_watch_reads_the_kernel_counters(monkeypatch, tmp_path):
    stat, pressure = tmp_path / "stat", tmp_path / "pressure"
    stat.write_text("cpu  100 0 0 800 0 0 0 100 0 0\n")
    pressure.write_text("some avg10=0 avg60=0 avg300=0 total=0\nfull total=0\n")
    monkeypatch.setattr(disturbance, "_PROC_STAT", stat)
    monkeypatch.setattr(disturbance, "_CPU_PRESSURE", pressure)
    with compperf.watch(probe=False) as watched:
        stat.write_text("cpu  200 0 0 1500 0 0 0 300 0 0\n")  # 200 of 1000 jiffies stolen
    assert watched.disturbance.steal == pytest.approx(0.2)
    assert watched.disturbance.reasons == ("steal",)


def test_watch_without_proc_files(monkeypatch, tmp_path):
    monkeypatch.setattr(disturbance, "_PROC_STAT", tmp_path / "absent")
    monkeypatch.setattr(disturbance, "_CPU_PRESSURE", tmp_path / "absent")
    with compperf.watch(probe=False) as watched:
        pass
    assert (watched.disturbance.steal, watched.disturbance.pressure) == (None, None)
    assert "not reported" in str(watched.disturbance)


def test_measure_carries_its_disturbance():
    result = compperf.measure(lambda: None, device="cpu", min_run_time=0.01)
    assert isinstance(result.disturbance, compperf.Disturbance)
    assert result.disturbed == result.disturbance.disturbed


def test_compperfs_own_claims_print_in_the_readers_language() -> None:
    verdict = compperf.conclude("faster", "a vs b", 0.5, 0.8, below=1 / 1.05)
    assert str(verdict).startswith("faster (a vs b): yes")
    compperf.use_language("ru")
    try:
        assert str(verdict).startswith("быстрее (a vs b):")
    finally:
        compperf.use_language("en")


def test_a_disturbed_machine_never_says_it_pays_back_or_never_does():
    """The rule of conclude(), for pays_back too: a busy run decides nothing."""
    ratios = {"a": (1.0,) * 6, "b": (0.5,) * 6}
    busy = disturbance.Disturbance(1.0, None, 0.9, 1.0, 1.0)  # CPU pressure 90 %
    comparison = compperf.Comparison(
        names=("a", "b"), rounds=ratios, measurements={}, device="cpu", disturbance=busy
    )
    assert comparison.pays_back("b", "a", 1.0).unclear  # would be "yes", in some calls
    assert comparison.pays_back("a", "b", 1.0).unclear  # would be "no"
    assert comparison.faster("b", "a").unclear
