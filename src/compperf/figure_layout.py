"""Where a figure's texts land once matplotlib has laid it out: inside the figure, or cut,
on top of each other, or over the data.

A label that fits in English may not fit in Russian or Chinese: matplotlib draws it all
the same and the saved image cuts it at the figure's edge. :func:`texts_outside` finds
such texts with the renderer that draws the figure, so that a build or a test can fail
on them in every language; :func:`tick_labels_overlapping` finds tick labels drawn over
each other (minor labels piling up on a log axis, long labels side by side) and
:func:`legends_over_data` a legend drawn over plotted points, lines, bars or error bars,
and :func:`squeezed` a figure wider than the page or with plots side by side, which a
phone (390 px) would shrink until its texts cannot be read. compperf never imports matplotlib itself; this module does
when it is called.
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = [
    "layout_problems",
    "legends_over_data",
    "squeezed",
    "texts_outside",
    "tick_labels_overlapping",
]

# The width of the site's article column in CSS pixels: a wider figure is drawn smaller.
PAGE_WIDTH_PX = 736

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


def _shown_tick_labels(axis: Any) -> list[Any]:
    ax = axis.axes
    if not (ax.get_visible() and ax.axison and axis.get_visible()):
        return []
    low, high = sorted(axis.get_view_interval())
    slack = (high - low) * 1e-9
    return [
        label
        for tick in axis.get_major_ticks() + axis.get_minor_ticks()
        if low - slack <= tick.get_loc() <= high + slack
        for label in (tick.label1, tick.label2)
        if label.get_visible() and label.get_text().strip()
    ]


def tick_labels_overlapping(fig: Any, *, tolerance: float = _TOLERANCE_PX) -> list[str]:
    """Each pair of tick labels of one axis that the figure draws over each other.

    Returns
    -------
    list of str
        ``"x tick labels '2' and '3' overlap by 4 px"``; empty when none touch.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            boxes = [
                (label, label.get_window_extent(renderer)) for label in _shown_tick_labels(axis)
            ]
            for i, (first, a) in enumerate(boxes):
                for second, b in boxes[i + 1 :]:
                    wide = min(a.x1, b.x1) - max(a.x0, b.x0)
                    high = min(a.y1, b.y1) - max(a.y0, b.y0)
                    if wide > tolerance and high > tolerance:
                        problems.append(
                            f"{name} tick labels {first.get_text()!r} and "
                            f"{second.get_text()!r} overlap by {min(wide, high):.0f} px"
                        )
    return problems


def _data_points(ax: Any, step: float = 2.0) -> Any:
    """Display coordinates of what ``ax`` plots: markers, points along lines (every
    ``step`` pixels), error bar segments; clipped to the axes."""
    import numpy as np
    from matplotlib.collections import LineCollection, PathCollection

    pieces = []

    def along(xy: Any, joined: bool) -> None:
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        xy = xy[np.isfinite(xy).all(axis=1)]
        pieces.append(xy)
        if joined and len(xy) > 1:
            for start, end in itertools.pairwise(xy):
                count = int(np.hypot(*(end - start)) // step)
                if count > 1:
                    t = np.linspace(0, 1, count)[:, None]
                    pieces.append(start + t * (end - start))

    for line in ax.lines:
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(line.get_xydata())
        along(xy, line.get_linestyle() not in ("None", "", " ", "none"))
    for collection in ax.collections:
        if not collection.get_visible():
            continue
        if isinstance(collection, LineCollection):
            transform = collection.get_transform()
            for segment in collection.get_segments():
                along(transform.transform(segment), True)
        elif isinstance(collection, PathCollection):
            along(collection.get_offset_transform().transform(collection.get_offsets()), False)
    box = ax.bbox
    points = np.concatenate(pieces) if pieces else np.empty((0, 2))
    inside = (
        (points[:, 0] >= box.x0)
        & (points[:, 0] <= box.x1)
        & (points[:, 1] >= box.y0)
        & (points[:, 1] <= box.y1)
    )
    return points[inside]


def legends_over_data(fig: Any, *, tolerance: float = _TOLERANCE_PX) -> list[str]:
    """Each legend drawn over the data of its axes (a figure legend: of any axes): a
    marker, a point of a line, an error bar or a bar inside the legend's frame.

    Returns
    -------
    list of str
        ``"the legend of 'title' covers 12 data points and 1 bar"``; empty when every
        legend stands off the data.
    """
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [(ax.get_legend(), [ax]) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(legend, fig.axes) for legend in fig.legends]
    problems = []
    for legend, axes in legends:
        if not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer).padded(-tolerance)
        points = bars = 0
        for ax in axes:
            xy = _data_points(ax)
            points += int(
                (
                    (xy[:, 0] > box.x0)
                    & (xy[:, 0] < box.x1)
                    & (xy[:, 1] > box.y0)
                    & (xy[:, 1] < box.y1)
                ).sum()
            )
            for patch in ax.patches:
                if isinstance(patch, Rectangle) and patch.get_visible():
                    bar = patch.get_window_extent(renderer)
                    both = Bbox.intersection(bar, ax.bbox)
                    both = both and Bbox.intersection(both, box)
                    if both is not None and min(both.width, both.height) > tolerance:
                        bars += 1
        if points or bars:
            title = axes[0].get_title() if len(axes) == 1 else fig.get_suptitle()
            problems.append(f"the legend of {title!r} covers {points} data points and {bars} bars")
    return problems


def squeezed(fig: Any, *, page_px: float = PAGE_WIDTH_PX) -> list[str]:
    """Why ``fig`` would be drawn smaller than its own size on the page, if it would.

    A figure wider than ``page_px`` at its dpi is scaled down to the page (and again to
    a phone's width); plots side by side (axes with their axis drawn whose rows overlap)
    halve the width each one gets. Stack them in one column instead. Pictures (axes
    with the axis turned off, such as graphs drawn by graphviz) may stand side by side.

    Returns
    -------
    list of str
        One sentence per reason; empty when the figure reads at the page's width.
    """
    fig.canvas.draw()
    problems = []
    width = fig.bbox.width
    if width > page_px + _TOLERANCE_PX:
        problems.append(
            f"the figure is {width:.0f} px wide, wider than the page's {page_px:.0f} px"
        )
    plots = [ax.get_position() for ax in fig.axes if ax.get_visible() and ax.axison]
    for i, a in enumerate(plots):
        for b in plots[i + 1 :]:
            rows = min(a.y1, b.y1) - max(a.y0, b.y0)
            if rows > 0.5 * min(a.height, b.height) and (a.x1 <= b.x0 or b.x1 <= a.x0):
                problems.append("plots stand side by side; stack them in one column")
                return problems
    return problems


def layout_problems(fig: Any) -> list[str]:
    """What :func:`texts_outside`, :func:`tick_labels_overlapping`,
    :func:`legends_over_data` and :func:`squeezed` find in ``fig``, in that order."""
    return (
        texts_outside(fig) + tick_labels_overlapping(fig) + legends_over_data(fig) + squeezed(fig)
    )
