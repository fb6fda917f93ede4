"""The glossary of each language (``docs/locales/<lang>/glossary.tsv``) and the check of a
catalog against it: one translation per concept, whatever page or module says it.

A message whose English text uses a glossary term (outside inline literals, roles,
placeholders and URLs, which stay as they are) must use the term's translation in its
``msgstr`` (``accepted``: a regex, stems for Russian so that every case form counts) and
none of the rejected alternatives, unless the English also names the concept those words
stand for there (``unless``: "thread" for Russian «поток», "package" for «пакет»), or the
glossary lists the message as an exception (a second table: ``term``, the start of the
``msgid``, and why: a memory "stream" is a data stream, not a CUDA stream).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog

__all__ = ["Glossary", "Term", "glossary_problems", "load_glossary", "message_problems", "prose"]

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "docs" / "locales"
_FIELDS = ("english", "source", "translation", "accepted", "rejected", "unless")
_EXCEPTION_FIELDS = ("exception", "msgid", "reason")

# What a translation keeps as it is: ``literals``, `literals`, :roles:`...`, {role}`...`,
# {placeholders}, URLs, Python names with underscores or dots (torch.cuda.Stream), quoted
# English values.
_KEPT = re.compile(
    r"``.+?``|(?::[\w.+:-]+:|\{[\w.+:-]+\})?`[^`]+`|\{[^{}]*\}|https?://\S+|"
    r"\b\w+(?:[._]\w+)+\b|"
    # A quoted English value ("unclear", «yes»): an outcome's code, printed as it is.
    r'"[^"\n]*"|«[ -~]*»|“[ -~]*”'
)


@dataclass(frozen=True)
class Term:
    """One glossary row; the regexes are compiled case-insensitively."""

    english: str
    translation: str
    source: re.Pattern[str]
    accepted: re.Pattern[str]
    rejected: re.Pattern[str] | None
    unless: re.Pattern[str] | None


def _compile(pattern: str) -> re.Pattern[str] | None:
    return re.compile(pattern, re.IGNORECASE) if pattern.strip() else None


@dataclass(frozen=True)
class Glossary:
    """A language's terms, and the messages exempt from one of them (term, msgid start)."""

    terms: tuple[Term, ...]
    exceptions: tuple[tuple[str, str], ...] = ()

    def __iter__(self):
        return iter(self.terms)

    def exempt(self, term: Term, msgid: str) -> bool:
        return any(t == term.english and msgid.startswith(s) for t, s in self.exceptions)


def load_glossary(code: str, folder: Path = LOCALES) -> Glossary:
    """The glossary of language ``code``; a missing file or a malformed row raises."""
    path = folder / code / "glossary.tsv"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:1] != "#"]
    rows = [row for row in csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE) if row]
    if tuple(rows[0]) != _FIELDS:
        raise ValueError(f"{path}: the header must be {' | '.join(_FIELDS)}, not {rows[0]}")
    terms, exceptions, table = [], [], _FIELDS
    for number, row in enumerate(rows[1:], start=2):
        if tuple(row) == _EXCEPTION_FIELDS:
            table = _EXCEPTION_FIELDS
            continue
        cells = dict(zip(table, [*row, *[""] * len(table)], strict=False))
        if table is _EXCEPTION_FIELDS:
            if not (cells["exception"] and cells["msgid"] and cells["reason"]):
                raise ValueError(f"{path}: exception row {number} needs a term, msgid, reason")
            exceptions.append((cells["exception"], cells["msgid"]))
            continue
        if not (cells["english"] and cells["source"] and cells["accepted"]):
            raise ValueError(f"{path}: row {number} needs english, source and accepted")
        terms.append(
            Term(
                english=cells["english"],
                translation=cells["translation"],
                source=_compile(cells["source"]),
                accepted=_compile(cells["accepted"]),
                rejected=_compile(cells["rejected"]),
                unless=_compile(cells["unless"]),
            )
        )
    unknown = {term for term, _ in exceptions} - {term.english for term in terms}
    if unknown:
        raise ValueError(f"{path}: exceptions name terms it does not have: {unknown}")
    return Glossary(tuple(terms), tuple(exceptions))


def prose(text: str) -> str:
    """``text`` without what a translation keeps as it is (literals, roles, fields, URLs)."""
    return _KEPT.sub(" ", text)


def _pairs(catalog: Catalog) -> Iterable[tuple[str, str]]:
    """(English, translation) of each translated message; a plural's forms one by one."""
    for message in catalog:
        if not message.id or not message.string or message.fuzzy:
            continue
        if isinstance(message.id, str):
            yield message.id, message.string
            continue
        english = " ".join(message.id)
        yield from ((english, string) for string in message.string if string)


def message_problems(msgid: str, msgstr: str, glossary: Glossary) -> list[str]:
    """What is wrong with one translation: one line per glossary term it breaks."""
    english, translated = prose(msgid), prose(msgstr)
    problems = []
    for term in glossary:
        if not term.source.search(english) or glossary.exempt(term, msgid):
            continue
        if not term.accepted.search(translated):
            problems.append(f"{term.english!r} is not translated as {term.translation!r}")
        if term.rejected and not (term.unless and term.unless.search(english)):
            found = sorted({match[0] for match in term.rejected.finditer(translated)})
            if found:
                problems.append(
                    f"{term.english!r} is {term.translation!r}, not {', '.join(found)!r}"
                )
    return problems


def glossary_problems(catalog: Catalog, glossary: Glossary, name: str) -> list[str]:
    """One line per message of ``catalog`` (called ``name``) that breaks a glossary term."""
    problems = []
    for msgid, msgstr in _pairs(catalog):
        for problem in message_problems(msgid, msgstr, glossary):
            problems.append(f"{name}: {msgid[:60]!r}: {problem}")
    return problems
