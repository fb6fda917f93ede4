"""
A cost model for asynchronous work
==================================

You measure what one operation costs the frontend, the backend and the trip
back to Python, fit the model ``t1 + N * t2 + t3`` to loops of ``N`` operations,
and see what you pay when you wait for every step instead.

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the numbers on this page.
import matplotlib.pyplot as plt
import numpy as np
import torch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The model
# ---------
# Each operation costs the frontend ``t1`` (Python and PyTorch prepare it and
# hand it to the backend), the backend ``t2`` (the computation itself), and
# reading a result back costs ``t3``. If you wait for the result of every step,
# ``N`` steps cost ``N * (t1 + t2 + t3)``. If you queue all ``N`` operations and
# wait once, the frontend works while the backend computes, and when ``t2`` is
# the larger of ``t1`` and ``t2`` the loop costs ``t1 + N * t2 + t3``.
#
# The operation is ``y = x + 1`` on a vector that is larger on a GPU, so that
# the backend has more to do than the frontend.
elements = {"cpu": 2**15, "mps": 2**22, "cuda": 2**24}[device.type]
counts = (
    [1, 2, 4, 8, 16, 32, 64, 128, 256]
    if device.type != "cpu"
    else [1, 2, 4, 8, 16, 32]
)
timing = {"min_run_time": 0.05, "max_run_time": 0.2}
budget = 0.5  # seconds of interleaved rounds per N
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    elements, counts = 2**14, [1, 4, 16]
    timing = {"min_run_time": 0.01, "max_run_time": 0.05}
    budget = 0.1
# sphinx_gallery_end_ignore
x = torch.randn(elements, device=device)
print(
    compperf.tr(
        "y = x + 1 on {elements} float32 values on {device}; N in {counts}",
        elements=elements,
        device=device,
        counts=counts,
    )
)


def wait_once(n):
    for _ in range(n):
        y = x + 1
    return y[0].item()  # One trip back to Python, at the end.


def wait_every_step(n):
    for _ in range(n):
        y = x + 1
        y[0].item()  # The frontend waits for each result.


# %%
# The three costs, one at a time
# ------------------------------
# ``t1``: the same operation on a one-element tensor, where the backend has
# almost nothing to do, so the time is the frontend's. ``t3``: ``.item()`` on a
# result that is ready. ``t2`` comes next, from the loops.
tiny = torch.ones(1, device=device)
ready = x + 1
t1_measurement = compperf.measure(
    lambda: tiny + 1,
    device=device,
    description=compperf.tr("t1: frontend, one operation"),
    **timing,
)
t3_measurement = compperf.measure(
    lambda: ready[0].item(),
    device=device,
    description=compperf.tr("t3: read one value back"),
    **timing,
)
t1, t3 = t1_measurement.median, t3_measurement.median
print(t1_measurement)
print(t3_measurement)

# %%
# Loops of N operations
# ---------------------
# Now you time both loops for each ``N`` with ``compperf.interleave``: it runs
# them in turns (wait once, wait every step, wait once, ...) in rounds, each
# round a few blocks of calls that synchronize the device, at least ten rounds,
# so that a busy moment of the machine hits both alike. The table gives the median and IQR
# per loop over all blocks; every later number about these loops comes from
# these same comparisons.
comparisons = [
    compperf.interleave(
        {
            compperf.tr("wait once, N={n}", n=n): lambda n=n: wait_once(n),
            compperf.tr("wait every step, N={n}", n=n): (
                lambda n=n: wait_every_step(n)
            ),
        },
        device=device,
        budget=budget,
        min_rounds=10,
    )
    for n in counts
]
once = [c.measurements[c.names[0]] for c in comparisons]
every = [c.measurements[c.names[1]] for c in comparisons]
title = compperf.tr("Total time per loop on {device}", device=device)
print(compperf.compare(once + every, title=title))

# %%
# Fitting the model
# -----------------
# With ``t1`` and ``t3`` measured, the model of the loop that waits once has
# one free number left: ``t2``. A least-squares fit on the relative error gives
# it, so that short and long loops count alike. The loop that waits every step
# gets its own fit, ``N * c``: the model says ``c = t1 + t2 + t3``. Below the
# numbers you see how far each line is from the furthest measured point.
n = np.array(counts, dtype=float)
once_median = np.array([m.median for m in once])
every_median = np.array([m.median for m in every])


def fit_slope(times, offset):
    """Least squares of (times - offset) = n * slope, on relative errors."""
    weights = 1 / times**2
    return float(
        np.sum(weights * n * (times - offset)) / np.sum(weights * n * n)
    )


t2 = fit_slope(once_median, t1 + t3)
c = fit_slope(every_median, 0.0)
error_once = float(
    np.max(np.abs(t1 + n * t2 + t3 - once_median) / once_median)
)
error_every = float(np.max(np.abs(n * c - every_median) / every_median))
print(
    compperf.tr(
        "t1 = {t1}, t2 = {t2} (fitted), t3 = {t3}",
        t1=compperf.format_time(t1),
        t2=compperf.format_time(t2),
        t3=compperf.format_time(t3),
    )
)
print(
    compperf.tr(
        "t1 + N*t2 + t3 against 'wait once': worst point off by {error:.0%}",
        error=error_once,
    )
)
print(
    compperf.tr(
        "c = {c} (fitted) against t1 + t2 + t3 = {total}",
        c=compperf.format_time(c),
        total=compperf.format_time(t1 + t2 + t3),
    )
)
print(
    compperf.tr(
        "N*c against 'wait every step': worst point off by {error:.0%}",
        error=error_every,
    )
)

# %%
# What waiting every step costs
# -----------------------------
# The sentence below compares the two loops at the largest ``N``, from the
# same interleaved comparison as the table's last rows: the median of the
# per-round ratios, with its confidence interval, decides whether waiting
# once is faster (by more than 5 %), not faster, or unclear on this run. On a
# GPU the frontend prepares the next operation while the device computes, so
# ``t1`` can hide behind ``t2`` in the loop that waits once. On a CPU, PyTorch
# runs each operation before the call returns: nothing overlaps, and the
# fitted ``t2`` already contains ``t1``.
largest = comparisons[-1]
once_name, every_name = largest.names
faster = largest.faster(once_name, every_name)
extra = every[-1].median - once[-1].median
cost = {
    "largest": counts[-1],
    "ratio": largest.ratio(once_name, every_name),
    "once": compperf.format_time(once[-1].median),
    "every": compperf.format_time(every[-1].median),
    "extra": compperf.format_time(extra),
    "per_step": compperf.format_time(extra / counts[-1]),
}
print(largest.disturbance)
if faster.yes:
    compperf.say(
        "At N={largest}, waiting once takes {once} per loop and waiting every "
        "step {every}, a ratio of {ratio}: waiting every step costs {extra} "
        "more per loop, {per_step} per step.",
        **cost,
    )
elif faster.no:
    compperf.say(
        "At N={largest}, waiting once is not faster than waiting every step: "
        "{once} against {every} per loop, a ratio of {ratio}.",
        **cost,
    )
else:
    compperf.say(
        "At N={largest}, it is unclear here whether waiting once is faster "
        "than waiting every step: {once} against {every} per loop, a ratio of "
        "{ratio}.",
        **cost,
    )

# %%
# The figure puts the model over the measurements: points are medians, error
# bars reach from the first to the third quartile (never below zero), lines
# are the model. Both axes are logarithmic, so short and long loops fit on one
# plot.


def quartile_bars(measurements):
    """Distances from each median down to its first and up to its third quartile, in µs."""
    q1, q3 = np.array(
        [np.percentile(m.times, [25, 75]) for m in measurements]
    ).T
    medians = np.array([m.median for m in measurements])
    return 1e6 * np.clip([medians - q1, q3 - medians], 0, None)


fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
ax.errorbar(
    n,
    once_median * 1e6,
    yerr=quartile_bars(once),
    fmt="o",
    label=compperf.tr("wait once (measured)"),
)
ax.errorbar(
    n,
    every_median * 1e6,
    yerr=quartile_bars(every),
    fmt="s",
    label=compperf.tr("wait every step (measured)"),
)
grid = np.geomspace(n[0], n[-1], 100)
ax.plot(
    grid,
    (t1 + grid * t2 + t3) * 1e6,
    color="C0",
    label=compperf.tr("t1 + N t2 + t3 (model)"),
)
ax.plot(
    grid,
    grid * c * 1e6,
    color="C1",
    linestyle="--",
    label=compperf.tr("N c (model)"),
)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel(compperf.tr("N, operations per loop"))
ax.set_ylabel(compperf.tr("time per loop (µs)"))
ax.set_title(compperf.tr("Cost model on {device}", device=device))
fig.legend(loc="outside upper center", ncols=2)
plt.show()

# %%
# Summary
# -------
# * One operation costs the frontend ``t1``, the backend ``t2``, and reading a
#   result back costs ``t3``.
# * Queuing ``N`` operations and waiting once costs about ``t1 + N * t2 + t3``
#   when the backend is the slower side; waiting after every step costs about
#   ``N * (t1 + t2 + t3)``.
# * On a CPU, PyTorch runs each operator before the call returns, so nothing
#   overlaps and waiting every step costs only the extra reads.
#
# Exercises
# ---------
# 1. The book says that queuing 10000 operations can bring the total down to
#    ``t1 + 10000 * t2 + t3``, provided that ``10000 * t2 > 9999 * t1``. Why
#    is that condition needed?
# 2. With the ``t1``, ``t2`` and ``t3`` measured on this page, what does a loop
#    of 10000 operations cost if it waits once, and if it waits every step?
# 3. Make the backend's work tiny (a one-element ``x``). Which of ``t1`` and
#    ``t2`` is larger now, and which formula describes the loop?
#
# Answers
# -------
# 1. The frontend issues operation ``i`` at time ``i * t1``; the backend runs it
#    once it has it and has finished the one before. The formula assumes that
#    the backend never waits for the frontend: after the first operation, the
#    frontend's other 9999 launches must fit into the backend's 10000
#    computations. Otherwise the frontend is the bottleneck and the loop costs
#    about ``10000 * t1 + t2 + t3``. The code below plays this pipeline through
#    with this page's ``t1`` and ``t3``, once with the backend slower than the
#    frontend (``t2 = 2 * t1``) and once faster (``t2 = t1 / 2``).


def pipeline(n, t1, t2, t3):
    """Seconds for n queued operations and one read, frontend and backend in parallel."""
    done = 0.0
    for i in range(1, n + 1):
        # Operation i starts once it is issued and the one before is done.
        done = max(done, i * t1) + t2
    return done + t3


for case, t2_case in (
    (compperf.tr("backend slower"), 2 * t1),
    (compperf.tr("frontend slower"), t1 / 2),
):
    simulated = pipeline(10000, t1, t2_case, t3)
    formula = t1 + 10000 * t2_case + t3
    holds = 10000 * t2_case > 9999 * t1
    verdict = compperf.tr("holds") if holds else compperf.tr("does not hold")
    print(
        compperf.tr(
            "{case}: pipeline {simulated}, t1 + 10000 t2 + t3 = {formula}, "
            "condition {verdict}",
            case=case,
            simulated=compperf.format_time(simulated),
            formula=compperf.format_time(formula),
            verdict=verdict,
        )
    )

# %%
# Where the condition holds, the pipeline and the formula agree; where it
# fails, the formula promises less time than the pipeline needs.
#
# 2. The two models, with this page's numbers:
compperf.say(
    "On {device}, 10000 operations waiting once: about {once}; waiting every "
    "step: about {every}.",
    device=device,
    once=compperf.format_time(t1 + 10000 * t2 + t3),
    every=compperf.format_time(10000 * c),
)

# %%
# 3. With one element the backend has almost nothing to do: ``t2`` shrinks
#    below ``t1`` on a GPU, the frontend becomes the bottleneck, and the loop
#    costs about ``N * t1``. Queuing then helps little, and fewer, larger
#    operations (or a compiler that fuses them) help more.
