"""Answers folded under the exercises (issue 21): one ``<details>`` per example page.

``docs/_ext/compperf_answers.py`` moves what the Answers section holds under its title
into a block labelled in the page's language; sphinx-gallery's footer (running time, the
machine's account, the downloads) stays outside, and nothing else on the page changes.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import compperf_answers
import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

ROOT = Path(__file__).resolve().parents[2]

PAGE = """\
Streams
=======

Exercises
---------

1. Time the loop.

Answers
-------

1. The loop takes this long:

.. code-block:: Python

    print(1)

.. rst-class:: sphx-glr-timing

   **Total running time of the script:** (0 minutes 1.000 seconds)

.. _sphx_glr_download_streams.py:

.. container:: sphx-glr-footer

    Downloads.
"""


def _doctree() -> nodes.document:
    document = new_document("page.rst", get_default_settings(Parser))
    Parser().parse(PAGE, document)
    return document


def _app(language: str = "en", format: str = "html") -> SimpleNamespace:
    return SimpleNamespace(
        builder=SimpleNamespace(format=format), config=SimpleNamespace(language=language)
    )


def _section(doctree: nodes.document, name: str) -> nodes.section:
    return next(s for s in doctree.findall(nodes.section) if name in s["ids"])


@pytest.mark.parametrize("language", ["en", "zh_CN", "ru"])
def test_the_answers_are_folded_under_their_title(language: str) -> None:
    doctree = _doctree()
    compperf_answers.fold(_app(language), doctree, "auto_examples/streams/plot_streams")
    section = _section(doctree, "answers")
    title, folded, *after = section.children
    assert isinstance(title, nodes.title)
    assert isinstance(folded, compperf_answers.answers)
    assert folded["summary"] == compperf_answers.SUMMARY[language]
    assert "The loop takes this long" in folded.astext()
    assert "print(1)" in folded.astext()
    # The footer stays on the page, outside the block.
    assert "Total running time" not in folded.astext()
    assert "Total running time" in "".join(node.astext() for node in after)
    assert "Downloads." in "".join(node.astext() for node in after)
    # The exercises stay in the flow.
    assert not list(_section(doctree, "exercises").findall(compperf_answers.answers))
    translator = SimpleNamespace(body=[])
    compperf_answers._visit_html(translator, folded)
    assert translator.body == [
        f'<details class="compperf-answers"><summary>{folded["summary"]}</summary>\n'
    ]


@pytest.mark.parametrize(
    ("docname", "format"),
    [
        ("auto_examples/streams/plot_streams", "gettext"),
        ("auto_examples/streams/index", "html"),
        ("run_yourself", "html"),
    ],
)
def test_catalogs_indexes_and_other_pages_keep_their_answers(docname: str, format: str) -> None:
    doctree = _doctree()
    before = doctree.pformat()
    compperf_answers.fold(_app(format=format), doctree, docname)
    assert doctree.pformat() == before


def test_the_site_loads_the_extension_and_every_example_has_answers() -> None:
    assert '"compperf_answers"' in (ROOT / "docs" / "conf.py").read_text("utf-8")
    for path in sorted((ROOT / "examples").glob("*/plot_*.py")):
        assert "\n# Answers\n# -------\n" in path.read_text("utf-8"), path.name
