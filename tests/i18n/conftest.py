"""Make docs/_ext/compperf_docs and this folder's helpers importable in these tests."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS_EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"
sys.path.insert(0, str(DOCS_EXT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
