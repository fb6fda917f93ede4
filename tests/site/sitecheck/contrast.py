"""WCAG contrast of the text in code and output blocks, from the browser's computed styles."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["MIN_CONTRAST", "TEXT_BLOCKS", "contrast_ratio", "low_contrast_text"]

# WCAG 2.x level AA for normal-size text.
MIN_CONTRAST = 4.5
# Code blocks (input cells too), sphinx-gallery's captured output, myst-nb's cell output,
# and inline code.
TEXT_BLOCKS = "div.highlight pre, div.sphx-glr-script-out pre, div.cell_output pre, code.literal"

# For each text node inside the blocks: its colour and the stack of background colours
# from its element up to the page (nearest first), as computed by the browser.
_COLLECT_JS = """
(selector) => {
  const seen = new Map();
  const backgrounds = (element) => {
    const stack = [];
    for (let e = element; e; e = e.parentElement) {
      stack.push(getComputedStyle(e).backgroundColor);
    }
    return stack;
  };
  for (const block of document.querySelectorAll(selector)) {
    if (!block.checkVisibility()) continue;
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.trim();
      const element = node.parentElement;
      if (!text || !element.checkVisibility()) continue;
      const color = getComputedStyle(element).color;
      const stack = backgrounds(element);
      const key = color + '|' + stack.join('|');
      if (!seen.has(key)) {
        seen.set(key, {color, backgrounds: stack, text: text.slice(0, 40),
                       element: element.tagName.toLowerCase() +
                                (element.className ? '.' + element.className : '')});
      }
    }
  }
  return [...seen.values()];
}
"""

_RGB = re.compile(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)")
_WHITE = (255.0, 255.0, 255.0)


def _parse(css: str) -> tuple[float, float, float, float]:
    match = _RGB.fullmatch(css.strip())
    if match is None:
        raise ValueError(f"cannot read CSS colour {css!r} (expected rgb() or rgba())")
    red, green, blue, alpha = match.groups()
    return float(red), float(green), float(blue), 1.0 if alpha is None else float(alpha)


def _over(top: tuple[float, ...], below: tuple[float, ...]) -> tuple[float, float, float]:
    """``top`` (RGBA) composited over an opaque ``below`` (RGB)."""
    alpha = top[3]
    return tuple(alpha * t + (1 - alpha) * b for t, b in zip(top[:3], below, strict=True))


def _backdrop(stack: list[str]) -> tuple[float, float, float]:
    """The opaque colour behind an element: its backgrounds composited down to white."""
    colour = _WHITE  # the canvas when no ancestor paints one
    for css in reversed(stack):
        colour = _over(_parse(css), colour)
    return colour


def _luminance(rgb: tuple[float, float, float]) -> float:
    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG contrast ratio (1 to 21) of two CSS ``rgb()``/``rgba()`` colours.

    A translucent foreground is composited over the background; a translucent
    background over white.
    """
    back = _over(_parse(background), _WHITE)
    front = _over(_parse(foreground), back)
    lighter, darker = sorted((_luminance(front), _luminance(back)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def low_contrast_text(page: Page, selector: str = TEXT_BLOCKS) -> list[str]:
    """Text inside ``selector`` on the loaded page whose contrast is below :data:`MIN_CONTRAST`."""
    problems = []
    for item in page.evaluate(_COLLECT_JS, selector):
        backdrop = _backdrop(item["backgrounds"])
        background = "rgb({:.0f}, {:.0f}, {:.0f})".format(*backdrop)
        ratio = contrast_ratio(item["color"], background)
        if ratio < MIN_CONTRAST:
            problems.append(
                f"{ratio:.2f}:1 for {item['text']!r} in <{item['element']}>: "
                f"{item['color']} on {background}"
            )
    return problems
