"""The light message API of issue 21: unit format specs and a verdict's own line."""

from __future__ import annotations

import io

import numpy as np
import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo

import compperf
from compperf import i18n, recording, units


@pytest.fixture
def russian(tmp_path, monkeypatch):
    """A Russian catalog with the units and the verdict's words."""
    catalog = Catalog(locale="ru")
    for message, translation in [
        ("{value:.3g} ms", "{value:.3g} мс"),
        ("{value:.3g} MiB", "{value:.3g} МиБ"),
        ("yes", "да"),
        ("the claim", "утверждение"),
        ("{t:time} for {b:bytes}", "{t:time} на {b:bytes}"),
        (
            (
                "{claim} ({subject}): {outcome}, measured {value:.3g} (interval {low:.3g} "
                "to {high:.3g}; threshold {threshold:.3g})"
            ),
            (
                "{claim} ({subject}): {outcome}, измерено {value:.3g} (интервал от {low:.3g} "
                "до {high:.3g}; порог {threshold:.3g})"
            ),
        ),
    ]:
        catalog.add(message, translation)
    folder = tmp_path / "ru" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    (folder / "compperf.mo").write_bytes(buffer.getvalue())
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    i18n._catalog.cache_clear()
    yield
    i18n._catalog.cache_clear()
    i18n.use_language("en")


@pytest.mark.parametrize(
    ("spec", "value", "text"),
    [
        ("time", 850e-9, "850 ns"),
        ("time", 12.3e-6, "12.3 µs"),
        ("time", 0.00456, "4.56 ms"),
        ("time", 1.234, "1.23 s"),
        ("time", -0.002, "-2 ms"),
        ("bytes", 512, "512 B"),
        ("bytes", 1536, "1.5 KiB"),
        ("bytes", 144 * 2**20, "144 MiB"),
        ("bytes", 2 * 2**30, "2 GiB"),
        ("flops", 8.5e8, "850 MFLOP/s"),
        ("flops", 1.23e10, "12.3 GFLOP/s"),
        ("flops", 2e12, "2 TFLOP/s"),
    ],
)
def test_a_unit_spec_writes_the_number_with_its_unit(spec, value, text):
    assert compperf.tr(f"{{x:{spec}}}", x=value) == text


def test_the_number_is_recorded_and_written_again_in_another_language(russian):
    recording.start()
    english = compperf.tr("{t:time} for {b:bytes}", t=np.float32(0.0123), b=np.int64(3 * 2**19))
    (record,) = recording.stop()
    assert english == "12.3 ms for 1.5 MiB"
    assert record["values"] == {"t": pytest.approx(0.0123), "b": 3 * 2**19}
    assert type(record["values"]["b"]) is int  # a NumPy number is kept as a number
    assert i18n.render(record, "ru", strict=True) == "12,3 мс на 1,5 МиБ"


def test_format_time_is_the_time_spec():
    assert compperf.format_time(0.00456) == compperf.tr("{t:time}", t=0.00456) == "4.56 ms"


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        ("1 ms", TypeError, r"\{\.\.\.:time\} formats a number, got str"),
        (True, TypeError, "got bool"),
        (float("nan"), ValueError, "got NaN"),
    ],
)
def test_a_unit_spec_refuses_what_is_not_a_number(value, error, match):
    with pytest.raises(error, match=match):
        compperf.tr("{x:time}", x=value)


def test_an_unknown_unit_spec_is_refused():
    with pytest.raises(ValueError, match=r"unknown unit format spec 'hours' \(known: time"):
        units.record("hours", 1.0)


def test_a_verdict_prints_its_own_line_in_the_language_of_the_reader(russian):
    recording.start()
    verdict = compperf.conclude(compperf.tr("the claim"), "cpu", 0.01, 0.2, below=1.0, value=0.05)
    line = str(verdict)
    records = recording.stop()
    assert line == (  # filled to 70 columns
        "the claim (cpu): yes, measured 0.05 (interval 0.01 to 0.2; threshold\n1)"
    )
    # One record, the whole line (a paragraph): the claim is part of it, not on its own.
    assert len(records) == 1
    assert records[0]["wrap"]
    assert i18n.render(records[0], "ru", strict=True) == (
        "утверждение (cpu): да, измерено 0,05 (интервал от 0,01 до 0,2; порог\n1)"
    )
    # The claim keeps its record: its key figure is English whatever the language.
    compperf.use_language("ru")
    claim = compperf.conclude(compperf.tr("the claim"), "cpu", 0, 1, below=2).record()["claim"]
    assert claim == "утверждение"
    assert claim.record["message"] == "the claim"


@pytest.mark.parametrize(
    ("low", "high", "value", "disturbed", "line"),
    [
        (0.5, 0.5, None, False, "faster (a vs b): yes, measured 0.5 (threshold 0.95)"),
        (0.5, 1.2, None, False,
         "faster (a vs b): unclear (interval 0.5 to 1.2; threshold 0.95)"),
        (0.5, 0.6, 0.55, True, ("faster (a vs b): unclear (the machine was disturbed), "
         "measured 0.55 (interval 0.5 to 0.6; threshold 0.95)")),
        (1.0, 1.2, 1.1, False,
         "faster (a vs b): no, measured 1.1 (interval 1 to 1.2; threshold 0.95)"),
    ],
)  # fmt: skip
def test_the_line_says_the_outcome_and_its_interval(low, high, value, disturbed, line):
    verdict = compperf.conclude(
        "faster", "a vs b", low, high, below=0.95, disturbed=disturbed, value=value
    )
    assert " ".join(str(verdict).split()) == line
