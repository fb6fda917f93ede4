"""compperf_docs.publish.descriptions: a page's description is its first prose, cut cleanly."""

from __future__ import annotations

from compperf_docs.publish.descriptions import description
from docutils.core import publish_doctree

PAGE = """
Title
=====

{first}

- torch, Python
- numpy

========  ========
Machine   Device
========  ========
a         cpu
========  ========

Devices
-------

.. note:: Not prose.

The devices found:

{second}
"""


def _doctree(first: str, second: str = "Second paragraph.") -> object:
    return publish_doctree(PAGE.format(first=first, second=second))


def test_only_paragraphs_no_titles_lists_tables_or_notes() -> None:
    text = description(_doctree("First paragraph."), 200)
    assert text == "First paragraph. Second paragraph."


def test_long_prose_is_cut_at_a_sentence_or_a_word_with_an_ellipsis() -> None:
    sentence = "Eager mode runs each operation as Python reaches it. "
    text = description(_doctree(sentence * 6), 200)
    assert text == (sentence * 3).strip()  # a whole sentence, nothing cut
    words = "one two three four five six seven eight nine ten " * 6
    text = description(_doctree(words), 100)
    assert len(text) <= 100
    assert text.endswith("…")
    assert not text.endswith(" …")
    assert words.startswith(text.removesuffix("…"))


def test_chinese_is_joined_without_spaces_and_cut_with_its_ellipsis() -> None:
    first = "编译器先把程序捕获为一张图，再改写它，并作为一个整体运行。"
    text = description(_doctree(first, "本章展示两种风格。"), 200, "zh_CN")
    assert text == first + "本章展示两种风格。"
    text = description(_doctree("没有句号的很长的一句话" * 30), 50, "zh_CN")
    assert text.endswith("……")
    assert len(text) <= 50
