"""Numbers written the way the reader's language writes them: «6,37 мкс», «2 033».

Every number that compperf formats into a message (``tr``, ``say``, ``table``) passes
through :func:`localize` for the language it is rendered in. Code and raw data are not
messages and keep Python's own notation (``6.37``), whatever the language.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from numbers import Number

__all__ = ["CONVENTIONS", "Convention", "convention", "localize"]


@dataclass(frozen=True)
class Convention:
    """How a language writes the decimal separator and the thousands separator."""

    decimal: str = "."
    group: str = ","


# Russian writes a decimal comma and groups thousands with a (no-break) space: "2,033"
# would read as two and a fraction. Chinese writes numbers as English does.
CONVENTIONS = {"ru": Convention(decimal=",", group="\N{NO-BREAK SPACE}")}
_SOURCE = Convention()


def convention(code: str) -> Convention:
    """The number convention of language ``code`` (English's where it has none of its own)."""
    return CONVENTIONS.get(code, _SOURCE)


def _is_number(value: object) -> bool:
    return isinstance(value, (Number, Decimal)) and not isinstance(value, bool)


def localize(text: str, value: object, code: str) -> str:
    """``text``, which Python formatted from ``value``, in language ``code``'s convention.

    Only the separators change (``"1,234.5"`` becomes ``"1 234,5"`` in Russian); digits,
    signs, exponents and the text of anything that is not a number stay as they are.

    Examples
    --------
    >>> localize("6.37", 6.37, "ru")
    '6,37'
    >>> localize("6.37", "6.37", "ru")  # a string is shown as it is
    '6.37'
    """
    rule = convention(code)
    if rule == _SOURCE or not _is_number(value):
        return text
    return text.translate({ord("."): rule.decimal, ord(","): rule.group})
