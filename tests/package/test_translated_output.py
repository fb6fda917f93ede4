"""compperf's own text (provenance, measurements, tables, timers, warnings) in every language.

Each text is one recorded message: rendered in English it is what was printed, rendered in
another language (from the catalogs that ship with compperf) it says the same with the
same numbers, and it is what a script prints after ``compperf.use_language``.
"""

from __future__ import annotations

import re
import warnings

import pytest

import compperf
from compperf import Environment, Measurement, i18n, numerals

TRANSLATED = [code for code in i18n.available_languages() if code != i18n.SOURCE_LANGUAGE]
# Words of the English texts that no translation keeps (IQR, CPU, names and units stay).
ENGLISH = re.compile(r"\b(Measured|torch threads?|visible|median|per call|runs?|calls?|noisy|"
                     r"device|threads|vs first|caught|none|Done|sec)\b")  # fmt: skip


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.use_language("en")
    i18n.stop_recording()


def _environment(threads: int = 16) -> Environment:
    return Environment(
        device="cuda:0",
        device_name="NVIDIA H200",
        accelerators=(),
        torch="2.13.0",
        cuda="12.8",
        cudnn=None,
        cpu="Intel(R) Xeon(R) Platinum 8480+",
        num_threads=threads,
        python="3.12.3",
        platform="Linux 6.8.0 (x86_64)",
    )


def _measurement(description: str, median: float, iqr: float, runs: int = 5) -> Measurement:
    return Measurement(description, "cpu", median, iqr, median, runs, 10, (median,) * runs, 1, 2)


def _texts() -> list[i18n.Text]:
    """One of each kind of text compperf makes; the English is what it printed before."""
    steady, shaky = _measurement("eager", 2e-3, 1e-5), _measurement("compiled", 1e-3, 5e-4)
    once = _measurement("once", 1e-3, 0.0, runs=1)
    texts = [str(_environment()), str(steady), str(shaky), str(once)]
    return [*texts, compperf.compare([steady, shaky, once], title="MLP, batch 1")]


def _numbers(text: str, code: str = "en") -> list[str]:
    """The numbers of ``text``, decimals written with a point whatever ``code`` writes
    (versions are names, with their points, in every language)."""
    decimal = numerals.convention(code).decimal
    found = re.findall(rf"\d+(?:[.{re.escape(decimal)}]\d+)?", text)
    return sorted(number.replace(decimal, ".") for number in found)


def test_each_text_is_one_record_that_renders_its_english() -> None:
    i18n.start_recording()
    texts = _texts()
    records = i18n.stop_recording()
    # The words inside (the header, "3 runs") are parts: only the whole text is recorded.
    assert records == [text.record for text in texts]
    for text in texts:
        assert i18n.render(text.record, "en") == text
    # The columns that hold one value in every row are said once, above the header.
    assert texts[4].splitlines()[1:3] == ["device: cpu", "threads: 2"]
    assert texts[4].splitlines()[3].endswith("vs first  runs x calls")


def test_a_title_made_for_the_table_is_recorded_with_it() -> None:
    i18n.start_recording()
    title = i18n.tr("device")  # any message will do
    table = compperf.compare([_measurement("eager", 2e-3, 1e-5)], title=title)
    assert i18n.stop_recording() == [table.record]
    assert table.record["table"]["title"] == title.record
    assert i18n.render(table.record, "ru", strict=True).splitlines()[0] == "устройство"


@pytest.mark.parametrize("code", TRANSLATED)
def test_texts_render_in_every_language_with_the_same_numbers(code: str) -> None:
    texts = _texts()
    for text in texts:
        translated = i18n.render(text.record, code, strict=True)
        assert _numbers(translated, code) == _numbers(text), translated
        assert not ENGLISH.search(translated), translated
    # A script that chose the language prints exactly what a page in it shows.
    i18n.use_language(code)
    assert _texts() == [i18n.render(text.record, code) for text in texts]


@pytest.mark.parametrize("code", TRANSLATED)
def test_a_translated_table_keeps_its_columns(code: str) -> None:
    table = compperf.compare([_measurement("eager", 2e-3, 1e-5), _measurement("x", 1e-3, 0.0)])
    lines = i18n.render(table.record, code, strict=True).splitlines()
    # The columns with one value in both rows (device, threads...) are said above the header.
    first = next(i for i, line in enumerate(lines) if set(line) == {"-", " "}) - 1
    said, (header, rule, *rows) = lines[:first], lines[first:]
    assert said[0].endswith("cpu")
    assert header != table.splitlines()[first]
    # Right-aligned columns end where their dashes end, counted in display columns.
    assert {i18n.display_width(line) for line in [header, *rows]} == {len(rule)}
    gaps = [match.start() for match in re.finditer(r"(?<=-) (?=-)", rule)]
    for line in [header, *rows]:
        columns = "".join(char + " " * (i18n.display_width(char) - 1) for char in line)
        assert all(columns[gap] == " " for gap in gaps), line


def test_the_provenance_paragraph_fits_76_columns_in_every_language() -> None:
    record = str(_environment()).record
    for code in TRANSLATED:
        lines = i18n.render(record, code, strict=True).splitlines()
        assert len(lines) > 1
        assert max(map(i18n.display_width, lines)) <= 76, lines


@pytest.mark.parametrize(
    ("runs", "threads", "words"),
    [
        (1, 1, "1 запуск × 10 вызовов"),
        (2, 2, "2 запуска"),
        (5, 5, "5 запусков"),
        (21, 1, "21 запуск"),
    ],
)
def test_russian_counts_take_their_plural_form(runs: int, threads: int, words: str) -> None:
    i18n.use_language("ru")
    text = str(_measurement("eager", 1e-3, 0.0, runs=runs))
    assert words in text
    provenance = " ".join(str(_environment(threads)).split())
    assert {1: "1 поток torch", 2: "2 потока torch", 5: "5 потоков torch"}[threads] in provenance


def test_timers_and_warnings_print_in_the_chosen_language(capsys: pytest.CaptureFixture) -> None:
    i18n.use_language("ru")
    with compperf.Benchmark(device="cpu"):
        pass
    with compperf.Benchmark("матрицы", device="cpu"):
        pass
    with compperf.shown_warnings("old"):
        warnings.warn("old api", DeprecationWarning, stacklevel=1)
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"Готово: \d,\d{4} с", lines[0]), lines
    assert re.fullmatch(r"матрицы: \d,\d{4} с", lines[1]), lines
    # torch's own warning text stays as it was raised.
    assert lines[2] == "Перехвачено предупреждение DeprecationWarning: old api"
