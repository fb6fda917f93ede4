"""Make this folder's helpers (i18n_markup, message_checks) importable in these tests.

docs/_ext and the tiny site come from tests/conftest.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
