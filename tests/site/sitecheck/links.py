"""Every internal link and anchor of a built site, resolved against the files on disk."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup

__all__ = ["broken_links", "link_targets"]

# (tag, attribute) pairs that make the browser fetch or navigate somewhere.
_URL_ATTRIBUTES = (
    ("a", "href"),
    ("area", "href"),
    ("link", "href"),
    ("script", "src"),
    ("img", "src"),
    ("source", "src"),
    ("iframe", "src"),
    ("use", "href"),
    ("use", "xlink:href"),
)
_SRCSET_TAGS = ("img", "source")
_REFRESH_URL = re.compile(r"url\s*=\s*['\"]?([^'\"]+)", re.IGNORECASE)


def link_targets(html: str) -> Iterator[tuple[str, str]]:
    """Yield ``(what, url)`` for every URL a page links to or loads (``what`` says where)."""
    soup = BeautifulSoup(html, "html.parser")
    for tag, attribute in _URL_ATTRIBUTES:
        for element in soup.find_all(tag, attrs={attribute: True}):
            yield f"<{tag} {attribute}>", element[attribute]
    for tag in _SRCSET_TAGS:
        for element in soup.find_all(tag, srcset=True):
            for candidate in element["srcset"].split(","):
                if candidate.strip():
                    yield f"<{tag} srcset>", candidate.split()[0]
    for element in soup.find_all(
        "meta", attrs={"http-equiv": re.compile("^refresh$", re.IGNORECASE)}
    ):
        match = _REFRESH_URL.search(element.get("content", ""))
        if match:
            yield "<meta refresh>", match.group(1)
    for element in soup.find_all("meta", property=re.compile(r"^og:(url|image)$")):
        yield f"<meta {element['property']}>", element.get("content", "")


@functools.cache
def _anchors(path: Path) -> frozenset[str]:
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    ids = {element["id"] for element in soup.find_all(id=True)}
    ids |= {element["name"] for element in soup.find_all("a", attrs={"name": True})}
    return frozenset(ids)


def _problem(root: Path, page: Path, url: str, site_url: str) -> str | None:
    """Why ``url`` on ``page`` does not resolve inside the site, or None if it does."""
    page_url = site_url + page.relative_to(root).as_posix()
    resolved = urljoin(page_url, url.strip())
    parts, site = urlsplit(resolved), urlsplit(site_url)
    if (parts.scheme, parts.netloc) != (site.scheme, site.netloc):
        return None  # another host or a mailto:/data: URL: external, not checked offline
    if not parts.path.startswith(site.path):
        return f"leaves the site root {site.path!r}"
    relative = unquote(parts.path[len(site.path) :])
    target = root / relative
    if relative == "" or relative.endswith("/") or target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return f"no file {target.relative_to(root).as_posix()}"
    fragment = unquote(parts.fragment)
    checkable = fragment and not fragment.startswith(":~:") and target.suffix == ".html"
    if checkable and fragment not in _anchors(target):
        return f"no id {fragment!r} in {target.relative_to(root).as_posix()}"
    return None


def broken_links(root: Path, site_url: str, folders: list[str] | None = None) -> list[str]:
    """Every link in the site's HTML pages that does not resolve, one line each.

    Parameters
    ----------
    root : Path
        The deployable root (``docs/_build/html``).
    site_url : str
        The URL the site was built for, ending in ``/``; absolute links under it are
        internal and checked, links to other hosts are external and skipped.
    folders : list of str, optional
        Check only pages in these subfolders of ``root`` (and the root's own pages);
        all pages by default.
    """
    _anchors.cache_clear()
    if folders is None:
        files = sorted(root.rglob("*.html"))
    else:
        files = sorted(root.glob("*.html"))
        for folder in folders:
            files += sorted((root / folder).rglob("*.html"))
    problems = []
    for page in files:
        for what, url in link_targets(page.read_text(encoding="utf-8")):
            reason = _problem(root, page, url, site_url)
            if reason is not None:
                problems.append(f"{page.relative_to(root).as_posix()}: {what} {url!r}: {reason}")
    return problems
