"""axe-core (from npm, see tests/site/package.json) run inside the loaded page."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["BLOCKING_IMPACTS", "axe_script", "blocking_violations"]

# axe rates each violation minor, moderate, serious or critical; these two fail a page.
BLOCKING_IMPACTS = ("serious", "critical")
_TESTS_SITE = Path(__file__).resolve().parents[1]


def axe_script(folder: Path = _TESTS_SITE) -> Path:
    """``axe.min.js`` as ``npm ci`` installs it beside ``package.json``.

    Raises
    ------
    FileNotFoundError
        If axe-core is not installed, with the command that installs it.
    """
    script = folder / "node_modules" / "axe-core" / "axe.min.js"
    if not script.is_file():
        raise FileNotFoundError(
            f"axe-core is not installed ({script} is missing): run `npm ci --prefix {folder}` "
            "(`nox -s site` does)"
        )
    return script


def blocking_violations(page: Page, script: Path) -> list[str]:
    """Run axe on the loaded page; one line per serious or critical violation."""
    page.add_script_tag(path=str(script))
    violations = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{violation['impact']}: {violation['id']} ({violation['help']}) at "
        + ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
        + (f" and {len(violation['nodes']) - 3} more" if len(violation["nodes"]) > 3 else "")
        for violation in violations
        if violation["impact"] in BLOCKING_IMPACTS
    ]
