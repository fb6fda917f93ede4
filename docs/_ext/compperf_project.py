"""What the site is made of, read from ``[tool.compperf]`` in pyproject.toml: the one place.

The noxfile, ``docs/conf.py``, the Sphinx extension ``compperf_docs`` and the tests all
read the site's languages, chapters and default URL through this module. It needs only
the standard library, so it imports without Sphinx::

    import compperf_project
    compperf_project.chapters()          # ["asynchronous", "compilers"]
    compperf_project.load().languages    # (Language(code="en", ...), ...)
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "PYPROJECT",
    "SITE_URL_VARIABLE",
    "Language",
    "Project",
    "ProjectError",
    "chapters",
    "languages",
    "load",
    "site_url",
]

# The repository's own pyproject.toml (this file is docs/_ext/compperf_project.py).
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
# Overrides ``site-url`` for one build; ``-D compperf_site_url=...`` overrides both.
SITE_URL_VARIABLE = "COMPPERF_SITE_URL"
_LANGUAGE_KEYS = ("code", "name", "tag", "search")
# Optional keys, with their defaults: the font figures are drawn with (beside DejaVu Sans,
# matplotlib's own), the PyPI package that ships it and the Debian package that installs it.
_FONT_KEYS = {"font": "DejaVu Sans", "font-wheel": "", "font-package": ""}


class ProjectError(ValueError):
    """``[tool.compperf]`` is missing or malformed; the message names the key."""


@dataclasses.dataclass(frozen=True)
class Language:
    """One language of the site.

    Attributes
    ----------
    code : str
        Sphinx's ``language`` and the folder name under ``docs/_build/html/`` and
        ``docs/locales/``, e.g. ``"zh_CN"``.
    name : str
        The language's name written in that language, for the switcher.
    tag : str
        BCP 47 tag for ``<html lang>`` and ``hreflang``, e.g. ``"zh-CN"``.
    search : str
        Sphinx's search language (``html_search_language``): how the search index
        splits and stems words, e.g. ``"zh"`` (jieba) or ``"ru"`` (snowball).
    font : str
        The font family that draws this language's script in figures, after DejaVu
        Sans (matplotlib's own, which has Latin and Cyrillic), e.g. ``"Noto Sans CJK SC"``.
    font_wheel : str
        The PyPI package that ships ``font`` (``font-wheel``), e.g. ``"noto-cjk-sans-otc"``;
        the docs, tests and site sessions install it. Empty when matplotlib ships the font.
    font_package : str
        The Debian package that installs ``font`` (``font-package``), e.g.
        ``"fonts-noto-cjk"``; empty when matplotlib ships it.
    """

    code: str
    name: str
    tag: str
    search: str
    font: str = _FONT_KEYS["font"]
    font_wheel: str = _FONT_KEYS["font-wheel"]
    font_package: str = _FONT_KEYS["font-package"]


@dataclasses.dataclass(frozen=True)
class Project:
    """The ``[tool.compperf]`` table: default site URL, chapters and languages, in order."""

    site_url: str
    chapters: tuple[str, ...]
    languages: tuple[Language, ...]

    @property
    def codes(self) -> list[str]:
        """Language codes in build order; the first builds first and executes the examples."""
        return [language.code for language in self.languages]

    def replace(self, **changes: object) -> Project:
        """A copy with some fields changed, e.g. ``languages=(*p.languages, extra)``."""
        return dataclasses.replace(self, **changes)

    def to_toml(self) -> str:
        """This project as a ``[tool.compperf]`` table, e.g. for a tiny test site."""
        lines = [
            "[tool.compperf]",
            f"site-url = {json.dumps(self.site_url)}",
            f"chapters = {json.dumps(list(self.chapters), ensure_ascii=False)}",
        ]
        for language in self.languages:
            lines += ["", "[[tool.compperf.languages]]"]
            lines += [
                f"{key} = {json.dumps(getattr(language, key.replace('-', '_')), ensure_ascii=False)}"
                for key in (*_LANGUAGE_KEYS, *_FONT_KEYS)
            ]
        return "\n".join(lines) + "\n"

    def language(self, code: str) -> Language:
        """The language whose code is ``code``.

        Raises
        ------
        ProjectError
            If the site has no such language; the message lists the ones it has.
        """
        for language in self.languages:
            if language.code == code:
                return language
        raise ProjectError(
            f"language {code!r} is not in [tool.compperf.languages] "
            f"(the site has: {', '.join(self.codes)})"
        )


def _require(table: dict, key: str, kind: type, where: str) -> object:
    if key not in table:
        raise ProjectError(f"{where}: {key!r} is missing")
    value = table[key]
    if not isinstance(value, kind) or (isinstance(value, str | list) and not value):
        raise ProjectError(f"{where}: {key!r} must be a non-empty {kind.__name__}, got {value!r}")
    return value


def _check_url(url: str, origin: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ProjectError(
            f"{origin}={url!r} is not an absolute http(s) URL; "
            "expected something like 'https://compperf.github.io/compperf/'"
        )
    return url if url.endswith("/") else url + "/"


@lru_cache(maxsize=8)
def _load(path: Path) -> Project:
    try:
        with path.open("rb") as file:
            table = tomllib.load(file).get("tool", {}).get("compperf")
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ProjectError(f"cannot read {path}: {error}") from error
    where = f"[tool.compperf] in {path}"
    if not isinstance(table, dict):
        raise ProjectError(f"{path} has no [tool.compperf] table")
    url = _check_url(str(_require(table, "site-url", str, where)), f"{where}: site-url")
    found_chapters = _require(table, "chapters", list, where)
    if not all(isinstance(chapter, str) and chapter for chapter in found_chapters):
        raise ProjectError(f"{where}: 'chapters' must list folder names, got {found_chapters}")
    entries = _require(table, "languages", list, where)
    found_languages = []
    for i, entry in enumerate(entries):
        here = f"{where}: languages[{i}]"
        if not isinstance(entry, dict):
            raise ProjectError(f"{here} must be a table with keys {', '.join(_LANGUAGE_KEYS)}")
        allowed = (*_LANGUAGE_KEYS, *_FONT_KEYS)
        unknown = sorted(set(entry) - set(allowed))
        if unknown:
            raise ProjectError(f"{here}: unknown key(s) {unknown}; allowed: {allowed}")
        fields = {key: str(_require(entry, key, str, here)) for key in _LANGUAGE_KEYS}
        for key, default in _FONT_KEYS.items():
            value = entry.get(key, default)
            if not isinstance(value, str):
                raise ProjectError(f"{here}: {key!r} must be a string, got {value!r}")
            fields[key.replace("-", "_")] = value
        found_languages.append(Language(**fields))
    codes = [language.code for language in found_languages]
    for kind, names in (("language code", codes), ("chapter", found_chapters)):
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ProjectError(f"{where}: {kind} {repeated} listed twice")
    return Project(
        site_url=url,
        chapters=tuple(map(str, found_chapters)),
        languages=tuple(found_languages),
    )


def load(pyproject: str | os.PathLike[str] | None = None) -> Project:
    """Read ``[tool.compperf]`` from ``pyproject`` (default: the repository's).

    Raises
    ------
    ProjectError
        If the file cannot be read, or the table or one of its keys is missing or malformed.
    """
    return _load(Path(pyproject or PYPROJECT).resolve())


def chapters(pyproject: str | os.PathLike[str] | None = None) -> list[str]:
    """Chapter folder names under ``examples/``, in reading order."""
    return list(load(pyproject).chapters)


def languages(pyproject: str | os.PathLike[str] | None = None) -> list[Language]:
    """The site's languages in build order."""
    return list(load(pyproject).languages)


def site_url(pyproject: str | os.PathLike[str] | None = None) -> str:
    """The deployable root's URL, ending in ``/``: ``$COMPPERF_SITE_URL`` or ``site-url``."""
    url = os.environ.get(SITE_URL_VARIABLE, "").strip()
    if url:
        return _check_url(url, SITE_URL_VARIABLE)
    return load(pyproject).site_url
