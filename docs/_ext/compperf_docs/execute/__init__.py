"""Stage 1, the English build: execute the examples and record what they print, draw, conclude.

sphinx-gallery executes each example whose source changed (its settings:
:func:`gallery.gallery_conf`, read by ``docs/conf.py``). Around each run,
:func:`gallery.reset_state` resets the process, watches the machine and keeps the
example's printed messages and verdicts, the figure scraper
(:func:`compperf_docs.languages.figures.scraper`) pickles each figure, and
:mod:`recorded` writes the records beside the page in ``docs/auto_examples/`` (the other
languages are made from them; they execute nothing). This stage's hooks:

- :mod:`gallery`: the notebooks' install cell names the site's address; outputs made with
  another notebook conversion, or lacking their records, are forgotten so that their
  examples run again.
- :mod:`provenance`: an example page must print its provenance first.
- :mod:`disturbed`: how disturbed each run was, after its running time, on the about page
  (``compperf-runs``) and in the log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compperf_docs import order

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["setup"]


def setup(app: Sphinx) -> dict[str, object]:
    # Imported here, not above: a module of this stage may import another stage's.
    from compperf_docs.execute import disturbed, gallery, provenance

    app.connect("config-inited", gallery.use_site_url, priority=order.GALLERY_SITE_URL)
    app.connect(
        "builder-inited",
        gallery.forget_outputs_made_with_another_conversion,
        priority=order.FORGET_OTHER_CONVERSION,
    )
    # English only: the other languages execute nothing.
    app.connect(
        "builder-inited",
        gallery.forget_outputs_without_records,
        priority=order.FORGET_WITHOUT_RECORDS,
    )
    app.connect("source-read", provenance.check_example_page)
    disturbed.setup(app)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
