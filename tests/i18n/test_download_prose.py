"""Every paragraph of every example has a translation for the downloads of each language.

A zh_CN or ru build writes each example's ``.py`` with its prose translated paragraph by
paragraph from the page's catalog (compperf_docs.languages.download_text); a paragraph it cannot
find there is a build error. This finds the same gaps without building: it also proves
that the paragraphs, titles, list items and table cells cut from the script are the
messages Sphinx extracted from the page.
"""

from __future__ import annotations

from pathlib import Path

import compperf_project
import pytest
from babel.messages.pofile import read_po
from compperf_docs.languages import download_text
from sphinx_gallery.py_source_parser import remove_ignore_blocks

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = compperf_project.load(ROOT / "pyproject.toml").codes[1:]
EXAMPLES = sorted(ROOT.glob("examples/*/plot_*.py"))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.stem)
def test_every_paragraph_of_the_download_is_translated(
    example: Path, language: str, tmp_path: Path
) -> None:
    page = ROOT / "docs" / "locales" / language / "LC_MESSAGES" / "auto_examples"
    page = page / example.parent.name / f"{example.stem}.po"
    with page.open("rb") as handle:
        catalog = {m.id: m.string for m in read_po(handle) if m.id and m.string and not m.fuzzy}
    copy = tmp_path / example.name
    copy.write_text(remove_ignore_blocks(example.read_text("utf-8")), encoding="utf-8")
    _, missing = download_text.translate_script(
        copy.read_text("utf-8"), language, catalog.get, lambda m: m, copy
    )
    assert [text for kind, text in missing if kind != "comment"] == [], page
