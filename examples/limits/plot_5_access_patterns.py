"""
Memory, not only bandwidth
==========================

You read the same bytes in different orders, multiply by a transposed
matrix, convolve in two memory layouts, and follow a chain of dependent
loads, to see that how you touch memory matters as much as how much.

To run this example yourself, install PyTorch, then ``pip install
matplotlib numpy``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.
# On a CPU this page uses one thread, as the other pages of this chapter do.

import array
import time
from functools import partial

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import compperf

BUDGET = 1.0  # seconds per comparison
CHASE_SIZES = [2**k for k in range(10, 25, 2)]  # entries of the chain
STEPS = 200_000  # dependent loads per chase
ELEMENTS = None  # read by index_select; None: as many bytes as the last cache
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET = 0.3
    CHASE_SIZES = [2**k for k in range(10, 19, 4)]
    STEPS = 20_000
    ELEMENTS = 2**18
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
if device.type == "cpu":
    torch.set_num_threads(1)
print(compperf.environment(device))
caches = compperf.cache_sizes() if device.type == "cpu" else {}
last_cache = max(caches.values()) if caches else 2**25

# %%
# One operation, three orders
# ---------------------------
# ``torch.index_select(x, 0, index)`` reads ``x`` in the order of ``index``.
# With the index ``0, 1, 2, ...`` it reads memory in order; with a stride of
# 16 elements (64 bytes, one cache line of most CPUs) every read lands on a
# new line; with a random permutation no read is near the last. The same
# kernel reads the same bytes each time, so only the order differs. ``x``
# holds as many bytes as the last cache and the index twice as many, so that
# most bytes come from memory. The three reads are timed in rounds
# (``compperf.interleave``); the first lines give each order's median time
# per element. Each verdict line then takes the ratio of the times (in order
# over the other) against ``1 / 1.05``: *yes* when its whole interval lies
# below (that order costs more here), *no* when it lies at or above (no
# more, or less than 5 % more), *unclear* when it reaches across or the
# machine was disturbed.

n = ELEMENTS or last_cache // 4
x = torch.randn(n, device=device)
out = torch.empty_like(x)
order = torch.arange(n, device=device)
# Each order's name, in the reader's language on the lines and the figure.
indices = {
    compperf.tr("in order"): order,
    compperf.tr("stride 16"): order.view(-1, 16).t().reshape(-1),
    compperf.tr("random"): torch.randperm(n, device=device),
}
in_order, stride_16, random_order = indices
select = partial(torch.index_select, x, 0, out=out)
reads = {name: partial(select, i) for name, i in indices.items()}
reads = compperf.interleave(reads, device=device, budget=BUDGET)
per_element = {name: reads.measurements[name].median / n for name in indices}
for name, t in per_element.items():
    print(compperf.tr("{o}: {t:time} per element", o=name, t=t))
for name in (stride_16, random_order):
    print(reads.faster(in_order, name))

# %%
# Layouts: a transposed operand and ``channels_last``
# ---------------------------------------------------
# ``b.t()`` is a view: the same memory read with swapped strides. ``b_t``
# below holds the values of ``b`` stored transposed, so ``a @ b_t`` reads its
# second operand across rows instead of down them; whether that costs is for
# the measurement to say. A convolution can take its input as NCHW (each
# channel a plane) or ``channels_last`` (NHWC, the channels of one pixel side
# by side); which is faster depends on the kernels the library has for the
# device. For each pair, two verdict lines ask whether each variant is
# faster than the other, against ``1 / 1.05``: *yes* on one line names the
# faster layout here, *no* on both means the two are within 5 % of each
# other, any *unclear* means that this run cannot tell.

a, b = torch.randn(2, 256, 256, device=device)
b_t = b.t().contiguous().t()  # The same values as b, stored transposed.
image = torch.randn(8, 32, 32, 32, device=device)
weight = torch.randn(32, 32, 3, 3, device=device)
# Converted once, as model.to(memory_format=torch.channels_last) does: a
# conversion inside every call would time the copy as well.
image_cl = image.to(memory_format=torch.channels_last)
weight_cl = weight.to(memory_format=torch.channels_last)
nchw, nhwc = "F.conv2d(image)", "F.conv2d(image_cl)"
layouts = compperf.interleave(
    {
        "a @ b": lambda: a @ b,
        "a @ b_t": lambda: a @ b_t,
        nchw: lambda: F.conv2d(image, weight, padding=1),
        nhwc: lambda: F.conv2d(image_cl, weight_cl, padding=1),
    },
    device=device,
    budget=BUDGET,
)
for candidate, baseline in (("a @ b_t", "a @ b"), (nhwc, nchw)):
    print(layouts.faster(candidate, baseline))
    print(layouts.faster(baseline, candidate))

# %%
# A chain of dependent loads
# --------------------------
# A stream lets the processor fetch many bytes at once, because it knows
# the next address before the last load arrives. A chain ``i = next[i]``
# does not: each load must wait for the one before, so its time per step is
# the latency of wherever the chain lives (a cache, or memory). The chain is
# a random cycle built with ``torch.randperm``. It is followed in plain
# Python over an ``array`` of its values, because a tensor operation per
# step would cost microseconds of overhead
# (:doc:`/auto_examples/limits/plot_1_three_regimes`) and hide the latency;
# each step also pays Python's own few tens of nanoseconds. The table gives
# the best of three chases per chain size. The smallest and the largest
# chain are then chased in rounds; the verdict line, against ``1 / 1.5``,
# says *yes* when a dependent load costs more than 1.5× as much in the
# largest chain as in the smallest, *no* when less, *unclear* when this run
# cannot tell.


def chase(table, steps):
    """Follow ``table`` from 0 for ``steps`` loads; return seconds per load."""
    i = 0
    start = time.perf_counter()
    for _ in range(steps):
        i = table[i]
    return (time.perf_counter() - start) / steps


def chain_table(entries):
    """``next`` of one random cycle through all entries, as an array."""
    cycle = torch.randperm(entries)
    following = torch.empty_like(cycle)
    following[cycle] = cycle.roll(-1)
    return array.array("q", following.numpy().tobytes())


latency, tables = [], {}
for entries in CHASE_SIZES:
    table = chain_table(entries)
    latency.append(min(chase(table, STEPS) for _ in range(3)))
    if entries in (CHASE_SIZES[0], CHASE_SIZES[-1]):
        tables[entries] = table
    del table
print(compperf.tr("entries   bytes      ns per dependent load"))
for entries, seconds in zip(CHASE_SIZES, latency, strict=True):
    print(f"{entries:>9} {entries * 8:>10}  {seconds * 1e9:8.1f}")
first, last = CHASE_SIZES[0], CHASE_SIZES[-1]
chains = compperf.interleave(
    {str(e): (lambda t=t: chase(t, STEPS // 10)) for e, t in tables.items()},
    device="cpu",
    budget=BUDGET,
)
print(chains.faster(str(first), str(last), margin=1.5))

# %%
# The picture
# -----------
# Top: time per element of the three read orders. Bottom: time per
# dependent load against the bytes of the chain, with the caches that Linux
# names as dotted lines; a step up where the chain stops fitting a cache is
# that cache's latency giving way to the next one's.

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4.6), layout="constrained")
ns = [t * 1e9 for t in per_element.values()]
top.bar(list(indices), ns, color=["tab:green", "tab:orange", "tab:red"])
top.set(ylabel=compperf.tr("ns per element"))
top.set_title(compperf.tr("index_select of {mib:.0f} MiB", mib=n * 4 / 2**20))
bottom.plot([e * 8 for e in CHASE_SIZES], [s * 1e9 for s in latency], "o-")
for level, size in caches.items():
    bottom.axvline(size, color="gray", linestyle=":")
    # Cache levels are names, drawn as they are.
    at = {"xycoords": ("data", "axes fraction"), "fontfamily": "monospace"}
    bottom.annotate(f"L{level}", (size, 0.95), **at)
bottom.set(xscale="log", xlabel=compperf.tr("bytes of the chain"))
bottom.set(ylabel=compperf.tr("ns per dependent load"))
# The chain's code, drawn as it is.
bottom.set_title("i = next[i]", fontfamily="monospace")
plt.show()

# %%
# Summary
# -------
# * The same bytes cost different times in different orders: memory is
#   fetched in cache lines, and a read in order uses all of each line.
# * A transposed view or another memory layout changes the order in which a
#   kernel reads; the library may or may not have a fast kernel for it.
# * A chain of dependent loads runs at the latency of where it lives, not at
#   the bandwidth: the processor cannot fetch ahead.
#
# Exercises
# ---------
# 1. How many bytes does a read with a stride of 16 float32 values use of
#    each 64-byte cache line it fetches?
# 2. Why does ``channels_last`` matter more on a GPU with tensor cores?
# 3. Where would you expect the chain's steps on this machine, given its
#    cache sizes?
#
# Answers
# -------
# **1.** Four of the 64 bytes: one float32 value per line. The other 60
# bytes come along and are thrown out before the read returns to that line,
# unless the line is still in a cache by then.
#
# **2.** Convolution kernels for tensor cores read the channels of a pixel
# together; with NCHW input the library first converts it, which costs a
# pass over memory.
#
# **3.** At the size of each cache level, printed here from Linux's account.

for level, size in caches.items():
    print(compperf.tr("L{level} cache: {size:bytes}", level=level, size=size))
