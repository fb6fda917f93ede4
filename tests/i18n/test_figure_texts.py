"""No text of any figure leaves the figure, in any language; no tick labels overlap, no
legend covers data, no figure is squeezed on the page; every example draws a figure.

The docs build pickles each figure when the English build executes its example and draws
it again in each language (``compperf_docs.languages.figures._draw``, which reports a text that
:func:`compperf.figure_layout.texts_outside` finds beyond the edges, so that a zh_CN or
ru build fails on it). This test draws every recorded figure in every language the same
way, English included, and fails on each cut text. It reads the figures of an executed
build (``docs/auto_examples``, or the docs folder ``COMPPERF_BUILT_DOCS`` names) and is
skipped where none was executed. The checks are compperf.figure_layout's; that every
example draws a figure is read from the examples' sources, without a build.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import compperf_project
import pytest
from compperf_docs.execute import recorded
from compperf_docs.languages.figures import Translations, _draw, check_font, translations

from compperf import i18n

ROOT = Path(__file__).resolve().parents[2]
DOCS = Path(os.environ.get("COMPPERF_BUILT_DOCS", ROOT / "docs"))
PROJECT = compperf_project.load()
PICKLES = sorted(DOCS.glob("auto_examples/*/images/sphx_glr_*.pickle"))
_STEM = re.compile(r"sphx_glr_(?P<stem>.+)_\d{3}$")


def _table(gallery: Path, stem: str, code: str) -> Translations:
    recording = recorded.load(gallery, stem)
    if recording is None:
        pytest.fail(f"{gallery / stem} has figures but no recorded messages")
    if code != i18n.SOURCE_LANGUAGE:
        return translations(recording, code)
    english = Translations(recording.example)
    for record in recorded.records_in(recording.records):
        text = i18n.render(record, code)
        english.texts[text] = text
    return english


@cache
def _drawn(code: str) -> tuple[list[str], list[str]]:
    """Every recorded figure drawn once in ``code``: its problems, and the layout's."""
    fonts = check_font(PROJECT.language(code))
    problems, layout = [], []
    for path in PICKLES:
        stem = _STEM.match(path.stem)["stem"]
        table = _table(path.parent.parent, stem, code)
        drawn = _draw(path.read_bytes(), table, path.name, fonts)
        problems += drawn.problems
        layout += [f"{stem}: {path.name}: {problem}" for problem in drawn.layout]
    return problems, layout


def _skip_unless_built() -> None:
    if not PICKLES:
        pytest.skip(
            f"no executed figures under {DOCS / 'auto_examples'} (build English with "
            "`nox -s docs`, or point COMPPERF_BUILT_DOCS at a docs folder that has them); "
            "tests/package/test_figure_layout.py still checks the measurement"
        )


@pytest.mark.parametrize("code", PROJECT.codes)
def test_no_figure_text_leaves_the_figure(code: str) -> None:
    _skip_unless_built()
    problems = [problem for problem in _drawn(code)[0] if "leaves the figure" in problem]
    assert not problems, f"{len(problems)} texts cut in {code}:\n" + "\n".join(problems)


@pytest.mark.parametrize("code", PROJECT.codes)
def test_no_tick_labels_overlap_no_legend_covers_data_no_figure_is_squeezed(code: str) -> None:
    _skip_unless_built()
    drawn, layout = _drawn(code)
    problems = [problem for problem in drawn if " overlap by " in problem] + layout
    assert not problems, f"{len(problems)} layout problems in {code}:\n" + "\n".join(problems)


_DRAWS = re.compile(r"\bplt\.(subplots|subplot_mosaic|figure)\(")


def test_every_example_draws_a_figure() -> None:
    """A page without a figure shows sphinx-gallery's placeholder as its thumbnail."""
    examples = sorted((ROOT / "examples").glob("*/plot_*.py"))
    assert examples
    missing = [
        str(path.relative_to(ROOT))
        for path in examples
        if not _DRAWS.search(path.read_text(encoding="utf-8"))
    ]
    assert not missing, "examples that draw no figure:\n" + "\n".join(missing)
