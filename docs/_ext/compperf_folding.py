"""Device-aware pages: code that only another device runs is folded on a page built here.

An example marks a cell whose code only does its work on one kind of device with a first
comment line ``# compperf: cuda-only`` (or ``# compperf: cpu-only``). On a page whose
example ran on another device (the provenance record that the English build keeps in
``auto_examples/<chapter>/<stem>.messages.json``, as ``compperf_edition`` reads it), the
cell's code is folded into a ``<details>`` block labelled in the page's language, "Code
that only a GPU runs (this edition ran on a CPU)"; what the cell printed stays in the main
flow, where it says what the other device shows. Such a page, and the index of a
chapter with such cells, says at its top which device built it and that these blocks are
folded; the index of any other chapter built on a CPU says that it was. Nothing else changes: the downloads and notebooks keep the code as it ran.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

# The first comment line of a cell that only one kind of device runs, and that kind.
MARKERS = {"# compperf: cuda-only": "cuda", "# compperf: cpu-only": "cpu"}
_PROVENANCE = "Measured on "
_GALLERY = "auto_examples"

# The block's label, by (device the code needs, language); the device that built the page
# is the other one.
SUMMARY = {
    ("cuda", "en"): "Code that only a GPU runs (this edition ran on a CPU)",
    ("cuda", "zh_CN"): "只在 GPU 上运行的代码（本版本在 CPU 上运行）",
    ("cuda", "ru"): "Код, который выполняется только на GPU (это издание выполнено на CPU)",
    ("cpu", "en"): "Code that only a CPU runs (this edition ran on a GPU)",
    ("cpu", "zh_CN"): "只在 CPU 上运行的代码（本版本在 GPU 上运行）",
    ("cpu", "ru"): "Код, который выполняется только на CPU (это издание выполнено на GPU)",
}
# The line at the top of a page or chapter built on the other device.
NOTE = {
    ("cuda", "en"): (
        "This edition ran on a CPU. Code that only a GPU runs is folded into blocks "
        "labelled “Code that only a GPU runs”; the output under each says what a GPU shows."
    ),
    ("cuda", "zh_CN"): (
        "本版本在 CPU 上运行。只在 GPU 上运行的代码折叠在标为“只在 GPU 上运行的代码”的块中；"
        "每个块下面的输出说明 GPU 上会看到什么。"
    ),
    ("cuda", "ru"): (
        "Это издание выполнено на CPU. Код, который выполняется только на GPU, свёрнут в "
        "блоки «Код, который выполняется только на GPU»; вывод под каждым из них говорит, "
        "что показывает GPU."
    ),
    ("cpu", "en"): (
        "This edition ran on a GPU. Code that only a CPU runs is folded into blocks "
        "labelled “Code that only a CPU runs”; the output under each says what a CPU shows."
    ),
    ("cpu", "zh_CN"): (
        "本版本在 GPU 上运行。只在 CPU 上运行的代码折叠在标为“只在 CPU 上运行的代码”的块中；"
        "每个块下面的输出说明 CPU 上会看到什么。"
    ),
    ("cpu", "ru"): (
        "Это издание выполнено на GPU. Код, который выполняется только на CPU, свёрнут в "
        "блоки «Код, который выполняется только на CPU»; вывод под каждым из них говорит, "
        "что показывает CPU."
    ),
}


# The line at the top of a chapter built on a CPU that folds nothing.
NOTE_CPU = {
    "en": (
        "This edition's examples ran on a CPU (no GPU was used): what they print and "
        "draw was measured there."
    ),
    "zh_CN": "本版本的示例在 CPU 上运行（没有使用 GPU）：它们打印和绘制的内容都是在那里测得的。",
    "ru": (
        "Примеры этого издания выполнены на CPU (GPU не использовался): всё, что они "
        "печатают и рисуют, измерено там."
    ),
}


class device_only(nodes.General, nodes.Element):
    """Code that only another device runs: ``<details>`` in HTML, as is elsewhere."""


def _visit_html(self, node: device_only) -> None:
    summary = html.escape(node["summary"])
    self.body.append(
        f'<details class="compperf-device-only" data-device="{node["device"]}">'
        f"<summary>{summary}</summary>\n"
    )


def _depart_html(self, node: nodes.Element) -> None:
    self.body.append("</details>\n")


def _pass(self, node: nodes.Element) -> None:
    pass


def kind(device: str) -> str:
    """``"cuda"`` for ``cuda`` or ``cuda:0``, else the device type (``cpu``, ``mps``)."""
    return device.split(":")[0]


def recorded_device(srcdir: Path, chapter: str, stem: str) -> str | None:
    """The device an example's provenance line names, or None without records."""
    path = srcdir / _GALLERY / chapter / f"{stem}.messages.json"
    try:
        records = json.loads(path.read_text(encoding="utf-8")).get("records", [])
    except (OSError, ValueError):
        return None
    for record in records:
        if str(record.get("message", "")).startswith(_PROVENANCE):
            return str(record.get("values", {}).get("device", "")) or None
    return None


def marked(source: str) -> set[str]:
    """The devices that marked cells of an example's source need."""
    return {device for marker, device in MARKERS.items() if marker in source.splitlines()}


def _language(app: Sphinx) -> str:
    language = app.config.language or "en"
    return language if ("cuda", language) in SUMMARY else "en"


def _note(app: Sphinx, doctree: nodes.document, needed: str | None) -> None:
    """The line that says which device built the page, at the top of its first section
    (``needed``: the device of the code folded; None: a CPU build that folds nothing)."""
    text = NOTE_CPU[_language(app)] if needed is None else NOTE[(needed, _language(app))]
    note = nodes.paragraph(text, text, classes=["compperf-built-on"])
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        doctree.insert(0, note)
        return
    title = next(iter(section.findall(nodes.title)), None)
    section.insert(section.index(title) + 1 if title is not None else 0, note)


def _code_block(node: nodes.Node) -> bool:
    """A code block: a literal block, or sphinx-gallery's ``code_links_block`` (the code of
    a cell whose names link to the API docs replaces its literal block with one)."""
    return isinstance(node, nodes.literal_block) or type(node).__name__ == "code_links_block"


def _inside_code(node: nodes.Node) -> bool:
    """Whether ``node`` sits in a code block (sphinx-gallery's holds a literal block) or is
    folded already."""
    parent = node.parent
    while parent is not None:
        if _code_block(parent) or isinstance(parent, device_only):
            return True
        parent = parent.parent
    return False


def fold(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Fold the marked cells of an example page built on another device; say so at the top."""
    if app.builder.format != "html":
        return  # a message catalog (gettext) or another format keeps the page as written
    parts = docname.split("/")
    if len(parts) != 3 or parts[0] != _GALLERY:
        return
    srcdir = Path(app.srcdir)
    chapter, stem = parts[1], parts[2]
    if stem == "index":
        _chapter_note(app, doctree, srcdir, chapter)
        return
    device = recorded_device(srcdir, chapter, stem)
    if device is None:
        return
    built = kind(device)
    folded: set[str] = set()
    for block in list(doctree.findall(_code_block)):
        lines = block.astext().strip().splitlines()
        needed = MARKERS.get(lines[0].strip()) if lines else None
        if needed is None or needed == built or _inside_code(block):
            continue
        wrapper = device_only(
            "", summary=SUMMARY[(needed, _language(app))], device=needed, classes=[]
        )
        block.replace_self(wrapper)
        wrapper += block
        folded.add(needed)
    for needed in sorted(folded):
        _note(app, doctree, needed)


def _chapter_note(app: Sphinx, doctree: nodes.document, srcdir: Path, chapter: str) -> None:
    """A chapter's index says which device built it when one of its pages folds code."""
    needed: set[str] = set()
    built: set[str] = set()
    for source in sorted((srcdir / _GALLERY / chapter).glob("plot_*.py")):
        device = recorded_device(srcdir, chapter, source.stem)
        if device is None:
            continue
        built.add(kind(device))
        needed |= {want for want in marked(source.read_text("utf-8")) if want != kind(device)}
    for want in sorted(needed):
        _note(app, doctree, want)
    if not needed and built == {"cpu"}:
        _note(app, doctree, None)


def add_details_node(app: Sphinx, node: type[nodes.Element], visit: Callable) -> None:
    """Register ``node``: ``<details>`` in HTML (``visit`` opens it), its content elsewhere."""
    others = {name: (_pass, _pass) for name in ("latex", "text", "man", "texinfo")}
    app.add_node(node, html=(visit, _depart_html), **others)


def setup(app: Sphinx) -> dict[str, object]:
    add_details_node(app, device_only, _visit_html)
    app.connect("doctree-resolved", fold)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
