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
from compperf.i18n import table

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The model
# ---------
# Each operation costs the frontend ``t1`` (Python and PyTorch prepare it),
# the backend ``t2`` (the computation), and reading a result back ``t3``.
# Waiting for every step, ``N`` steps cost ``N * (t1 + t2 + t3)``. Queuing all
# ``N`` and waiting once, the frontend works while the backend computes: when
# ``t2 > t1`` the loop costs ``t1 + N * t2 + t3``. The operation is
# ``y = x + 1`` on a float32 vector, larger on a GPU, where the backend should
# have more to do than the frontend.
elements = {"cpu": 2**15, "mps": 2**22, "cuda": 2**24}[device.type]
counts = [2**k for k in range(6 if device.type == "cpu" else 9)]  # the N
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
# ``compperf.interleave`` times both loops for each ``N`` in turns (wait once,
# wait every step, wait once, ...), at least ten rounds, so that a busy moment
# of the machine hits both alike. Every later number about these loops comes
# from these comparisons; the table gives their medians per loop.
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
header = ["N", "wait_once(N)", "wait_every_step(N)"]  # code, in any language
medians = [(a.median, b.median) for a, b in zip(once, every, strict=True)]
times = [[compperf.format_time(t) for t in m] for m in medians]
print(table(header, [(k, *t) for k, t in zip(counts, times, strict=True)]))

# %%
# Fitting the model
# -----------------
# With ``t1`` and ``t3`` measured, the model of the loop that waits once has
# one free number left, ``t2``, which a least-squares fit on the relative
# error gives. The loop that waits every step gets its own fit, ``N * c``:
# the model says ``c = t1 + t2 + t3``. Each line gives the worst error of its
# model, as a share of the measured point.
n = np.array(counts, dtype=float)
once_median, every_median = np.array(medians).T


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
print(compperf.tr("t2 = {t:time}, worst error: {e:.0%}", t=t2, e=error_once))
print(compperf.tr("c = {t:time}, worst error: {e:.0%}", t=c, e=error_every))

# %%
# What waiting every step costs
# -----------------------------
# At the largest ``N``, compperf's verdict says whether waiting once is
# faster (the interval of the per-round ratios wholly below ``1 / 1.05``):
# *yes*, and waiting every step costs the difference per step that the first
# line gives; *no*, waiting once is not faster here; *unclear*, the interval
# straddles the threshold or the machine was disturbed. On a GPU, ``t1`` can
# hide behind ``t2`` in the loop that waits once. On a CPU, PyTorch runs each
# operation before the call returns: nothing overlaps, and the fitted ``t2``
# already contains ``t1``.
largest = comparisons[-1]
faster = largest.faster(*largest.names)  # waiting once, against every step
extra = every[-1].median - once[-1].median
print(compperf.tr("difference per step: {t:time}", t=extra / counts[-1]))
print(largest.disturbance)
print(faster)

# %%
# The figure puts the model (lines) over the medians of the two loops, with
# error bars from the first to the third quartile, on logarithmic axes.


def quartile_bars(measurements):
    """Distances from each median down to its first and up to its third quartile, in µs."""
    q1, q3 = np.array([m.quartiles for m in measurements]).T
    medians = np.array([m.median for m in measurements])
    return 1e6 * np.clip([medians - q1, q3 - medians], 0, None)


fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
loops = {"wait_once(N)": (once, "o"), "wait_every_step(N)": (every, "s")}
for label, (loop, fmt) in loops.items():
    medians_us = [m.median * 1e6 for m in loop]
    ax.errorbar(n, medians_us, quartile_bars(loop), fmt=fmt, label=label)
grid = np.geomspace(n[0], n[-1], 100)
ax.plot(grid, (t1 + grid * t2 + t3) * 1e6, "C0", label=r"$t_1 + N t_2 + t_3$")
ax.plot(grid, grid * c * 1e6, "C1--", label=r"$N c$")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("$N$")
ax.set_title(
    compperf.tr("Time per loop (µs) against N, measured and modelled")
)
# The legend names code and formulas, drawn as they are in every language.
fig.legend(loc="outside upper center", ncols=2, prop={"family": "monospace"})
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
#    the backend never waits: the frontend's other 9999 launches must fit into
#    the backend's 10000 computations. Otherwise the loop costs about
#    ``10000 * t1 + t2 + t3``. The code plays the pipeline through with this
#    page's ``t1`` and ``t3``, with ``t2 = 2 * t1`` (the condition holds) and
#    ``t2 = t1 / 2`` (it does not): pipeline time over formula time.


def pipeline(n, t1, t2, t3):
    """Seconds for n queued operations and one read, frontend and backend in parallel."""
    done = 0.0
    for i in range(1, n + 1):
        # Operation i starts once it is issued and the one before is done.
        done = max(done, i * t1) + t2
    return done + t3


for t2_case in (2 * t1, t1 / 2):
    simulated = pipeline(10000, t1, t2_case, t3)
    formula = t1 + 10000 * t2_case + t3
    print(compperf.tr("pipeline / formula: {r:.2f}", r=simulated / formula))

# %%
# Where the condition holds, the pipeline and the formula agree; where it
# fails, the formula promises less time than the pipeline needs.
#
# 2. The two models, with this page's numbers: waiting once costs about
#    ``t1 + 10000 * t2 + t3``, waiting every step about ``10000 * c``.
waiting_once = t1 + 10000 * t2 + t3
waiting_every_step = 10000 * c
print(compperf.tr("waiting once: {t:time}", t=waiting_once))
print(compperf.tr("waiting every step: {t:time}", t=waiting_every_step))

# %%
# 3. With one element the backend has almost nothing to do: ``t2`` shrinks
#    below ``t1`` on a GPU, the frontend becomes the bottleneck, and the loop
#    costs about ``N * t1``. Queuing then helps little, and fewer, larger
#    operations (or a compiler that fuses them) help more.
