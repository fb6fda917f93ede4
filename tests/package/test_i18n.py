"""compperf.i18n: messages in a language, recorded, rendered again in another."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo

from compperf import fonts, i18n


@pytest.fixture
def catalogs(tmp_path, monkeypatch):
    """Russian and Chinese catalogs with one sentence and one plural message."""
    for code, sentence, runs in [
        ("ru", "Запуск на {device} занял {seconds:.2f} с.", ("{n} запуск", "{n} запуска", "{n} запусков")),
        ("zh_CN", "在 {device} 上运行用了 {seconds:.2f} 秒。", ("{n} 次运行",)),
    ]:  # fmt: skip
        catalog = Catalog(locale=code)
        catalog.add("The run on {device} took {seconds:.2f} s.", sentence)
        catalog.add(("{n} run", "{n} runs"), runs)
        folder = tmp_path / code / "LC_MESSAGES" / "examples"
        folder.mkdir(parents=True)
        buffer = io.BytesIO()
        write_mo(buffer, catalog)
        (folder / "plot_x.mo").write_bytes(buffer.getvalue())
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    i18n._catalog.cache_clear()
    yield tmp_path
    i18n._catalog.cache_clear()
    i18n.use_language("en")


def test_records_render_in_every_language_with_the_same_numbers(catalogs, capsys):
    i18n.start_recording()
    i18n.say("The run on {device} took {seconds:.2f} s.", device="cpu", seconds=0.1234)
    runs = i18n.tr_plural("{n} run", "{n} runs", 22)
    records = i18n.stop_recording()
    assert capsys.readouterr().out == "\nThe run on cpu took 0.12 s.\n\n"
    assert runs == "22 runs"
    assert [i18n.render(r, "en") for r in records] == ["The run on cpu took 0.12 s.", "22 runs"]
    assert [i18n.render(r, "ru", strict=True) for r in records] == [
        "Запуск на cpu занял 0,12 с.",  # the reader's decimal comma
        "22 запуска",  # Russian's second plural form
    ]
    assert i18n.render(records[1], "zh_CN", strict=True) == "22 次运行"


def test_use_language_prints_in_that_language(catalogs, capsys):
    i18n.use_language("ru")
    try:
        i18n.say(i18n.tr_plural("{n} run", "{n} runs", 5))
    finally:
        i18n.use_language("en")
    assert capsys.readouterr().out == "\n5 запусков\n\n"


def test_nested_texts_are_translated_with_their_sentence(catalogs):
    i18n.start_recording()
    outer = i18n.tr("{n} run", n=1)  # a message used as a value of another
    record = i18n.tr("The run on {device} took {seconds:.2f} s.", device=outer, seconds=1).record
    i18n.stop_recording()
    assert record["values"]["device"] == outer.record
    assert i18n.render(record, "zh_CN").startswith("在 1 run 上")  # "{n} run" alone is no entry


def test_missing_translation_is_an_error_only_when_strict(catalogs):
    record = i18n.tr("Not in any catalog: {x}", x=1).record
    assert i18n.render(record, "ru") == "Not in any catalog: 1"
    with pytest.raises(i18n.MissingTranslation, match="no ru translation of 'Not in any"):
        i18n.render(record, "ru", strict=True)


def test_a_missing_value_or_unknown_language_is_named():
    with pytest.raises(KeyError, match="needs values for device"):
        i18n.tr("on {device}")
    with pytest.raises(ValueError, match="no compperf catalogs for language 'de'"):
        i18n.use_language("de")


def test_wrap_fills_words_and_breaks_cjk_by_columns():
    assert i18n.wrap("word " * 20, 30).splitlines()[0] == "word word word word word word"
    chinese = "同步" * 40 + "，结束。"
    lines = i18n.wrap(chinese, 20).splitlines()
    # Two columns per character; closing punctuation may hang one past the width.
    assert all(len(line.rstrip("，。")) <= 10 for line in lines)
    assert not any(line[0] in "，。" for line in lines)
    assert "".join(lines) == chinese


def test_use_language_gives_figures_a_font_for_the_script(monkeypatch):
    # A machine with no CJK font of its own: only matplotlib's DejaVu fonts are known.
    pytest.importorskip("matplotlib")
    from matplotlib import font_manager, rcParams

    manager = font_manager.fontManager
    own = [entry for entry in manager.ttflist if "DejaVu" in entry.name]
    monkeypatch.setattr(manager, "ttflist", own)
    manager._findfont_cached.cache_clear()
    wheel = i18n.wheel_fonts("zh_CN")
    assert wheel, "noto-cjk-sans-otc is in the docs group: the tests session installs it"
    try:
        i18n.use_language("zh_CN")
        assert rcParams["font.family"] == ["sans-serif", "Noto Sans CJK SC"]
        found = font_manager.findfont(
            font_manager.FontProperties(family="Noto Sans CJK SC"), fallback_to_default=False
        )
        assert Path(found).resolve() in wheel
    finally:
        i18n.use_language("en")
        manager._findfont_cached.cache_clear()
    assert rcParams["font.family"] == ["sans-serif"]


def test_without_any_cjk_font_the_warning_names_the_pip_command(monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib import font_manager

    manager = font_manager.fontManager
    monkeypatch.setattr(manager, "ttflist", [e for e in manager.ttflist if "DejaVu" in e.name])
    monkeypatch.setattr(fonts, "wheel_fonts", lambda code, wheel=None: [])
    try:
        with pytest.warns(UserWarning, match=r"python -m pip install noto-cjk-sans-otc"):
            i18n.use_language("zh_CN")
    finally:
        i18n.use_language("en")


def test_string_fields_are_padded_by_columns():
    row = i18n.tr("{tool:<10}|{result:>6}|{share:.0%}", tool="图中断", result="ok", share=0.5)
    assert row == "图中断    |    ok|50%"  # 3 wide characters take 6 of the 10 columns
    assert i18n.render(row.record, "en") == row


def test_russian_groups_thousands_with_a_space_not_a_comma():
    record = i18n.tr("{calls:,} calls, {share:.1f}", calls=2033, share=0.5).record
    assert i18n.render(record, "en") == "2,033 calls, 0.5"
    # Only the separator changes: in Russian a comma would read as a decimal point.
    assert i18n._formatter("ru").format("{calls:,}", calls=2033) == "2\N{NO-BREAK SPACE}033"


def test_a_cjk_paragraph_never_ends_on_a_lonely_character():
    text = "可见的加速器" * 12 + "：无。"
    last = i18n.wrap(text, 76).splitlines()[-1]
    assert i18n.display_width(last) >= 8
    assert not last.startswith("：")


def test_durations_carry_the_unit_of_the_language():
    from compperf import format_time

    seconds = format_time(0.0051)
    assert seconds == "5.1 ms"
    assert i18n.render(seconds.record, "ru", strict=True) == "5,1 мс"
    assert i18n.render(format_time(2.5e-7).record, "zh_CN", strict=True) == "250 纳秒"


def test_a_line_wider_than_80_columns_is_folded_in_every_language() -> None:
    """A printed message keeps its lines; only one wider than 80 columns is broken, its
    continuation indented, so that no output line of a page is wider (issue 21)."""
    from compperf.text_layout import fold_long_lines

    short = "a  b\n  c"
    assert fold_long_lines(short) == short  # aligned columns and indents stay
    long = "  " + "word-with-hyphens " * 10
    folded = fold_long_lines(long.rstrip()).splitlines()
    assert all(i18n.display_width(line) <= 80 for line in folded)
    assert folded[0].startswith("  word")
    assert folded[1].startswith("    word")
    assert " ".join("".join(folded).split()) == " ".join(long.split())
    # A continuation is never a number alone (it says nothing without its line).
    measured = "t1: frontend, one operation on cpu: median 7.59 µs per call, IQR 101 ns ms 19.9 ms"
    assert i18n.display_width(fold_long_lines(measured).splitlines()[-1]) >= 16
    chinese = "中文句子" * 30
    assert all(i18n.display_width(line) <= 80 for line in fold_long_lines(chinese).splitlines())
    record = i18n.tr("{a} " * 30, a="measured").record
    assert all(i18n.display_width(line) <= 80 for line in i18n.render(record, "en").splitlines())


def test_a_column_with_one_value_in_every_row_is_said_once_above_the_table() -> None:
    with i18n.parts():
        header = ["", i18n.tr("device"), i18n.tr("median")]
    table = i18n.table(header, [["a", "cpu", "1 ms"], ["b", "cpu", "2 ms"]])
    assert table.splitlines()[0] == "device: cpu"
    assert "cpu" not in "\n".join(table.splitlines()[1:])
    single = i18n.table(header, [["a", "cpu", "1 ms"]])  # one row: nothing is constant
    assert single.splitlines()[0].split() == ["device", "median"]


def test_number_cells_follow_the_readers_convention_and_strings_stay_as_they_are() -> None:
    table = i18n.table(["", "FLOP/byte", "GFLOP/s"], [["mm", 0.08, "12.50"], ["add", 1234.5, "3"]])
    russian = i18n.render(table.record, "ru")
    assert "0,08" in russian
    assert "1234,5" in russian
    assert "12.50" in russian  # a string is raw data, shown as it is
    assert "0.08" in i18n.render(table.record, "en")
