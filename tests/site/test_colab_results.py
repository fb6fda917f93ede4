"""Learners (issue 26) on the built site, in every built language.

Every example page opens its notebook in Colab, in the page's language, at the path the
deployment workflow publishes (``colab.py publish``); its downloads carry the published
key figures; every chapter has a Results page with a column per machine.
"""

from __future__ import annotations

import importlib.util
import json
import re
import zipfile
from pathlib import Path

import compperf_project
from bs4 import BeautifulSoup

REPO = Path(__file__).resolve().parents[2]
# colab.py needs only the standard library (the workflow runs it so); the site session
# has no Sphinx, which the compperf_docs package imports.
_SPEC = importlib.util.spec_from_file_location(
    "compperf_colab", REPO / "docs" / "_ext" / "compperf_docs" / "publish" / "colab.py"
)
colab = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(colab)
DOCS = REPO / "docs"
PROJECT = compperf_project.load()


def _example_pages(site_root: Path, language: str) -> list[tuple[str, Path]]:
    pages = []
    for chapter in PROJECT.chapters:
        for source in sorted((REPO / "examples" / chapter).glob("plot_*.py")):
            pages.append(
                (chapter, site_root / language / "auto_examples" / chapter / f"{source.stem}.html")
            )
    return pages


def test_every_example_page_opens_its_published_notebook_in_colab(
    site_root: Path, language: str
) -> None:
    prefix = colab.COLAB
    for chapter, page in _example_pages(site_root, language):
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        links = soup.select("p.compperf-colab a[href]")
        assert len(links) == 1, f"{page}: {len(links)} Open in Colab links"
        url = links[0]["href"]
        assert url.startswith(prefix), url
        repository, _, path = url.removeprefix(prefix).partition("/blob/")
        branch, _, published = path.partition("/")
        assert repository.count("/") == 1, url
        assert branch == colab.settings().branch, url
        revision = published.split("/", 1)[0]
        assert published == colab.notebook_path(revision, language, chapter, page.stem), url
        copy = colab.built_notebook(DOCS, language, chapter, page.stem)
        assert copy.is_file(), f"{url}: the build left no {copy} to publish"
        cells = json.loads(copy.read_text("utf-8"))["cells"]
        assert cells[1]["metadata"].get("compperf") == "colab", copy
        assert not links[0].find("img"), "the button is a plain link: it loads nothing"
        if language != "en":
            assert links[0].get_text(strip=True) != "Open in Colab", page


def test_downloads_carry_the_published_figures(site_root: Path, language: str) -> None:
    for _chapter, page in _example_pages(site_root, language):
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        hrefs = [a["href"] for a in soup.select("a.download[href]")]
        for suffix in (".py", ".ipynb"):
            (href,) = [h for h in hrefs if h.endswith(f"{page.stem}{suffix}")]
            text = (page.parent / href).resolve().read_text("utf-8")
            assert text.count("compperf.compare_published(") == 1, (page, suffix)
        (href,) = [h for h in hrefs if h.endswith(f"{page.stem}.zip")]
        with zipfile.ZipFile((page.parent / href).resolve()) as archive:
            assert "compperf.compare_published(" in archive.read(f"{page.stem}.py").decode()


def test_every_chapter_has_a_results_page_with_a_column_per_machine(
    site_root: Path, language: str
) -> None:
    records = sorted((REPO / "results").glob("*.json"))
    for chapter in PROJECT.chapters:
        page = site_root / language / "results" / f"{chapter}.html"
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        tables = soup.select("table.compperf-results")
        names = [json.loads(path.read_text("utf-8"))["name"] for path in records]
        has_chapter = any(
            name.startswith(f"{chapter}/")
            for path in records
            for name in json.loads(path.read_text("utf-8"))["examples"]
        )
        if not has_chapter:
            continue
        assert tables, page
        header = [
            re.sub(r"\s+", " ", th.get_text(" ", strip=True)) for th in tables[1].select("th")
        ]
        for name in names:
            # The thread count is written in the reader's language ("2 потока"): the
            # machine's own name comes first in its column's title.
            machine = name.split(",")[0]
            assert any(title.startswith(machine) for title in header), (page, header)
