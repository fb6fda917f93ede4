"""The record of every message made while recording is on (the docs build, per example).

:mod:`compperf.i18n` hands each message it makes to :func:`keep`; a docs build turns
recording on before an example runs (:func:`start`) and writes what :func:`stop` returns
beside the page, so that the other languages show the same sentences with the same
numbers without running the example again. Messages made under :func:`parts` are parts
of a larger one and are not recorded on their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["forget", "forget_last", "keep", "parts", "start", "stop"]

_recorded: list[dict[str, Any]] | None = None


def start() -> None:
    """Keep the record of every message made from now on (the docs build, per example)."""
    global _recorded
    _recorded = []


def stop() -> list[dict[str, Any]]:
    """Stop recording; return the records in the order the messages were made."""
    global _recorded
    records, _recorded = _recorded or [], None
    return records


def keep(record: dict[str, Any]) -> None:
    """Record a message just made, if recording is on."""
    if _recorded is not None:
        _recorded.append(record)


def forget_last(record: dict[str, Any]) -> None:
    """Drop ``record`` if it is the last one kept: a larger message made from it (a
    paragraph, a table's title) is recorded in its place."""
    if _recorded is not None and _recorded[-1:] == [record]:
        _recorded.pop()


def forget(record: dict[str, Any]) -> None:
    """Drop the last record kept that is ``record`` itself (not merely equal to it): a
    message made only to be part of another value (a verdict's claim) is shown with it."""
    if _recorded is not None:
        for index in range(len(_recorded) - 1, -1, -1):
            if _recorded[index] is record:
                del _recorded[index]
                return


@contextlib.contextmanager
def parts() -> Iterator[None]:
    """Messages made inside are parts of a larger one: they are not recorded on their own.

    The message made from them afterwards is recorded, with the parts as its values, so
    that a docs build replaces the whole text it printed, never a stray word of it.
    """
    global _recorded
    kept, _recorded = _recorded, None
    try:
        yield
    finally:
        _recorded = kept
