"""compperf.figure_layout: a text that leaves the figure is named, one that fits is not."""

from __future__ import annotations

import pytest

from compperf.figure_layout import texts_outside

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
