"""Downloads in the page's language: each example's ``.py``, ``.ipynb`` and zips, and the links to them.

In a build of another language than English (which executes nothing), this writes for
every example of a chapter, from the published English ``.py`` (hidden lines already
removed by :mod:`compperf_docs.publish.downloads`)::

    auto_examples/_<lang>/<chapter>/<stem>.py      prose and comments translated
                                                   (compperf_docs.languages.download_text)
    auto_examples/_<lang>/<chapter>/<stem>.ipynb   made from that .py as sphinx-gallery
                                                   makes the English one
    auto_examples/_<lang>/<chapter>/<stem>.zip     both
    auto_examples/_<lang>/<chapter>/<chapter>_python.zip, <chapter>_jupyter.zip

The folder sits outside the chapter's gallery folder: sphinx-gallery puts the files of
a gallery folder's subfolders into its "download all" zips. The files are written again
only when something they are made from changed (a stamp per example records the
digest of the English copy, both catalogs, the notebook's first cell and the pandoc
conversion), so a rebuild with nothing changed converts nothing. The
:class:`LanguageDownloads` transform then points the page's download links there and
shows the translated comments in the page's code blocks.

A paragraph, title, list item or comment without a translation is a warning (an error
under ``-W``) that names the example and the text; that example's files are written
with the English text in its place and made again at the next build.
"""

from __future__ import annotations

import hashlib
import json
import os
import tokenize
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from babel.messages.pofile import read_po
from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx_gallery.downloads import python_zip
from sphinx_gallery.utils import zip_files

from compperf_docs import order
from compperf_docs.execute import gallery
from compperf_docs.languages import download_text, language_notebooks, rst_text
from compperf_docs.publish import notebook_markdown, site

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["LanguageDownloads", "comment_catalog", "language_folder", "write_language_downloads"]

logger = logging.getLogger(__name__)

SOURCE_LANGUAGE = "en"
COMMENT_CONTEXT = "comment"
_STAMP = ".language_downloads.json"
# The code that makes the files is part of what they are made from.
_CODE = [
    Path(__file__),
    Path(download_text.__file__),
    Path(rst_text.__file__),
    Path(language_notebooks.__file__),
    language_notebooks.LANGUAGE_FILTER,
]


def language_folder(gallery_dir: Path, language: str) -> Path:
    """``auto_examples/_<language>/<chapter>`` for the gallery folder ``auto_examples/<chapter>``."""
    return gallery_dir.parent / f"_{language}" / gallery_dir.name


def comment_catalog(root: Path, language: str, example: Path) -> Path:
    """The compperf catalog of an example's comments: ``<root>/<lang>/LC_MESSAGES/examples/<chapter>/<stem>.po``."""
    return root / language / "LC_MESSAGES" / "examples" / example.parent.name / f"{example.stem}.po"


def _comment_root(app: Sphinx) -> Path:
    if app.config.compperf_comment_catalogs:
        return Path(app.srcdir, app.config.compperf_comment_catalogs)
    from compperf import i18n

    return i18n.LOCALES


@cache
def _catalog(path: Path, mtime_ns: int) -> dict[tuple[str, str | None], str]:
    """Translated, not fuzzy messages of a ``.po``: (msgid, context) -> msgstr."""
    with path.open("rb") as handle:
        catalog = read_po(handle)
    return {
        (message.id, message.context): message.string
        for message in catalog
        if message.id and isinstance(message.string, str) and message.string and not message.fuzzy
    }


def _lookup(path: Path, context: str | None) -> Callable[[str], str | None]:
    table = _catalog(path, path.stat().st_mtime_ns) if path.is_file() else {}
    return lambda msgid: table.get((msgid, context))


def _read(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b""


@dataclass(frozen=True)
class _Example:
    source: Path  # examples/<chapter>/<stem>.py
    english: Path  # the published English copy in the gallery folder
    folder: Path  # where this language's files go
    page_catalog: Path
    comment_catalog: Path

    def digest(self, language: str, recipe: str) -> str:
        parts = [language.encode(), recipe.encode(), self.english.read_bytes(),
                 _read(self.page_catalog), _read(self.comment_catalog)]  # fmt: skip
        return hashlib.sha256(b"\0".join(parts)).hexdigest()

    def outputs(self) -> list[Path]:
        stem = self.english.stem
        return [self.folder / f"{stem}{suffix}" for suffix in (".py", ".ipynb", ".zip")]


def _write(path: Path, text: str) -> bool:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def _examples(app: Sphinx, language: str) -> list[_Example]:
    conf = app.config.sphinx_gallery_conf
    srcdir = Path(app.srcdir)
    pages = Path(app.srcdir, app.config.locale_dirs[0], language, "LC_MESSAGES")
    comments = _comment_root(app)
    found = []
    for examples, gallery_dir in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        folder = Path(gallery_dir)
        for source in sorted(Path(examples).glob("*.py")):
            english = folder / source.name
            if not english.is_file():
                continue  # compperf_docs.publish.downloads already warns
            docname = english.with_suffix("").resolve().relative_to(srcdir.resolve())
            found.append(
                _Example(
                    source=source,
                    english=english,
                    folder=language_folder(folder, language),
                    page_catalog=pages / f"{docname.as_posix()}.po",
                    comment_catalog=comment_catalog(comments, language, source),
                )
            )
    return found


def _name(path: Path, app: Sphinx) -> str:
    try:
        return path.resolve().relative_to(Path(app.srcdir).resolve().parent).as_posix()
    except ValueError:
        return str(path)


def _translate(app: Sphinx, example: _Example, language: str) -> tuple[str, list[str]]:
    """The script in ``language``, and a description of each message it lacks."""
    script, missing = download_text.translate_script(
        example.english.read_text(encoding="utf-8"),
        language,
        _lookup(example.page_catalog, None),
        _lookup(example.comment_catalog, COMMENT_CONTEXT),
        example.english,
    )
    where = {"prose": example.page_catalog, "comment": example.comment_catalog}
    return script, [
        f"{kind} {text!r}" + (f" (catalog {_name(where[kind], app)})" if kind in where else "")
        for kind, text in missing
    ]


def _language_conf(app: Sphinx, language: str) -> dict:
    """sphinx-gallery's settings, with the first notebook cell in ``language``."""
    conf = app.config.sphinx_gallery_conf
    if conf.get("first_notebook_cell") is None:
        return conf
    wheel = site.wheel_url(app.config.compperf_site_url)
    return {
        **conf,
        "first_notebook_cell": gallery.first_notebook_cell(wheel, _(gallery.INSTALL_NOTE)),
    }


def _language_links(app: Sphinx, language: str) -> dict[str, list[str]]:
    """Where a role in a notebook leads: the page in ``language``, by its translated title."""
    titles: dict[str, str] = {}
    folder = Path(app.srcdir, "locales", language, "LC_MESSAGES")
    for path in sorted(folder.rglob("*.po")):
        with path.open("rb") as handle:
            titles.update({m.id: m.string for m in read_po(handle) if m.id and m.string})
    pages_url = f"{site.project(app).site_url}{language}/"
    return {
        key: [url, titles.get(title, title)]
        for key, (url, title) in notebook_markdown.link_targets(Path(app.srcdir), pages_url).items()
    }


def write_language_downloads(app: Sphinx) -> None:
    """Write the downloads of the build's language, where they are missing or stale."""
    language = app.config.language
    if language == SOURCE_LANGUAGE or app.builder.format != "html":
        return
    conf = _language_conf(app, language)
    options = language_notebooks.pandoc_options(conf, _language_links(app, language))
    recipe = "\n".join(
        [
            json.dumps(options, sort_keys=True),
            str(conf.get("first_notebook_cell")),
            str(conf.get("remove_config_comments")),
            gallery._conversion_recipe(conf),
            *(hashlib.sha256(path.read_bytes()).hexdigest() for path in _CODE),
        ]
    )
    examples = _examples(app, language)
    stamps: dict[Path, dict[str, str]] = {}
    stale: list[tuple[_Example, str]] = []
    for example in examples:
        stamp = stamps.setdefault(example.folder, _read_stamp(example.folder))
        digest = example.digest(language, recipe)
        if stamp.get(example.english.name) != digest or not all(
            path.is_file() for path in example.outputs()
        ):
            stale.append((example, digest))
    unzipped = {
        example.folder
        for example in examples
        for kind in ("python", "jupyter")
        if not (example.folder / f"{example.folder.name}_{kind}.zip").is_file()
    }
    if not stale and not unzipped:
        return
    scripts = []
    for example, digest in stale:
        script, missing = _translate(app, example, language)
        for problem in missing:
            logger.warning(
                "%s: the %s download lacks a translation: %s",
                _name(example.source, app),
                language,
                problem,
                type="compperf",
                subtype="download",
            )
        example.folder.mkdir(parents=True, exist_ok=True)
        py = example.folder / example.english.name
        _write(py, script)
        scripts.append((example, py, None if missing else digest))
    # One pandoc run per notebook: convert them side by side.
    workers = max(1, min(len(scripts), os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        notebooks = list(
            pool.map(lambda item: language_notebooks.notebook(item[1], conf, options), scripts)
        )
    chapters = set(unzipped)
    for (example, py, digest), notebook in zip(scripts, notebooks, strict=True):
        ipynb = py.with_suffix(".ipynb")
        _write(ipynb, notebook)
        zip_files([str(py), str(ipynb)], py.with_suffix(".zip"), example.folder)
        chapters.add(example.folder)
        stamp = stamps[example.folder]
        if digest is None:
            stamp.pop(example.english.name, None)
        else:
            stamp[example.english.name] = digest
    for folder in sorted(chapters):
        keep = {example.english.stem for example in examples if example.folder == folder}
        keep |= {f"{folder.name}_python", f"{folder.name}_jupyter"}
        for path in folder.glob("*"):  # the files of examples that are gone
            if path.suffix in (".py", ".ipynb", ".zip") and path.stem not in keep:
                path.unlink()
        python_zip(sorted(str(p) for p in folder.glob("*.py")), folder, ".py")
        python_zip(sorted(str(p) for p in folder.glob("*.ipynb")), folder, ".ipynb")
    for folder, stamp in stamps.items():
        if folder in chapters and folder.is_dir():
            (folder / _STAMP).write_text(json.dumps(stamp, indent=1, sort_keys=True), "utf-8")
    logger.info("compperf: %s downloads written for %d example(s)", language, len(scripts))


def _read_stamp(folder: Path) -> dict[str, str]:
    try:
        return json.loads((folder / _STAMP).read_text("utf-8"))
    except (OSError, ValueError):
        return {}


class LanguageDownloads(SphinxTransform):
    """Point an example page's downloads at its language's files; translate its code comments."""

    # Before DoctreeReadEvent (880), whose listeners collect the download files.
    default_priority = order.LANGUAGE_DOWNLOAD_LINKS

    def apply(self, **kwargs: object) -> None:
        language = self.config.language
        if language == SOURCE_LANGUAGE or self.app.builder.format != "html":
            return
        srcdir = Path(self.env.srcdir).resolve()
        conf = self.config.sphinx_gallery_conf
        galleries = {
            Path(g).resolve(): (Path(e), language_folder(Path(g), language).resolve())
            for e, g in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True)
        }
        page = Path(self.env.doc2path(self.env.docname)).resolve()
        for node in self.document.findall(addnodes.download_reference):
            target = node["reftarget"]
            path = srcdir / target.lstrip("/") if target.startswith("/") else page.parent / target
            path = path.resolve()
            if path.parent in galleries:
                translated = galleries[path.parent][1] / path.name
                if translated.is_file():
                    node["reftarget"] = "/" + translated.relative_to(srcdir).as_posix()
        if page.parent in galleries:
            source = galleries[page.parent][0] / f"{page.stem}.py"
            if source.is_file():
                self._translate_code(comment_catalog(_comment_root(self.app), language, source))

    def _translate_code(self, catalog: Path) -> None:
        if catalog.is_file():  # Sphinx reads a page again while a dependency is missing
            self.env.note_dependency(str(catalog))
        lookup = _lookup(catalog, COMMENT_CONTEXT)
        for block in list(self.document.findall(nodes.literal_block)):
            if str(block.get("language", "")).lower() not in ("python", "py", "python3"):
                continue
            code = block.astext()
            try:
                translated = download_text.translate_code(code, lookup, [])
            except (SyntaxError, ValueError, tokenize.TokenError):  # not Python: leave it
                continue
            if translated != code:
                new = nodes.literal_block(translated, translated, **block.attributes)
                new.source, new.line = block.source, block.line
                block.replace_self(new)
