"""A tiny site built in the site's languages with the real docs/_ext and UI catalogs.

The languages come from ``[tool.compperf]`` (pyproject.toml), as for the site. Checks what
a reader of each language gets: the page's language tag, the switcher, sphinx-gallery's
labels and running time in that language, a search index that finds Chinese words,
English terms and inflected Russian words, and that the other languages reuse the first
one's executed example. Bad catalogs stop the build. A language added to the tiny site's
pyproject.toml alone (with its catalogs) is built like the others.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import compperf_project
import pytest
import tiny_site
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from compperf_docs import message_catalogs
from compperf_project import Language
from sphinx.search import languages as search_languages

from compperf import i18n

DOCS = tiny_site.DOCS
UI_CATALOGS = tiny_site.UI_CATALOGS
PROJECT = tiny_site.project(chapters=("tiny",))
FIRST, *OTHERS = PROJECT.languages

CONF = tiny_site.conf(
    # As the site: sphinxext-opengraph writes each page's og: tags and description.
    extensions=(*tiny_site.GALLERY, "sphinxext.opengraph"),
    extra="import compperf.i18n\n"
    "# compperf's catalogs, and those of a language the test adds (what the example prints).\n"
    'compperf.i18n.LOCALES = DOCS.parent / "compperf-locales"\n'
    "# As the site: the source language's search is English; the others set their own.\n"
    + tiny_site.TRANSLATED
    + 'html_theme = "furo"\n'
    + f"templates_path = [{str(DOCS / '_templates')!r}]\n"
    + 'html_sidebars = {"**": ["sidebar/search.html", "sidebar/languages.html"]}\n'
    + 'ogp_social_cards = {"enable": False}\n',
)

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

# Page translations for the languages searched as Chinese ("zh": a sentence for jieba)
# or Russian ("ru": an inflected word for snowball); other languages' pages stay English.
PAGES = {
    "zh": {
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


PAGE_NAMES = ["index", "auto_examples/tiny/index", "auto_examples/tiny/plot_sum"]


def _write_po(path: Path, language: str, messages: dict[str, str]) -> None:
    tiny_site.write_po(path, language, messages)


def _write_catalogs(
    docs: Path, language: str, pages: dict[str, dict[str, str]], ui: dict[str, str] | None
) -> None:
    """Page catalogs, and the UI catalog: the site's own, or ``ui`` for a new language."""
    folder = docs / "locales" / language / "LC_MESSAGES"
    folder.mkdir(parents=True)
    if ui is None:
        shutil.copy(UI_CATALOGS / language / "LC_MESSAGES" / "sphinx.po", folder / "sphinx.po")
    else:
        _write_po(folder / "sphinx.po", language, ui)
    for page in PAGE_NAMES:
        _write_po(folder / f"{page}.po", language, pages.get(page, {}))


def _write_compperf_catalogs(folder: Path, project: compperf_project.Project) -> None:
    """compperf's catalogs, plus one for each language compperf has none for.

    A new language needs its compperf catalog too (``nox -s translations`` creates it):
    here its messages stand in for themselves, which is enough to show the site builds.
    """
    shutil.copytree(i18n.LOCALES, folder)
    template = message_catalogs.template("compperf", message_catalogs.sources()["compperf"])
    for code in project.codes[1:]:
        po = folder / code / "LC_MESSAGES" / "compperf.po"
        if po.is_file():
            continue
        catalog = Catalog(locale=code)
        for message in template:
            if message.id:
                catalog.add(message.id, message.id, context=message.context)
        po.parent.mkdir(parents=True)
        with po.with_suffix(".mo").open("wb") as file:
            write_mo(file, catalog)


def _project(
    root: Path,
    project: compperf_project.Project = PROJECT,
    pages: dict[str, dict[str, dict[str, str]]] = PAGES,
    ui: dict[str, dict[str, str]] | None = None,
) -> Path:
    """A tiny site; ``pages`` and ``ui`` hold translations by search language, by code."""
    site = tiny_site.make(
        root, examples={"plot_sum.py": EXAMPLE}, project=project, conf=CONF, index=INDEX
    )
    docs = site.docs
    for language in project.languages[1:]:
        ui_messages = (ui or {}).get(language.code)
        _write_catalogs(docs, language.code, pages.get(language.search, {}), ui_messages)
    _write_compperf_catalogs(root / "compperf-locales", project)
    site.stub_wheel()  # downloaded notebooks install compperf from there
    return docs


def _build(docs: Path, language: str) -> subprocess.CompletedProcess[str]:
    return tiny_site.Site(docs.parent).build(language=language, quiet=False)


@pytest.fixture(scope="module")
def site(tiny_sites: tiny_site.Sites) -> SimpleNamespace:
    docs = _project(tiny_sites.folder("languages"))
    generated = docs / "auto_examples" / "tiny" / "plot_sum.rst"
    logs, stamps = {}, []
    for language in PROJECT.codes:
        result = _build(docs, language)
        assert result.returncode == 0, result.stdout + result.stderr
        logs[language] = result.stdout
        stamps.append(generated.stat().st_mtime_ns)
    return SimpleNamespace(docs=docs, html=docs / "_build" / "html", logs=logs, stamps=stamps)


def _page(site: SimpleNamespace, language: str) -> str:
    path = site.html / language / "auto_examples" / "tiny" / "plot_sum.html"
    return path.read_text("utf-8")


def _ui(language: Language, message: str) -> str:
    """``message`` as the site's UI catalog for ``language`` translates it."""
    path = UI_CATALOGS / language.code / "LC_MESSAGES" / "sphinx.po"
    if not path.is_file():
        return message
    with path.open("rb") as file:
        entry = read_po(file).get(message)
    return entry.string if entry is not None and entry.string else message


def _ids(language: Language) -> str:
    return language.code


def test_only_the_first_language_executes_the_example(site: SimpleNamespace) -> None:
    assert "executed 1 out of 1" in site.logs[FIRST.code]
    for language in OTHERS:
        assert "executed 0 out of 0" in site.logs[language.code], site.logs[language.code]
    assert len(set(site.stamps)) == 1  # the generated page (with outputs) was not rewritten
    for language in OTHERS:
        assert "sum is 10" in _page(site, language.code)


@pytest.mark.parametrize("language", PROJECT.languages, ids=_ids)
def test_html_lang_is_the_pages_language(site: SimpleNamespace, language: Language) -> None:
    assert re.search(rf'<html [^>]*lang="{language.tag}"', _page(site, language.code))


@pytest.mark.parametrize("language", OTHERS, ids=_ids)
def test_switcher_links_to_the_same_page_in_each_other_language(
    site: SimpleNamespace, language: Language
) -> None:
    page = site.html / language.code / "auto_examples" / "tiny" / "plot_sum.html"
    nav = re.search(r'<nav class="compperf-languages".*?</nav>', page.read_text("utf-8"), re.DOTALL)
    assert nav is not None
    assert _ui(language, "Language") in nav[0]  # its label comes from the UI catalog
    links = dict(re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', nav[0]))
    assert sorted(links.values()) == sorted(o.tag for o in PROJECT.languages if o != language)
    for link in links:
        target = (page.parent / link).resolve()
        assert target.is_file(), link
        assert target.relative_to(site.html.resolve()).parts[1:] == (
            "auto_examples",
            "tiny",
            "plot_sum.html",
        )
    assert f'aria-current="page">{language.name}<' in nav[0]


@pytest.mark.parametrize("language", PROJECT.languages, ids=_ids)
def test_gallery_labels_are_in_the_pages_language(
    site: SimpleNamespace, language: Language
) -> None:
    running = _ui(language, "Total running time of the script:")
    button = _ui(language, "Download Python source code: {file}").format(file="plot_sum.py")
    if language != FIRST:
        assert running != "Total running time of the script:", "UI catalog not translated"
    text = re.sub(r"<[^>]+>", "", _page(site, language.code))
    text = re.sub(r"\s+", " ", text)
    assert re.search(re.escape(running) + r" [(（]0 \S+ \d+\.\d+ \S+[)）]", text)
    assert button in text


@pytest.mark.parametrize("language", PROJECT.languages, ids=_ids)
def test_view_source_says_which_source_it_shows(site: SimpleNamespace, language: Language) -> None:
    """A translated page is built from the English source, and _sources/ holds that: the
    button says so in the reader's language and marks the link English."""
    (link,) = re.findall(r'<div class="view-this-page">\s*<a ([^>]*)>', _page(site, language.code))
    if language == FIRST:
        assert f'title="{_ui(language, "View this page")}"' in link
        assert "hreflang" not in link
        return
    label = _ui(language, "View the English source of this page")
    assert label != "View the English source of this page", "UI catalog not translated"
    assert f'title="{label}"' in link, link
    assert 'hreflang="en"' in link
    target = re.search(r'href="([^"]+)"', link)[1]
    source = (site.html / language.code / "auto_examples" / "tiny" / target).resolve()
    assert "Sum a tensor" in source.read_text("utf-8")  # indeed the English source


def _described(page: str) -> tuple[str, str]:
    meta = re.findall(r'<meta name="description" content="([^"]*)"', page)
    graph = re.findall(r'<meta property="og:description" content="([^"]*)"', page)
    assert len(meta) == len(graph) == 1, (meta, graph)
    return html.unescape(meta[0]), html.unescape(graph[0])


@pytest.mark.parametrize("language", PROJECT.languages, ids=_ids)
def test_description_is_the_pages_prose_alone(site: SimpleNamespace, language: Language) -> None:
    """The meta and og: descriptions hold the page's first prose in its language: not the
    table of contents, the titles or the gallery's labels joined to it."""
    pages = PAGES.get(language.search, {})
    for name, first in (
        ("index", "Call synchronize before you read the clock."),
        ("auto_examples/tiny/plot_sum", "Prints where it ran, then a sum."),
    ):
        page = (site.html / language.code / f"{name}.html").read_text("utf-8")
        expected = pages.get(name, {}).get(first, first)
        assert _described(page) == (expected, expected), name


def test_catalogs_hold_no_timing_output_or_gallery_labels(site: SimpleNamespace) -> None:
    """Extract from the executed example page, as ``nox -s translations`` does."""
    templates = site.docs / "_build" / "gettext"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-D", "plot_gallery=0",
         "-d", str(site.docs / "_build" / "doctrees" / "gettext"), str(site.docs), str(templates)],
        capture_output=True, text=True, timeout=tiny_site.HANG_GUARD, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    page = (templates / "auto_examples" / "tiny" / "plot_sum.pot").read_text("utf-8")
    assert 'msgid "Sum a tensor"' in page  # the prose is there
    for absent in ("Total running time", "seconds", "Download", "Go to the end", "sum is"):
        assert absent not in page, absent


def _search_index(site: SimpleNamespace, language: str) -> dict:
    text = (site.html / language / "searchindex.js").read_text("utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def _searched_as(search: str) -> Language:
    found = [language for language in OTHERS if language.search == search]
    if not found:
        pytest.skip(f"the site has no language searched as {search!r}")
    return found[0]


def _found(site: SimpleNamespace, language: Language, query: str) -> set[str]:
    """Pages holding every word of ``query``, split and stemmed as the site's search does."""
    index = _search_index(site, language.code)
    search = search_languages[language.search]
    if isinstance(search, str):  # Sphinx names most languages' classes by import path
        module, _, name = search.rpartition(".")
        search = getattr(__import__(module, fromlist=[name]), name)
    search = search({})
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
    chinese = _searched_as("zh")
    assert "index" in _found(site, chinese, "时钟")  # a word inside an unspaced sentence
    assert "index" in _found(site, chinese, "synchronize")


def test_russian_search_finds_a_page_from_an_inflected_word(site: SimpleNamespace) -> None:
    russian = _searched_as("ru")
    assert "index" in _found(site, russian, "измерения")  # the page says "измерением"


def test_missing_page_catalog_stops_the_build(site: SimpleNamespace) -> None:
    language = OTHERS[-1].code
    catalog = site.docs / "locales" / language / "LC_MESSAGES" / "index.po"
    saved = catalog.read_bytes()
    catalog.unlink()
    try:
        result = _build(site.docs, language)
    finally:
        catalog.write_bytes(saved)
    assert result.returncode != 0
    assert str(catalog) in result.stderr
    assert "nox -s translations" in result.stderr


def test_malformed_catalog_stops_the_build_naming_it(site: SimpleNamespace) -> None:
    language = OTHERS[0].code
    catalog = site.docs / "locales" / language / "LC_MESSAGES" / "auto_examples" / "tiny"
    catalog /= "plot_sum.po"
    saved = catalog.read_bytes()
    catalog.write_bytes(saved + b"\nthis line is not gettext\n")
    try:
        result = _build(site.docs, language)
    finally:
        catalog.write_bytes(saved)
    assert result.returncode != 0
    assert f"cannot read the catalog {catalog}" in result.stderr


# A language the site does not have: an entry in the tiny site's pyproject.toml and its
# catalogs are all it gets. German search stems ("Summen" and "Summe" are one word).
GERMAN = Language(code="de", name="Deutsch", tag="de-DE", search="de")
GERMAN_PAGES = {
    "de": {
        "index": {"Tiny": "Winzig"},
        "auto_examples/tiny/plot_sum": {
            "Sum a tensor": "Einen Tensor summieren",
            "Prints where it ran, then a sum.": "Gibt aus, wo es lief, dann die Summen.",
        },
    }
}
GERMAN_UI = {
    "Language": "Sprache",
    "Total running time of the script:": "Gesamtlaufzeit des Skripts:",
    "({minutes} minutes {seconds} seconds)": "({minutes} Minuten {seconds} Sekunden)",
}


def test_a_language_added_only_in_pyproject_is_built_like_the_others(tmp_path: Path) -> None:
    project = PROJECT.replace(languages=(FIRST, GERMAN))
    docs = _project(tmp_path, project, GERMAN_PAGES, {GERMAN.code: GERMAN_UI})
    for language in project.codes:
        result = _build(docs, language)
        assert result.returncode == 0, result.stdout + result.stderr
    html = docs / "_build" / "html"
    german = (html / "de" / "auto_examples" / "tiny" / "plot_sum.html").read_text("utf-8")
    assert re.search(r'<html [^>]*lang="de-DE"', german)
    assert "Einen Tensor summieren" in german
    assert "Gesamtlaufzeit des Skripts:" in german
    assert 'aria-current="page">Deutsch<' in german
    first = (html / FIRST.code / "auto_examples" / "tiny" / "plot_sum.html").read_text("utf-8")
    assert 'hreflang="de-DE" lang="de-DE">Deutsch</a>' in first
    root = (html / "index.html").read_text("utf-8")
    assert '<a href="de/index.html" hreflang="de-DE">Deutsch</a>' in root
    site = SimpleNamespace(html=html)
    assert "auto_examples/tiny/plot_sum" in _found(site, GERMAN, "Summe")


def test_one_process_building_every_language_keeps_them_apart(site: SimpleNamespace) -> None:
    """docs/_ext/build_languages.py (what ``nox -s docs`` runs) gives each its own labels."""
    out = site.docs / "_build" / "one-process"
    tiny = tiny_site.Site(site.docs.parent)
    tiny.stub_wheel(out / "html")
    result = tiny.build_languages(",".join(PROJECT.codes), "-W", "-q", out=out)
    assert result.returncode == 0, result.stdout + result.stderr
    for language in PROJECT.languages:
        page = out / "html" / language.code / "auto_examples" / "tiny" / "plot_sum.html"
        text = page.read_text("utf-8")
        assert _ui(language, "Total running time of the script:") in text
        for other in PROJECT.languages:
            label = _ui(other, "Total running time of the script:")
            if other != language and label != _ui(language, label):
                assert label not in text, f"{other.code} label in the {language.code} page"
