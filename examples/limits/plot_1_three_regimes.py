"""
The three regimes, measured
===========================

You time an element-wise chain and a matrix product over sizes that grow by
orders of magnitude, and find from the data where the fixed cost of a call
stops mattering and the bytes or the arithmetic take over.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.

import itertools

import matplotlib.pyplot as plt
import torch

import compperf
from compperf.i18n import parts, table

CHAIN_SIZES = [2**k for k in range(4, 23, 2)]  # elements per tensor
MATMUL_SIZES = [8, 16, 32, 64, 128, 256, 512]  # n of n x n @ n x n
BUDGET = 1.5  # seconds per sweep
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    CHAIN_SIZES = [2**k for k in range(4, 19, 2)]
    MATMUL_SIZES = [8, 16, 32, 64, 128]
    BUDGET = 0.5
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
if device.type == "cpu":
    torch.set_num_threads(1)  # One core's numbers: see "Two experiments".
print(compperf.environment(device))

# %%
# Two experiments
# ---------------
# The element-wise chain runs four operations, each of which reads and writes
# every element once: the work per call grows with the size, and so do the
# bytes. The matrix product ``n x n @ n x n`` does ``2 n³`` operations on
# ``3 n²`` values: its arithmetic grows faster than its bytes.
#
# ``compperf.interleave`` times every size in rounds (16, 64, ..., then again),
# so that a busy moment of the machine hits all sizes alike, and reports each
# size's median time per call. On a CPU the page uses one thread: an operation
# split over two threads waits for the slower one, and on a machine shared
# with other work that wait would blur the regimes you are looking for. The
# two tables give, per size, the median time per call in microseconds and
# that time shared out over the work: per element for the chain, per
# floating-point operation (FLOP) for the matrix product.


def chain(x, out):
    """Four element-wise operations, each one pass over memory."""
    torch.mul(x, 2.0, out=out)
    out.add_(1.0)
    out.mul_(0.5)
    out.relu_()


def chain_call(n):
    x = torch.randn(n, device=device)
    out = torch.empty_like(x)
    return lambda: chain(x, out)


def matmul_call(n):
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    out = torch.empty(n, n, device=device)
    return lambda: torch.mm(a, b, out=out)


chains = compperf.interleave(
    {str(n): chain_call(n) for n in CHAIN_SIZES},
    device=device,
    budget=BUDGET,
)
matmuls = compperf.interleave(
    {str(n): matmul_call(n) for n in MATMUL_SIZES},
    device=device,
    budget=BUDGET,
)
chain_times = [chains.measurements[str(n)].median for n in CHAIN_SIZES]
matmul_times = [matmuls.measurements[str(n)].median for n in MATMUL_SIZES]
with parts():
    names = [compperf.tr("element-wise chain"), compperf.tr("matrix product")]
    per_call = compperf.tr("µs per call")
# Also the figure's axis labels: recorded, so the other languages redraw them.
per_element = compperf.tr("ns per element")
per_flop = compperf.tr("ns per FLOP")
rows = [
    (n, f"{t * 1e6:.1f}", f"{t / n * 1e9:.3f}")
    for n, t in zip(CHAIN_SIZES, chain_times, strict=True)
]
print(table(["n", per_call, per_element], rows, title=names[0]))
print()
rows = [
    (n, f"{t * 1e6:.1f}", f"{t / (2 * n**3) * 1e9:.4f}")
    for n, t in zip(MATMUL_SIZES, matmul_times, strict=True)
]
print(table(["n", per_call, per_flop], rows, title=names[1]))
print()
print(chains.disturbance)
print(matmuls.disturbance)

# %%
# Where each regime begins
# ------------------------
# A call that costs only overhead takes as long at 64 elements as at 16. A
# call that costs bytes takes four times as long when it has four times the
# elements. So the test at each step is: does the time grow by at least the
# square root of the growth of the work (2× when the chain grows 4×, 2.8×
# when the matrix product does 8× the operations)? The first size from which
# the answer stays "yes" is where the work takes over from the overhead.
# ``compperf.crossover`` decides it from the per-round ratios and their
# intervals.
#
# Each of the two lines below prints one such verdict, its claim "crossover"
# (the work dominates from a size on), with the interval of sizes it found.
# *yes*: the time follows the work from a size between the two ends of the
# interval on; below it, the fixed cost of a call dominates. *no*: no
# boundary inside the sizes measured (the time follows the work everywhere,
# or nowhere). *unclear*: near the boundary the rounds disagree about how the
# time grows, or the machine was disturbed.


def boundary(comparison, sizes, growth, subject):
    """The crossover into the regime where time grows with the work."""
    verdicts = [
        comparison.faster(str(small), str(large), margin=growth**0.5)
        for small, large in itertools.pairwise(sizes)
    ]
    return compperf.crossover(sizes[1:], verdicts, subject=subject)


chain_boundary = boundary(chains, CHAIN_SIZES, 4, names[0])
matmul_boundary = boundary(matmuls, MATMUL_SIZES, 8, names[1])
print(chain_boundary)
print(matmul_boundary)

# %%
# The picture
# -----------
# Top: the chain's time per element. It falls as ``1/n`` while the call's
# fixed cost is shared by more elements; then it settles while the tensors fit
# a cache, and rises to a new level once they outgrow the last one. Bottom:
# the matrix product's time per floating-point operation (FLOP). It falls
# until each call reuses the values it loads enough for arithmetic to set the
# pace; the tables and verdicts above say at which size that happened here.
# Overhead, then bandwidth on top; overhead, then compute below. The shaded
# band marks the sizes where the boundary lies, when the data found one.

fig, (left, right) = plt.subplots(2, 1, figsize=(7, 7), layout="constrained")
left.plot(
    CHAIN_SIZES,
    [t / n * 1e9 for n, t in zip(CHAIN_SIZES, chain_times, strict=True)],
    marker="o",
)
left.set(
    xlabel=compperf.tr("elements per tensor"),
    ylabel=per_element,
    title=names[0],
)
right.plot(
    MATMUL_SIZES,
    [
        t / (2 * n**3) * 1e9
        for n, t in zip(MATMUL_SIZES, matmul_times, strict=True)
    ],
    marker="o",
    color="tab:red",
)
right.set(
    xlabel=compperf.tr("n (n x n matrices)"),
    ylabel=per_flop,
    title=names[1],
)
for ax, found in ((left, chain_boundary), (right, matmul_boundary)):
    ax.set(xscale="log", yscale="log")
    if found.yes:
        ax.axvspan(found.low, found.high, color="gray", alpha=0.3)
plt.show()

# %%
# Summary
# -------
# * A small call costs its overhead: Python, the dispatcher, on a GPU the
#   kernel launch. Its time hardly changes with the size.
# * An element-wise operation becomes bandwidth-bound once its tensors are
#   large: its time per element settles, at a higher level once they outgrow
#   the last cache.
# * A matrix product does ``n`` operations per value it loads: its time per
#   FLOP falls until that reuse lets arithmetic set the pace.
# * Boundaries are found by asking how the time grows with the work, with an
#   interval, not by reading a plot; a busy machine can leave them unclear.
#
# Exercises
# ---------
# 1. Fit ``t(n) = t0 + c n`` to the chain's smallest and largest sizes.
#    Where does the fixed cost ``t0`` equal the work ``c n``, and how does that
#    compare with the boundary found above?
# 2. On a GPU, would you expect the chain's boundary at smaller or larger
#    sizes than on a CPU?
# 3. Once a call's fixed cost is shared out, why can a larger size still
#    lower the matrix product's time per FLOP, but not the chain's time per
#    element?
#
# Answers
# -------
# **1.** The smallest size gives ``t0`` (the fixed cost), the largest gives
# ``c`` (the cost per element). Their ratio is the size at which both are
# equal. The boundary test above asks for 2× per 4×: in this model
# ``(t0 + 4 c n) / (t0 + c n) = 2`` at ``n = t0 / (2 c)``, so the larger of
# the two sizes, ``4 n``, is twice the size where both costs are equal. The
# lines below give ``t0`` and ``c`` (per element) of this run, the size where
# both costs are equal, and the size from which the model grows 2× per 4×.

t0 = chain_times[0]
c = (chain_times[-1] - t0) / (CHAIN_SIZES[-1] - CHAIN_SIZES[0])
print(compperf.tr("t0 = {t:time}, c = {c:.3f} ns", t=t0, c=c * 1e9))
print(compperf.tr("t0 = c n at n = {n:,.0f}", n=t0 / c))
print(compperf.tr("2× per 4× from n = {n:,.0f} on", n=2 * t0 / c))

# %%
# **2.** Larger. A kernel launch costs microseconds while a GPU moves hundreds
# to thousands of bytes per nanosecond, so a GPU needs far more elements per
# call before the bytes outweigh the launch.
#
# **3.** The chain touches every element once per operation whatever the size,
# so once the fixed cost is shared out, a larger size makes nothing cheaper;
# past the last cache its bytes come from memory and cost more. A larger
# matrix product reuses every value it loads ``n`` times, so it keeps more of
# the work in registers and caches, and only the arithmetic units limit it.
# The next page, :doc:`/auto_examples/limits/plot_2_ceilings`, measures that
# limit.
