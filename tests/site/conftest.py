"""Fixtures for the site checks: the built site, served on localhost, and a browser.

These tests read ``docs/_build/html`` as ``nox -s docs`` leaves it; they never build it.
The default test run skips this folder (``--ignore=tests/site`` in pyproject.toml);
``nox -s site`` runs it.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "docs" / "_ext"))

import compperf_project
from sitecheck import axe, browser, fonts, layout, visits
from sitecheck.server import serve

# The site's languages, in build order ([tool.compperf] in pyproject.toml).
PROJECT = compperf_project.load()
SITE = REPO / "docs" / "_build" / "html"
SCREENSHOTS = REPO / "docs" / "_build" / "screenshots"
# The site is served here during the tests, and downloaded notebooks install compperf
# from here, so the site must be built for it:
#   COMPPERF_SITE_URL=http://127.0.0.1:8765/ nox -s docs
PORT = 8765
SITE_URL = f"http://127.0.0.1:{PORT}/"
VIEWPORT = {"width": 1280, "height": 900}  # wide enough for furo's both sidebars

_NOT_BUILT = (
    f"no built site at {SITE}: run `COMPPERF_SITE_URL={SITE_URL} nox -s docs` first "
    "(these checks read the site as it is; they never build it)"
)


def _built_languages() -> list[str]:
    return layout.languages(SITE, PROJECT.codes) if (SITE / "index.html").is_file() else []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test that takes ``language`` once per built language folder."""
    if "language" in metafunc.fixturenames:
        # With no site, one case fails with the message from `site_root`.
        metafunc.parametrize("language", _built_languages() or PROJECT.codes[:1])


@pytest.fixture(scope="session")
def site_root() -> Path:
    """``docs/_build/html``; fails every test that needs it when the site is not built."""
    if not (SITE / "index.html").is_file() or not _built_languages():
        pytest.fail(_NOT_BUILT, pytrace=False)
    return SITE


@pytest.fixture(scope="session")
def languages(site_root: Path) -> list[str]:
    """The built language folders, in the project's order."""
    return layout.languages(site_root, PROJECT.codes)


@pytest.fixture(scope="session")
def site_url(site_root: Path, languages: list[str]) -> Iterator[str]:
    """The site served at :data:`SITE_URL`, which it must have been built for."""
    built_for = layout.built_site_url(site_root, languages[0])
    if built_for != SITE_URL:
        pytest.fail(
            f"the site was built for {built_for}, but the tests serve it at {SITE_URL}: "
            f"rebuild with `COMPPERF_SITE_URL={SITE_URL} nox -s docs`",
            pytrace=False,
        )
    with serve(site_root, PORT) as url:
        yield url


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright.

    Fails every browser check when a language of the site has no font here (Chinese
    without fonts-noto-cjk): screenshots and layout would be judged on boxes.
    """
    missing = fonts.missing_fonts(language.tag for language in PROJECT.languages)
    if missing:
        pytest.fail(missing, pytrace=False)
    with sync_playwright() as playwright:
        launched = browser.launch(playwright)
        yield launched
        launched.close()


@pytest.fixture
def new_page(chromium: Browser) -> Iterator[Callable[..., Page]]:
    """Make pages in fresh browser contexts: ``new_page(color_scheme=..., locale=...)``."""
    contexts = []

    def make(**options: object) -> Page:
        context = chromium.new_context(viewport=VIEWPORT, **options)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def axe_js() -> Path:
    """axe-core's script; fails with the install command when it is missing."""
    try:
        return axe.axe_script()
    except FileNotFoundError as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """``docs/_build/screenshots``, emptied at the start of the run."""
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def page_visits(
    chromium: Browser, site_url: str, site_root: Path, screenshots: Path
) -> visits.Visits:
    """Each page opened once per language, width and colour scheme (sitecheck.visits): the
    contrast check, the phone layout check and the screenshots read the same visit."""
    return visits.Visits(chromium, site_url, site_root, screenshots, VIEWPORT)
