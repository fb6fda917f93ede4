"""The comments in an example's code: what a translator translates and a download replaces.

sphinx-gallery turns an example into text blocks (the module docstring and the ``# %%``
comment blocks: page prose, translated through the page catalogs) and code blocks. This
module finds the comments inside the code blocks. Consecutive full-line comments at the
same indentation are one message (their lines joined with spaces); a comment after code
on the same line is a message of its own. Tool comments (``# noqa``, ``# fmt: skip``,
``# type:``, sphinx-gallery's own) and the lines hidden from readers
(``sphinx_gallery_start_ignore`` ... ``end_ignore``) are not messages.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from sphinx_gallery.py_source_parser import remove_ignore_blocks, split_code_and_text_blocks

__all__ = ["Comment", "comments", "example_comments"]

# Comments that are instructions to a tool, not words to a reader.
_TOOL_COMMENT = re.compile(r"#\s*(noqa|fmt:|type:|pragma|pyright:|sphinx_gallery_)")


@dataclass(frozen=True)
class Comment:
    """One translatable comment of a code block.

    Attributes
    ----------
    first_line, last_line : int
        1-based lines of the code block that the comment spans (equal when one line).
    column : int
        Column of its ``#`` (the indentation for a full-line comment).
    trailing : bool
        True when the comment follows code on its line.
    text : str
        The words, without ``#``, lines joined with single spaces.
    """

    first_line: int
    last_line: int
    column: int
    trailing: bool
    text: str


def comments(code: str) -> list[Comment]:
    """The translatable comments of one code block, in order.

    Raises
    ------
    tokenize.TokenError, SyntaxError
        If ``code`` is not Python that :mod:`tokenize` can read.
    """
    found: list[Comment] = []
    code_lines = set()
    raw = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            raw.append(token)
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                tokenize.DEDENT, tokenize.ENDMARKER):  # fmt: skip
            code_lines.update(range(token.start[0], token.end[0] + 1))
    for token in raw:
        if _TOOL_COMMENT.match(token.string):
            continue
        line, column = token.start
        text = token.string[1:].strip()
        trailing = line in code_lines
        previous = found[-1] if found else None
        if (
            not trailing
            and previous is not None
            and not previous.trailing
            and previous.column == column
            and previous.last_line == line - 1
        ):
            found[-1] = Comment(
                previous.first_line, line, column, False, f"{previous.text} {text}".strip()
            )
        elif text:
            found.append(Comment(line, line, column, trailing, text))
    return found


def example_comments(path: Path) -> list[tuple[int, Comment]]:
    """Every translatable comment in the code blocks of the example at ``path``.

    Returns pairs of the code block's first line in the file (1-based, as sphinx-gallery
    counts it) and the comment. Lines hidden from readers are left out.
    """
    _, blocks = split_code_and_text_blocks(path)
    return [
        (first_line, comment)
        for label, content, first_line in blocks
        if label == "code"
        for comment in comments(remove_ignore_blocks(content))
    ]
