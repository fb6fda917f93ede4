"""Catalogs: what goes into them, and a clear error when a language's catalogs are unusable.

Every page has its own catalog, ``locales/<language>/LC_MESSAGES/<page>.po``; the site's
UI strings (the language switcher, sphinx-gallery's labels, the theme's labels, the 404
page, the copyright line, the search messages) live in ``sphinx.po`` beside them, the catalog Sphinx reads for its own and the
theme's template strings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from babel.messages.extract import extract_from_file
from babel.messages.pofile import PoFileError, read_po
from sphinx.builders.gettext import MsgOrigin
from sphinx.errors import SphinxError

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment

__all__ = [
    "UI_CATALOG",
    "LanguageBuildError",
    "add_ui_messages",
    "catalog_folder",
    "check_catalogs",
    "note_ui_catalog",
    "require_page_catalogs",
    "require_word_splitter",
    "ui_message_sources",
    "ui_translation",
]

# Sphinx's own catalog name: templates' _() and sphinx.locale._ look up sphinx.mo.
UI_CATALOG = "sphinx"
# sphinx-gallery rewrites these with each run's timings: never extracted, never translated.
_EXTENSION = Path(__file__).resolve().parents[1]  # compperf_docs, every stage


class LanguageBuildError(SphinxError):
    category = "Language build error"


def catalog_folder(app: Sphinx) -> Path:
    """``<srcdir>/<first locale_dir>/<language>/LC_MESSAGES``."""
    return _folder(app.srcdir, app.config)


def _folder(srcdir: str | Path, config: Config) -> Path:
    return Path(srcdir, config.locale_dirs[0], config.language, "LC_MESSAGES")


def ui_translation(srcdir: str | Path, config: Config, language: str, message: str) -> str:
    """``message`` from ``language``'s UI catalog, for text shown outside that language's build.

    English, or a message not (yet) translated, comes back as is.
    """
    path = Path(srcdir, config.locale_dirs[0], language, "LC_MESSAGES", f"{UI_CATALOG}.po")
    if language == "en" or not path.is_file():
        return message
    with path.open("rb") as file:
        entry = read_po(file, locale=language).get(message)
    return entry.string if entry is not None and entry.string and not entry.fuzzy else message


def note_ui_catalog(env: BuildEnvironment) -> None:
    """Make the page being read depend on the UI catalog, whose messages it shows.

    Sphinx re-reads a page when its own catalog changes, not when ``sphinx.po`` does.
    """
    if env.config.language != "en":
        env.note_dependency(_folder(env.srcdir, env.config) / f"{UI_CATALOG}.po")


def _translating(app: Sphinx) -> bool:
    return app.config.language != "en" and app.builder.name != "gettext"


def check_catalogs(app: Sphinx) -> None:
    """Stop the build when the language has no catalogs or one of them cannot be read.

    Sphinx would otherwise skip a malformed catalog with a one-line warning, or read what
    babel makes of it (babel silently drops an unterminated string's last character), and
    show the page in English. GNU msgfmt is the strict reader; babel's ``abort_invalid``
    the fallback where gettext is not installed.
    """
    if not _translating(app):
        return
    folder = catalog_folder(app)
    ui = folder / f"{UI_CATALOG}.po"
    if not ui.is_file():
        raise LanguageBuildError(
            f"no catalogs for language {app.config.language!r}: {ui} is missing; "
            "run `nox -s translations` to create them from the English sources"
        )
    msgfmt = shutil.which("msgfmt")
    for path in sorted(folder.rglob("*.po")):
        if msgfmt is not None:
            # Not --check-header: a catalog still waiting for its translator keeps the
            # template's header, and its page is meant to build (in English) meanwhile.
            result = subprocess.run(
                [msgfmt, "--check-format", "--check-domain", "-o", os.devnull, str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                raise LanguageBuildError(f"cannot read the catalog {path}: {result.stderr.strip()}")
        try:
            with path.open("rb") as file:
                read_po(file, locale=app.config.language, abort_invalid=True)
        except (PoFileError, ValueError) as error:
            raise LanguageBuildError(f"cannot read the catalog {path}: {error}") from error


def require_word_splitter(app: Sphinx) -> None:
    """Stop a Chinese build without jieba: Sphinx would index whole sentences as words.

    Chinese is the search language ``"zh"`` (``search`` in ``[tool.compperf.languages]``).
    """
    search = app.config.html_search_language or app.config.language
    if search.startswith("zh") and app.builder.format == "html":
        try:
            import jieba  # noqa: F401  (only its presence matters here)
        except ImportError as error:
            raise LanguageBuildError(
                "the Chinese search index needs jieba to split words; install the docs "
                "dependency group (pip install --group docs), which includes it"
            ) from error


def require_page_catalogs(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Stop the build when a page of the site has no catalog in this language.

    All pages, not only the ones about to be read: a catalog deleted since the last
    build leaves its page unchanged, and Sphinx would not read it again.
    """
    if not _translating(app):
        return
    folder = catalog_folder(app)
    missing = [
        folder / f"{docname}.po"
        for docname in sorted(env.found_docs)
        if not (folder / f"{docname}.po").is_file()
    ]
    if missing:
        raise LanguageBuildError(
            f"{len(missing)} page(s) have no {app.config.language} catalog: "
            + ", ".join(str(path) for path in missing)
            + "; run `nox -s translations` to create them from the English sources"
        )


def _theme_package() -> Path:
    import furo  # the site's theme; imported here because only extraction needs it

    return Path(furo.__file__).resolve().parent


def ui_message_sources() -> list[Path]:
    """Where the UI messages that no Sphinx source file holds come from.

    This extension's own modules, and the theme's templates: Sphinx extracts only the
    project's ``templates_path``, and furo ships no Chinese or Russian translations.
    """
    theme = _theme_package() / "theme"
    return [*sorted(_EXTENSION.rglob("*.py")), *sorted(theme.rglob("*.html"))]


def add_ui_messages(app: Sphinx) -> None:
    """Add the UI messages to the gettext build's ``sphinx.pot``."""
    if app.builder.name != "gettext":
        return
    catalog = app.builder.catalogs[UI_CATALOG]
    extract_template = app.builder.templates.environment.extract_translations
    outdir = Path(app.builder.outdir)
    for path in ui_message_sources():
        if path.suffix == ".py":
            found = [
                (line, message)
                for line, message, _comments, _context in extract_from_file(
                    "python", path, keywords={"_": None, "N_": None}
                )
            ]
            source = path
        else:
            found = [
                (line, message)
                for line, _function, message in extract_template(path.read_text("utf-8"))
            ]
            # Named from the theme's package, not from this machine's site-packages, so
            # that the catalogs do not change with the virtualenv they were extracted in.
            source = outdir / "furo" / path.relative_to(_theme_package())
        for line, message in found:
            if isinstance(message, str) and message:
                catalog.add(message, MsgOrigin(source=str(source), line=line))
    # The footer's copyright holder (theme_text.translate_copyright).
    catalog.add(app.config.copyright, MsgOrigin(source=str(Path(app.confdir, "conf.py")), line=1))
