"""Whether the browser can draw the site's scripts: a CJK page without a CJK font shows boxes."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable

__all__ = ["FONT_PACKAGES", "missing_fonts"]

# Primary language subtag -> the Debian package whose fonts draw it.
FONT_PACKAGES = {"zh": "fonts-noto-cjk", "ja": "fonts-noto-cjk", "ko": "fonts-noto-cjk"}


def _has_font_for(subtag: str) -> bool | None:
    """Whether fontconfig knows a font for ``subtag``; ``None`` without ``fc-list``."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    result = subprocess.run(
        [fc_list, f":lang={subtag}", "family"], capture_output=True, text=True, check=False
    )
    return result.returncode == 0 and bool(result.stdout.strip())


def missing_fonts(tags: Iterable[str]) -> str | None:
    """What to install so that pages in these BCP 47 ``tags`` show text; ``None`` if nothing."""
    needed = {}
    for tag in tags:
        subtag = tag.split("-")[0].lower()
        if subtag in FONT_PACKAGES and not _has_font_for(subtag):
            needed.setdefault(FONT_PACKAGES[subtag], []).append(tag)
    if not needed:
        return None
    return "; ".join(
        f"no font for {', '.join(sorted(tags))} here (fc-list :lang=... finds none, or "
        f"fontconfig is missing): the browser would draw boxes instead of characters, "
        f"so these checks cannot pass honestly; run them with `nox -s site`, which gives "
        f"fontconfig the noto-cjk-sans-otc wheel's font (FONTCONFIG_FILE), or install "
        f"{package} (Debian: apt-get install {package})"
        for package, tags in sorted(needed.items())
    )
