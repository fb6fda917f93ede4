"""Checks of the message catalogs that ship with compperf (``src/compperf/locales``).

Each check takes a catalog file (or a folder of them) and returns its problems as lines
that name the file and the message, so that a test can run it on the real catalogs and on
a crafted one alike. An empty list means the catalog is fit to ship.
"""

from __future__ import annotations

import io
import re
import string
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po
from compperf_docs.message_catalogs import COMMENT_CONTEXT

__all__ = [
    "all_problems",
    "catalog_problems",
    "compiled_problems",
    "folder_problems",
    "placeholders",
    "read_catalog",
    "sync_problems",
]

# (name, conversion, format spec) of each replacement field, as str.format reads them.
Placeholder = tuple[str, str | None, str]


def read_catalog(path: Path) -> Catalog:
    """The ``.po`` file at ``path``, read strictly (a syntax error raises)."""
    with path.open("rb") as handle:
        return read_po(handle, abort_invalid=True)


def placeholders(text: str) -> Counter[Placeholder]:
    """The ``{name!conversion:spec}`` fields of a str.format message, counted.

    Raises
    ------
    ValueError
        If ``text`` is no valid format string (an unmatched brace).
    """
    return Counter(
        (name, conversion, spec or "")
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    )


# The layout part of a format spec: [[fill]align] and width. A translator may change it
# (Russian labels need wider columns); sign, "0", grouping, precision and type shape the
# number itself and must stay.
_LAYOUT = re.compile(r"^(?:.?[<>=^])?(?P<flags>[+\- ]?z?#?0?)\d*")


def _value_parts(fields: Counter[Placeholder]) -> Counter[Placeholder]:
    """``fields`` with the layout of each spec left out: what decides the text of a value."""
    return Counter(
        {
            (name, conversion, _LAYOUT.sub(r"\g<flags>", spec, count=1)): count
            for (name, conversion, spec), count in fields.items()
        }
    )


def _show(fields: Counter[Placeholder]) -> str:
    shown = sorted(
        "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        for (name, conversion, spec), count in fields.items()
        for _ in range(count)
    )
    return ", ".join(shown) or "none"


def _messages(catalog: Catalog) -> list[Message]:
    return [message for message in catalog if message.id]


def _label(message: Message) -> str:
    msgid = message.id[0] if isinstance(message.id, tuple) else message.id
    context = f" (msgctxt {message.context!r})" if message.context else ""
    return f"msgid {msgid!r}{context}"


def _form_problems(message: Message, forms: int) -> list[str]:
    """Problems of one translated message: empty, missing forms, placeholders changed."""
    if isinstance(message.id, tuple):
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if len(strings) != forms:
            return [f"has {len(strings)} plural forms, the language needs {forms}"]
        # gettext may pick any form for many n (Russian's first is for 1, 21, 31, ...):
        # each form keeps the plural's placeholders.
        source, names = message.id[1], [f"msgstr[{i}]" for i in range(forms)]
    else:
        strings, source, names = (message.string,), message.id, ["msgstr"]
    if any(not text for text in strings):
        return ["is not translated (empty msgstr)"]
    if message.context == COMMENT_CONTEXT:
        return []  # a code comment: prose, not a format string
    problems = []
    wanted = placeholders(source)
    for name, text in zip(names, strings, strict=True):
        try:
            found = placeholders(text)
        except ValueError as error:
            problems.append(f"{name} {text!r} is no valid format string: {error}")
            continue
        if _value_parts(found) != _value_parts(wanted):
            changes = [f"drops {_show(wanted - found)}"] if wanted - found else []
            changes += [f"adds {_show(found - wanted)}"] if found - wanted else []
            changed = " and ".join(changes)
            problems.append(f"{name} {text!r} {changed} (the message has {_show(wanted)})")
    return problems


def catalog_problems(path: Path) -> list[str]:
    """Untranslated, fuzzy, and placeholder problems of the ``.po`` file at ``path``.

    The placeholders of each translation (and of each plural form) must be those of the
    message (of its plural, for plural forms): the same names, conversions and format
    specs, as many times each. Code comments (msgctxt ``comment``) are prose: only their
    presence is checked.
    """
    catalog = read_catalog(path)
    forms = catalog.num_plurals
    problems = []
    for message in _messages(catalog):
        found = ["is fuzzy"] if message.fuzzy else []
        found += _form_problems(message, forms)
        problems += [f"{path}: {_label(message)} {problem}" for problem in found]
    if catalog.obsolete:
        problems += [
            f"{path}: {_label(message)} is obsolete (#~): delete it or run nox -s translations"
            for message in catalog.obsolete.values()
        ]
    return problems


def _table(catalog: Catalog) -> dict[tuple[object, object], object]:
    """Message (and context) to translation; plural ids and forms as tuples."""

    def plain(value: object) -> object:
        return tuple(value) if isinstance(value, (list, tuple)) else value

    return {
        (plain(message.id), message.context): plain(message.string)
        for message in _messages(catalog)
        if message.string and not message.fuzzy  # what babel's write_mo keeps
    }


def compiled_problems(path: Path) -> list[str]:
    """Differences between the ``.po`` file at ``path`` and the ``.mo`` file beside it.

    compperf reads only the ``.mo`` files: one compiled from an older ``.po`` shows old
    translations, or none. Compares the messages, then the bytes babel would write.
    """
    mo_path = path.with_suffix(".mo")
    if not mo_path.is_file():
        return [f"{mo_path}: missing; nox -s translations compiles it from {path.name}"]
    catalog = read_catalog(path)
    with mo_path.open("rb") as handle:
        compiled = _table(read_mo(handle))
    expected = _table(catalog)
    stale = sorted(
        {
            key
            for key in expected.keys() | compiled.keys()
            if expected.get(key) != compiled.get(key)
        },
        key=repr,
    )
    if stale:
        msgid, _ = stale[0]
        msgid = msgid[0] if isinstance(msgid, tuple) else msgid
        return [
            (
                f"{mo_path}: {len(stale)} messages differ from {path.name}, first msgid "
                f"{msgid!r}; nox -s translations compiles it again"
            )
        ]
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    if buffer.getvalue() != mo_path.read_bytes():
        return [f"{mo_path}: not compiled from {path.name} as it is; run nox -s translations"]
    return []


def _keys(catalog: Catalog) -> dict[tuple[str, str | None], Message]:
    return {
        (message.id[0] if isinstance(message.id, tuple) else message.id, message.context): message
        for message in _messages(catalog)
    }


def sync_problems(path: Path, template: Catalog) -> list[str]:
    """Messages of ``template`` (freshly extracted) missing from the ``.po`` at ``path``,
    and messages there that the sources no longer have."""
    catalog, wanted = _keys(read_catalog(path)), _keys(template)
    problems = [
        f"{path}: {_label(wanted[key])} is in the sources but not in the catalog; "
        "run nox -s translations"
        for key in wanted
        if key not in catalog
    ]
    problems += [
        f"{path}: {_label(catalog[key])} is no longer in the sources; run nox -s translations"
        for key in catalog
        if key not in wanted
    ]
    for key in wanted.keys() & catalog.keys():
        if wanted[key].id != catalog[key].id:  # the plural changed
            problems.append(
                f"{path}: {_label(wanted[key])} has another plural in the sources; "
                "run nox -s translations"
            )
    return problems


def all_problems(paths: Iterable[Path]) -> list[str]:
    """:func:`catalog_problems` and :func:`compiled_problems` of every file."""
    checks = (catalog_problems, compiled_problems)
    return [problem for path in paths for check in checks for problem in check(path)]


def folder_problems(folder: Path) -> list[str]:
    """:func:`all_problems` of every ``.po`` file under ``folder`` (e.g. a ``locales``)."""
    return all_problems(sorted(folder.rglob("*.po")))


def conflict_problems(paths: Iterable[Path]) -> list[str]:
    """Messages that two catalogs of one language translate differently.

    compperf merges all catalogs of a language into one lookup at run time, so such a
    message would read as one of its translations everywhere.
    """
    seen: dict[tuple[object, object], tuple[Path, object]] = {}
    problems = []
    for path in paths:
        for message in _messages(read_catalog(path)):
            key = (message.context, message.id)
            first = seen.setdefault(key, (path, message.string))
            if first[1] != message.string:
                problems.append(
                    f"{path}: {_label(message)} is translated as {message.string!r}, "
                    f"but as {first[1]!r} in {first[0]}: one lookup holds both"
                )
    return problems
