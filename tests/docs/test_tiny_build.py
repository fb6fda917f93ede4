"""A tiny end-to-end build: one gallery, built with the site's own docs/_ext settings."""

from __future__ import annotations

import html
import importlib.metadata
import json
import re
import subprocess
import zipfile
from pathlib import Path
from types import SimpleNamespace

import compperf_project
import pytest
import tiny_site
from compperf_docs.execute import provenance
from compperf_docs.publish import notebook_check, site
from sphinx.errors import ConfigError

# The tiny site's own [tool.compperf]: the real languages, one chapter, its own URL.
SITE_URL = "https://example.org/site/"
PROJECT = compperf_project.load().replace(site_url=SITE_URL, chapters=("tiny",))
WHEEL_URL = site.wheel_url(SITE_URL)
PAGES_URL = f"{SITE_URL}en/"

CONF = tiny_site.conf(
    'nitpick_ignore_regex = [("py:func", ".*")]  # no API reference in this tiny site\n',
    gallery=f"pages_url={PAGES_URL!r}",
)

INDEX = """
Tiny
====

.. toctree::

   auto_examples/tiny/index
   run

.. _run-it:

Run it
------

How to run the examples.
"""

RUN_PAGE = "Running it\n==========\n\nInstall things:\n\n.. compperf-install::\n"

GOOD_EXAMPLE = '''
"""
Sum a tensor
============

Prints where it ran, then a sum, then draws a line.
"""

# %%
import matplotlib.pyplot as plt
import torch

import compperf

print(compperf.environment())

# %%
# The sum of 1..4 is printed below.
N = 4
# sphinx_gallery_start_ignore
HIDDEN_SWITCH = "tests only"
# sphinx_gallery_end_ignore
print("sum is", int(torch.arange(1, N + 1).sum()))

# %%
plt.plot([0, 1], [0, 1])
plt.title("A straight line")
'''

NO_PROVENANCE_EXAMPLE = '''
"""
Silent about its machine
========================

Prints a result without saying what produced it.
"""

print("forty-two")
'''

# Sphinx markup that Jupyter cannot show: the notebook must get Markdown instead.
MARKUP_EXAMPLE = '''
"""
Markup in notebooks
===================

:func:`compile` turns text into bytecode and :func:`~builtins.exec` runs it; see
:ref:`run-it` and :doc:`/run`, version |release|.
"""

import compperf

print(compperf.environment())

# %%
# Formats
# -------
#
# .. list-table::
#    :header-rows: 1
#
#    * - Format
#      - Needs Python
#    * - ``state_dict``
#      - Yes, and this cell's text goes on
#        over two lines of the source
#
# .. note::
#
#    Compiling takes seconds.
#
# .. admonition:: Answer
#    :class: dropdown
#
#    The answer is :math:`6 \\times 7`.

print("ok")
'''

# Markup that neither pandoc nor compperf_docs knows: the build must say so.
UNKNOWN_MARKUP_EXAMPLE = '''
"""
Unknown markup
==============

Uses |no_such_substitution| here.
"""

import compperf

print(compperf.environment())
'''

# A figure without a title: sphinx-gallery would describe it by its file name.
UNTITLED_FIGURE_EXAMPLE = '''
"""
Untitled
========

Draws a figure and names it nothing.
"""

import matplotlib.pyplot as plt

import compperf

print(compperf.environment())
plt.plot([0, 1], [1, 0])
'''

FAILING_EXAMPLE = '''
"""
Broken
======

Raises on purpose.
"""

raise RuntimeError("broken on purpose")
'''


def _project(root: Path, examples: dict[str, str]) -> Path:
    site = tiny_site.make(
        root, examples=examples, project=PROJECT, conf=CONF, index=INDEX,
        pages={"run.rst": RUN_PAGE},
    )  # fmt: skip
    return site.docs


def _build(docs: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return tiny_site.Site(docs.parent).build(*options)


@pytest.fixture(scope="module")
def tiny(tiny_sites: tiny_site.Sites) -> SimpleNamespace:
    docs = tiny_sites.make(
        "tiny", examples={"plot_sum.py": GOOD_EXAMPLE, "plot_markup.py": MARKUP_EXAMPLE},
        project=PROJECT, conf=CONF, index=INDEX, pages={"run.rst": RUN_PAGE},
    ).docs  # fmt: skip
    first = _build(docs)
    assert first.returncode == 0, first.stdout + first.stderr
    html = docs / "_build" / "html"
    page = html / "auto_examples" / "tiny" / "plot_sum.html"
    return SimpleNamespace(docs=docs, html=html, page=page, text=page.read_text("utf-8"))


def test_page_shows_output_block_and_figure(tiny: SimpleNamespace) -> None:
    outputs = re.findall(r'<div class="sphx-glr-script-out.*?</pre>', tiny.text, re.DOTALL)
    assert any("sum is 10" in block for block in outputs)
    assert re.search(r'<img [^>]*src="[^"]*sphx_glr_plot_sum_001\.png"', tiny.text)


def test_page_shows_provenance_and_running_time(tiny: SimpleNamespace) -> None:
    assert provenance.PROVENANCE_MARKER + "cpu" in tiny.text
    assert re.search(r"Total running time of the script:.*?\d+ minutes \d+\.\d+ seconds", tiny.text)


def test_download_links_point_to_existing_files(tiny: SimpleNamespace) -> None:
    links = re.findall(r'class="reference download internal" download="" href="([^"]+)"', tiny.text)
    suffixes = sorted(Path(link).suffix for link in links)
    assert suffixes == [".ipynb", ".py", ".zip"]
    for link in links:
        assert (tiny.page.parent / link).resolve().is_file(), link


def test_notebook_first_cell_installs_compperf(tiny: SimpleNamespace) -> None:
    (notebook,) = tiny.html.glob("_downloads/*/plot_sum.ipynb")
    first = json.loads(notebook.read_text("utf-8"))["cells"][0]
    source = "".join(first["source"])
    assert first["cell_type"] == "code"
    assert "%pip install" in source
    # Installed again every time: a rebuilt site's changed compperf reaches the learner.
    assert f"%pip install --quiet --force-reinstall --no-deps --no-cache-dir {WHEEL_URL}" in source
    # Only in the notebook: the page never runs (or shows) the install cell.
    assert "%pip install" not in tiny.text


def test_downloads_hold_no_hidden_lines(tiny: SimpleNamespace) -> None:
    """The .py download and both zips lose the ignore block; the run still had it."""
    (script,) = tiny.html.glob("_downloads/*/plot_sum.py")
    assert "N = 4" in script.read_text("utf-8")
    zips = [
        *tiny.html.glob("_downloads/*/plot_sum.zip"),
        *tiny.html.glob("_downloads/*/*python.zip"),
    ]
    assert len(zips) == 2, zips
    texts = [script.read_text("utf-8")]
    for path in zips:
        with zipfile.ZipFile(path) as archive:
            texts.append(archive.read("plot_sum.py").decode())
    for text in texts:
        assert "HIDDEN_SWITCH" not in text
        assert "sphinx_gallery_start_ignore" not in text
    source = tiny.docs.parent / "examples" / "tiny" / "plot_sum.py"
    assert "HIDDEN_SWITCH" in source.read_text("utf-8")  # the example itself is untouched
    assert "HIDDEN_SWITCH" not in tiny.text


def _markdown_cells(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text("utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown"]


def test_notebook_markdown_has_no_rest(tiny: SimpleNamespace) -> None:
    (notebook,) = tiny.html.glob("_downloads/*/plot_markup.ipynb")
    assert notebook_check.notebook_problems(notebook) == []
    title, formats = _markdown_cells(notebook)
    assert title.startswith("# Markup in notebooks\n")
    # Roles: code spans, or links to the site's pages with the titles Sphinx shows.
    assert "`compile` turns text" in title
    assert "`exec` runs it" in title
    assert f"[Run it]({PAGES_URL}index.html#run-it)" in title
    assert f"[Running it]({PAGES_URL}run.html)" in title
    assert f"version {importlib.metadata.version('compperf')}" in title
    # A section of a later block keeps its level; a list-table is a pipe table.
    assert formats.startswith("## Formats\n")
    assert re.search(r"^\| Format +\| Needs Python +\|$", formats, re.MULTILINE)
    assert re.search(
        r"^\| `state_dict` +\| Yes, and this cell's text goes on over two lines of the source +\|$",
        formats,
        re.MULTILINE,
    )
    # Admonitions: a quote with its title, and a dropdown folded as in the page.
    assert "> **Note:** Compiling takes seconds." in formats
    assert "<details>\n<summary>Answer</summary>" in formats
    assert "$6 \\times 7$" in formats


def test_install_command_names_this_sites_wheel(tiny: SimpleNamespace) -> None:
    page = (tiny.html / "run.html").read_text("utf-8")
    blocks = [
        html.unescape(re.sub(r"<[^>]+>", "", pre)).strip()
        for pre in re.findall(r"<pre[^>]*>(.*?)</pre>", page, re.DOTALL)
    ]
    assert (
        "python -m pip install --quiet matplotlib graphviz\n"
        f"python -m pip install --quiet --force-reinstall --no-deps --no-cache-dir {WHEEL_URL}"
    ) in blocks


def test_rebuild_without_changes_executes_nothing(tiny: SimpleNamespace) -> None:
    # sphinx-gallery writes an example's md5 stamp each time it executes it.
    stamp = tiny.docs / "auto_examples" / "tiny" / "plot_sum.py.md5"
    before = stamp.stat().st_mtime_ns
    second = _build(tiny.docs)
    assert second.returncode == 0, second.stdout + second.stderr
    assert stamp.stat().st_mtime_ns == before


def test_failing_or_unprovenanced_example_fails_the_build(tmp_path: Path) -> None:
    docs = _project(
        tmp_path,
        {
            "plot_sum.py": GOOD_EXAMPLE,
            "plot_silent.py": NO_PROVENANCE_EXAMPLE,
            "plot_broken.py": FAILING_EXAMPLE,
            "plot_unknown.py": UNKNOWN_MARKUP_EXAMPLE,
            "plot_untitled.py": UNTITLED_FIGURE_EXAMPLE,
        },
    )
    result = _build(docs)
    log = result.stdout + result.stderr
    assert result.returncode != 0
    assert "plot_broken.py" in log
    assert "broken on purpose" in log
    assert re.search(r"plot_silent.*example page shows no provenance", log)
    assert re.search(
        r"plot_unknown.ipynb: a Markdown cell .* raw markup.*no_such_substitution", log
    )
    assert "figure 1 of plot_untitled.py has no title" in log


def test_an_example_that_raises_is_our_message_not_a_sphinx_crash(tmp_path: Path) -> None:
    docs = _project(tmp_path, {"plot_broken.py": FAILING_EXAMPLE})
    result = tiny_site.Site(docs.parent).build_languages("en", "-q")
    log = result.stdout + result.stderr
    assert result.returncode == 2, log
    assert "broken on purpose" in log
    assert "An example raised: run it alone" in log
    assert "To report this error to the developers" not in log


def test_root_index_links_each_built_language(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no built language"):
        site.write_root_index(tmp_path, PROJECT.languages)
    first = PROJECT.languages[0]
    (tmp_path / first.code).mkdir()
    (tmp_path / first.code / "index.html").write_text("<html></html>", encoding="utf-8")
    page = site.write_root_index(tmp_path, PROJECT.languages).read_text("utf-8")
    assert f'<a href="{first.code}/index.html" hreflang="{first.tag}"' in page
    assert f'http-equiv="refresh" content="0; url={first.code}/index.html"' in page
    assert "<script" not in page


def test_urls_follow_the_language(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(site.SITE_URL_VARIABLE, "https://example.org/docs")
    code = PROJECT.languages[-1].code
    config = SimpleNamespace(compperf_site_url=site.site_url(), language=code)
    site.derive_urls(None, config)
    assert config.html_baseurl == f"https://example.org/docs/{code}/"
    assert config.ogp_site_url == config.html_baseurl
    assert config.notfound_urls_prefix == f"/docs/{code}/"


def test_site_url_defaults_to_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(site.SITE_URL_VARIABLE, raising=False)
    assert site.site_url() == compperf_project.load().site_url


def test_new_site_url_rewrites_notebooks_and_executes_nothing(tiny: SimpleNamespace) -> None:
    """``-D compperf_site_url`` moves the notebooks' install cell and the canonical links."""
    stamp = tiny.docs / "auto_examples" / "tiny" / "plot_sum.py.md5"  # written by each run
    before = stamp.stat().st_mtime_ns
    other = "https://example.com/elsewhere/"
    try:
        result = _build(tiny.docs, "-D", f"compperf_site_url={other}")
        assert result.returncode == 0, result.stdout + result.stderr
        assert stamp.stat().st_mtime_ns == before  # nothing executed
        (notebook,) = tiny.html.glob("_downloads/*/plot_sum.ipynb")
        assert site.wheel_url(other) in notebook.read_text("utf-8")
        (zipped,) = tiny.html.glob("_downloads/*/plot_sum.zip")
        with zipfile.ZipFile(zipped) as archive:
            assert site.wheel_url(other) in archive.read("plot_sum.ipynb").decode()
        page = tiny.page.read_text("utf-8")
        assert f'<link rel="canonical" href="{other}' in page
    finally:
        result = _build(tiny.docs)  # back to the fixture's URL for the other tests
        assert result.returncode == 0, result.stdout + result.stderr
    (notebook,) = tiny.html.glob("_downloads/*/plot_sum.ipynb")
    assert WHEEL_URL in notebook.read_text("utf-8")


def test_site_url_must_be_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(site.SITE_URL_VARIABLE, "compperf.github.io")
    with pytest.raises(ConfigError, match="COMPPERF_SITE_URL"):
        site.site_url()


def test_removed_example_page_is_deleted_on_rebuild(tmp_path: Path) -> None:
    """Rebuilds are incremental, so a removed source's page must not linger, nor the links
    to it on the pages whose sources did not change (their navigation)."""
    second = GOOD_EXAMPLE.replace("Sum a tensor\n============", "Sum again\n=========")
    docs = _project(tmp_path, {"plot_sum.py": GOOD_EXAMPLE, "plot_sum_again.py": second})
    first = _build(docs)
    assert first.returncode == 0, first.stdout + first.stderr
    page = docs / "_build" / "html" / "auto_examples" / "tiny" / "plot_sum_again.html"
    # run.rst comes after the chapter in the toctree: its "previous" is the chapter's last page.
    unchanged = docs / "_build" / "html" / "run.html"
    assert page.is_file()
    assert 'rel="prev" title="Sum again"' in unchanged.read_text("utf-8")
    (docs.parent / "examples" / "tiny" / "plot_sum_again.py").unlink()
    for generated in (docs / "auto_examples" / "tiny").glob("plot_sum_again*"):
        generated.unlink()
    rebuilt = _build(docs)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert not page.exists()
    assert (docs / "_build" / "html" / "auto_examples" / "tiny" / "plot_sum.html").is_file()
    assert 'rel="prev" title="Sum a tensor"' in unchanged.read_text("utf-8")
    # The navigation is the same in the next build: no page is written again.
    before = unchanged.stat().st_mtime_ns
    again = _build(docs)
    assert again.returncode == 0, again.stdout + again.stderr
    assert unchanged.stat().st_mtime_ns == before


def test_outputs_kept_from_other_package_versions_are_made_again(tiny: SimpleNamespace) -> None:
    """An example's outputs name the versions that made them; other versions run it again."""
    from compperf_docs.execute import recorded

    account = tiny.docs / "auto_examples" / "tiny" / "plot_sum.verdicts.json"
    run = json.loads(account.read_text("utf-8"))
    assert run["versions"] == recorded.versions()
    run["versions"]["matplotlib"] = "0.1"
    account.write_text(json.dumps(run), encoding="utf-8")
    # sphinx-gallery writes an example's md5 stamp after each run (gen_rst.execute_script),
    # while it replaces the .rst only when its text changed: on a quiet machine the tiny
    # example's second run prints the same running time, and the .rst keeps its mtime.
    stamp = tiny.docs / "auto_examples" / "tiny" / "plot_sum.py.md5"
    before = stamp.stat().st_mtime_ns
    result = _build(tiny.docs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert stamp.stat().st_mtime_ns != before  # executed again
    assert json.loads(account.read_text("utf-8"))["versions"] == recorded.versions()


def test_an_example_forgets_its_records_as_it_starts_running(tmp_path: Path) -> None:
    """A build stopped after sphinx-gallery's md5 stamp but before the new records leaves
    no old records beside the new figures: the example has none, so it runs again."""
    from compperf_docs.execute import gallery, recorded

    examples, pages = tmp_path / "examples" / "tiny", tmp_path / "docs" / "auto_examples" / "tiny"
    examples.mkdir(parents=True)
    pages.mkdir(parents=True)
    (examples / "plot_sum.py").write_text('"""Sum\n===\n"""\n', encoding="utf-8")
    recorded.write(pages, "plot_sum", "examples/tiny/plot_sum.py", [])
    recorded.write_run(pages, "plot_sum", "examples/tiny/plot_sum.py", {"disturbance": {}})
    assert recorded.outputs_problem(tmp_path / "docs", pages, "plot_sum") is None
    conf = {"examples_dirs": [str(examples)], "gallery_dirs": [str(pages)]}
    gallery.reset_state(conf, "plot_sum.py", "before")
    try:
        problem = recorded.outputs_problem(tmp_path / "docs", pages, "plot_sum")
    finally:
        gallery.reset_state(conf, None, "after")  # the runner's "after": writes nothing
    assert problem == "no recorded messages or run account"
