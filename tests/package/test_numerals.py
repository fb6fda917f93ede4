"""Numbers in the reader's convention: a decimal comma in Russian, code and raw data as is."""

from __future__ import annotations

from decimal import Decimal

import pytest

from compperf import i18n, numerals
from compperf.timing import format_time


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.use_language("en")
    i18n.stop_recording()


@pytest.mark.parametrize(
    ("text", "value", "code", "expected"),
    [
        ("6.37", 6.37, "ru", "6,37"),
        ("1,234.5", 1234.5, "ru", "1\N{NO-BREAK SPACE}234,5"),
        ("2,033", 2033, "ru", "2\N{NO-BREAK SPACE}033"),
        ("1.5e-05", 1.5e-5, "ru", "1,5e-05"),
        ("0.25", Decimal("0.25"), "ru", "0,25"),
        ("6.37", "6.37", "ru", "6.37"),  # a string (a version, raw data) stays
        ("True", True, "ru", "True"),
        ("6.37", 6.37, "zh_CN", "6.37"),
        ("1,234.5", 1234.5, "en", "1,234.5"),
    ],
)
def test_localize(text: str, value: object, code: str, expected: str) -> None:
    assert numerals.localize(text, value, code) == expected


def test_a_measured_time_is_printed_with_a_decimal_comma_in_russian() -> None:
    i18n.start_recording()
    text = format_time(6.37e-6)
    assert str(text) == "6.37 µs"
    assert i18n.render(text.record, "ru") == "6,37 мкс"
    assert i18n.render(text.record, "zh_CN") == "6.37 微秒"
    i18n.use_language("ru")
    assert str(format_time(6.37e-6)) == "6,37 мкс"


def test_a_table_of_numbers_in_russian() -> None:
    with i18n.parts():
        ratio = i18n.tr("{ratio:.2f}×", ratio=1.2449)
    table = i18n.table(["", "x"], [["a", ratio], ["b", "1.50"]])
    ru = i18n.render(table.record, "ru").splitlines()
    assert ru[2].endswith("1,24×")
    assert ru[3].endswith("1.50")  # a cell made by the page as a string: raw data, as is


def test_a_string_field_keeps_its_text_and_its_width() -> None:
    record = i18n.tr("{name:>6}|{value:.1f}", name="2.5", value=2.5).record
    assert i18n.render(record, "ru") == "   2.5|2,5"
