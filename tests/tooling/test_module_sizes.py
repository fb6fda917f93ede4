"""No module of src/ or docs/_ext/ over about 350 lines without saying why (issue 20)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 350
MODULES = sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "docs" / "_ext").rglob("*.py")])
# The reason names the size and says why: "Why one module of about 600 lines: ...".
REASON = re.compile(
    r"(Why|because)\b.*\blines\b|\blines\b.*\b(why|because)\b", re.DOTALL | re.IGNORECASE
)


def _long(path: Path) -> bool:
    return len(path.read_text(encoding="utf-8").splitlines()) > LIMIT


@pytest.mark.parametrize(
    "path", [p for p in MODULES if _long(p)], ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_a_long_module_says_why_in_its_docstring(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert REASON.search(docstring), f"{path}: over {LIMIT} lines, and its docstring says not why"
