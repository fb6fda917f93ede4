"""axe-core finds no serious or critical accessibility violation on an example page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page
from sitecheck import axe

# One executed example page per language: prose, code, captured output, a figure.
EXAMPLE_PAGE = "auto_examples/asynchronous/plot_async_matmul.html"


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_example_page_has_no_serious_violations(
    site_url: str,
    language: str,
    new_page: Callable[..., Page],
    axe_js: Path,
    color_scheme: str,
) -> None:
    page = new_page(color_scheme=color_scheme)
    page.goto(f"{site_url}{language}/{EXAMPLE_PAGE}", wait_until="networkidle")
    problems = axe.blocking_violations(page, axe_js)
    assert not problems, f"{language}/{EXAMPLE_PAGE} ({color_scheme}):\n" + "\n".join(problems)
