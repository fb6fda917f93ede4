"""Where things are in a built site: its languages, pages, example pages and public URL."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

__all__ = ["built_site_url", "example_pages", "languages", "pages"]

# Sphinx writes these into every HTML build; a folder with both is a language build.
_LANGUAGE_MARKERS = ("index.html", "searchindex.js")


def languages(root: Path, order: list[str] | None = None) -> list[str]:
    """Language folders under the deployable root, in ``order`` (the project's), then others."""
    order = order or []
    found = [
        folder.name
        for folder in root.iterdir()
        if folder.is_dir() and all((folder / name).is_file() for name in _LANGUAGE_MARKERS)
    ]
    return sorted(
        found, key=lambda code: (order.index(code) if code in order else len(order), code)
    )


def pages(root: Path, language: str) -> list[str]:
    """Every HTML page of one language, as paths relative to its folder (``a/b.html``)."""
    folder = root / language
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*.html")
        # _static, _sources, _downloads, _images hold assets, not pages.
        if not any(part.startswith("_") for part in path.relative_to(folder).parts[:-1])
    )


def example_pages(root: Path, language: str) -> list[str]:
    """The executed example pages of one language (sphinx-gallery's ``plot_*`` pages)."""
    return [page for page in pages(root, language) if Path(page).name.startswith("plot_")]


def built_site_url(root: Path, language: str) -> str:
    """The public URL the site was built for, read from a page's canonical link.

    Raises
    ------
    ValueError
        If the language's index page has no canonical link under ``<url><language>/``.
    """
    index = root / language / "index.html"
    soup = BeautifulSoup(index.read_text(encoding="utf-8"), "html.parser")
    link = soup.find("link", rel="canonical")
    href = link.get("href", "") if link else ""
    suffix = f"{language}/index.html"
    if not href.endswith(suffix):
        raise ValueError(f"{index}: canonical link {href!r} does not end in {suffix!r}")
    return href[: -len(suffix)]
