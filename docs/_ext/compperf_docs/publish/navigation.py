"""Every page shows the whole site's navigation: when it changes, every page is written again.

Furo draws each page's sidebar, and Sphinx its previous and next links, from the table of
contents of the whole site, but an incremental build writes only the pages whose sources
changed. A lesson added or removed, or a title changed, would then show on some pages
and not on the others (``run_yourself.html`` once listed the chapters of a week before).
After reading, :func:`write_every_page_when_it_changes` compares the navigation (every
page's title and every table of contents' entries) with the one the last build kept in the
environment, and asks Sphinx to write every page when they differ.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

__all__ = ["navigation_digest", "write_every_page_when_it_changes"]

logger = logging.getLogger(__name__)

# Kept in the pickled environment, so that the next build compares against it.
_ATTRIBUTE = "compperf_navigation"


def navigation_digest(env: BuildEnvironment) -> str:
    """A digest of what every page's navigation shows: titles and tables of contents."""
    titles = {doc: env.titles[doc].astext() for doc in sorted(env.titles)}
    entries = {doc: list(env.toctree_includes[doc]) for doc in sorted(env.toctree_includes)}
    text = json.dumps([titles, entries], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_every_page_when_it_changes(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """``env-get-updated``: every page when the navigation differs from the last build's.

    A first build writes every page anyway; so does a build whose environment was made
    before the digest was kept.
    """
    digest = navigation_digest(env)
    previous = getattr(env, _ATTRIBUTE, None)
    setattr(env, _ATTRIBUTE, digest)
    if previous == digest:
        return []
    if previous is not None:
        logger.info("compperf: the site's navigation changed: every page is written again")
    return sorted(env.found_docs)
