"""Prose that names a label of the page's output names it as the output prints it.

A page's prose often points at its table or figure: "the ``vs first`` column", "a row
that says «never»". In a translated page the output is translated too, so the prose must
quote the translated label, not the English one. The labels are the short messages the
page's example prints or draws (its catalog under ``src/compperf/locales``) and
compperf's own (``compperf.po``: table headers such as "vs first").
"""

from __future__ import annotations

import re
from pathlib import Path

import compperf_project
import pytest
from babel.messages.pofile import read_po
from compperf_docs.message_catalogs import COMMENT_CONTEXT

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "locales"
PACKAGE = ROOT / "src" / "compperf" / "locales"
CODES = compperf_project.load().codes
# A quoted stretch of prose: a ``literal``, or text in straight, curly, angle or corner quotes.
_QUOTED = re.compile(r"``(.+?)``|\"([^\"\n]+)\"|“([^”\n]+)”|«([^»\n]+)»|「([^」\n]+)」|‘([^’\n]+)’")
# A label: a short message without placeholders (a header, a verdict word, a legend).
_LABEL_MAX = 40


def _read(path: Path):
    with path.open("rb") as handle:
        return read_po(handle)


def labels(*catalogs: Path) -> dict[str, str]:
    """English label -> its translation, from the catalogs of what a page prints."""
    found = {}
    for path in catalogs:
        for message in _read(path):
            if not isinstance(message.id, str) or not message.id or not message.string:
                continue
            if message.context == COMMENT_CONTEXT or "{" in message.id:
                continue
            if len(message.id) <= _LABEL_MAX and message.id.strip() != message.string.strip():
                found[message.id.strip()] = message.string.strip()
    return found


def quoted_label_problems(text: str, known: dict[str, str]) -> list[str]:
    """Each quoted English label in ``text`` whose printed translation differs."""
    problems = []
    for match in _QUOTED.finditer(text):
        quoted = next(group for group in match.groups() if group is not None).strip()
        if quoted in known and known[quoted] not in text:
            problems.append(f"quotes {quoted!r}, which the output prints as {known[quoted]!r}")
    return problems


def _pages(code: str) -> list[tuple[Path, list[Path]]]:
    """Each example page's catalog with the catalogs of what it prints."""
    package = PACKAGE / code / "LC_MESSAGES"
    found = []
    for page in sorted((PAGES / code / "LC_MESSAGES" / "auto_examples").rglob("plot_*.po")):
        chapter = page.parent.name
        printed = package / "examples" / chapter / page.name
        found.append((page, [p for p in (printed, package / "compperf.po") if p.is_file()]))
    return found


PAGE_CASES = [case for code in CODES[1:] for case in _pages(code)]


@pytest.mark.parametrize(("page", "printed"), PAGE_CASES, ids=lambda v: getattr(v, "stem", ""))
def test_prose_quotes_labels_as_the_output_prints_them(page: Path, printed: list[Path]) -> None:
    known = labels(*printed)
    problems = [
        f"{page.relative_to(PAGES).as_posix()}: {message.id[:50]!r}: {problem}"
        for message in _read(page)
        if isinstance(message.string, str) and message.string
        for problem in quoted_label_problems(message.string, known)
    ]
    assert not problems, "\n".join(problems)


def test_the_check_names_an_english_label_in_translated_prose() -> None:
    known = {"vs first": "отн. первой", "never": "никогда"}
    assert quoted_label_problems("Столбец ``vs first`` — отношение.", known) == [
        "quotes 'vs first', which the output prints as 'отн. первой'"
    ]
    assert not quoted_label_problems("Столбец «отн. первой» (``vs first`` в коде).", known)
    assert not quoted_label_problems("Строка «никогда».", known)
