"""Print the desktop height of example pages, as the site checks measure it.

The height is the page's ``scrollHeight`` in CSS pixels in headless Chromium at the site
checks' desktop width (1280 x 900), light scheme, answers folded as a reader first sees
them. ``tests/site/test_reading.py`` fails on a page over about 6,000 px that is not on
its ``NOT_YET_SPLIT`` list; this script lets a writer see a page's height while editing,
without running the site checks.

Run it with the site session's Python after a build::

    .nox/site/bin/python benchmarks/page_heights.py                 # every page, English
    .nox/site/bin/python benchmarks/page_heights.py --language ru plot_5_cnn_exercise

Pages are matched by file name without ``.html``; the default is every example page.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "site"))

from playwright.sync_api import sync_playwright
from sitecheck import browser, layout, server

DESKTOP = {"width": 1280, "height": 900}  # tests/site/conftest.py's VIEWPORT
# The fonts the site checks give Chromium (noxfile.py font_config): without them it draws
# Chinese in another fallback font, and zh_CN pages measure some 300-400 px shorter.
SITE_FONTS = ROOT / ".nox" / "site" / "fonts.conf"


def heights(site: Path, language: str, stems: list[str]) -> dict[str, int]:
    """Desktop heights in CSS pixels of the example pages of ``language`` named by
    ``stems`` (all when empty). Raises ``SystemExit`` naming a stem with no page."""
    pages = {Path(path).stem: path for path in layout.example_pages(site, language)}
    unknown = sorted(set(stems) - set(pages))
    if unknown:
        raise SystemExit(f"no example page named {unknown} in {site / language}; build first")
    chosen = stems or sorted(pages)
    if "FONTCONFIG_FILE" not in os.environ:
        if not SITE_FONTS.is_file():
            raise SystemExit(f"{SITE_FONTS} is missing: run `nox -s site` once to write it")
        os.environ["FONTCONFIG_FILE"] = str(SITE_FONTS)
    found = {}
    with server.serve(site) as url, sync_playwright() as playwright:
        chromium = browser.launch(playwright)
        try:
            page = chromium.new_context(viewport=DESKTOP, color_scheme="light").new_page()
            for stem in chosen:
                page.goto(f"{url}{language}/{pages[stem]}", wait_until="load")
                found[stem] = page.evaluate("document.documentElement.scrollHeight")
        finally:
            chromium.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stems", nargs="*", help="page file names without .html")
    parser.add_argument("--language", default="en")
    parser.add_argument("--site", type=Path, default=ROOT / "docs" / "_build" / "html")
    args = parser.parse_args()
    for stem, height in sorted(
        heights(args.site, args.language, args.stems).items(), key=lambda item: -item[1]
    ):
        print(f"{height:6d} px  {stem}")


if __name__ == "__main__":
    main()
