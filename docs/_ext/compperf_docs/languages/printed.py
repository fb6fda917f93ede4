"""What the examples printed, shown in the page's language.

An example page's output blocks (class ``sphx-glr-script-out``) hold what the English
build printed. In a zh_CN or ru build, each recorded message (:mod:`compperf_docs.execute.recorded`)
whose English text fills whole lines of a block is replaced by its text in the page's
language, with the same values: longest first, so a sentence that contains a shorter
message is replaced as a whole. Raw data a program printed (tensors, tables, file names)
is no message and stays as printed. :func:`compperf_docs.languages.figures.draw_languages` has
already stopped the build if a recorded message has no translation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from compperf_docs import order, shards
from compperf_docs.execute import recorded

__all__ = ["PrintedLanguage", "english_left", "replace_messages"]

logger = logging.getLogger(__name__)

_OUTPUT_CLASS = "sphx-glr-script-out"


def _shift(wanted: list[str], window: list[str]) -> int | None:
    """Columns of indentation that ``window`` lost against ``wanted``, if that is all.

    sphinx-gallery removes the indentation that all lines of an output block share, so a
    message printed as ``"     9,691 bytes"`` may show as ``"  9,691 bytes"``.
    """
    first, shown = wanted[0], window[0]
    shift = len(first) - len(shown)
    if shift < 0 or first[shift:] != shown or first[:shift].strip():
        return None
    for line, seen in zip(wanted[1:], window[1:], strict=True):
        if line[:shift].strip() or line[shift:] != seen:
            return None
    return shift


def replace_messages(text: str, texts: dict[str, str]) -> str:
    """``text`` with each key of ``texts`` that fills whole lines replaced by its value.

    Longer keys first; a line replaced once is never matched again. A match may have lost
    the same indentation on every line (as sphinx-gallery's output blocks do); the
    replacement loses it too.
    """
    # Each line: (text, already replaced).
    lines = [(line, False) for line in text.split("\n")]
    for english in sorted(texts, key=len, reverse=True):
        wanted = english.split("\n")
        if not english.strip() or texts[english] == english:
            continue
        size, i = len(wanted), 0
        while i + size <= len(lines):
            window = lines[i : i + size]
            shift = None
            if not any(done for _, done in window):
                shift = _shift(wanted, [t for t, _ in window])
            if shift is not None:
                new = [
                    (line[shift:] if not line[:shift].strip() else line.lstrip(), True)
                    for line in texts[english].split("\n")
                ]
                lines[i : i + size] = new
                i += len(new)
            else:
                i += 1
    return "\n".join(line for line, _ in lines)


def english_left(text: str, texts: dict[str, str]) -> list[str]:
    """Sentences of ``texts`` (three words or more) still shown in English in ``text``.

    A message printed inside a line of raw output, or padded in a way the replacement
    did not recognise, would otherwise stay English on a translated page without a word.
    """
    shown = {line.strip() for line in text.split("\n")}
    return [
        english
        for english, translated in texts.items()
        if translated != english
        and len(english.split()) >= 3
        and all(line.strip() in shown for line in english.split("\n") if line.strip())
    ]


class PrintedLanguage(SphinxTransform):
    """Show an example page's printed messages in the page's language."""

    default_priority = order.PRINTED_LANGUAGE

    def apply(self, **kwargs: Any) -> None:
        if self.config.language == "en" or not self.env.docname.startswith(
            f"{shards.GALLERY_ROOT}/"
        ):
            return
        source = Path(self.document["source"])
        recording = recorded.load(source.parent, source.stem)
        if recording is None:
            return
        self.env.note_dependency(str(recording.path))
        from compperf import i18n

        for catalog in sorted((i18n.LOCALES / self.config.language).rglob("*.mo")):
            self.env.note_dependency(str(catalog))
        from compperf_docs.languages.figures import translations

        texts = translations(recording, self.config.language).texts
        for block in self._output_blocks():
            old = block.astext()
            new = replace_messages(old, texts)
            if new != old:
                block[:] = [nodes.Text(new)]
                block.rawsource = new
            for english in english_left(new, texts):
                logger.warning(
                    "%s: printed %r stays English on the %s page: print it on lines of "
                    "its own (compperf.say, or print(compperf.tr(...)))",
                    recording.example,
                    english,
                    self.config.language,
                    location=block,
                )

    def _output_blocks(self) -> list[nodes.literal_block]:
        found = []
        for element in self.document.findall(nodes.Element):
            if _OUTPUT_CLASS in element.get("classes", []):
                found += [
                    block for block in element.findall(nodes.literal_block) if block not in found
                ]
        return found
