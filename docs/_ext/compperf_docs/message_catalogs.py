"""Extract, merge and compile the catalogs of what examples print, draw and comment.

The page prose goes through Sphinx's own catalogs (``docs/locales``). What the code says
(the sentences an example prints with ``compperf.say``, its figure labels made with
``compperf.tr`` and the comments in its code) lives in catalogs that ship with compperf,
so that a downloaded script prints in its reader's language too::

    src/compperf/locales/<lang>/LC_MESSAGES/compperf.po                    src/compperf/*.py
    src/compperf/locales/<lang>/LC_MESSAGES/examples/<chapter>/<stem>.po   one example

``nox -s translations`` runs :func:`update`: it extracts the messages with babel (string
literals passed to ``tr``, ``tr_plural`` and ``say``; comments with the context
``comment``), merges them into every language's catalog (new messages untranslated,
changed ones fuzzy, gone ones dropped) and compiles the ``.mo`` files that compperf reads.

    python -m compperf_docs.message_catalogs      (from docs/_ext, in the docs virtualenv)
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from compperf_docs.languages.code_comments import example_comments

__all__ = ["COMMENT_CONTEXT", "KEYWORDS", "sources", "template", "update"]

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "compperf"
LOCALES = PACKAGE / "locales"
EXAMPLES = ROOT / "examples"
# compperf.tr(message), compperf.tr_plural(singular, plural, n), compperf.say(message)
KEYWORDS = {"tr": None, "tr_plural": (1, 2), "say": None}
COMMENT_CONTEXT = "comment"
_WIDTH = 76  # as the page catalogs (sphinx-intl)
_HEADER = {
    "project": "compperf",
    "version": "",
    "copyright_holder": "the compperf team",
    "msgid_bugs_address": "",
    "header_comment": (
        "# What compperf and its examples print, draw and say in their code comments.\n"
        "# nox -s translations updates this file; a translator fills in each msgstr."
    ),
    "fuzzy": False,
    "charset": "utf-8",
}
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def sources() -> dict[str, list[Path]]:
    """Catalog domain (``compperf`` or ``examples/<chapter>/<stem>``) to its source files."""
    domains = {"compperf": sorted(PACKAGE.glob("*.py"))}
    for example in sorted(EXAMPLES.glob("*/plot_*.py")):
        chapter = example.parent.name
        domains[f"examples/{chapter}/{example.stem}"] = [example]
    return domains


def _messages(path: Path) -> Iterable[tuple[int, str | tuple[str, str], str | None]]:
    for lineno, message, _comments, context in extract_from_file(
        "python", path, keywords=KEYWORDS, strip_comment_tags=True
    ):
        if message is None or (isinstance(message, tuple) and None in message):
            continue  # not a literal: nothing a translator could see
        yield lineno, message, context


def template(domain: str, files: list[Path]) -> Catalog:
    """The messages of ``files`` as an untranslated catalog (a ``.pot``)."""
    catalog = Catalog(**_HEADER)
    for path in files:
        where = path.relative_to(ROOT).as_posix()
        for lineno, message, context in _messages(path):
            flags = ("python-brace-format",) if "{" in str(message) else ()
            catalog.add(message, locations=[(where, lineno)], context=context, flags=flags)
        if domain.startswith("examples/"):
            for block_line, comment in example_comments(path):
                catalog.add(
                    comment.text,
                    locations=[(where, block_line + comment.first_line - 1)],
                    context=COMMENT_CONTEXT,
                )
    return catalog


def _read(path: Path, code: str) -> Catalog:
    if not path.is_file():
        return Catalog(locale=code, **_HEADER)
    with path.open("rb") as handle:
        return read_po(handle, locale=code)


def _write(path: Path, catalog: Catalog, writer, **options) -> bool:
    buffer = io.BytesIO()
    writer(buffer, catalog, **options)
    data = buffer.getvalue()
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def update(languages: Iterable[str]) -> list[Path]:
    """Merge the extracted messages into each language's catalogs and compile them.

    Returns the files that changed. Catalogs of examples that no longer exist are removed.
    """
    changed = []
    domains = {domain: template(domain, files) for domain, files in sources().items()}
    for code in languages:
        folder = LOCALES / code / "LC_MESSAGES"
        for domain, pot in domains.items():
            po_path = folder / f"{domain}.po"
            catalog = _read(po_path, code)
            catalog.update(pot, update_creation_date=False)
            for entry in catalog:
                # Messages are str.format templates; babel also flags a "5 %" in one as
                # python-format, and msgfmt --check then rejects correct translations.
                entry.flags.discard("python-format")
            catalog.obsolete.clear()  # a removed message stays in git history, not here
            catalog.revision_date = catalog.creation_date = _EPOCH  # no churn in git
            catalog.last_translator = catalog.language_team = "The compperf team"
            if _write(po_path, catalog, write_po, width=_WIDTH, include_previous=True):
                changed.append(po_path)
            if _write(po_path.with_suffix(".mo"), catalog, write_mo):
                changed.append(po_path.with_suffix(".mo"))
        known = {folder / f"{domain}.po" for domain in domains}
        for stale in sorted(folder.rglob("*.po")):
            if stale not in known:
                stale.unlink()
                stale.with_suffix(".mo").unlink(missing_ok=True)
                changed.append(stale)
    return changed


def main() -> None:
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import compperf_project

    codes = compperf_project.load(ROOT / "pyproject.toml").codes[1:]
    for path in update(codes):
        print(f"updated {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
