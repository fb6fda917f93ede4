"""What every test folder shares: docs/_ext and tests/ importable, and the tiny sites.

``tiny_sites`` (:class:`tiny_site.Sites`) writes and builds the tiny sites of tests/docs
and tests/i18n, all with one cache folder for the session.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# docs/_ext: compperf_project and the site's extension (compperf_docs); tests/: tiny_site.
for folder in (TESTS, TESTS.parent / "docs" / "_ext"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


@pytest.fixture(scope="session")
def tiny_sites(tmp_path_factory: pytest.TempPathFactory):
    """Makes tiny sites (``tiny_sites.make(name, examples=...)``) sharing one cache."""
    import tiny_site

    return tiny_site.Sites(tmp_path_factory, tmp_path_factory.mktemp("tiny-cache"))
