"""One way to conclude: interleaved comparisons, ratios with confidence intervals, three-way verdicts.

Why one module of about 580 lines: it is the one place every verdict a page prints comes
from (issue 18), and it reads top to bottom in that order: the median's interval,
:class:`Ratio`, :class:`Verdict` and :func:`conclude`, :class:`Comparison` and
:func:`interleave`, :func:`crossover`, the recording. The parts share the confidence,
the margin and the interval (:mod:`compperf.ceilings` uses the last two as well), and
some 40 % of the lines are the docstrings the pages' authors read. Split along those parts
(intervals, verdicts, interleaving) if it grows further.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from compperf import figure_labels, recording, records
from compperf.devices import as_device, synchronize, synchronizer
from compperf.disturbance import Disturbance, watch
from compperf.i18n import Text, paragraph, parts, tr
from compperf.measure import Measurement

__all__ = [
    "Comparison",
    "Ratio",
    "Verdict",
    "conclude",
    "crossover",
    "interleave",
    "start_recording",
    "stop_recording",
]

YES, NO, UNCLEAR = "yes", "no", "unclear"
# A variant must be at least this much faster (a ratio below 1 / margin) to be "faster";
# a ratio interval wholly above 1 / margin means "not faster".
_FASTER_MARGIN = 1.05
# Confidence of the ratio intervals (distribution-free, from the rounds' order statistics).
_CONFIDENCE = 0.95
# interleave() stops once every ratio's interval is narrower than this share of its value.
_TARGET_WIDTH = 0.10
_MIN_ROUNDS = 6
_BLOCKS_PER_ROUND = 3
# Each timed block lasts about this long (calls are repeated to fill it).
_BLOCK_SECONDS = 0.005

_clock = time.perf_counter
_recorded: list[dict[str, Any]] | None = None


def _median_interval(values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """(low, high, achieved confidence) for the median of ``values``, distribution-free.

    The interval between order statistics k and n-k+1 covers the median with probability
    1 - 2·P(Bin(n, 1/2) < k) (the sign test's interval); with few values the widest one,
    min to max, is all there is and its lower confidence is reported.
    """
    ordered = sorted(values)
    n = len(ordered)
    below = 0.0  # P(Bin(n, 1/2) < k), grown with k
    best = (ordered[0], ordered[-1], 1 - 2 * 0.5**n)
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2**n
        achieved = 1 - 2 * below
        if achieved < confidence:
            break
        best = (ordered[k - 1], ordered[n - k], achieved)
    return best


@dataclasses.dataclass(frozen=True)
class Ratio:
    """Time of one variant over another's, from interleaved rounds.

    Attributes
    ----------
    numerator, denominator : str
        The variants compared: the ratio is ``time(numerator) / time(denominator)``.
    estimate : float
        Median of the per-round ratios (dimensionless; below 1: the numerator is faster).
    low, high : float
        Confidence interval of that median.
    confidence : float
        What the interval achieves (0.95 unless there were too few rounds).
    rounds : int
        Rounds behind it; a round hit by a stall moves the median by at most one rank.
    """

    numerator: str
    denominator: str
    estimate: float
    low: float
    high: float
    confidence: float
    rounds: int

    @classmethod
    def from_rounds(cls, numerator: str, denominator: str, ratios: Sequence[float]) -> Ratio:
        """The median and its interval from per-round ratios (at least two)."""
        if len(ratios) < 2:
            raise ValueError(f"a ratio needs at least two rounds, got {len(ratios)}")
        low, high, achieved = _median_interval(ratios, _CONFIDENCE)
        return cls(numerator, denominator, statistics.median(ratios), low, high, achieved,
                   len(ratios))  # fmt: skip

    @property
    def relative_width(self) -> float:
        """How tightly the rounds pin the ratio, ``(high - low) / estimate`` (dimensionless)."""
        return (self.high - self.low) / self.estimate if self.estimate > 0 else math.inf

    def __str__(self) -> Text:
        return tr(
            "{estimate:.2f}× ({confidence:.0%} interval {low:.2f}–{high:.2f}×, {rounds} rounds)",
            estimate=self.estimate,
            confidence=self.confidence,
            low=self.low,
            high=self.high,
            rounds=self.rounds,
        )


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A claim's outcome, decided from an interval: ``"yes"``, ``"no"`` or ``"unclear"``.

    Attributes
    ----------
    claim : str
        What is claimed, a short key such as ``"faster"``, ``"overlapped"``, ``"crossover"``.
    subject : str
        What it is claimed of, e.g. ``"torch.compile vs eager, batch 512"``.
    outcome : str
        ``"yes"``, ``"no"`` or ``"unclear"``.
    low, high : float
        The interval the outcome was decided from (its unit is the claim's).
    threshold : float
        The value the interval was compared with.
    disturbed : bool
        Whether the machine was disturbed while the numbers were measured.
    value : float or None
        A number the claim reports with its outcome (a crossover's batch size, ...).

    Notes
    -----
    A verdict is not a bool: ``if verdict:`` raises. Test :attr:`yes`, :attr:`no` or
    :attr:`unclear`, so that "unclear" always has a sentence of its own, or print it:
    ``print(verdict)`` writes its standard line in the reader's language, e.g.
    ``nothing queued when the loop ends (cpu): yes, measured 0.02 (interval 0 to 0.1;
    threshold 1)``, and the page's prose says what each outcome means. The claim and
    the subject are shown as given: pass a :func:`compperf.tr` text for words
    (``compperf.tr("nothing queued when the loop ends")``), a plain string for code
    and names (``str(device)``).
    """

    claim: str
    subject: str
    outcome: str
    low: float
    high: float
    threshold: float
    disturbed: bool = False
    value: float | None = None

    @property
    def yes(self) -> bool:
        """True when the outcome is ``"yes"``."""
        return self.outcome == YES

    @property
    def no(self) -> bool:
        """True when the outcome is ``"no"``."""
        return self.outcome == NO

    @property
    def unclear(self) -> bool:
        """True when the outcome is ``"unclear"``."""
        return self.outcome == UNCLEAR

    def __bool__(self) -> bool:
        raise TypeError(
            f"a Verdict is yes, no or unclear, not a bool: test verdict.yes, verdict.no or "
            f"verdict.unclear (claim {self.claim!r}, outcome {self.outcome!r})"
        )

    def record(self) -> dict[str, Any]:
        """A JSON-able form, as the docs build keeps it per example."""
        return dataclasses.asdict(self)

    def __str__(self) -> Text:
        """The verdict's standard line, in the reader's language (see the Notes above),
        filled to 70 columns."""
        with parts():
            outcome = _outcome_words()[self.outcome]
            if self.disturbed and self.unclear:
                outcome = tr("{outcome} (the machine was disturbed)", outcome=outcome)
            claim = self.claim
            # compperf's own claims ("faster", "crossover", ...) are in its catalog.
            if not isinstance(claim, Text) and claim in figure_labels.CLAIMS:
                claim = tr(claim)
        values = {"claim": claim, "subject": self.subject, "outcome": outcome,
                  "low": self.low, "high": self.high, "threshold": self.threshold}  # fmt: skip
        with parts():  # the line is recorded once, as a paragraph
            if self.low == self.high:
                text = tr(
                    "{claim} ({subject}): {outcome}, measured {low:.3g} (threshold "
                    "{threshold:.3g})",
                    **values,
                )
            elif self.value is None:
                text = tr(
                    "{claim} ({subject}): {outcome} (interval {low:.3g} to {high:.3g}; "
                    "threshold {threshold:.3g})",
                    **values,
                )
            else:
                text = tr(
                    "{claim} ({subject}): {outcome}, measured {value:.3g} (interval "
                    "{low:.3g} to {high:.3g}; threshold {threshold:.3g})",
                    value=self.value,
                    **values,
                )
        return paragraph(text)


def _outcome_words() -> dict[str, Text]:
    return {YES: tr("yes"), NO: tr("no"), UNCLEAR: tr("unclear")}


def _versus(names: Sequence[str], candidate: str, baseline: str) -> str:
    """The default subject ``"candidate vs baseline"``, remembering translated names.

    A variant named with :func:`compperf.tr` reads in the reader's language; the subject
    keeps the names' records, so that its key figure (:mod:`compperf.records`) is the same
    English key in every language and a learner's run matches the published page's.
    """

    def named(name: str) -> str:  # the variant's own name object (a Text keeps its record)
        return next((known for known in names if known == name), name)

    candidate, baseline = named(candidate), named(baseline)
    with parts():  # a subject, not a line of the page's output
        return tr("{candidate} vs {baseline}", candidate=candidate, baseline=baseline)


def _note(verdict: Verdict) -> Verdict:
    records.note_verdict(verdict.record())  # a key figure (compperf.records)
    if _recorded is not None:
        _recorded.append(verdict.record())
    return verdict


def conclude(
    claim: str,
    subject: str,
    low: float,
    high: float,
    *,
    below: float,
    disturbed: bool = False,
    value: float | None = None,
) -> Verdict:
    """Decide a claim that holds when a quantity is below ``below``.

    Parameters
    ----------
    claim, subject : str or Text
        See :class:`Verdict`; a :class:`~compperf.i18n.Text` (``compperf.tr(...)``) is
        printed in the reader's language by ``print(verdict)``.
    low, high : float
        The quantity's confidence interval (e.g. a :class:`Ratio`'s ``low`` and ``high``).
    below : float
        The claim holds ("yes") when the whole interval lies below this value, does not
        ("no") when the whole interval lies at or above it, and is "unclear" otherwise.
    disturbed : bool
        The numbers came from a disturbed machine: the outcome is then "unclear".
    value : float, optional
        A number to report with the outcome.

    Returns
    -------
    Verdict
        Claim ``claim`` about ``subject``, its outcome decided from ``low`` and ``high``.

    Raises
    ------
    ValueError
        If ``low > high`` or a bound is NaN.
    """
    if not low <= high:
        raise ValueError(f"need low <= high for {subject!r}, got low={low}, high={high}")
    # A disturbed machine decides nothing: its stalls need not hit every round alike, and a
    # verdict that a quiet run would reverse is the worst thing a page can print.
    decided = YES if high < below else NO if low >= below else UNCLEAR
    # Words made just for the verdict (the subject last) are shown with its line, not on
    # their own; words made before, and maybe printed already, keep their record.
    for words in (subject, claim):
        if isinstance(words, Text):
            recording.forget_last(words.record)
    outcome = UNCLEAR if disturbed else decided
    return _note(Verdict(claim, subject, outcome, low, high, below, disturbed, value))


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Variants timed in interleaved rounds on one device.

    Attributes
    ----------
    names : tuple of str
        The variants, in the order given.
    rounds : dict of str to tuple of float
        Seconds per call of each variant, one value per round (the median of its blocks).
    measurements : dict of str to Measurement
        Each variant's pooled blocks as a :class:`Measurement` (median, IQR per call).
    device : str
        The device synchronized around every block.
    disturbance : Disturbance
        What the machine reported during the whole comparison.
    """

    names: tuple[str, ...]
    rounds: Mapping[str, tuple[float, ...]]
    measurements: Mapping[str, Measurement]
    device: str
    disturbance: Disturbance

    def ratio(self, numerator: str, denominator: str) -> Ratio:
        """``time(numerator) / time(denominator)`` with its interval, round by round.

        Returns
        -------
        Ratio

        Raises
        ------
        KeyError
            If either name is not one of :attr:`names`.
        """
        for name in (numerator, denominator):
            if name not in self.rounds:
                raise KeyError(f"{name!r} is not a variant of this comparison: {self.names}")
        pairs = zip(self.rounds[numerator], self.rounds[denominator], strict=True)
        return Ratio.from_rounds(numerator, denominator, [a / b for a, b in pairs])

    def faster(
        self, candidate: str, baseline: str, *, margin: float = _FASTER_MARGIN,
        subject: str | None = None,
    ) -> Verdict:  # fmt: skip
        """Is ``candidate`` faster than ``baseline`` by more than ``margin``?

        "yes" when the ratio's interval lies below ``1 / margin``, "no" when it lies at or
        above it (the same speed counts as not faster), "unclear" otherwise.

        Parameters
        ----------
        candidate, baseline : str
            Variants of this comparison.
        margin : float, default 1.05
            How much faster counts as faster: the ratio must lie below ``1 / margin``.
        subject : str, optional
            What the verdict is of; defaults to ``"candidate vs baseline"``.

        Returns
        -------
        Verdict
            Claim ``"faster"``; :attr:`Verdict.value` is the ratio's estimate.

        Raises
        ------
        KeyError
            If either name is not one of :attr:`names`.
        """
        ratio = self.ratio(candidate, baseline)
        return conclude(
            "faster",
            subject or _versus(self.names, candidate, baseline),
            ratio.low,
            ratio.high,
            below=1 / margin,
            disturbed=self.disturbance.disturbed,
            value=ratio.estimate,
        )

    def pays_back(
        self, candidate: str, baseline: str, one_off: float, *,
        margin: float = _FASTER_MARGIN, subject: str | None = None,
    ) -> Verdict:  # fmt: skip
        """After how many calls does ``candidate`` repay a one-off cost (a compilation)?

        Parameters
        ----------
        candidate, baseline : str
            Variants of this comparison: ``candidate`` costs ``one_off`` seconds once.
        one_off : float
            Seconds the candidate costs once (compile time), beyond its calls.
        margin, subject
            As for :meth:`faster`.

        Returns
        -------
        Verdict
            Claim ``"pays back"``, with the outcome of :meth:`faster`: "yes" when the
            candidate is faster, "no" when it is not (it never pays back), "unclear"
            otherwise, and always on a disturbed machine. With "yes", ``low`` and ``high`` bracket the number of calls,
            from the ratio's interval, and :attr:`Verdict.value` is the estimate:
            ``one_off / (t_baseline * (1 - ratio))``, ``t_baseline`` the baseline's
            median seconds per call. Otherwise ``low`` and ``high`` are the ratio's
            interval and ``value`` is ``None``.

        Raises
        ------
        ValueError
            If ``one_off`` is negative.
        """
        if not one_off >= 0:
            raise ValueError(f"one_off must be >= 0 seconds, got {one_off}")
        ratio = self.ratio(candidate, baseline)
        threshold = 1 / margin
        subject = subject or _versus(self.names, candidate, baseline)
        disturbed = self.disturbance.disturbed
        # As conclude(): a disturbed machine decides nothing, never "no" and never a count.
        if disturbed or ratio.high >= threshold:  # not shown faster: "no" or "unclear"
            outcome = NO if ratio.low >= threshold and not disturbed else UNCLEAR
            return _note(Verdict("pays back", subject, outcome, ratio.low, ratio.high,
                                 threshold, disturbed))  # fmt: skip
        per_call = self.measurements[baseline].median

        def calls(r: float) -> float:
            return one_off / (per_call * (1 - r))

        return _note(Verdict("pays back", subject, YES, calls(ratio.low), calls(ratio.high),
                             threshold, disturbed, calls(ratio.estimate)))  # fmt: skip


def _calls_per_block(call: Callable[[], None], wait: Callable[[], None]) -> int:
    start = _clock()
    call()
    wait()
    once = max(_clock() - start, 1e-7)
    return max(1, math.ceil(_BLOCK_SECONDS / once))


def interleave(
    variants: Mapping[str, Callable[[], Any]],
    *,
    device: str | torch.device | None = None,
    budget: float = 2.0,
    min_rounds: int = _MIN_ROUNDS,
    target_width: float = _TARGET_WIDTH,
    warmup: int = 1,
    num_threads: int | None = None,
) -> Comparison:
    """Time several variants in rounds A, B, C, A, B, C, … until their ratios are pinned.

    Parameters
    ----------
    variants : mapping of str to callable
        Name to a call taking no arguments (its return value is ignored). At least two.
    device : str, torch.device or None
        Synchronized before each clock read; ``None`` means :func:`compperf.try_gpu`.
    budget : float, default 2.0
        Seconds after which no new round starts, even if an interval is still wide.
    min_rounds : int, default 6
        Rounds to run at least (six is the fewest that give a 95 % interval).
    target_width : float, default 0.10
        Stop early once every ratio against the first variant has an interval narrower
        than this share of its value.
    warmup : int, default 1
        Calls of each variant before timing.
    num_threads : int, optional
        CPU threads torch uses while timing; defaults to ``torch.get_num_threads()``.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        With fewer than two variants, ``budget <= 0``, ``min_rounds < 2`` or
        ``num_threads < 1``; if the device is not available.

    Notes
    -----
    Each round times every variant for three blocks of about 5 ms (calls repeated to fill
    a block), starting with a different variant each round so that no variant always runs
    first, and keeps the median block. A stall lengthens one block; the median of the
    blocks, and the median of per-round ratios, move by one rank at most. The interval is
    the sign test's (distribution-free). Interleaving follows the advice of
    Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time" (ISMM 2013).
    """
    if len(variants) < 2:
        raise ValueError(f"interleave() compares at least two variants, got {len(variants)}")
    if budget <= 0 or min_rounds < 2:
        raise ValueError(f"need budget > 0 s and min_rounds >= 2, got {budget}, {min_rounds}")
    threads = torch.get_num_threads() if num_threads is None else num_threads
    if threads < 1:
        raise ValueError(f"num_threads must be >= 1, got {threads}")
    target = as_device(device)
    wait = synchronizer(target) or (lambda: None)
    names = tuple(variants)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with watch() as watched:
            for call in variants.values():
                for _ in range(warmup):
                    call()
            synchronize(target)
            numbers = {name: _calls_per_block(variants[name], wait) for name in names}
            per_round: dict[str, list[float]] = {name: [] for name in names}
            blocks: dict[str, list[float]] = {name: [] for name in names}
            deadline = _clock() + budget
            while True:
                shift = len(per_round[names[0]]) % len(names)
                for name in names[shift:] + names[:shift]:
                    call, number = variants[name], numbers[name]
                    times = []
                    for _ in range(_BLOCKS_PER_ROUND):
                        start = _clock()
                        for _ in range(number):
                            call()
                        wait()
                        times.append((_clock() - start) / number)
                    per_round[name].append(statistics.median(times))
                    blocks[name].extend(times)
                done = len(per_round[names[0]])
                if done >= min_rounds and (
                    _clock() > deadline or _pinned(names, per_round, target_width)
                ):
                    break
    finally:
        torch.set_num_threads(previous_threads)
    assert watched.disturbance is not None
    measurements = {
        name: Measurement.from_times(
            blocks[name],
            description=name,
            device=target,
            number_per_run=numbers[name],
            warmup=warmup,
            num_threads=threads,
        )
        for name in names
    }
    return Comparison(
        names=names,
        rounds={name: tuple(values) for name, values in per_round.items()},
        measurements=measurements,
        device=str(target),
        disturbance=watched.disturbance,
    )


def _pinned(names: Sequence[str], per_round: Mapping[str, list[float]], width: float) -> bool:
    base = per_round[names[0]]
    for name in names[1:]:
        ratios = [a / b for a, b in zip(per_round[name], base, strict=True)]
        low, high, _ = _median_interval(ratios, _CONFIDENCE)
        if (high - low) / statistics.median(ratios) > width:
            return False
    return True


def crossover(sizes: Sequence[float], verdicts: Sequence[Verdict], *, subject: str) -> Verdict:
    """From which size on does a claim hold for good, judged from one verdict per size?

    Parameters
    ----------
    sizes : sequence of float
        Increasing sizes (batch sizes, element counts).
    verdicts : sequence of Verdict
        The claim's verdict at each size (e.g. :meth:`Comparison.faster`).
    subject : str
        What the crossover is of.

    Returns
    -------
    Verdict
        Claim ``"crossover"``. "yes" when the verdicts are "yes" from some size on and
        "no" just before it: :attr:`Verdict.value` is that first size, and ``low``/``high``
        bracket the crossover between the last "no" size and it. "no" when the claim never
        holds at the largest size ("no" there) or holds everywhere (value: the first size;
        no crossover inside the range). "unclear" when an "unclear" verdict stands where
        the crossover would be.

    Raises
    ------
    ValueError
        If the lengths differ or there are no sizes.
    """
    if len(sizes) != len(verdicts) or not sizes:
        raise ValueError("crossover() needs one verdict per size, and at least one size")
    disturbed = any(v.disturbed for v in verdicts)
    first_yes = len(verdicts)
    while first_yes > 0 and verdicts[first_yes - 1].yes:
        first_yes -= 1
    if first_yes == 0:  # holds everywhere: no crossover in this range
        return _note(Verdict("crossover", subject, NO, sizes[0], sizes[0], sizes[0],
                             disturbed, sizes[0]))  # fmt: skip
    if first_yes == len(verdicts):  # does not hold at the largest size
        outcome = UNCLEAR if verdicts[-1].unclear else NO
        return _note(Verdict("crossover", subject, outcome, sizes[-1], sizes[-1], sizes[-1],
                             disturbed))  # fmt: skip
    before = verdicts[first_yes - 1]
    outcome = YES if before.no else UNCLEAR
    low, high = sizes[first_yes - 1], sizes[first_yes]
    return _note(Verdict("crossover", subject, outcome, low, high, high, disturbed,
                         sizes[first_yes]))  # fmt: skip


def start_recording() -> None:
    """Keep every verdict made from now on (the docs build, per example)."""
    global _recorded
    _recorded = []


def stop_recording() -> list[dict[str, Any]]:
    """Stop recording; return the verdicts' records in the order they were made."""
    global _recorded
    records, _recorded = _recorded or [], None
    return records
