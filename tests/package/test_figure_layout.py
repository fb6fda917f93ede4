"""compperf.figure_layout: a text that leaves the figure is named, one that fits is not;
likewise overlapping tick labels, a legend over the data and a squeezed figure."""

from __future__ import annotations

import pytest

from compperf.figure_layout import (
    legends_over_data,
    squeezed,
    texts_outside,
    tick_labels_overlapping,
)

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


def test_a_long_label_at_the_edge_is_named_and_a_short_one_is_not() -> None:
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    try:
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("time")
        assert texts_outside(fig) == []
        ax.annotate("Время на байт из памяти, наносекунды", (1, 1), xytext=(0.9, 0.9))
        (problem,) = texts_outside(fig)
        assert problem.startswith("'Время на байт из памяти, наносекунды' leaves the figure")
        assert "right" in problem
    finally:
        plt.close(fig)


def test_ticks_outside_the_view_are_not_drawn_and_not_counted() -> None:
    fig, ax = plt.subplots(figsize=(3, 2), dpi=100, layout="constrained")
    try:
        ax.plot([0, 1], [0, 1])
        ax.set_xlim(0.2, 0.8)
        ax.set_xlabel("время на байт, нс")
        assert texts_outside(fig) == []
    finally:
        plt.close(fig)


def test_the_ticks_of_an_axes_turned_off_are_not_drawn() -> None:
    fig, ax = plt.subplots(figsize=(2, 2), dpi=100)
    try:
        ax.imshow([[0, 1], [1, 0]], extent=(0, 500, 0, 500))
        ax.set_position((0, 0, 1, 1))
        ax.axis("off")
        assert texts_outside(fig) == []
    finally:
        plt.close(fig)


def test_minor_labels_piling_up_on_a_log_axis_overlap_and_major_ones_alone_do_not() -> None:
    from matplotlib import ticker

    fig, ax = plt.subplots(figsize=(4, 2.5), dpi=100, layout="constrained")
    try:
        ax.plot([1, 2], [0.2, 3])
        ax.set_yscale("log")
        for axis in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
            axis(ticker.FormatStrFormatter("%g×"))
        problems = tick_labels_overlapping(fig)
        assert problems
        assert all(p.startswith("y tick labels") for p in problems)
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        assert tick_labels_overlapping(fig) == []
    finally:
        plt.close(fig)


def test_a_legend_over_points_or_bars_is_named_and_one_outside_is_not() -> None:
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100, layout="constrained")
    try:
        ax.plot(range(10), [5] * 10, "o", label="points in the middle")
        ax.legend(loc="center")
        (problem,) = legends_over_data(fig)
        assert "covers" in problem
        assert "data points" in problem
        ax.get_legend().remove()
        fig.legend(loc="outside upper center")
        assert legends_over_data(fig) == []
    finally:
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    try:
        ax.bar(range(4), [4, 4, 4, 4], label="tall bars")
        ax.legend(loc="upper right")
        (problem,) = legends_over_data(fig)
        assert "0 data points and" in problem
        assert "0 bars" not in problem
    finally:
        plt.close(fig)


def test_a_wide_figure_and_plots_side_by_side_are_squeezed_a_column_is_not() -> None:
    fig, (_left, _right) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    try:
        assert len(squeezed(fig)) == 2
    finally:
        plt.close(fig)
    fig, (_top, _bottom) = plt.subplots(2, 1, figsize=(7, 7), dpi=100)
    try:
        assert squeezed(fig) == []
    finally:
        plt.close(fig)
    fig, pictures = plt.subplots(1, 2, figsize=(7, 3), dpi=100)
    try:
        for ax in pictures:
            ax.set_axis_off()
        assert squeezed(fig) == []
    finally:
        plt.close(fig)
