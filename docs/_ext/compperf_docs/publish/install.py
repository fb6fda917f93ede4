"""The ``compperf-install`` directive: the pip command that installs what the downloads need.

compperf is not on PyPI; each build publishes its wheel beside the language folders
(``compperf_docs.publish.site.wheel_url``), so the address depends on ``COMPPERF_SITE_URL``. The
directive writes the command for the site being built, the same packages as the first
cell of every downloaded notebook (``compperf_docs.execute.gallery.NOTEBOOK_EXTRAS``).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from compperf_docs.execute import gallery
from compperf_docs.publish import site

__all__ = ["InstallCommand", "install_command"]


def install_command(root_url: str) -> str:
    """The ``python -m pip install`` lines for the site served at ``root_url``.

    The same installs as a notebook's first cell (:func:`compperf_docs.execute.gallery.install_arguments`):
    the extras, then compperf from the site's wheel, installed again each time.
    """
    return "\n".join(
        f"python -m pip {args}" for args in gallery.install_arguments(site.wheel_url(root_url))
    )


class InstallCommand(SphinxDirective):
    """A shell code block with the install command; takes no arguments or content."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        command = install_command(self.config.compperf_site_url)
        block = nodes.literal_block(command, command, language="bash")
        self.set_source_info(block)
        return [block]
