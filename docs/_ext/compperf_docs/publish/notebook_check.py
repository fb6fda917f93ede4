"""Find reStructuredText left in the Markdown cells of downloaded notebooks.

Jupyter renders Markdown; reST that survives the conversion (a role, a directive, an
underlined title), or a table row split over two lines, reaches the reader as raw markup. The build warns about each one
(``check_gallery_notebooks``), and the tests scan the built notebooks with
``notebook_problems``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["check_gallery_notebooks", "notebook_problems", "rest_in_markdown"]

logger = logging.getLogger(__name__)

# Each kind of reST that a Markdown reader would see verbatim, by what it is.
_PATTERNS = {
    "directive or target": re.compile(r"^\s*\.\.\s+(?:[\w:.-]+::|_[^:\n]*:|\|[^|\n]+\|)"),
    "directive option": re.compile(r"^\s*:[\w-]+:(?:\s|$)"),
    "role": re.compile(r"(?<![\w`]):[A-Za-z][\w.+-]*(?::[A-Za-z][\w.+-]*)?:`[^`\n]+`"),
    "role left as attributes": re.compile(r"\{\.interpreted-text\b|\brole=\""),
    "substitution": re.compile(r"(?<![\w|\\])\\?\|[A-Za-z][\w.-]*\\?\|(?![\w|])"),
    "reST link": re.compile(r"`[^`\n]*<[^`<>\n]+>`__?"),
    "unresolved reference": re.compile(r"##SUBST##"),
    "literal-block marker": re.compile(r"\S::\s*$"),
}
_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+<>_:.])\1{2,}\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_ROW = re.compile(r"^\s*\|")


def _prose_lines(markdown: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    lines, fenced = [], None
    for number, line in enumerate(markdown.splitlines(), start=1):
        fence = _FENCE.match(line)
        if fence and (fenced is None or fence.group(1) == fenced):
            fenced = None if fenced else fence.group(1)
            continue
        if fenced is None:
            lines.append((number, line))
    return lines


def rest_in_markdown(markdown: str) -> list[str]:
    """Describe each piece of reST in one Markdown text: ``"line 3: role: :func:`f`"``.

    Fenced code blocks are skipped (code may show anything). A section underline is a
    line of one repeated punctuation character right under a line of text; pipe-table
    rules (``|---|``) and thematic breaks after a blank line are Markdown. A line of
    text right under a table row is a row that was split: Markdown tables have one
    line per row.
    """
    found = []
    previous = ""
    for number, line in _prose_lines(markdown):
        table = bool(_TABLE_ROW.match(line))
        for what, pattern in _PATTERNS.items():
            if what == "substitution" and table:
                continue
            match = pattern.search(line)
            if match:
                found.append(f"line {number}: {what}: {match.group().strip()}")
        if _ADORNMENT.match(line) and previous.strip() and not _TABLE_ROW.match(previous):
            found.append(f"line {number}: section underline: {line.strip()}")
        if _TABLE_ROW.match(previous) and line.strip() and not table:
            found.append(f"line {number}: table row split across lines: {line.strip()}")
        previous = line
    return found


def notebook_problems(path: Path) -> list[str]:
    """reST in the Markdown cells of one ``.ipynb``, each prefixed with its cell number."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    problems = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "markdown":
            source = "".join(cell["source"])
            problems += [f"cell {index}, {problem}" for problem in rest_in_markdown(source)]
    return problems


def check_gallery_notebooks(app: Sphinx) -> None:
    """Warn about every notebook of the gallery that still holds reST (after it is written)."""
    for folder in map(Path, app.config.sphinx_gallery_conf.get("gallery_dirs", [])):
        for notebook in sorted(folder.glob("*.ipynb")):
            for problem in notebook_problems(notebook):
                logger.warning(
                    "%s: a Markdown cell that Jupyter would show as raw markup (%s); "
                    "compperf_docs.publish.notebook_markdown should convert it",
                    notebook.name,
                    problem,
                    type="compperf",
                    subtype="notebook",
                )
