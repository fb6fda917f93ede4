"""The tiny site that tests/docs and tests/i18n build: one way to write it and build it.

A tiny site is a folder with the layout of the real one: ``pyproject.toml`` (its own
``[tool.compperf]``), ``docs/`` (a ``conf.py`` that loads the real ``docs/_ext``, an index
page, page catalogs in ``docs/locales``) and ``examples/<chapter>/`` (sphinx-gallery
scripts). A test file says only what its site has that the others' do not: the examples,
extra ``conf.py`` lines, catalogs. Use the ``tiny_sites`` fixture (``tests/conftest.py``):
``tiny_sites.make("name", examples={...})`` returns a :class:`Site`, whose
:meth:`Site.build` runs ``sphinx-build`` in a fresh process.

Every tiny build of a test session shares one cache folder (matplotlib's font cache,
jieba's dictionary cache, IPython, the inductor compiler's cache), so that each build
does not make them again; the sites themselves never share a file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import compperf_docs
import compperf_project
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import write_po as babel_write_po
from compperf_docs.publish import site as site_module

DOCS_EXT = Path(compperf_docs.__file__).resolve().parents[1]
# The real site's docs folder: its UI catalogs (sphinx.po) and templates.
DOCS = DOCS_EXT.parent
UI_CATALOGS = DOCS / "locales"

HEADER = "Tiny chapter\n============\n\nOne example.\n"
INDEX = "Tiny\n====\n\n.. toctree::\n\n   auto_examples/tiny/index\n"
GALLERY = ("sphinx_gallery.gen_gallery", "compperf_docs")
# What the translated tiny sites add to conf.py: page catalogs in docs/locales.
TRANSLATED = 'locale_dirs = ["locales/"]\ngettext_compact = False\n'
# Sphinx 9's Chinese search loads jieba's whole default dictionary again as a user
# dictionary (seconds per zh_CN build); a tiny site that does not check its search index
# leaves it out (html_search_options "dict"), jieba still splits words with its own.
NO_SEARCH_DICTIONARY = 'html_search_options = {"dict": ""}\n'

CACHE_VARIABLES = ("MPLCONFIGDIR", "IPYTHONDIR", "XDG_CACHE_HOME", "TMPDIR", "JUPYTER_RUNTIME_DIR")
# Seconds before a build is taken for hung: a guard, not a speed target (speed targets live
# in benchmarks/). A tiny build needs some 10 s of CPU, but on a shared machine at a load of
# 19 on 2 cores one took over 300 s of wall time and was killed as if it had hung.
HANG_GUARD = 1200


def project(**changes: object) -> compperf_project.Project:
    """The real ``[tool.compperf]`` with ``changes`` (``chapters=("tiny",)``, ...)."""
    return compperf_project.load().replace(**changes)


def conf(
    extra: str = "",
    *,
    extensions: tuple[str, ...] = GALLERY,
    exclude: tuple[str, ...] = ("_build", "auto_examples/**.ipynb"),
    gallery: str = "",
    chapters: str = 'compperf_project.chapters(DOCS.parent / "pyproject.toml")',
) -> str:
    """A tiny site's ``conf.py``: the site's extension from the real docs/_ext, one gallery
    per chapter of the tiny site's ``pyproject.toml``, then ``extra`` lines.

    ``gallery`` holds more keyword arguments of ``gallery.gallery_conf`` (``pages_url=...``);
    ``chapters`` is the expression of the gallery's chapters (``"[]"``: no gallery).
    """
    return (
        "import sys\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(DOCS_EXT)!r})\n"
        "import compperf_project\n"
        "from compperf_docs.execute import gallery\n"
        "\n"
        "DOCS = Path(__file__).resolve().parent\n"
        'project = "tiny"\n'
        f"extensions = {list(extensions)!r}\n"
        f"exclude_patterns = {list(exclude)!r}\n"
        f"chapters = {chapters}\n"
        "sphinx_gallery_conf = gallery.gallery_conf(\n"
        f'    DOCS, DOCS.parent / "examples", chapters{", " + gallery if gallery else ""}\n'
        ")\n"
        f"{textwrap.dedent(extra)}"
    )


_default_conf = conf


def write_po(
    path: Path,
    language: str,
    messages: Mapping[object, str],
    *,
    context: str | None = None,
    mo: bool = False,
) -> None:
    """A catalog of ``messages`` (msgid, or ``(context, msgid)``, to msgstr) at ``path``."""
    catalog = Catalog(locale=language)
    for key, msgstr in messages.items():
        key_context, msgid = key if isinstance(key, tuple) else (context, key)
        catalog.add(msgid, msgstr, context=key_context)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        (write_mo if mo else babel_write_po)(file, catalog)


# The cache folder of the session's tiny builds (set by the tiny_sites fixture).
SHARED_CACHE: Path | None = None


@dataclass
class Site:
    """A tiny site on disk; its builds use the session's shared cache folder."""

    root: Path

    @property
    def cache(self) -> Path:
        return SHARED_CACHE or self.root / "cache"

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def examples(self) -> Path:
        return self.root / "examples"

    @property
    def html(self) -> Path:
        return self.docs / "_build" / "html"

    def stub_wheel(self, html: Path | None = None) -> None:
        """The compperf wheel that ``nox -s docs`` builds, as an empty file: downloaded
        notebooks install compperf from there, and the build checks the file exists."""
        wheels = (html or self.html) / site_module.WHEEL_FOLDER
        wheels.mkdir(parents=True, exist_ok=True)
        (wheels / site_module.wheel_filename()).write_bytes(b"")

    def env(self, site_url: str | None = None, **extra: str) -> dict[str, str]:
        """The build's environment: the shared caches; ``COMPPERF_SITE_URL`` only if given."""
        env = {k: v for k, v in os.environ.items() if k != site_module.SITE_URL_VARIABLE}
        for name in CACHE_VARIABLES:
            env[name] = str(self.cache / name.lower())
            Path(env[name]).mkdir(parents=True, exist_ok=True)
        if site_url is not None:
            env[site_module.SITE_URL_VARIABLE] = site_url
        return {**env, **extra}

    def build(
        self,
        *options: str,
        language: str | None = None,
        strict: bool = True,
        nitpicky: bool = True,
        quiet: bool = True,
        builder: str = "html",
        out: Path | None = None,
        env: Mapping[str, str] | None = None,
        docs: Path | None = None,
        timeout: float = HANG_GUARD,
    ) -> subprocess.CompletedProcess[str]:
        """``sphinx-build`` of this site in a fresh process (warnings are errors unless not
        ``strict``); ``language`` builds into ``html/<language>`` with its own doctrees."""
        docs = docs or self.docs
        command = [sys.executable, "-m", "sphinx", "-b", builder]
        command += ["-W", "--keep-going"] if strict else []
        command += ["-n"] if nitpicky else []
        command += ["-q"] if quiet else []
        if language is not None:
            command += ["-D", f"language={language}"]
            command += ["-d", str(docs / "_build" / "doctrees" / language)]
        target = out or (docs / "_build" / "html" / (language or ""))
        return subprocess.run(
            [*command, *options, str(docs), str(target)],
            capture_output=True,
            text=True,
            env=self.env() if env is None else dict(env),
            timeout=timeout,
            check=False,
        )

    def build_languages(
        self, languages: str, *options: str, out: Path | None = None, timeout: float = HANG_GUARD
    ) -> subprocess.CompletedProcess[str]:
        """What ``nox -s docs`` runs: ``docs/_ext/build_languages.py``, every language in
        one process, into ``out/html`` (``docs/_build`` by default)."""
        out = out or self.docs / "_build"
        return subprocess.run(
            [sys.executable, str(DOCS_EXT / "build_languages.py"), str(self.docs),
             str(out / "html"), str(out / "doctrees"), languages, *options],
            capture_output=True, text=True, env=self.env(), timeout=timeout, check=False,
        )  # fmt: skip


def make(
    root: Path,
    *,
    examples: Mapping[str, str] | Mapping[str, Mapping[str, str]] = {},
    project: compperf_project.Project | None = None,
    conf: str | None = None,
    index: str = INDEX,
    pages: Mapping[str, str] = {},
    headers: Mapping[str, str] | None = None,
    wheel: bool = False,
) -> Site:
    """Write a tiny site into the folder ``root``.

    ``examples`` maps file names to sources for the one chapter ``tiny``, or chapters to
    such maps; each source is dedented. ``pages`` are more files under ``docs/`` by
    relative path; ``headers`` each chapter's ``GALLERY_HEADER.rst``. ``project``
    defaults to the real languages with the chapters of ``examples``.
    """
    by_chapter = (
        {"tiny": examples}
        if examples and all(isinstance(v, str) for v in examples.values())
        else examples
    )
    if project is None:
        project = compperf_project.load().replace(chapters=tuple(by_chapter))
    site = Site(root)
    site.docs.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(project.to_toml(), encoding="utf-8")
    text = conf if conf is not None else _default_conf()
    (site.docs / "conf.py").write_text(text, encoding="utf-8")
    (site.docs / "index.rst").write_text(index, encoding="utf-8")
    for name, text in pages.items():
        (site.docs / name).parent.mkdir(parents=True, exist_ok=True)
        (site.docs / name).write_text(text, encoding="utf-8")
    for chapter, scripts in by_chapter.items():
        folder = site.examples / chapter
        folder.mkdir(parents=True, exist_ok=True)
        header = (headers or {}).get(chapter, HEADER)
        (folder / "GALLERY_HEADER.rst").write_text(header, encoding="utf-8")
        for name, text in scripts.items():
            (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    if wheel:
        site.stub_wheel()
    return site


class Sites:
    """The ``tiny_sites`` fixture: :func:`make` into a new temporary folder named ``name``."""

    def __init__(self, folders: object, cache: Path) -> None:
        global SHARED_CACHE
        self._folders = folders  # a pytest.TempPathFactory
        self.cache = SHARED_CACHE = cache

    def folder(self, name: str) -> Path:
        """A new, empty temporary folder (for a site that :func:`make` writes later)."""
        return self._folders.mktemp(name)

    def make(self, name: str, **options: object) -> Site:
        return make(self.folder(name), **options)
