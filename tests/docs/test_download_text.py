"""Translating an example script: what stays, what changes, and how lines are wrapped."""

from __future__ import annotations

from pathlib import Path

import pytest
from compperf_docs.languages import download_text, rst_text
from sphinx_gallery.py_source_parser import remove_ignore_blocks

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(ROOT.glob("examples/*/plot_*.py"))


def _published(example: Path, tmp_path: Path) -> Path:
    copy = tmp_path / example.name
    copy.write_text(remove_ignore_blocks(example.read_text("utf-8")), encoding="utf-8")
    return copy


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.stem)
def test_untranslated_script_is_the_published_one_plus_the_language_line(
    example: Path, tmp_path: Path
) -> None:
    """Every part the parser cuts the script into goes back in its place."""
    copy = _published(example, tmp_path)
    text = copy.read_text("utf-8")
    script, missing = download_text.translate_script(text, "xx", lambda m: m, lambda m: m, copy)
    assert missing == []
    lines = script.split("\n")
    lines.remove('compperf.use_language("xx")')
    assert "\n".join(lines) == text


def test_missing_translations_are_reported_by_kind(tmp_path: Path) -> None:
    copy = tmp_path / "plot_x.py"
    copy.write_text('"""\nTitle\n=====\n"""\n\n# A comment.\nx = 1\n', encoding="utf-8")
    _, missing = download_text.translate_script(
        copy.read_text("utf-8"), "xx", lambda m: None, lambda m: None, copy
    )
    assert missing == [
        ("prose", "Title"),
        ("comment", "A comment."),
        ("code", "no line 'import compperf' to select the language after"),
    ]


def _rst(text: str, table: dict[str, str], width: int = 79) -> tuple[str, list[str]]:
    missing: list[str] = []
    return rst_text.translate_rst(text, table.get, width, missing), missing


def test_titles_get_underlines_as_wide_as_the_translation() -> None:
    text, missing = _rst("Title\n=====\n\n=====\nTop\n=====\n", {"Title": "标题", "Top": "最高"})
    assert missing == []
    assert text == "标题\n====\n\n====\n最高\n====\n"


def test_list_items_directives_and_literal_blocks() -> None:
    source = (
        "Look::\n\n    code stays()\n\n"
        "* one item that goes on\n  over two lines\n* two\n\n"
        ".. note::\n   :class: dropdown\n\n   Inside.\n\n"
        ".. code-block:: python\n\n   also_code()\n\n"
        ".. _label:\n\n"
        "#. first\n"
    )
    table = {
        "Look::": "看::",
        "one item that goes on over two lines": "一项",
        "two": "二",
        "Inside.": "里面。",
        "first": "第一",
    }
    text, missing = _rst(source, table)
    assert missing == []
    assert text == (
        "看::\n\n    code stays()\n\n"
        "* 一项\n* 二\n\n"
        ".. note::\n   :class: dropdown\n\n   里面。\n\n"
        ".. code-block:: python\n\n   also_code()\n\n"
        ".. _label:\n\n"
        "#. 第一\n"
    )


def test_simple_table_cells_are_translated_and_columns_fit_them() -> None:
    source = "====  ===\nA     B\n====  ===\nyes   no\n====  ===\n"
    text, missing = _rst(source, {"A": "甲", "B": "乙乙乙", "yes": "是", "no": "否"})
    assert missing == []
    assert text == "==  ======\n甲  乙乙乙\n==  ======\n是  否\n==  ======\n"


def test_fill_breaks_cjk_between_characters_but_never_inside_markup() -> None:
    text = (
        "这是一个很长的句子，" * 4
        + "它提到 ``torch.compile(model, mode)`` 和 :func:`compperf.say` 两个名字。"
    )
    lines = rst_text.fill(text, 30)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(rst_text.columns(line) <= 30 for line in lines[:-1] if "``" not in line)
    assert any("``torch.compile(model, mode)``" in line for line in lines)
    assert any(":func:`compperf.say`" in line for line in lines)
    assert not any(line.startswith(("，", "。")) for line in lines)


def test_fill_keeps_hyphenated_words_and_never_starts_a_line_with_a_list_marker() -> None:
    lines = rst_text.fill("слово " * 10 + "из-за - 1. такого", 22)
    assert any("из-за" in line for line in lines)
    assert not any(line.startswith(("- ", "1. ")) for line in lines)
