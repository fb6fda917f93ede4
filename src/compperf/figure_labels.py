"""A key figure's English key in the reader's language, read back into its messages.

Records keep each key figure under its English key (:mod:`compperf.records`), so that
keys match across languages and machines; what a reader sees is :func:`label`: the key
read back into the messages it was made of (the example's catalog and compperf's, the
compositions ``"{claim}: {subject}"`` and ``"{candidate} vs {baseline}"``, what shows as
it is in every language) and shown in the reader's language. The claims verdicts make
are marked here for compperf's catalog (:data:`CLAIMS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

__all__ = ["CLAIMS", "label"]


def _marked() -> tuple[str, ...]:
    """The claims verdicts make and the compositions keys are made of, for compperf's catalog.

    ``nox -s translations`` finds each ``tr(...)`` literal here; nothing is printed.
    """

    def tr(message: str) -> str:  # the extraction's keyword: marks a message, translates nothing
        return message

    return (
        # Compositions: a verdict's key is "claim: subject"; a subject may name its device.
        tr("{claim}: {subject}"),
        tr("{subject} on {device}"),
        # Claims (compperf.conclude, Comparison.faster, crossover, ceilings).
        tr("faster"),
        tr("pays back"),
        tr("overlapped"),
        tr("memory-bound"),
        tr("below the measured peak"),
        tr("below half of the theoretical peak"),
        tr("below half of its roof"),
        tr("crossover"),
        tr("cache faster than memory"),
        tr("result ready when the loop returns"),
        tr("returns early"),
        tr("nothing queued when the loop ends"),
        tr("queue holds little memory"),
        tr("device computed longer than the host launched"),
        tr("same parameters"),
        tr("same gradient"),
        tr("like separate cores"),
        tr("beyond the cores"),
        # What compperf.ceilings measures (its descriptions are keys of pages that probe).
        tr("copy_ {size} MiB"),
        tr("torch.add, 1 element"),
    )


CLAIMS = _marked()[2:-2]

# What a key figure shows as it is in every language: a device, or words that are each
# a number or code (``.item()``, ``b[b > 0]``, ``torch.compile``, ``if``); an English word
# is never one.
_DEVICE_NAME = re.compile(r"<device>|cuda(?::\d+)?|cpu|mps")
_CODE_WORD = re.compile(r"[^A-Za-z]*|.*[\d_.()\[\]@<>`].*|[a-z]|if|for|in|not|and|or|is")


def _verbatim(text: str) -> bool:
    return bool(_DEVICE_NAME.fullmatch(text)) or all(
        _CODE_WORD.fullmatch(word.rstrip(",;"))
        for word in text.split()  # "b," in a call
    )


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@functools.cache
def _catalog(language: str, example: str | None) -> dict[str, str]:
    """Msgid to msgstr: compperf's catalog and, when named, one example's (plural forms left out)."""
    import gettext

    from compperf.i18n import LOCALES

    folder = LOCALES / language / "LC_MESSAGES"
    paths = [folder / "compperf.mo"]
    if example:
        paths.append(folder / "examples" / f"{example}.mo")
    merged: dict[str, str] = {}
    for path in paths:
        if path.is_file():
            with path.open("rb") as handle:
                table = gettext.GNUTranslations(handle)._catalog  # gettext has no public table
            merged.update({k: v for k, v in table.items() if isinstance(k, str) and k and v})
    return merged


@functools.cache
def _templates(language: str, example: str | None) -> list[tuple[list[str], list[str], str]]:
    """The catalogs' short messages with ``{name}`` placeholders: (literals, names, msgstr)."""
    made = []
    for message, translated in _catalog(language, example).items():
        if "{" not in message or len(message) > 120 or "\n" in message:
            continue
        pieces = _PLACEHOLDER.split(message)
        literals, names = pieces[0::2], pieces[1::2]
        if "{" in "".join(literals) or "}" in "".join(literals):
            continue  # a format spec or a conversion: not a label's template
        if any(not literal for literal in literals[1:-1]):
            continue  # two placeholders side by side: no way to tell them apart
        made.append((literals, names, translated))
    # The most specific first: the most literal text.
    made.sort(key=lambda found: -sum(map(len, found[0])))
    return made


def _splits(text: str, literals: list[str]) -> Iterable[list[str]]:
    """Every way ``text`` reads as ``literals[0] {v1} literals[1] {v2} ...``: the values."""
    first, rest = literals[0], literals[1:]
    if not text.startswith(first):
        return
    text = text[len(first) :]
    if len(rest) == 1:
        if rest[0] == "":
            if text:
                yield [text]
        elif text.endswith(rest[0]) and len(text) > len(rest[0]):
            yield [text[: len(text) - len(rest[0])]]
        return
    start = 1
    while (found := text.find(rest[0], start)) != -1:
        for values in _splits(text[found:], rest):
            yield [text[:found], *values]
        start = found + 1


def _translated(
    text: str, language: str, example: str | None, seen: dict[str, tuple[str, int] | None]
) -> tuple[str, int] | None:
    """``text`` in ``language`` and how many of its characters stay as they are, or None.

    Of all the ways ``text`` reads as catalog messages, the one that translates most of it.
    """
    if text in seen:
        return seen[text]
    seen[text] = None  # a template that reads into itself finds nothing
    catalog = _catalog(language, example)
    best = (text, len(text)) if _verbatim(text) else None
    if text in catalog:
        best = (catalog[text], 0)
    for literals, names, translated in _templates(language, example):
        if best is not None and best[1] == 0:
            break
        for values in _splits(text, literals):
            shown = [_translated(value, language, example, seen) for value in values]
            if None in shown:
                continue
            kept = sum(found[1] for found in shown)
            if best is not None and kept >= best[1]:
                continue
            filled = {name: found[0] for name, found in zip(names, shown, strict=True)}
            if set(_PLACEHOLDER.findall(translated)) <= set(filled):
                best = (_PLACEHOLDER.sub(lambda match, f=filled: f[match[1]], translated), kept)
    seen[text] = best
    return best


def label(key: str, language: str, example: str | None = None, *, strict: bool = False) -> str:
    """A key figure's English ``key`` as a reader of ``language`` reads it.

    The key is read back into the messages it was made of: the messages of compperf's
    catalog and of ``example``'s (``"<chapter>/<stem>"``), compositions such as
    ``"{claim}: {subject}"`` and ``"{candidate} vs {baseline}"``, and what shows as it is
    in every language (numbers, devices, code). Records keep the English key, so that
    keys match across languages; only the page or table shows this.

    Raises
    ------
    compperf.i18n.MissingTranslation
        With ``strict``, if some part of ``key`` has no translation (the English key is
        returned without ``strict``).
    """
    from compperf.i18n import SOURCE_LANGUAGE, MissingTranslation

    if language == SOURCE_LANGUAGE:
        return key
    base, hash_, count = key.rpartition(" #")
    if not (hash_ and count.isdigit()):
        base, count = key, ""
    found = _translated(base, language, example, {})
    if found is None:
        if strict:
            raise MissingTranslation(f"no {language} translation of the key figure {base!r}")
        found = (base, len(base))
    shown = found[0]
    return f"{shown} #{count}" if count else shown
