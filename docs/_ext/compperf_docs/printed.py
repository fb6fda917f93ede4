"""What the examples printed, shown in the page's language.

An example page's output blocks (class ``sphx-glr-script-out``) hold what the English
build printed. In a zh_CN or ru build, each recorded message (:mod:`compperf_docs.recorded`)
whose English text fills whole lines of a block is replaced by its text in the page's
language, with the same values: longest first, so a sentence that contains a shorter
message is replaced as a whole. Raw data a program printed (tensors, tables, file names)
is no message and stays as printed. :func:`compperf_docs.figures.draw_languages` has
already stopped the build if a recorded message has no translation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform

from compperf_docs import recorded, shards

__all__ = ["PrintedLanguage", "replace_messages"]

_OUTPUT_CLASS = "sphx-glr-script-out"


def replace_messages(text: str, texts: dict[str, str]) -> str:
    """``text`` with each key of ``texts`` that fills whole lines replaced by its value.

    Longer keys first; a line replaced once is never matched again.
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
            if not any(done for _, done in window) and [t for t, _ in window] == wanted:
                new = [(line, True) for line in texts[english].split("\n")]
                lines[i : i + size] = new
                i += len(new)
            else:
                i += 1
    return "\n".join(line for line, _ in lines)


class PrintedLanguage(SphinxTransform):
    """Show an example page's printed messages in the page's language."""

    default_priority = 800

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
        from compperf_docs.figures import translations

        texts = translations(recording, self.config.language).texts
        for block in self._output_blocks():
            old = block.astext()
            new = replace_messages(old, texts)
            if new != old:
                block[:] = [nodes.Text(new)]
                block.rawsource = new

    def _output_blocks(self) -> list[nodes.literal_block]:
        found = []
        for element in self.document.findall(nodes.Element):
            if _OUTPUT_CLASS in element.get("classes", []):
                found += [
                    block for block in element.findall(nodes.literal_block) if block not in found
                ]
        return found
