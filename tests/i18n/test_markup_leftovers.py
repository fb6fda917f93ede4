"""No reader sees raw reST: no double backticks, no ``:role:`` text, in any language.

The catalog checks run on every translated reST message (a test run needs no build); the
page check reads a built site when there is one (``docs/_build/html``, or the folder that
``COMPPERF_BUILT_SITE`` names) and is skipped otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import compperf_project
import pytest
from babel.messages.pofile import read_po
from markup_leftovers import boundary_problems, doctree_leftovers, html_leftovers

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LOCALES = DOCS / "locales"
CODES = compperf_project.load().codes
SITE = Path(os.environ.get("COMPPERF_BUILT_SITE", DOCS / "_build" / "html"))


def _is_rest_page(path: Path) -> bool:
    """Gallery pages and .rst pages; MyST pages (docs/<page>.md) parse Markdown instead."""
    page = path.relative_to(LOCALES / path.relative_to(LOCALES).parts[0] / "LC_MESSAGES")
    return path.name != "sphinx.po" and not (DOCS / page).with_suffix(".md").is_file()


CATALOGS = sorted(
    path
    for code in CODES[1:]
    for path in (LOCALES / code / "LC_MESSAGES").rglob("*.po")
    if _is_rest_page(path)
)


def _name(path: Path) -> str:
    return path.relative_to(LOCALES).as_posix()


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_inline_markup_stands_where_rest_parses_it(path: Path) -> None:
    """A literal or role followed (or preceded) directly by a full-width character is
    left unparsed; so is one glued to a CJK character."""
    with path.open("rb") as handle:
        catalog = read_po(handle)
    problems = [
        f"{_name(path)}: {message.id[:50]!r}: {problem} (put a space or '\\ ' there)"
        for message in catalog
        if message.id and isinstance(message.string, str) and "`" in message.string
        if not boundary_problems(message.id)
        for problem in boundary_problems(message.string)
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_parsed_translation_keeps_no_raw_markup(path: Path) -> None:
    with path.open("rb") as handle:
        catalog = read_po(handle)
    problems = [
        f"{_name(path)}: {message.id[:50]!r}: a reader sees {left[:80]!r}"
        for message in catalog
        if message.id and isinstance(message.string, str) and "`" in message.string
        if not doctree_leftovers(message.id)
        for left in doctree_leftovers(message.string)
    ]
    assert not problems, "\n".join(problems)


def test_the_checks_find_a_literal_glued_to_a_full_width_bracket() -> None:
    glued = "查找 ``TENSOR_MATCH``（张量的 ``x``）。"
    assert boundary_problems(glued) == ["'（' right after '``TENSOR_MATCH``'"]
    assert doctree_leftovers(glued)
    spaced = "查找 ``TENSOR_MATCH`` （张量的 ``x``）和 :func:`f`\\ 。"
    assert not boundary_problems(spaced)
    assert not doctree_leftovers(spaced)
    page = "<p>查找 <code>x</code>``（y</p><pre>a ``b``</pre>"
    assert html_leftovers(page, context=3) == ["找 x``（y"]  # the code block is left alone


def test_the_checks_find_emphasis_glued_to_a_full_width_bracket() -> None:
    glued = "整个区间处于阈值以上时为 *否*（没有收益）。"
    assert boundary_problems(glued) == ["'（' right after '*否*'"]
    spaced = "整个区间处于阈值以上时为 *否* （没有收益），**注意**。"
    assert not boundary_problems(spaced)


def _built_languages() -> list[str]:
    return [code for code in CODES if (SITE / code / "index.html").is_file()]


@pytest.mark.parametrize("code", CODES)
def test_built_pages_show_no_raw_markup(code: str) -> None:
    if code not in _built_languages():
        pytest.skip(
            f"no built {code} site at {SITE} (build it with `nox -s docs`, or point "
            "COMPPERF_BUILT_SITE at one); the catalog checks above still ran"
        )
    problems = [
        f"{page.relative_to(SITE).as_posix()}: {left!r}"
        for page in sorted((SITE / code).rglob("*.html"))
        if "_sources" not in page.parts
        for left in html_leftovers(page.read_text(encoding="utf-8"))
    ]
    assert not problems, f"{len(problems)} raw markup leftovers:\n" + "\n".join(problems)
