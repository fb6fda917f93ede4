"""Make the docs' own extension package (docs/_ext/compperf_docs) importable in these tests."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS_EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"
sys.path.insert(0, str(DOCS_EXT))
