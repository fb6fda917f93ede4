"""Translated code comments stay within 79 columns, counted as a terminal counts them.

A download and a page's code block carry the example's code with its comments translated
(``compperf_docs.languages.download_text``): a comment on lines of its own is wrapped again, one
after code stays on its line. Chinese characters take two columns each; a line the
English code already makes wider keeps that width as its limit.
"""

from __future__ import annotations

from pathlib import Path

import compperf_project
import pytest
from compperf_docs.languages.download_text import translate_code
from compperf_docs.languages.language_downloads import COMMENT_CONTEXT, comment_catalog
from compperf_docs.languages.language_downloads import _catalog as read_catalog
from sphinx_gallery.py_source_parser import remove_ignore_blocks, split_code_and_text_blocks

from compperf.i18n import display_width

ROOT = Path(__file__).resolve().parents[2]
PROJECT = compperf_project.load()
WIDTH = 79
EXAMPLES = sorted(
    path for chapter in PROJECT.chapters for path in (ROOT / "examples" / chapter).glob("plot_*.py")
)
CASES = [(code, path) for code in PROJECT.codes[1:] for path in EXAMPLES]


def _name(case: object) -> str:
    return case.relative_to(ROOT).as_posix() if isinstance(case, Path) else str(case)


def too_wide(english: str, translated: str, width: int = WIDTH) -> list[str]:
    """The lines of ``translated`` wider than ``width`` columns (or than the widest English
    line, where that is wider)."""
    limit = max(width, *(display_width(line) for line in english.split("\n")))
    return [line for line in translated.split("\n") if display_width(line) > limit]


@pytest.mark.parametrize(("code", "path"), CASES, ids=_name)
def test_translated_comments_fit_79_columns(code: str, path: Path) -> None:
    catalog = comment_catalog(ROOT / "src" / "compperf" / "locales", code, path)
    if not catalog.is_file():
        pytest.fail(f"{path.name} has no {code} comment catalog at {catalog}")
    table = read_catalog(catalog, catalog.stat().st_mtime_ns)

    def lookup(text: str) -> str | None:
        return table.get((text, COMMENT_CONTEXT))

    problems = []
    _, blocks = split_code_and_text_blocks(str(path))
    for label, content, _ in blocks:
        if label != "code":
            continue
        english = remove_ignore_blocks(content)
        translated = translate_code(english, lookup, [])
        problems += [
            f"{catalog.relative_to(ROOT).as_posix()}: {display_width(line)} columns: {line!r}"
            for line in too_wide(english, translated)
        ]
    assert not problems, "\n".join(problems)


def test_a_chinese_character_counts_two_columns() -> None:
    assert too_wide("x = 1  # one", "x = 1  # " + "一" * 35) == []  # 9 + 70 columns
    assert too_wide("x = 1  # one", "x = 1  # " + "一" * 36) == ["x = 1  # " + "一" * 36]
