"""Each page opened once per width and colour scheme, for every check that reads it there.

Opening a page and waiting until its network is idle is most of a browser check's time.
The load check, the contrast check, the interface language checks, the phone layout check
and the screenshots read the same pages at the same width in the same scheme:
:class:`Visits` opens each page once per (language, width, scheme), notes what went wrong
while it loaded, measures there what each check asks (the contrast of code and output
blocks, the interface text, how wide the page is at 390 px), takes the screenshot where
one is wanted, and keeps the results for the session. Each check still judges its own
results and fails on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sitecheck import browser, contrast, interface, layout

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["COLOR_SCHEMES", "OVERFLOW_JS", "PHONE", "Visit", "Visits", "reading_pages"]

# Light, dark as the system asks (furo's default "auto" theme), dark through furo's toggle.
COLOR_SCHEMES = {
    "light": ({"color_scheme": "light"}, None),
    "dark-system": ({"color_scheme": "dark"}, None),
    "dark-toggle": ({"color_scheme": "light"}, "localStorage.setItem('theme', 'dark')"),
}
# The desktop screenshots: an example page in each of these schemes, under this label.
DESKTOP_SHOTS = {"light": "light", "dark-system": "dark"}
PHONE = {"width": 390, "height": 844}

OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('article *')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1) continue;
    // Inside a block that scrolls sideways by design (outputs, code, tables): fine.
    let scroller = el.parentElement, scrolls = false;
    while (scroller && scroller.tagName !== 'ARTICLE') {
      const style = getComputedStyle(scroller);
      if (['auto', 'scroll', 'hidden'].includes(style.overflowX)
          && scroller.getBoundingClientRect().right <= width + 1) { scrolls = true; break; }
      scroller = scroller.parentElement;
    }
    if (!scrolls) wide.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(box.right)}px`);
  }
  const article = document.querySelector('article').getBoundingClientRect();
  return {scroll: document.documentElement.scrollWidth, width, article: article.width,
          wide: wide.slice(0, 3)};
}"""


def reading_pages(site_root: Path, language: str) -> list[str]:
    """The home page, each chapter page and each example page."""
    chapters = sorted(
        p for p in layout.pages(site_root, language) if re.match(r"auto_examples/[^/]+/index", p)
    )
    return ["index.html", *chapters, *layout.example_pages(site_root, language)]


@dataclass
class Visit:
    """What one page showed at one width in one scheme."""

    path: str
    problems: list[str] = field(default_factory=list)  # while it loaded (browser.open_logged)
    snippets: list[interface.Snippet] = field(default_factory=list)  # interface text (desktop)
    blocks: int = 0  # code and output blocks (desktop)
    contrast: list[str] = field(default_factory=list)  # low-contrast text (desktop)
    height: int = 0  # the page's height in CSS pixels, answers folded (desktop)
    overflow: dict | None = None  # OVERFLOW_JS's result (phone)
    screenshot: Path | None = None


class Visits:
    """The session's page visits (the ``page_visits`` fixture), made when first asked for."""

    def __init__(
        self, browser: Browser, site_url: str, site_root: Path, screenshots: Path, viewport: dict
    ) -> None:
        self._browser, self._url, self._root = browser, site_url, site_root
        self._shots, self._viewport = screenshots, viewport
        self._made: dict[tuple[str, str, str], list[Visit]] = {}

    def desktop(self, language: str, scheme: str) -> list[Visit]:
        """Every page of ``language`` at the desktop width in ``scheme`` (COLOR_SCHEMES): what
        went wrong while it loaded, its code and output blocks' contrast, its interface
        text; the example pages' screenshots in the schemes of DESKTOP_SHOTS."""
        key = (language, "desktop", scheme)
        if key not in self._made:
            label = DESKTOP_SHOTS.get(scheme)
            self._made[key] = self._visit(
                language, scheme, self._viewport, layout.pages(self._root, language),
                desktop=True,
                shot=lambda path: (
                    self._shots / language / f"{Path(path).stem}-{label}.png"
                    if label and Path(path).name.startswith("plot_") else None
                ),
            )  # fmt: skip
        return self._made[key]

    def phone(self, language: str, scheme: str) -> list[Visit]:
        """The reading pages of ``language`` at 390 px in ``scheme`` (e.g. "light"):
        how wide each is, and its full-page screenshot."""
        key = (language, "phone", scheme)
        if key not in self._made:
            self._made[key] = self._visit(
                language, scheme, PHONE, reading_pages(self._root, language),
                desktop=False,
                shot=lambda path: self._shots / language / "phone" / (
                    f"{path.removesuffix('.html').replace('/', '_')}-{scheme}.png"
                ),
            )  # fmt: skip
        return self._made[key]

    def _visit(self, language, scheme, viewport, paths, *, desktop, shot) -> list[Visit]:
        options, init_script = COLOR_SCHEMES.get(scheme, ({"color_scheme": scheme}, None))
        context = self._browser.new_context(viewport=viewport, **options)
        try:
            if init_script:
                context.add_init_script(init_script)
            page = context.new_page()
            visits = []
            for path in paths:
                visit = Visit(path)
                visit.problems = browser.open_logged(page, f"{self._url}{language}/{path}")
                if desktop:
                    visit.blocks = page.locator(contrast.TEXT_BLOCKS).count()
                    visit.contrast = contrast.low_contrast_text(page)
                    visit.snippets = interface.collect(page, f"{language}/{path}")
                    visit.height = page.evaluate("document.documentElement.scrollHeight")
                else:
                    visit.overflow = page.evaluate(OVERFLOW_JS)
                target = shot(path)
                if target is not None:
                    page.screenshot(path=target, full_page=True)
                    visit.screenshot = target
                visits.append(visit)
            return visits
        finally:
            context.close()
