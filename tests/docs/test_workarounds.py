"""Each workaround of upstream output warns by name when that output changes, never silently.

The real markup each one expects passes quietly (the tiny builds prove it under ``-W``);
here each meets the markup or object that an upstream change would bring.
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from compperf_docs import workarounds
from compperf_docs.execute import gallery
from compperf_docs.languages import gallery_text, theme_text
from compperf_docs.publish import site
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document
from packaging.version import Version
from sphinx import addnodes
from sphinx.search.zh import SearchChinese


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def _context(body: str) -> dict[str, str]:
    return {"body": body, "furo_navigation_tree": body}


def test_every_workaround_names_its_package_and_reason() -> None:
    for name, workaround in workarounds.WORKAROUNDS.items():
        assert workaround.name == name
        assert workaround.package
        assert len(workaround.reason) > 40
        if workaround.removable_from is not None:
            Version(workaround.removable_from)  # a real version number


def test_removable_workarounds_are_announced(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    workarounds.announce_removable(None)
    assert not _warnings(caplog), "the pinned versions still need every workaround"
    monkeypatch.setattr(workarounds, "_installed", lambda package: Version("999"))
    workarounds.announce_removable(None)
    announced = "\n".join(_warnings(caplog))
    for workaround in workarounds.WORKAROUNDS.values():
        assert (repr(workaround.name) in announced) == (workaround.removable_from is not None)
    assert "probably removable" in announced


def test_toctree_captions_get_a_level_and_unknown_markup_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    context = _context('<p class="caption" role="heading"><span>Chapters</span></p>')
    workarounds.label_toctree_captions(None, "index", "page.html", context, None)
    assert 'role="heading" aria-level="2">' in context["body"]
    assert 'aria-level="2"' in context["furo_navigation_tree"]
    assert not _warnings(caplog)
    # Fixed upstream: nothing to do, nothing to say.
    fixed = _context('<p class="caption" role="heading" aria-level="3">x</p>')
    workarounds.label_toctree_captions(None, "index", "page.html", fixed, None)
    assert not _warnings(caplog)
    # Changed upstream: a caption the workaround no longer recognizes.
    changed = _context('<p class="caption" role="heading" id="c1">x</p>')
    workarounds.label_toctree_captions(None, "index", "page.html", changed, None)
    assert any("'toctree-caption-level' no longer applies" in w for w in _warnings(caplog))


def test_code_blocks_become_focusable_and_unknown_markup_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    context = {"body": '<div class="highlight"><pre><span></span>x = 1</pre></div>'}
    workarounds.focusable_code_blocks(None, "index", "page.html", context, None)
    assert '<pre tabindex="0">' in context["body"]
    assert not _warnings(caplog)
    changed = {"body": '<div class="highlight"><pre class="code">x = 1</pre></div>'}
    workarounds.focusable_code_blocks(None, "index", "page.html", changed, None)
    assert any("'focusable-code-blocks' no longer applies" in w for w in _warnings(caplog))


def _chinese_app() -> SimpleNamespace:
    return SimpleNamespace(
        builder=SimpleNamespace(format="html"),
        config=SimpleNamespace(html_search_language="zh", language="zh_CN"),
    )


def test_chinese_search_warns_when_sphinx_bundles_another_stemmer(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    workarounds.check_chinese_search(_chinese_app())
    assert not _warnings(caplog)
    monkeypatch.setattr(SearchChinese, "js_stemmer_rawcode", "chinese-stemmer.js")
    workarounds.check_chinese_search(_chinese_app())
    assert any("'chinese-search' no longer applies" in w for w in _warnings(caplog))


def _notebook(path: Path, first_cell: str) -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": [first_cell]},
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title"]},
    ]
    path.write_text(json.dumps({"cells": cells, "nbformat": 4}, indent=2), encoding="utf-8")


def test_first_notebook_cell_is_rewritten_in_notebook_and_zip(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = gallery.first_notebook_cell("https://old.example/w.whl")
    new = gallery.first_notebook_cell("https://new.example/w.whl")
    notebook = tmp_path / "plot_a.ipynb"
    _notebook(notebook, old)
    with zipfile.ZipFile(tmp_path / "plot_a.zip", "w") as archive:
        archive.writestr("plot_a.py", "print(1)\n")
        archive.write(notebook, "plot_a.ipynb")
    assert workarounds.rewrite_first_notebook_cell(tmp_path, new) == [notebook]
    assert "https://new.example/w.whl" in notebook.read_text("utf-8")
    assert json.loads(notebook.read_text("utf-8"))["cells"][1]["source"] == ["# Title"]
    with zipfile.ZipFile(tmp_path / "plot_a.zip") as archive:
        assert archive.read("plot_a.ipynb").decode() == notebook.read_text("utf-8")
        assert archive.read("plot_a.py") == b"print(1)\n"
    assert workarounds.rewrite_first_notebook_cell(tmp_path, new) == []  # up to date
    assert not _warnings(caplog)


def test_notebook_without_the_install_cell_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _notebook(tmp_path / "plot_a.ipynb", "import torch")
    assert workarounds.rewrite_first_notebook_cell(tmp_path, "%pip install x") == []
    assert any("'notebook-first-cell' no longer applies" in w for w in _warnings(caplog))


def test_zip_without_the_member_warns_and_is_left_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "plot_a.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("other.py", "print(1)\n")
    workarounds.rewrite_zip_member(path, "plot_a.py", "x = 1\n", "hidden-lines-in-downloads")
    assert any("'hidden-lines-in-downloads' no longer applies" in w for w in _warnings(caplog))
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["other.py"]


def test_mystnb_config_that_cannot_be_copied_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = SimpleNamespace(
        extensions={"myst_nb": None}, env=SimpleNamespace(), doctreedir=str(tmp_path)
    )
    site.move_notebook_outputs(app)  # myst-nb stopped keeping env.mystnb_config
    assert any("'mystnb-output-folder' no longer applies" in w for w in _warnings(caplog))


# What sphinx-gallery 0.22 writes for one thumbnail on a chapter page (pending_xref as
# Sphinx leaves it before references are resolved).
THUMBNAIL_OPEN = '<div class="sphx-glr-thumbcontainer" tooltip="English summary">'
THUMBNAIL_CLOSE = '<div class="sphx-glr-thumbnail-title">English title</div>\n</div>'


def _thumbnail_document(opening: str = THUMBNAIL_OPEN) -> nodes.document:
    settings = get_default_settings(Parser)
    settings.env = SimpleNamespace(
        config=SimpleNamespace(language="xx"),
        titles={"auto_examples/tiny/plot_sum": nodes.title("", "Translated title")},
        get_doctree=lambda name: new_document("x", get_default_settings(Parser)),
    )
    document = new_document("index", settings)
    xref = addnodes.pending_xref("", reftype="doc", reftarget="/auto_examples/tiny/plot_sum")
    document += nodes.raw("", opening, format="html")
    document += nodes.paragraph("", "", xref)
    document += nodes.raw("", THUMBNAIL_CLOSE, format="html")
    return document


def _run_thumbnails(document: nodes.document) -> None:
    transform = gallery_text.GalleryThumbnails(document)
    transform.run()


def test_thumbnails_are_translated_and_unknown_markup_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    document = _thumbnail_document()
    _run_thumbnails(document)
    html = "".join(node.astext() for node in document.findall(nodes.raw))
    assert "Translated title" in html
    assert "English title" not in html
    assert not _warnings(caplog)
    changed = _thumbnail_document(THUMBNAIL_OPEN.replace("tooltip=", "data-tooltip="))
    _run_thumbnails(changed)
    assert any("'gallery-thumbnails' no longer applies" in w for w in _warnings(caplog))


def _furo(path: str) -> str:
    import furo

    return (Path(furo.__file__).parent / "theme" / "furo" / path).read_text(encoding="utf-8")


# furo's footer credit as its page.html renders it (pieces translated one by one).
FURO_CREDIT = (
    '<div class="left-details">\n    Made with <a href="https://www.sphinx-doc.org/">Sphinx</a> '
    'and <a class="muted-link" href="https://pradyunsg.me">@pradyunsg</a>\'s\n\n    '
    '<a href="https://github.com/pradyunsg/furo">Furo</a>\n\n  </div>'
)


def test_furo_literal_english_is_replaced_and_unknown_markup_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The literal labels and icon titles exactly as furo's templates hold them.
    rendered = _furo("page.html") + _furo("partials/icons.html") + FURO_CREDIT
    out = theme_text.page_text(rendered, "index")
    assert not _warnings(caplog)
    # No catalog here: each message comes back in English, but through the replacement.
    assert out.count('aria-label="Toggle Light / Dark / Auto color theme"') == 2
    assert "<title>Auto light/dark, in dark mode</title>" in out
    assert (
        '\nMade with <a href="https://www.sphinx-doc.org/">Sphinx</a> and <a class='
        '"muted-link" href="https://pradyunsg.me">@pradyunsg</a>\'s '
        '<a href="https://github.com/pradyunsg/furo">Furo</a>\n</div>'
    ) in out
    # furo renames an icon and rewrites its credit.
    changed = rendered.replace("<title>Menu</title>", "<title>Open menu</title>").replace(
        "</a>'s", "</a>"
    )
    theme_text.page_text(changed, "index")
    warned = "\n".join(_warnings(caplog))
    assert "'theme-labels' no longer applies" in warned
    assert "'<title>Menu</title>'" in warned
    assert "footer credit" in warned


def test_navigation_switches_are_labelled_and_unknown_markup_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = SimpleNamespace(config=SimpleNamespace(language="ru"))
    tree = (
        '<li class="toctree-l1 has-children"><a href="a.html">Глава</a><input '
        'class="toctree-checkbox" id="toctree-checkbox-1" role="switch" type="checkbox" '
        'aria-label="Toggle navigation of Глава"/></li>'
    )
    context = {"furo_navigation_tree": tree}
    theme_text.translate_navigation(app, "index", "page.html", context, None)
    assert 'aria-label="Toggle navigation of Глава"' in context["furo_navigation_tree"]
    assert not _warnings(caplog)
    renamed = {"furo_navigation_tree": tree.replace("Toggle navigation of", "Expand")}
    theme_text.translate_navigation(app, "index", "page.html", renamed, None)
    assert any("'theme-labels' no longer applies" in w for w in _warnings(caplog))


def test_search_messages_warn_when_sphinx_no_longer_asks_for_them(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    theme_text.check_search_messages()  # the installed Sphinx
    assert not _warnings(caplog)
    (tmp_path / "searchtools.js").write_text('_("Searching")', encoding="utf-8")
    theme_text.check_search_messages(tmp_path)
    warned = "\n".join(_warnings(caplog))
    assert "'search-messages' no longer applies" in warned
    assert "Preparing search..." in warned
