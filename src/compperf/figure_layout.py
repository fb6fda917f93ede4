"""Where a figure's texts land once matplotlib has laid it out: inside the figure, or cut.

A label that fits in English may not fit in Russian or Chinese: matplotlib draws it all
the same and the saved image cuts it at the figure's edge. :func:`texts_outside` finds
such texts with the renderer that draws the figure, so that a build or a test can fail
on them in every language. compperf never imports matplotlib itself; this module does
when it is called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["texts_outside"]

# Pixels a text may cross the edge by (antialiasing, rounding of the extent).
_TOLERANCE_PX = 1.0


def _drawn_texts(fig: Any) -> list[Any]:
    """The texts the figure draws: its own, and the tick labels within each axis's view
    (matplotlib keeps labels of ticks outside the view, which it does not draw)."""
    from matplotlib.text import Text

    tick_labels: set[int] = set()
    shown = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            drawn = ax.get_visible() and ax.axison and axis.get_visible()
            low, high = sorted(axis.get_view_interval())
            slack = (high - low) * 1e-9
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                labels = (tick.label1, tick.label2)
                tick_labels.update(map(id, labels))
                if drawn and low - slack <= tick.get_loc() <= high + slack:
                    shown += [label for label in labels if label.get_visible()]
    for artist in fig.findobj(Text):
        if id(artist) in tick_labels:
            continue
        if artist.get_visible() and (artist.axes is None or artist.axes.get_visible()):
            shown.append(artist)
    return [artist for artist in shown if artist.get_text().strip()]


def texts_outside(fig: Any, *, tolerance: float = _TOLERANCE_PX) -> list[str]:
    """Each drawn text of ``fig`` that reaches beyond the figure's edges, one sentence each.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, with its texts (translated or not) already set.
    tolerance : float
        Pixels a text may cross an edge by.

    Returns
    -------
    list of str
        ``"'<text>' leaves the figure on the right by 12 px"``; empty when all fit.

    Notes
    -----
    Draws the figure once (``fig.canvas.draw()``), as ``savefig`` would, so that
    ``constrained``/``tight`` layouts have placed everything; the extents are those of
    the renderer, in pixels at the figure's dpi.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    problems = []
    for artist in _drawn_texts(fig):
        box = artist.get_window_extent(renderer)
        over = {
            "left": -box.x0,
            "right": box.x1 - width,
            "bottom": -box.y0,
            "top": box.y1 - height,
        }
        sides = [
            f"{side} by {amount:.0f} px" for side, amount in over.items() if amount > tolerance
        ]
        if sides:
            problems.append(f"{artist.get_text()!r} leaves the figure on the {', '.join(sides)}")
    return problems
