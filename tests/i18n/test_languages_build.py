"""A tiny site built in English, Chinese and Russian with the real docs/_ext and UI catalogs.

Checks what a reader of each language gets: the page's language tag, the switcher,
sphinx-gallery's labels and running time in that language, a search index that finds
Chinese words, English terms and inflected Russian words, and that the second and third
languages reuse the first one's executed example. Bad catalogs stop the build.
"""

# ruff: noqa: RUF001  (Chinese text uses full-width punctuation on purpose)
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import compperf_docs
import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po
from compperf_docs import site as site_module
from sphinx.search.ru import SearchRussian
from sphinx.search.zh import SearchChinese

DOCS = Path(compperf_docs.__file__).resolve().parents[2]
UI_CATALOGS = DOCS / "locales"

CONF = f"""
import sys
sys.path.insert(0, {str(DOCS / "_ext")!r})
from pathlib import Path
from compperf_docs import gallery

DOCS = Path(__file__).resolve().parent
project = "tiny"
extensions = ["sphinx_gallery.gen_gallery", "compperf_docs"]
exclude_patterns = ["_build", "auto_examples/**.ipynb"]
sphinx_gallery_conf = gallery.gallery_conf(
    DOCS, DOCS.parent / "examples", ["tiny"], wheel_url="https://example.org/w.whl"
)
locale_dirs = ["locales/"]
gettext_compact = False
html_theme = "furo"
templates_path = [{str(DOCS / "_templates")!r}]
html_sidebars = {{"**": ["sidebar/search.html", "sidebar/languages.html"]}}
"""

INDEX = """
Tiny
====

Call synchronize before you read the clock.

.. toctree::

   auto_examples/tiny/index
"""

EXAMPLE = '''
"""
Sum a tensor
============

Prints where it ran, then a sum.
"""

import compperf
import torch

print(compperf.environment())
print("sum is", int(torch.arange(1, 5).sum()))
'''

# Page translations: a Chinese sentence for jieba, an inflected Russian one for snowball.
PAGES = {
    "zh_CN": {
        "index": {
            "Tiny": "小站",
            "Call synchronize before you read the clock.": "读取时钟之前，先调用 synchronize 同步设备。",
        },
        "auto_examples/tiny/index": {"Tiny chapter": "小章节", "One example.": "一个示例。"},
        "auto_examples/tiny/plot_sum": {
            "Sum a tensor": "张量求和",
            "Prints where it ran, then a sum.": "打印运行位置，然后打印总和。",
        },
    },
    "ru": {
        "index": {
            "Tiny": "Крошка",
            "Call synchronize before you read the clock.": "Перед измерением времени вызовите synchronize.",
        },
        "auto_examples/tiny/index": {
            "Tiny chapter": "Маленькая глава",
            "One example.": "Один пример.",
        },
        "auto_examples/tiny/plot_sum": {
            "Sum a tensor": "Сумма тензора",
            "Prints where it ran, then a sum.": "Печатает, где выполнялся, затем сумму.",
        },
    },
}


def _write_catalogs(docs: Path, language: str, pages: dict[str, dict[str, str]]) -> None:
    folder = docs / "locales" / language / "LC_MESSAGES"
    folder.mkdir(parents=True)
    shutil.copy(UI_CATALOGS / language / "LC_MESSAGES" / "sphinx.po", folder / "sphinx.po")
    for page, messages in pages.items():
        catalog = Catalog(locale=language)
        for msgid, msgstr in messages.items():
            catalog.add(msgid, msgstr)
        (folder / page).parent.mkdir(parents=True, exist_ok=True)
        with (folder / f"{page}.po").open("wb") as file:
            write_po(file, catalog)


def _project(root: Path) -> Path:
    docs, chapter = root / "docs", root / "examples" / "tiny"
    chapter.mkdir(parents=True)
    docs.mkdir()
    (docs / "conf.py").write_text(CONF, encoding="utf-8")
    (docs / "index.rst").write_text(INDEX, encoding="utf-8")
    (chapter / "GALLERY_HEADER.rst").write_text("Tiny chapter\n============\n\nOne example.\n")
    (chapter / "plot_sum.py").write_text(textwrap.dedent(EXAMPLE), encoding="utf-8")
    for language, pages in PAGES.items():
        _write_catalogs(docs, language, pages)
    # Downloaded notebooks install compperf from here; the build checks the file exists.
    wheels = docs / "_build" / "html" / site_module.WHEEL_FOLDER
    wheels.mkdir(parents=True)
    (wheels / site_module.wheel_filename()).write_bytes(b"")
    return docs


def _build(docs: Path, language: str) -> subprocess.CompletedProcess[str]:
    cache = docs.parent / "cache"
    env = dict(os.environ)
    for name in ("MPLCONFIGDIR", "IPYTHONDIR", "XDG_CACHE_HOME", "TMPDIR"):
        env[name] = str(cache / name.lower())
        Path(env[name]).mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n",
         "-D", f"language={language}", "-d", str(docs / "_build" / "doctrees" / language),
         str(docs), str(docs / "_build" / "html" / language)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    docs = _project(tmp_path_factory.mktemp("languages"))
    generated = docs / "auto_examples" / "tiny" / "plot_sum.rst"
    logs, stamps = {}, []
    for language in ("en", "zh_CN", "ru"):
        result = _build(docs, language)
        assert result.returncode == 0, result.stdout + result.stderr
        logs[language] = result.stdout
        stamps.append(generated.stat().st_mtime_ns)
    return SimpleNamespace(docs=docs, html=docs / "_build" / "html", logs=logs, stamps=stamps)


def _page(site: SimpleNamespace, language: str) -> str:
    path = site.html / language / "auto_examples" / "tiny" / "plot_sum.html"
    return path.read_text("utf-8")


def test_only_the_first_language_executes_the_example(site: SimpleNamespace) -> None:
    assert "executed 1 out of 1" in site.logs["en"]
    for language in ("zh_CN", "ru"):
        assert "executed 0 out of 0" in site.logs[language], site.logs[language]
    assert len(set(site.stamps)) == 1  # the generated page (with outputs) was not rewritten
    for language in ("zh_CN", "ru"):
        assert "sum is 10" in _page(site, language)


@pytest.mark.parametrize(("language", "tag"), [("en", "en"), ("zh_CN", "zh-CN"), ("ru", "ru")])
def test_html_lang_is_the_pages_language(site: SimpleNamespace, language: str, tag: str) -> None:
    assert re.search(rf'<html [^>]*lang="{tag}"', _page(site, language))


def test_switcher_links_to_the_same_page_in_each_other_language(site: SimpleNamespace) -> None:
    page = site.html / "zh_CN" / "auto_examples" / "tiny" / "plot_sum.html"
    nav = re.search(r'<nav class="compperf-languages".*?</nav>', page.read_text("utf-8"), re.DOTALL)
    assert nav is not None
    assert "语言" in nav[0]  # its label comes from the UI catalog
    links = dict(re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', nav[0]))
    assert sorted(links.values()) == ["en", "ru"]
    for link in links:
        target = (page.parent / link).resolve()
        assert target.is_file(), link
        assert target.relative_to(site.html.resolve()).parts[1:] == (
            "auto_examples",
            "tiny",
            "plot_sum.html",
        )
    assert 'aria-current="page">中文<' in nav[0]


@pytest.mark.parametrize(
    ("language", "running", "button"),
    [
        ("en", "Total running time of the script:", "Download Python source code: plot_sum.py"),
        ("zh_CN", "脚本总运行时间：", "下载 Python 源代码：plot_sum.py"),
        ("ru", "Общее время работы скрипта:", "Скачать исходный код на Python: plot_sum.py"),
    ],
)
def test_gallery_labels_are_in_the_pages_language(
    site: SimpleNamespace, language: str, running: str, button: str
) -> None:
    text = re.sub(r"<[^>]+>", "", _page(site, language))
    text = re.sub(r"\s+", " ", text)
    assert re.search(re.escape(running) + r" [(（]0 \S+ \d+\.\d+ \S+[)）]", text)
    assert button in text


def test_catalogs_hold_no_timing_output_or_gallery_labels(site: SimpleNamespace) -> None:
    """Extract from the executed example page, as ``nox -s translations`` does."""
    templates = site.docs / "_build" / "gettext"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-D", "plot_gallery=0",
         "-d", str(site.docs / "_build" / "doctrees" / "gettext"), str(site.docs), str(templates)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    page = (templates / "auto_examples" / "tiny" / "plot_sum.pot").read_text("utf-8")
    assert 'msgid "Sum a tensor"' in page  # the prose is there
    for absent in ("Total running time", "seconds", "Download", "Go to the end", "sum is"):
        assert absent not in page, absent


def _search_index(site: SimpleNamespace, language: str) -> dict:
    text = (site.html / language / "searchindex.js").read_text("utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def _found(site: SimpleNamespace, language: str, query: str) -> set[str]:
    """Pages holding every word of ``query``, split and stemmed as the site's search does."""
    index = _search_index(site, language)
    search = {"zh_CN": SearchChinese, "ru": SearchRussian}[language]({})
    pages = None
    for word in search.split(query):
        stem = search.stem(word)
        hits = index["terms"].get(stem, [])
        hits = {hits} if isinstance(hits, int) else set(hits)
        pages = hits if pages is None else pages & hits
    return {index["docnames"][i] for i in pages or ()}


# Sphinx's Chinese search loads jieba's dictionary through a file it never closes.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_chinese_search_splits_words_and_finds_english_terms(site: SimpleNamespace) -> None:
    assert "index" in _found(site, "zh_CN", "时钟")  # a word inside an unspaced sentence
    assert "index" in _found(site, "zh_CN", "synchronize")


def test_russian_search_finds_a_page_from_an_inflected_word(site: SimpleNamespace) -> None:
    assert "index" in _found(site, "ru", "измерения")  # the page says "измерением"


def test_missing_page_catalog_stops_the_build(site: SimpleNamespace) -> None:
    catalog = site.docs / "locales" / "ru" / "LC_MESSAGES" / "index.po"
    saved = catalog.read_bytes()
    catalog.unlink()
    try:
        result = _build(site.docs, "ru")
    finally:
        catalog.write_bytes(saved)
    assert result.returncode != 0
    assert str(catalog) in result.stderr
    assert "nox -s translations" in result.stderr


def test_malformed_catalog_stops_the_build_naming_it(site: SimpleNamespace) -> None:
    catalog = site.docs / "locales" / "zh_CN" / "LC_MESSAGES" / "auto_examples" / "tiny"
    catalog /= "plot_sum.po"
    saved = catalog.read_bytes()
    catalog.write_bytes(saved + b"\nthis line is not gettext\n")
    try:
        result = _build(site.docs, "zh_CN")
    finally:
        catalog.write_bytes(saved)
    assert result.returncode != 0
    assert f"cannot read the catalog {catalog}" in result.stderr
