"""Notebooks made from a translated example script, as sphinx-gallery makes the English ones.

:func:`notebook` gives the cells of :func:`sphinx_gallery.notebook.jupyter_notebook`
(the install cell first, then a code cell per code block and a Markdown cell per text
block), with the site's pandoc conversion (:mod:`compperf_docs.publish.notebook_markdown`) and
one more filter, ``pandoc/notebook_language.lua``, from :func:`pandoc_options`. The text
blocks of a notebook go through pandoc in one run instead of one run each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pypandoc
import sphinx.locale
from sphinx_gallery.notebook import (
    add_code_cell,
    add_markdown_cell,
    jupyter_notebook,
    jupyter_notebook_skeleton,
    promote_jupyter_cell_magic,
)
from sphinx_gallery.py_source_parser import (
    Block,
    remove_config_comments,
    remove_ignore_blocks,
    split_code_and_text_blocks,
)

__all__ = ["LANGUAGE_FILTER", "notebook", "pandoc_options"]

# Joins the lines of CJK paragraphs and titles admonitions in the language (see the file).
LANGUAGE_FILTER = Path(__file__).resolve().parents[1] / "pandoc" / "notebook_language.lua"


def pandoc_options(conf: dict, links: dict[str, list[str]] | None = None) -> dict:
    """The site's pandoc options, and the language's filter with Sphinx's admonition titles.

    ``links`` (see :func:`compperf_docs.publish.notebook_markdown.link_targets`) replaces the
    English pages' targets, so that a role leads to the page in the notebook's language.
    """
    options = dict(conf.get("pypandoc") or {})
    labels = {
        getattr(label, "_message", str(label)): str(label)
        for label in sphinx.locale.admonitionlabels.values()
    }
    metadata = f"--metadata=compperf-labels:{json.dumps(labels, ensure_ascii=False)}"
    arguments = [*options.get("extra_args", []), metadata]
    if links is not None:
        arguments = [
            f"--metadata=compperf-links:{json.dumps(links, ensure_ascii=False)}"
            if argument.startswith("--metadata=compperf-links:")
            else argument
            for argument in arguments
        ]
    options["extra_args"] = arguments
    options["filters"] = [*options.get("filters", []), str(LANGUAGE_FILTER)]
    return options


# Between two text blocks converted in one pandoc run: a paragraph no example writes.
_SEPARATOR = "COMPPERF-TEXT-BLOCK-SEPARATOR-7f3a"


def _markdown(texts: list[str], options: dict) -> list[str] | None:
    """The Markdown of each text block, converted in one pandoc run; None if it cannot split.

    sphinx-gallery runs pandoc once per block (about 0.1 s each). Blocks are converted
    alone there, so the joined document keeps them apart with a separator paragraph at
    the left margin, which closes every list, quote and directive before it; section
    levels come from each title's own underline (``pandoc/rst_sections.lua``).
    """
    joined = f"\n\n{_SEPARATOR}\n\n".join(text.rstrip("\n") for text in texts)
    markdown = pypandoc.convert_text(joined, to="md", format="rst", **options)
    parts = markdown.split(f"\n\n{_SEPARATOR}\n\n")
    if len(parts) != len(texts) or _SEPARATOR in markdown.replace(f"\n\n{_SEPARATOR}\n\n", ""):
        return None
    return [part + "\n" for part in parts[:-1]] + [parts[-1]]


def notebook(script: Path, conf: dict, options: dict) -> str:
    """The notebook of ``script``, made as sphinx-gallery makes an example's (gen_rst).

    The cells are those of :func:`sphinx_gallery.notebook.jupyter_notebook`; only the
    text blocks go through pandoc together (:func:`_markdown`). Where that cannot be
    done (link targets from conf.py, or a block the separator does not split cleanly),
    sphinx-gallery converts them itself.
    """
    _, blocks = split_code_and_text_blocks(str(script))
    blocks = [Block(label, remove_ignore_blocks(text), line) for label, text, line in blocks]
    if conf["remove_config_comments"]:
        blocks = [Block(label, remove_config_comments(text), line) for label, text, line in blocks]
    if blocks[-1].content.isspace():
        blocks = blocks[:-1]
    texts = [block.content for block in blocks if block.type == "text"]
    markdown = None if conf.get("rst_link_targets") else _markdown(texts, options)
    if markdown is None:
        made = jupyter_notebook(blocks, {**conf, "pypandoc": options}, script.parent)
        return json.dumps(made, indent=2)
    made = jupyter_notebook_skeleton()
    if conf["first_notebook_cell"] is not None:
        add_code_cell(made, conf["first_notebook_cell"])
    cells = iter(markdown)
    for block in blocks:
        if block.type == "code":
            add_code_cell(made, block.content)
            continue
        text = next(cells)
        if conf["promote_jupyter_magic"]:
            text = promote_jupyter_cell_magic(made, text)
            if not text or text.isspace():
                continue
        add_markdown_cell(made, text)
    if conf["last_notebook_cell"] is not None:
        add_code_cell(made, conf["last_notebook_cell"])
    return json.dumps(made, indent=2)  # as sphinx_gallery.notebook.save_notebook
