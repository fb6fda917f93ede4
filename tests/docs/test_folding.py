"""Device-aware pages (issue 21, item 3): code only another device runs is folded, labelled.

``docs/_ext/compperf_folding.py`` folds a cell whose code starts with ``# compperf:
cuda-only`` when the page's example ran elsewhere (its recorded provenance), and says so
at the top of the page and of its chapter's index; the cell's output stays in the flow.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import compperf_folding
import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

ROOT = Path(__file__).resolve().parents[2]

PAGE = """\
Streams
=======

Some prose.

.. code-block:: Python

    x = 1

.. code-block:: Python

    # compperf: cuda-only
    if device.type == "cuda":
        pass

.. code-block:: text

    This page runs on a CPU. On CUDA the two streams overlap.
"""


def _doctree() -> nodes.document:
    settings = get_default_settings(Parser)
    document = new_document("page.rst", settings)
    Parser().parse(PAGE, document)
    return document


def _site(tmp_path: Path, device: str | None) -> Path:
    gallery = tmp_path / "auto_examples" / "streams"
    gallery.mkdir(parents=True)
    (gallery / "plot_streams.py").write_text(PAGE.split("\n\n", 3)[0] + "\n# compperf: cuda-only\n")
    if device is not None:
        record = {"message": "Measured on {device} ...", "values": {"device": device}}
        (gallery / "plot_streams.messages.json").write_text(json.dumps({"records": [record]}))
    return tmp_path


def _app(srcdir: Path, language: str = "en", format: str = "html") -> SimpleNamespace:
    return SimpleNamespace(
        srcdir=str(srcdir),
        builder=SimpleNamespace(format=format),
        config=SimpleNamespace(language=language),
    )


def _html(node: compperf_folding.device_only) -> str:
    translator = SimpleNamespace(body=[])
    compperf_folding._visit_html(translator, node)
    translator.body.append(node.astext())
    compperf_folding._depart_html(translator, node)
    return "".join(translator.body)


@pytest.mark.parametrize("language", ["en", "zh_CN", "ru"])
def test_a_cpu_build_folds_the_cuda_only_code_and_says_so(tmp_path: Path, language: str) -> None:
    doctree = _doctree()
    app = _app(_site(tmp_path, "cpu"), language)
    compperf_folding.fold(app, doctree, "auto_examples/streams/plot_streams")
    (folded,) = doctree.findall(compperf_folding.device_only)
    assert folded.astext().startswith("# compperf: cuda-only")
    page = _html(folded)
    summary = compperf_folding.SUMMARY[("cuda", language)]
    assert re.match(r'<details class="compperf-device-only" data-device="cuda"><summary>', page)
    assert f"<summary>{summary}</summary>" in page
    assert "GPU" in summary
    assert "CPU" in summary
    if language != "en":
        assert summary != compperf_folding.SUMMARY[("cuda", "en")]
    # The output, which says what a GPU shows, and the other code stay in the main flow.
    blocks = [b for b in doctree.findall(nodes.literal_block) if b.parent is not folded]
    assert [b.astext().split()[0] for b in blocks] == ["x", "This"]
    # The top of the page says which device built it.
    note = doctree.next_node(
        lambda node: isinstance(node, nodes.Element) and "compperf-built-on" in node["classes"]
    )
    assert note is not None
    assert note.astext() == compperf_folding.NOTE[("cuda", language)]
    index = _doctree()
    compperf_folding.fold(app, index, "auto_examples/streams/index")
    chapter_note = index.next_node(
        lambda node: isinstance(node, nodes.Element) and "compperf-built-on" in node["classes"]
    )
    assert chapter_note is not None


@pytest.mark.parametrize(
    ("device", "format"), [("cuda:0", "html"), ("cpu", "gettext"), (None, "html")]
)
def test_nothing_is_folded_on_the_device_the_code_needs(
    tmp_path: Path, device: str | None, format: str
) -> None:
    """A CUDA build shows the code; a catalog build and a page without records keep it too."""
    doctree = _doctree()
    before = doctree.pformat()
    compperf_folding.fold(
        _app(_site(tmp_path, device), format=format), doctree, "auto_examples/streams/plot_streams"
    )
    assert doctree.pformat() == before


def test_the_site_loads_the_extension_and_examples_mark_their_cuda_only_cells() -> None:
    assert "compperf_folding" in (ROOT / "docs" / "conf.py").read_text("utf-8")
    marked = [
        path.name
        for path in sorted((ROOT / "examples").glob("*/plot_*.py"))
        if "cuda" in compperf_folding.marked(path.read_text("utf-8"))
    ]
    assert "plot_backend_who_schedules.py" in marked
    for name in marked:
        source = next((ROOT / "examples").glob(f"*/{name}")).read_text("utf-8").splitlines()
        for i, line in enumerate(source):
            if line == "# compperf: cuda-only":
                # Its own code block: a blank line (or a cell start) above, CUDA code below.
                assert source[i - 1] == "" or source[i - 1].startswith("# %%"), name
                assert "cuda" in source[i + 1], name


def test_sphinx_gallerys_linked_code_blocks_are_folded_once(tmp_path: Path) -> None:
    """sphinx-gallery replaces a cell's literal block with a ``code_links_block`` holding
    one; that is what a real build folds, once, however often the event runs."""
    from sphinx_gallery._doctree_links import code_links_block

    doctree = _doctree()
    block = next(b for b in doctree.findall(nodes.literal_block) if "cuda-only" in b.astext())
    linked = code_links_block("", "")
    block.replace_self(linked)
    linked += block
    app = _app(_site(tmp_path, "cpu"))
    for _ in range(2):
        compperf_folding.fold(app, doctree, "auto_examples/streams/plot_streams")
    (folded,) = doctree.findall(compperf_folding.device_only)
    assert folded.children == [linked]


@pytest.mark.parametrize("language", ["en", "zh_CN", "ru"])
def test_a_cpu_built_chapter_without_folded_code_says_so_at_its_top(
    tmp_path: Path, language: str
) -> None:
    srcdir = _site(tmp_path, "cpu")
    (srcdir / "auto_examples" / "streams" / "plot_streams.py").write_text("x = 1\n")
    index = _doctree()
    compperf_folding.fold(_app(srcdir, language), index, "auto_examples/streams/index")
    note = index.next_node(
        lambda node: isinstance(node, nodes.Element) and "compperf-built-on" in node["classes"]
    )
    assert note is not None
    assert note.astext() == compperf_folding.NOTE_CPU[language]
    assert "CPU" in note.astext()
