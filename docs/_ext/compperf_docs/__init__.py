"""The compperf site's Sphinx extensions, one per stage of the pipeline.

``docs/conf.py`` lists the stages in :data:`STAGES` order, which is the order the site is
made in (README, "How the site is built"):

1. :mod:`compperf_docs.execute`: the English build executes the examples and records what
   they print, draw and conclude.
2. :mod:`compperf_docs.shards`: which chapters execute, and a build that reuses the merged
   outputs of chapters executed elsewhere.
3. :mod:`compperf_docs.languages`: zh_CN and ru, made from the records: figures drawn
   again, printed messages replaced, downloads rewritten, the interface translated.
4. :mod:`compperf_docs.publish`: downloads, notebooks, Colab, the assembled site, sitemaps.
5. :mod:`compperf_docs.workarounds`: the upstream output the site rewrites, each warning
   by name when it slips.

Each stage's ``setup()`` wires only its own hooks; when a hook runs relative to another
stage's, or to another extension's, is declared once, in :mod:`compperf_docs.order`.
Beside the stages: :mod:`compperf_docs.preflight` (what the builds need, checked before the
first one) and :mod:`compperf_docs.message_catalogs` (``nox -s translations``).

Loading ``compperf_docs`` itself loads every stage, in that order (the tests' tiny sites do).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from sphinx.application import Sphinx

__all__ = ["STAGES", "setup"]

STAGES = (
    "compperf_docs.execute",
    "compperf_docs.shards",
    "compperf_docs.languages",
    "compperf_docs.publish",
    "compperf_docs.workarounds",
)


def setup(app: Sphinx) -> dict[str, object]:
    for stage in STAGES:
        app.setup_extension(stage)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


# -- Where the modules were before the stages ----------------------------------------
# Until every caller (other branches included) names the stage, ``compperf_docs.figures``
# and the like still import: they are the very same module objects as the new names, so
# monkeypatching either patches both. Nothing in this checkout uses the old names.
_MOVED = {
    **dict.fromkeys(("gallery", "recorded", "provenance", "disturbed"), "execute"),
    **dict.fromkeys(
        (
            "i18n",
            "figures",
            "printed",
            "language_downloads",
            "download_text",
            "rst_text",
            "code_comments",
            "language_notebooks",
            "gallery_text",
            "theme_text",
        ),
        "languages",
    ),
    **dict.fromkeys(
        (
            "site",
            "alternates",
            "downloads",
            "notebook_check",
            "notebook_markdown",
            "colab",
            "descriptions",
            "published",
            "results",
            "install",
        ),
        "publish",
    ),
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import ``compperf_docs.<module>`` as ``compperf_docs.<stage>.<module>``."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> ModuleSpec | None:
        package, _, name = fullname.partition(".")
        if package != __name__ or name not in _MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        name = spec.name.partition(".")[2]
        module = importlib.import_module(f"{__name__}.{_MOVED[name]}.{name}")
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # Already executed under its new name; importlib gave it the old name's spec.
        module.__spec__ = module.__spec__.loader_state


def __getattr__(name: str) -> ModuleType:
    if name in _MOVED:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())
