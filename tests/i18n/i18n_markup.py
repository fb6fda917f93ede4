"""The markup a translation must carry over unchanged from its source message."""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["markup_tokens"]

# :role:`text <target>` or {role}`target` (MyST): the target must survive, the text may not.
_ROLE = re.compile(
    r"(?::(?P<rst>[\w.+-]+(?::[\w.+-]+)*):|\{(?P<myst>[\w.+:-]+)\})`(?P<body>[^`]+)`"
)
_EXPLICIT_TARGET = re.compile(r"<([^<>]+)>\s*$")
# `text <url>`_ (reStructuredText) and [text](url) (MyST): the URL must survive.
_RST_LINK = re.compile(r"`(?P<body>[^`]+)`__?")
_MD_LINK = re.compile(r"\[[^\]]*\]\((?P<url>[^)]+)\)")
_LITERAL = re.compile(r"``(?P<double>.+?)``|`(?P<single>[^`]+)`")
_SUBSTITUTION = re.compile(r"\|(?P<rst>[\w .-]+)\||\{\{\s*(?P<myst>[\w.]+)\s*\}\}")
# Python format fields in UI strings, and the URLs of HTML links in theme strings.
_PLACEHOLDER = re.compile(r"\{(?P<brace>\w+)\}|%\((?P<percent>\w+)\)[sd]")
_HREF = re.compile(r'href="(?P<url>[^"]+)"')
# "[Go to the end] to download ...": the bracketed link text must stay bracketed.
_BRACKETED = re.compile(r"\[[^\[\]()]+\](?!\()")


def markup_tokens(text: str) -> Counter:
    """Roles with their targets, link URLs, inline literals, substitutions, placeholders.

    Each is removed from the text once counted, so that a role's backticks are not
    counted again as a literal.
    """
    tokens: Counter = Counter()

    def take(pattern: re.Pattern[str], kind: str, pick) -> None:
        nonlocal text

        def record(match: re.Match[str]) -> str:
            tokens[(kind, pick(match))] += 1
            return " "

        text = pattern.sub(record, text)

    def role(match: re.Match[str]) -> tuple[str, str]:
        name = match["rst"] or match["myst"]
        body = match["body"]
        target = _EXPLICIT_TARGET.search(body)
        return name, (target[1] if target else body).strip()

    def rst_link(match: re.Match[str]) -> str:
        target = _EXPLICIT_TARGET.search(match["body"])
        return (target[1] if target else match["body"]).strip()

    take(_ROLE, "role", role)
    take(_MD_LINK, "link", lambda m: m["url"])
    take(_RST_LINK, "link", rst_link)
    take(_LITERAL, "literal", lambda m: m["double"] if m["double"] is not None else m["single"])
    take(_SUBSTITUTION, "substitution", lambda m: m["rst"] or m["myst"])
    take(_PLACEHOLDER, "placeholder", lambda m: m["brace"] or m["percent"])
    take(_HREF, "href", lambda m: m["url"])
    take(_BRACKETED, "bracketed", lambda m: "[]")
    return tokens
