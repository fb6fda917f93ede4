"""Fonts that draw each language's script in figures, from the system or from a wheel.

matplotlib's own DejaVu Sans covers Latin and Cyrillic; Chinese needs a CJK font. compperf
registers the font a wheel installed (:data:`FONT_WHEELS`) with matplotlib, which itself
only looks in the system's font folders, and lets it fall back to the language's fonts
(:data:`FONTS`) for the glyphs DejaVu Sans lacks. :func:`compperf.use_language` calls
:func:`use_fonts` when matplotlib is imported; compperf never imports it itself.
"""

from __future__ import annotations

import importlib.metadata
import warnings
from pathlib import Path

__all__ = ["FONTS", "FONT_WHEELS", "add_wheel_fonts", "use_fonts", "wheel_fonts"]

# Fonts that draw a language's script in figures, where DejaVu Sans (matplotlib's own,
# which covers Latin and Cyrillic) cannot: Linux (Debian's fonts-noto-cjk), macOS, Windows.
FONTS = {"zh_CN": ("Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei")}
# Wheels on PyPI that ship the first of those fonts, for a machine that has none of them:
# noto-cjk-sans-otc holds Noto Sans CJK 2.004 (OFL-1.1), the file Debian's fonts-noto-cjk
# installs. The docs and tests sessions install it; compperf registers it with matplotlib
# whenever it is installed (matplotlib itself only looks in the system's font folders).
FONT_WHEELS = {"zh_CN": "noto-cjk-sans-otc"}
_FONT_SUFFIXES = (".ttc", ".otc", ".otf", ".ttf")


def wheel_fonts(code: str, wheel: str | None = None) -> list[Path]:
    """The font files that language ``code``'s font wheel installed; none if it is not.

    ``wheel`` names the distribution instead of :data:`FONT_WHEELS` (the docs build passes
    the site's ``font-wheel``).
    """
    name = wheel or FONT_WHEELS.get(code)
    if not name:
        return []
    try:
        files = importlib.metadata.distribution(name).files or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return sorted(
        Path(file.locate()).resolve() for file in files if file.suffix.lower() in _FONT_SUFFIXES
    )


def add_wheel_fonts(code: str, wheel: str | None = None) -> list[Path]:
    """Make matplotlib know the fonts of ``code``'s font wheel (:data:`FONT_WHEELS`).

    Returns the font files added or already known; none when the wheel is not installed.
    """
    from matplotlib import font_manager

    paths = wheel_fonts(code, wheel)
    known = {Path(entry.fname).resolve() for entry in font_manager.fontManager.ttflist}
    for path in paths:
        if path not in known:
            font_manager.fontManager.addfont(str(path))
    return paths


def _install_hint(code: str) -> str:
    wheel = FONT_WHEELS.get(code)
    return (
        f"python -m pip install {wheel}" if wheel else "install one"
    ) + " (or on Debian or Ubuntu: apt-get install fonts-noto-cjk)"


def use_fonts(code: str) -> None:
    """Let matplotlib fall back to the language's fonts for the glyphs DejaVu Sans lacks.

    Warns (naming the wheel to install) when the language needs a font that no folder has.
    """
    from matplotlib import font_manager, rcParams

    add_wheel_fonts(code)
    installed = {font.name for font in font_manager.fontManager.ttflist}
    fonts = [name for name in FONTS.get(code, ()) if name in installed]
    if FONTS.get(code) and not fonts:
        warnings.warn(
            f"no font for {code} text in figures is installed (any of: "
            f"{', '.join(FONTS[code])}); {_install_hint(code)}, "
            "then delete matplotlib's font cache (matplotlib.get_cachedir())",
            stacklevel=3,
        )
    rcParams["font.family"] = ["sans-serif", *fonts]
