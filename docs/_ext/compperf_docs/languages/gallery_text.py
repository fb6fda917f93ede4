"""sphinx-gallery's English page furniture, rendered again in the language being built.

sphinx-gallery writes its labels (download buttons, "Go to the end", the running time,
the signature, thumbnail titles) as fixed English text into the generated ``.rst``. These
transforms rebuild that text from messages of the site's UI catalog (``sphinx.po``) and
keep it out of the page catalogs, so that translators never see it and no page catalog
holds a number that changes from run to run.
"""

from __future__ import annotations

import html
import re
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from compperf_docs import order, workarounds
from compperf_docs.languages import i18n

__all__ = ["GalleryFurniture", "GalleryThumbnails", "timing_text"]

logger = logging.getLogger(__name__)

# "(0 minutes 2.263 seconds)" as sphinx-gallery 0.22 writes it after the bold label.
_TIMING = re.compile(r"\((?P<minutes>\d+) minutes (?P<seconds>\d+(?:\.\d+)?) seconds\)")
# A message with its link text in brackets: "[Go to the end] to download ...".
_BRACKETED = re.compile(r"^(?P<before>[^\[\]]*)\[(?P<link>[^\[\]]+)\](?P<after>[^\[\]]*)$")
_THUMB_TOOLTIP = re.compile(r'(<div class="sphx-glr-thumbcontainer" tooltip=")[^"]*(")')
_THUMB_TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">).*?(</div>)', re.DOTALL)


def _download_labels() -> dict[str, str]:
    """sphinx-gallery's English button label -> the message that replaces it."""
    return {
        "Download Jupyter notebook": _("Download Jupyter notebook: {file}"),
        "Download Python source code": _("Download Python source code: {file}"),
        "Download zipped": _("Download zipped: {file}"),
        "Download all examples in Python source code": _(
            "Download all examples in Python source code: {file}"
        ),
        "Download all examples in Jupyter notebooks": _(
            "Download all examples in Jupyter notebooks: {file}"
        ),
    }


def timing_text(minutes: str, seconds: str) -> tuple[str, str]:
    """The running-time line's bold label and its value, numbers kept as measured."""
    label = _("Total running time of the script:")
    value = _("({minutes} minutes {seconds} seconds)").format(minutes=minutes, seconds=seconds)
    return label, value


def _untranslatable(paragraph: nodes.paragraph) -> None:
    # Never a catalog message: the text above comes from the UI catalog instead.
    paragraph["translatable"] = False


def _only_a_page_link(paragraph: nodes.paragraph) -> bool:
    children = paragraph.children
    return (
        len(children) == 1
        and isinstance(children[0], addnodes.pending_xref)
        and children[0].get("reftype") == "doc"
        and not children[0].get("refexplicit")
    )


class GalleryFurniture(SphinxTransform):
    """Re-render sphinx-gallery's labels on example and chapter pages.

    Chapter pages' thumbnail links (a bare :doc: reference) are left out of the catalogs
    too: they show the linked page's title, translated in that page's catalog.
    """

    default_priority = order.GALLERY_FURNITURE

    def apply(self, **kwargs: Any) -> None:
        if any("sphx-glr" in " ".join(n["classes"]) for n in self.document.findall(nodes.Element)):
            i18n.note_ui_catalog(self.env)
        for paragraph in list(self.document.findall(nodes.paragraph)):
            classes = paragraph.get("classes", [])
            if "sphx-glr-timing" in classes:
                self._timing(paragraph)
            elif "sphx-glr-signature" in classes:
                self._signature(paragraph)
            elif isinstance(paragraph.parent, nodes.container) and any(
                c.startswith("sphx-glr-download") for c in paragraph.parent.get("classes", [])
            ):
                self._download(paragraph)
            elif "sphx-glr-download-link-note" in paragraph.parent.get("classes", []):
                self._go_to_end(paragraph)
            elif _only_a_page_link(paragraph):
                # A thumbnail's :doc:`page` shows that page's own translated title.
                _untranslatable(paragraph)

    def _unknown(self, node: nodes.Node, what: str) -> None:
        logger.warning(
            "sphinx-gallery wrote %s that compperf_docs.languages.gallery_text does not know: %r; "
            "teach it the new wording so that every language gets it",
            what,
            node.astext(),
            location=node,
            type="compperf",
            subtype="gallery-text",
        )

    def _timing(self, paragraph: nodes.paragraph) -> None:
        found = _TIMING.search(paragraph.astext())
        if found is None:
            self._unknown(paragraph, "a running-time line")
            return
        label, value = timing_text(found["minutes"], found["seconds"])
        paragraph[:] = [nodes.strong(label, label), nodes.Text(" " + value)]
        _untranslatable(paragraph)

    def _signature(self, paragraph: nodes.paragraph) -> None:
        for reference in paragraph.findall(nodes.reference):
            text = _("Gallery generated by Sphinx-Gallery")
            reference[:] = [nodes.Text(text)]
        _untranslatable(paragraph)

    def _download(self, paragraph: nodes.paragraph) -> None:
        reference = next(iter(paragraph.findall(addnodes.download_reference)), None)
        english = paragraph.astext()
        prefix, _sep, file = english.partition(": ")
        message = _download_labels().get(prefix)
        if reference is None or message is None:
            self._unknown(paragraph, "a download button")
            return
        text = message.format(file=file)
        for literal in reference.findall(nodes.literal):
            literal[:] = [nodes.Text(text)]
        _untranslatable(paragraph)

    def _go_to_end(self, paragraph: nodes.paragraph) -> None:
        xref = next(iter(paragraph.findall(addnodes.pending_xref)), None)
        message = _("[Go to the end] to download the full example code.")
        parts = _BRACKETED.match(message)
        if xref is None or parts is None or "Go to the end" not in paragraph.astext():
            self._unknown(paragraph, "a 'Go to the end' note")
            return
        inline = xref.children[0]
        inline[:] = [nodes.Text(parts["link"])]
        paragraph[:] = [nodes.Text(parts["before"]), xref, nodes.Text(parts["after"])]
        _untranslatable(paragraph)


class GalleryThumbnails(SphinxPostTransform):
    """Give chapter pages' thumbnails the translated title and summary of their example.

    sphinx-gallery writes both as raw HTML, which catalogs cannot reach; each example's
    own translated title and first paragraph are used instead.
    """

    default_priority = order.GALLERY_THUMBNAILS
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        if self.config.language == "en":
            return  # sphinx-gallery's own English text
        target = None
        for node in list(self.document.findall(lambda n: isinstance(n, nodes.raw))):
            text = node.astext()
            if "sphx-glr-thumbcontainer" in text:
                target = self._target_after(node)
                if target is None or not _THUMB_TOOLTIP.search(text):
                    self._slipped(node, "a thumbnail without the tooltip or link it expects")
                    continue
                summary = html.escape(self._summary(target), quote=True)
                text = _THUMB_TOOLTIP.sub(lambda m, s=summary: m[1] + s + m[2], text)
            if "sphx-glr-thumbnail-title" in text and target in self.env.titles:
                if not _THUMB_TITLE.search(text):
                    self._slipped(node, "a thumbnail title it cannot find")
                title = html.escape(self.env.titles[target].astext())
                text = _THUMB_TITLE.sub(lambda m, t=title: m[1] + t + m[2], text)
                target = None
            if text != node.astext():
                node.replace_self(nodes.raw("", text, format="html"))

    def _slipped(self, node: nodes.Node, what: str) -> None:
        workarounds.slipped(
            "gallery-thumbnails",
            f"sphinx-gallery wrote {what}: {node.astext()[:120]!r}",
            location=node,
        )

    def _target_after(self, node: nodes.Node) -> str | None:
        for later in node.findall(
            addnodes.pending_xref, include_self=False, descend=True, siblings=True
        ):
            if later.get("reftype") == "doc":
                return later["reftarget"].lstrip("/")
        return None

    def _summary(self, docname: str) -> str:
        doctree = self.env.get_doctree(docname)
        section = next(iter(doctree.findall(nodes.section)), None)
        paragraph = next(iter(section.findall(nodes.paragraph)), None) if section else None
        return " ".join(paragraph.astext().split()) if paragraph is not None else ""
