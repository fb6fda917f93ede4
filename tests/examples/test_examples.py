"""What every example of every chapter must do; a new example or chapter needs no edit here."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from harness import (
    Run,
    chapters,
    examples,
    run_alone,
    shared_chapter,
    shared_run,
    verdict_changes,
    verdict_flips,
)
from source_checks import (
    book_ending_problems,
    message_problems,
    placeholder_problems,
    run_yourself_problems,
    visible_test_switches,
)

ALL = [path for chapter in chapters() for path in examples(chapter)]


def alone(path: Path) -> Run:
    return shared_run(path)  # the session's one run alone, which the chapters' tests share


def in_order(chapter: str) -> dict[str, Run]:
    return shared_chapter(chapter)  # the session's one gallery-order run, shared with the load test


def test_a_test_that_runs_an_example_must_be_marked() -> None:
    """`nox -s tests` stays fast only if every test that executes a page says so."""
    with pytest.raises(RuntimeError, match="not marked `executes`"):
        run_alone(ALL[0])


def test_every_chapter_has_examples() -> None:
    assert chapters()
    for chapter in chapters():
        assert examples(chapter), f"chapter {chapter!r} has no plot_*.py example"


def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_example_ends_with_summary_and_exercises(path: Path) -> None:
    problems = book_ending_problems(_source(path))
    assert not problems, f"{path.name}: " + "; ".join(problems)


@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_example_shows_no_test_switch(path: Path) -> None:
    """Readers copy what they see: test settings live only in sphinx-gallery ignore blocks."""
    problems = visible_test_switches(_source(path))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_example_passes_its_messages_as_literals(path: Path) -> None:
    """What an example prints and draws reaches the catalogs only as a string literal, with
    a value for each placeholder (also in the branches this machine does not run)."""
    problems = message_problems(_source(path)) + placeholder_problems(_source(path))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_example_says_what_to_install(path: Path) -> None:
    problems = run_yourself_problems(_source(path))
    assert not problems, f"{path.name}: " + "; ".join(problems)


@pytest.mark.executes
@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_example_runs_alone_and_says_where(path: Path) -> None:
    run = alone(path).check()
    first = run.stdout.splitlines()[0] if run.stdout else ""
    assert first.startswith("Measured on "), f"{path.name} must print its provenance first"


def _missing(expected: list[str], actual: list[str]) -> Counter[str]:
    return Counter(expected) - Counter(actual)


@pytest.mark.executes
@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_example_prints_the_same_claims_in_gallery_order(path: Path) -> None:
    """The page a reader sees (gallery order, one process) says what the script says alone.

    Lines whose text changes between two runs of the example alone (a timing-dependent
    verdict, say) are noise, not order effects, and are left out of the comparison. So
    are as many sentences as verdicts came out differently in the two runs (yes or no in
    one, unclear in the other: a busy machine); a verdict never flips from yes to no
    between gallery order and a run alone, unless a second run alone does not flip (a
    ratio near its threshold, decided one way in one process and the other way in
    another: noise of the machine, not an effect of the order).
    """
    first = alone(path).check()
    ordered = in_order(path.parent.name)[path.name].check()
    lost = _missing(first.claims, ordered.claims)
    gained = _missing(ordered.claims, first.claims)
    # A verdict that came out "unclear" in one run and decided in the other changes its
    # sentence: that is the machine's noise, which the page reports honestly. Only as many
    # sentences may differ as verdicts changed so; a yes in one run and a no in the
    # other is a contradiction and fails.
    changes = verdict_changes(first.verdicts, ordered.verdicts)
    second = None
    # A second run alone only ever removes differences (unstable lines, a flip that is
    # noise): it runs only when the first comparison would fail without it.
    explained = sum(lost.values()) <= len(changes) and sum(gained.values()) <= len(changes)
    if not explained or verdict_flips(first.verdicts, ordered.verdicts):
        second = run_alone(path).check()
        lost = _missing(lost, _missing(first.claims, second.claims))  # stable lines only
        gained = _missing(gained, second.claims)
    differences = (
        f"{path.name} prints differently after the examples before it.\n"
        f"only when run alone: {sorted(lost.elements())}\n"
        f"only in gallery order: {sorted(gained.elements())}\n"
        f"verdicts that changed outcome: {changes}"
    )
    flips = verdict_flips(first.verdicts, ordered.verdicts)
    if flips and second is not None:
        flips = verdict_flips(second.verdicts, ordered.verdicts)
    assert not flips, differences
    assert sum(lost.values()) <= len(changes), differences
    assert sum(gained.values()) <= len(changes), differences
