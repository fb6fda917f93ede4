"""The source checks of test_examples.py, proved on small made-up examples."""

from __future__ import annotations

import textwrap

import pytest
from source_checks import (
    book_ending_problems,
    message_problems,
    placeholder_problems,
    run_yourself_problems,
    section_titles,
    text_blocks,
    visible_test_switches,
)

HEAD = '''"""
A title
=======

What you learn, in two lines.

To run this example yourself, ``pip install matplotlib`` and get compperf as
:ref:`run-yourself` says.
"""
'''

BOOK_END = """
# %%
# Summary
# -------
#
# - Timing needs a synchronization.
# - The median is robust.

# %%
# Exercises
# ---------
#
# #. Why is 10000 t2 larger than 9999 t1?
# #. Try it on a CPU.
"""


def example(*parts: str) -> str:
    return HEAD + "".join(textwrap.dedent(part) for part in parts)


def test_text_blocks_and_titles_follow_sphinx_gallery() -> None:
    source = example("import torch\n", BOOK_END, "print(1)\n")
    blocks = text_blocks(source)
    assert blocks[0].startswith("A title\n=======")
    assert [title for block in blocks for title in section_titles(block)] == [
        "A title",
        "Summary",
        "Exercises",
    ]
    assert section_titles("Short\n--\n") == []  # an underline shorter than its title


def test_book_ending_passes() -> None:
    assert book_ending_problems(example("print(1)\n", BOOK_END)) == []
    # Code after the exercises (an answer) and an Answers section are fine.
    answers = "\n# %%\n# Answers\n# -------\n#\n# 1. Because.\n\nprint(2)\n"
    assert book_ending_problems(example(BOOK_END, "print(1)\n", answers)) == []


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (example("print(1)\n"), "the last sections are ['A title']"),
        (
            example(BOOK_END.replace("Summary\n# -------", "Recap\n# -----")),
            "expected [..., 'Summary', 'Exercises']",
        ),
        (
            example(BOOK_END, "\n# %%\n# More\n# ----\n#\n# Text.\n"),
            "the last sections are ['Summary', 'Exercises', 'More']",
        ),
        (example(BOOK_END.replace("# #. ", "# ")), "Exercises section has no numbered list"),
        (example(BOOK_END.replace("# - ", "# ")), "Summary section has no bullet list"),
    ],
)
def test_book_ending_fails(source: str, message: str) -> None:
    problems = book_ending_problems(source)
    assert any(message in problem for problem in problems), problems


HIDDEN = """
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os
if os.environ.get("COMPPERF_FAST") == "1":
    SIZES = [1, 16]
# sphinx_gallery_end_ignore
"""


def test_hidden_switch_passes() -> None:
    assert visible_test_switches(example("SIZES = [1, 64, 256]\n", HIDDEN, BOOK_END)) == []


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ('FAST = os.environ.get("COMPPERF_FAST") == "1"\n', "line 10: visible to readers"),
        ("# Set COMPPERF_OUTPUT_DIR to keep the trace.\n", "visible to readers"),
        ('folder = os.getenv("TMP")\n', "visible to readers"),
        (HIDDEN.replace("# sphinx_gallery_end_ignore\n", ""), "is never ended"),
        ("# sphinx_gallery_end_ignore\n", "without a start"),
        (HIDDEN + 'print(os.environ["HOME"])\n', "visible to readers"),
    ],
)
def test_visible_switch_fails(code: str, message: str) -> None:
    problems = visible_test_switches(example(code))
    assert any(message in problem for problem in problems), problems


def test_marker_inside_a_string_hides_nothing() -> None:
    code = 's = """\n# sphinx_gallery_start_ignore\n"""\nx = os.environ["A"]\n'
    assert any("visible to readers" in p for p in visible_test_switches(example(code)))


def test_run_yourself_passes() -> None:
    assert run_yourself_problems(example("print(1)\n")) == []
    other_link = HEAD.replace(":ref:`run-yourself`", ":ref:`the set-up page <run-yourself>`")
    assert run_yourself_problems(other_link) == []


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('"""\nA title\n=======\n\nWhat you learn.\n"""\n', 'no paragraph starting "To run'),
        (HEAD.replace("``pip install matplotlib``", "matplotlib"), "gives no `pip install`"),
        (HEAD.replace(":ref:`run-yourself`", "the site"), "does not point to"),
    ],
)
def test_run_yourself_fails(source: str, message: str) -> None:
    problems = run_yourself_problems(source)
    assert any(message in problem for problem in problems), problems


def test_literal_messages_pass() -> None:
    code = """
    import compperf
    from compperf import say as conclude, tr

    compperf.say("On {device} it took {time}.", device=device, time=t)
    compperf.say(compperf.tr_plural("{n} run", "{n} runs", n))
    conclude(tr("A label"))
    print(compperf.tr("A long message, " "in two literals: {x:.2f}", x=1.0))
    label = compperf.tr_plural("{n} product", "{n} products", steps)
    say(f"a local helper named say is not compperf's: {label}")
    """
    assert message_problems(example(code, BOOK_END)) == []


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ('compperf.say(f"On {device} it took {t}.")\n', "the message of say() is an f-string"),
        ("compperf.tr(label)\n", "the message of tr() is not a literal: label"),
        ('compperf.tr("a" + b)\n', "the message of tr() is not a literal"),
        ('compperf.tr("{x}".format(x=1))\n', "the message of tr() is not a literal"),
        ('compperf.tr_plural("{n} run", plural, n)\n', "tr_plural() is not a literal: plural"),
        ("compperf.say(text)\n", "the message of say() is not a literal: text"),
        ('compperf.say(str(compperf.tr("x")))\n', "the message of say() is not a literal"),
        ('from compperf import tr\ntr(f"{x}")\n', "the message of tr() is an f-string"),
        ("compperf.tr(*parts)\n", "tr() without its message as a literal"),
    ],
)
def test_message_that_is_no_literal_fails(code: str, message: str) -> None:
    problems = message_problems(example("import compperf\n", code, BOOK_END))
    assert len(problems) == 1, problems
    assert message in problems[0]


def test_placeholders_with_their_values_pass() -> None:
    code = """
    import compperf

    compperf.say("On {device} it took {time:.2f} s.", device=d, time=t)
    compperf.tr_plural("{n} run on {device}", "{n} runs on {device}", k, device=d)
    compperf.tr_plural("one run", "{n} runs", k)
    compperf.tr("{row[0]} and {row.name}", row=r)
    compperf.tr("{a} {b}", **values)
    """
    assert placeholder_problems(example(code, BOOK_END)) == []


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ('compperf.say("On {device}.")\n', "say() gives no value for device"),
        ('compperf.tr("{a:.2f} {b}", a=1)\n', "tr() gives no value for b"),
        ('compperf.tr("done", device=d)\n', "tr() message does not use device"),
        ('compperf.tr_plural("{n} run", "{n} runs on {device}", k)\n', "no value for device"),
    ],
)
def test_placeholder_without_its_value_fails(code: str, message: str) -> None:
    problems = placeholder_problems(example("import compperf\n", code, BOOK_END))
    assert len(problems) == 1, problems
    assert message in problems[0]
