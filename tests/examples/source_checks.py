"""Checks on an example's source text: what a reader downloads, before anything runs.

Each function takes the source of one ``plot_*.py`` and returns what is wrong with it (an
empty list when nothing is), so that test_examples.py can name the problem and the unit
tests in test_source_checks.py can prove each check on small made-up sources.
"""

from __future__ import annotations

import ast
import io
import re
import string
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

__all__ = [
    "IGNORE_END",
    "IGNORE_START",
    "Share",
    "book_ending_problems",
    "machinery_share",
    "message_problems",
    "placeholder_problems",
    "run_yourself_problems",
    "section_titles",
    "text_blocks",
    "visible_test_switches",
]

IGNORE_START = "# sphinx_gallery_start_ignore"
IGNORE_END = "# sphinx_gallery_end_ignore"
# What only the tests may read; readers never see it.
_TEST_SWITCH = re.compile(r"COMPPERF_[A-Z_]+|\bos\.environ\b|\bos\.getenv\b|\bgetenv\(")
# A cell separator of sphinx-gallery: "# %%" or a line of at least 20 "#".
_CELL = re.compile(r"^(?:# ?%%.*|#{20,}.*)$")
_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+<>_:.])\1{2,}\s*$")
_BULLET = re.compile(r"^\s*[-*+] \S", re.MULTILINE)
_NUMBERED = re.compile(r"^\s*(?:#|\d+)\. \S", re.MULTILINE)
_RUN_YOURSELF = re.compile(r":ref:`(?:[^`<]*<)?run-yourself>?`")
# Sections allowed after "Exercises": the answers, at the end of the page.
_AFTER_EXERCISES = ("Answers",)
# compperf's functions that take a message, and how many leading arguments are messages.
_MESSAGE_ARGUMENTS = {"tr": 1, "tr_plural": 2, "say": 1}
# say() also takes a message already made (a Text) by one of these, called right there.
_MAKES_TEXT = ("tr", "tr_plural")


def text_blocks(source: str) -> list[str]:
    """The reST text of an example, as sphinx-gallery reads it: the docstring, then each
    comment block that follows a cell separator (``# %%``), without its ``#`` marks."""
    docstring = ast.get_docstring(ast.parse(source), clean=True) or ""
    blocks = [docstring]
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        if _CELL.match(lines[i]):
            i += 1
            comment = []
            while i < len(lines) and lines[i].startswith("#") and not _CELL.match(lines[i]):
                comment.append(re.sub(r"^# ?", "", lines[i]))
                i += 1
            blocks.append("\n".join(comment))
        else:
            i += 1
    return blocks


def _is_title(above: str, line: str) -> bool:
    title = above.strip()
    return bool(
        _ADORNMENT.match(line)
        and title
        and not _ADORNMENT.match(above)
        and not above.startswith(" ")
        and len(line.rstrip()) >= len(title)
    )


def section_titles(text: str) -> list[str]:
    """Titles of the reST sections in a text: a line of text over an underline at least
    as long (an overline too is allowed)."""
    lines = text.splitlines()
    return [above.strip() for above, line in pairwise(lines) if _is_title(above, line)]


def _sections(source: str) -> list[tuple[str, str]]:
    """(title, its text up to the next title) for every section of the example, in order;
    text before a block's first title belongs to the section before it."""
    found: list[tuple[str, str]] = []
    for block in text_blocks(source):
        lines = block.splitlines()
        starts = [i for i, pair in enumerate(pairwise(lines)) if _is_title(*pair)]
        head = "\n".join(lines[: starts[0]] if starts else lines)
        if found:
            title, text = found[-1]
            found[-1] = (title, f"{text}\n{head}")
        for number, start in enumerate(starts):
            end = starts[number + 1] if number + 1 < len(starts) else len(lines)
            found.append((lines[start].strip(), "\n".join(lines[start + 2 : end])))
    return found


def book_ending_problems(source: str) -> list[str]:
    """The page must end like a book's section: "Summary" (a bullet list), then
    "Exercises" (a numbered list); only an "Answers" section may follow."""
    sections = _sections(source)
    titles = [title for title, _ in sections]
    while titles and titles[-1] in _AFTER_EXERCISES:
        titles.pop()
    if titles[-2:] != ["Summary", "Exercises"]:
        expected = f"expected [..., 'Summary', 'Exercises'], then optionally {_AFTER_EXERCISES}"
        return [f"the last sections are {titles[-3:]}, {expected}"]
    texts = dict(sections)
    problems = []
    if not _BULLET.search(texts["Summary"]):
        problems.append("the Summary section has no bullet list ('- point')")
    if not _NUMBERED.search(texts["Exercises"]):
        problems.append("the Exercises section has no numbered list ('#. question')")
    return problems


def visible_test_switches(source: str) -> list[str]:
    """Lines outside sphinx-gallery's ignore blocks that read test settings (the
    environment, ``COMPPERF_*``), and ignore blocks left open or never opened.

    Only a comment token counts as a marker: the same text inside a string does not.
    """
    comments = {
        token.start[0]: token.string.strip()
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    problems = []
    hidden_since = None
    for number, line in enumerate(source.splitlines(), start=1):
        marker = comments.get(number)
        if marker == IGNORE_START:
            if hidden_since is not None:
                problems.append(f"line {number}: {IGNORE_START} inside another ignore block")
            hidden_since = number
        elif marker == IGNORE_END:
            if hidden_since is None:
                problems.append(f"line {number}: {IGNORE_END} without a start")
            hidden_since = None
        elif hidden_since is None and _TEST_SWITCH.search(line):
            problems.append(f"line {number}: visible to readers: {line.strip()}")
    if hidden_since is not None:
        problems.append(f"line {hidden_since}: {IGNORE_START} is never ended")
    return problems


def run_yourself_problems(source: str) -> list[str]:
    """The module docstring must have a paragraph that starts "To run this example
    yourself", gives a ``pip install`` command and points to :ref:`run-yourself`."""
    docstring = ast.get_docstring(ast.parse(source), clean=True) or ""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", docstring)]
    found = [p for p in paragraphs if p.startswith("To run this example yourself")]
    if not found:
        return ['the docstring has no paragraph starting "To run this example yourself"']
    problems = []
    if "pip install" not in found[0]:
        problems.append("its 'To run this example yourself' paragraph gives no `pip install`")
    if not _RUN_YOURSELF.search(found[0]):
        problems.append(
            "its 'To run this example yourself' paragraph does not point to "
            ":ref:`run-yourself` (where compperf comes from)"
        )
    return problems


def _compperf_function(call: ast.Call, imported: dict[str, str]) -> str | None:
    """The compperf message function that ``call`` calls (``compperf.say(...)``, or a
    name imported with ``from compperf import say``), or None."""
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "compperf"
        and func.attr in _MESSAGE_ARGUMENTS
    ):
        return func.attr
    if isinstance(func, ast.Name):
        return imported.get(func.id)
    return None


def _message_calls(source: str) -> Iterator[tuple[ast.Call, str | None, dict[str, str]]]:
    """Every call in ``source``, the compperf message function it names (or None), and the
    names ``from compperf import ...`` gave those functions."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "compperf"
        for alias in node.names
        if alias.name in _MESSAGE_ARGUMENTS
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node, _compperf_function(node, imported), imported


def message_problems(source: str) -> list[str]:
    """Calls of ``compperf.tr``, ``tr_plural`` or ``say`` whose message is not a string
    literal (an f-string, a variable, a concatenation, ``str.format``): the catalogs are
    extracted from the source, so such a message reaches no translator. ``say`` may also
    take a message made right there by ``tr`` or ``tr_plural``.
    """
    problems = []
    for node, name, imported in _message_calls(source):
        if name is None:
            continue
        count = _MESSAGE_ARGUMENTS[name]
        if len(node.args) < count or any(isinstance(a, ast.Starred) for a in node.args):
            problems.append(f"line {node.lineno}: {name}() without its message as a literal")
            continue
        for argument in node.args[:count]:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                continue
            if (
                name == "say"
                and isinstance(argument, ast.Call)
                and _compperf_function(argument, imported) in _MAKES_TEXT
            ):
                continue
            kind = "an f-string" if isinstance(argument, ast.JoinedStr) else "not a literal"
            problems.append(
                f"line {node.lineno}: the message of {name}() is {kind}: "
                f"{ast.unparse(argument)[:60]}"
            )
    return problems


def _placeholders(message: str) -> set[str]:
    """The names of a message's placeholders: ``{seconds:.4f}`` is ``seconds``."""
    return {
        re.split(r"[.\[]", field)[0]
        for _, field, _, _ in string.Formatter().parse(message)
        if field is not None
    }


def placeholder_problems(source: str) -> list[str]:
    """Literal messages of ``compperf.tr``, ``tr_plural`` and ``say`` whose placeholders
    and keyword values disagree. A branch that did not run (a GPU-only cell on a CPU) would
    raise only on the reader's machine; a value that no placeholder uses is a slip.
    ``tr_plural`` fills ``{n}`` itself."""
    problems = []
    for node, name, _imported in _message_calls(source):
        messages = node.args[: _MESSAGE_ARGUMENTS.get(name, 0)]
        literal = all(isinstance(m, ast.Constant) and isinstance(m.value, str) for m in messages)
        if not messages or not literal or any(k.arg is None for k in node.keywords):
            continue  # no literal message, or **values: nothing to compare
        needed = set().union(*(_placeholders(m.value) for m in messages))
        given = {keyword.arg for keyword in node.keywords}
        if name == "tr_plural":
            given.add("n")
        if needed - given:
            missing = ", ".join(sorted(needed - given))
            problems.append(f"line {node.lineno}: {name}() gives no value for {missing}")
        if given - needed - {"n"}:
            unused = ", ".join(sorted(given - needed - {"n"}))
            problems.append(f"line {node.lineno}: {name}() message does not use {unused}")
    return problems


# What counts as message machinery in the code a reader sees (issue 21): the lines of
# compperf's message calls, a print() around one, the if/elif/else lines of a branch that
# only chooses a sentence, and a dict of values made only for messages.
_SAY_METHODS = ("say",)  # verdict.say(...) and the like: a message call too


@dataclass(frozen=True)
class Share:
    """How much of an example's visible code is message machinery.

    Attributes
    ----------
    machinery : int
        Visible code lines that only translate, format or choose a printed sentence.
    code : int
        Visible code lines: not blank, not only a comment, outside the module docstring
        and outside sphinx-gallery's ignore blocks.
    lines : tuple of int
        The machinery lines' numbers in the text measured (for a message naming them).
    """

    machinery: int
    code: int
    lines: tuple[int, ...] = ()

    @property
    def share(self) -> float:
        """``machinery / code`` (0 for a page without code)."""
        return self.machinery / self.code if self.code else 0.0


def _hidden_lines(source: str) -> set[int]:
    hidden, start = set(), None
    for number, line in enumerate(source.splitlines(), start=1):
        if line.strip() == IGNORE_START:
            start = number
        elif line.strip() == IGNORE_END and start is not None:
            hidden.update(range(start, number + 1))
            start = None
    return hidden


def _code_lines(source: str) -> set[int]:
    """Lines holding a token other than a comment, a newline or the docstring."""
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    docstring_end = 0
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        docstring_end = first.end_lineno or 0
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER}  # fmt: skip
    found = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            found.update(range(token.start[0], token.end[0] + 1))
    return {n for n in found if n > docstring_end} - _hidden_lines(source)


def _span(node: ast.AST) -> set[int]:
    return set(range(node.lineno, (node.end_lineno or node.lineno) + 1))


def _is_message_call(node: ast.AST, imported: dict[str, str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    if _compperf_function(node, imported):
        return True
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr in _SAY_METHODS


def _only_messages(body: list[ast.stmt], imported: dict[str, str]) -> bool:
    """Every statement of ``body`` prints or chooses a sentence, and nothing else."""
    for statement in body:
        if isinstance(statement, ast.Expr):
            value = statement.value
            if _is_message_call(value, imported):
                continue
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "print"
                and value.args
                and all(_is_message_call(a, imported) for a in value.args)
            ):
                continue
            return False
        elif isinstance(statement, ast.If):
            if not (
                _only_messages(statement.body, imported)
                and _only_messages(statement.orelse, imported)
            ):
                return False
        elif not isinstance(statement, ast.Pass):
            return False
    return True


def _branch_lines(node: ast.If, source_lines: list[str]) -> set[int]:
    """The ``if``/``elif``/``else`` header lines of a branch that only chooses a sentence."""
    found = set(range(node.lineno, node.body[0].lineno))
    orelse = node.orelse
    while orelse:
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            inner = orelse[0]
            found |= set(range(inner.lineno, inner.body[0].lineno))
            orelse = inner.orelse
            continue
        # "else:" stands alone above its body
        line = orelse[0].lineno - 1
        while line > 0 and source_lines[line - 1].strip() != "else:":
            line -= 1
        if line > 0:
            found.add(line)
        break
    return found


def _is_values(node: ast.expr) -> bool:
    """A dict made in place (``{...}``, ``dict(...)``): the values of a message."""
    return isinstance(node, ast.Dict) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"
    )


def machinery_share(source: str) -> Share:
    """Measure the message machinery in an example's visible code (issue 21).

    Machinery lines are: every line of a call of ``compperf.tr``, ``tr_plural`` or
    ``say`` (or a ``.say(...)`` method, e.g. a verdict's), with a ``print(...)`` around
    one; the ``if``/``elif``/``else`` lines of a branch whose every statement prints a
    message; and a dict made in place whose name is read only inside message calls (the
    values for ``**values``). Figure labels made with ``tr`` count too. ``print(x)`` of a
    result (a measurement, a verdict, a table) is no machinery: it shows what ran.
    """
    tree = ast.parse(source)
    source_lines = source.splitlines()
    imported = {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "compperf"
        for alias in node.names
        if alias.name in _MESSAGE_ARGUMENTS
    }
    machinery: set[int] = set()
    inside: set[tuple[int, int]] = set()  # positions of names read inside message calls
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_message_call(node, imported):
            machinery |= _span(node)
            inside |= {(n.lineno, n.col_offset) for n in ast.walk(node) if isinstance(n, ast.Name)}
        elif (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "print"
            and node.value.args
            and all(_is_message_call(a, imported) for a in node.value.args)
        ):
            machinery |= _span(node)
        elif isinstance(node, ast.If) and _only_messages([node], imported):
            machinery |= _branch_lines(node, source_lines)
    reads: dict[str, list[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.setdefault(node.id, []).append((node.lineno, node.col_offset))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _is_values(node.value)
        ):
            used = reads.get(node.targets[0].id, [])
            if used and all(position in inside for position in used):
                machinery |= _span(node)
    code = _code_lines(source)
    lines = tuple(sorted(machinery & code))
    return Share(len(lines), len(code), lines)
