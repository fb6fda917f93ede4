"""compperf's compiled gettext catalogs: one lookup table per language, every ``.mo`` merged.

A language's folder (``compperf/locales/<code>/LC_MESSAGES``) holds the package's own
catalog (``compperf.mo``) and one per example (``examples/<chapter>/<stem>.mo``);
:func:`load` merges them into one table, and :func:`translate` looks a message (or the
plural form of one) up in it. :mod:`compperf.i18n` decides which folder and language.
"""

from __future__ import annotations

import gettext
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MissingTranslation", "load", "translate"]


class MissingTranslation(LookupError):
    """A message, or one of its plural forms, has no translation in a language's catalogs."""


def load(folder: Path) -> gettext.GNUTranslations:
    """Every ``.mo`` file under ``folder``, merged into one catalog.

    Raises
    ------
    ValueError
        If ``folder`` holds no ``.mo`` file.
    """
    translations = []
    for path in sorted(folder.rglob("*.mo")):
        with path.open("rb") as handle:
            translations.append(gettext.GNUTranslations(handle))
    if not translations:
        raise ValueError(f"no compiled catalogs (.mo) under {folder.parent}")
    first, *rest = translations
    # One lookup table: each catalog holds its own messages, and all share Plural-Forms.
    for other in rest:
        first._catalog.update(other._catalog)  # gettext has no public merge
    return first


def translate(
    catalog: gettext.NullTranslations, record: Mapping[str, Any], code: str, strict: bool
) -> str:
    """The template of ``record``'s message (or its plural form for ``record["n"]``) in
    ``catalog``, the language ``code``'s; English when it has none, unless ``strict``.

    Raises
    ------
    MissingTranslation
        With ``strict``, if the catalog has no translation.
    """
    message, plural, n = record["message"], record.get("plural"), record.get("n")
    table = getattr(catalog, "_catalog", {})
    found = table.get(message if plural is None else (message, catalog.plural(n)))
    if found:
        return found
    if strict:
        raise MissingTranslation(f"no {code} translation of {message!r}")
    return message if plural is None or n == 1 else plural
