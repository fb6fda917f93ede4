"""
The roofline
============

You count the FLOP and the bytes of operations you meet every day (element-wise
ones, a reduction, matrix products), place each one under this machine's
measured roofline, and read how much of its roof it reaches.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and its ceilings
# ----------------------------
# The first line says which device and software produced every number below;
# the second gives the ceilings of the previous page,
# :doc:`/auto_examples/limits/plot_2_ceilings`, measured once per
# process by ``compperf.ceilings``. On a CPU this page uses one thread, as the
# previous pages do.

import matplotlib.pyplot as plt
import torch
from torch.utils.flop_counter import FlopCounterMode

import compperf
from compperf.i18n import parts, table

ELEMENTS = None  # of the element-wise operations; None: from the last cache
MATMUL_SIZES = [64, 256, 512]
BUDGET = 0.5  # seconds of rounds per operation
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    ELEMENTS = 2**16
    MATMUL_SIZES = [64, 128]
    BUDGET = 0.05
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
if device.type == "cpu":
    torch.set_num_threads(1)
print(compperf.environment(device))
limits = compperf.ceilings(device)
print(limits)
# Each tensor of the element-wise operations holds twice the last cache, so
# that their bytes come from memory, as the roof's bandwidth does.
N = ELEMENTS or max(2**20, 2 * (limits.last_level_cache or 2**24) // 4)

# %%
# FLOP and bytes
# --------------
# ``torch.utils.flop_counter.FlopCounterMode`` counts the FLOP of the
# operations it knows: matrix products, ``nn.Linear``, convolutions, and
# attention where it runs as matrix products or as one of CUDA's fused kernels
# (the CPU's fused ``scaled_dot_product_attention`` counts zero). It counts
# zero for element-wise operations and reductions, so for those the cell
# counts by hand: one FLOP per element for an addition, a ReLU or a sum, five
# per element for a softmax (maximum, subtraction, exponential, sum,
# division). PyTorch has no byte counter on a CPU; the bytes are what each
# operation must read and write at least, each tensor once. Real traffic is
# higher, so the intensity (FLOP per byte) is an upper bound. The table shows
# what ``FlopCounterMode`` counted, the FLOP the page uses and the bytes;
# ``a @ b, n = 64`` is the product of two 64 x 64 matrices.


def counted_flops(fn):
    """FLOP of one call of ``fn``, as FlopCounterMode counts them."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def make(name, fn, inputs, outputs, flops=None):
    """An operation: its call, its FLOP (counted unless given) and bytes."""
    found = counted_flops(fn)
    return {
        "name": name,
        "fn": fn,
        "flops": flops if flops is not None else found,
        "counted": found,
        "bytes": nbytes(*inputs, *outputs),
    }


x, y = torch.randn(N, device=device), torch.randn(N, device=device)
rows = torch.randn(N // 1024, 1024, device=device)
operations = [
    make("x + y", lambda: x + y, [x, y], [x], flops=N),
    make("relu(x)", lambda: torch.relu(x), [x], [x], flops=N),
    make("x.sum()", lambda: x.sum(), [x], [], flops=N),
    make("rows.softmax(-1)", lambda: rows.softmax(-1), [rows], [rows], 5 * N),
]
for n in MATMUL_SIZES:
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    operations.append(
        make(f"a @ b, n = {n}", lambda a=a, b=b: a @ b, [a, b], [a])
    )

with parts():
    operation = compperf.tr("operation")
    used, moved = compperf.tr("FLOP used"), compperf.tr("bytes")
counts = [
    (op["name"], op["counted"], op["flops"], op["bytes"]) for op in operations
]
print(table([operation, "FlopCounterMode", used, moved], counts))

# %%
# Under the roof
# --------------
# Each operation's FLOP/s over the roof at its intensity,
# ``min(peak, intensity x bandwidth)``, is the share of the roof it reaches.
# ``limits.place`` times the operation in rounds with the ceilings' own work
# (the peak's matrix product, the bandwidth's copy), so that each round's
# share is read against a roof timed at the same moment; the interval comes
# from the rounds. The first table gives the intensity, the FLOP/s reached and
# the roof (both in GFLOP/s) and the share. A share above 100 % means the
# operation beat the roof timed with it: under the slanted part, its bytes
# came from a cache or cost less than the copy's; under the flat part, it ran
# faster than the peak's product.
#
# The second table holds two verdicts per operation. *memory-bound*: *yes*
# when the intensity lies below the whole interval of the ridge point, *no*
# when it lies at or above it, *unclear* inside it. *below half*: *yes* when
# the whole share interval lies below 50 %, *no* when it lies at 50 % or
# above, *unclear* when it reaches across. On a disturbed machine both are
# *unclear*. The last line counts the operations of each kind.

results = []
for op in operations:
    name = op["name"]
    share = limits.place(
        op["fn"],
        op["flops"],
        op["bytes"],
        description=name,
        budget=BUDGET,
    )
    bound = limits.memory_bound(share.intensity, name)
    half = compperf.conclude(
        "below half of its roof",
        name,
        share.share_low,
        share.share_high,
        below=0.5,
        disturbed=share.disturbed,
    )
    results.append((op, share.measurement, share, bound, half))
rows = []
for op, _, s, _, _ in results:
    gflops = [round(v / 1e9, 2) for v in (s.achieved, s.roof)]
    part = f"{s.share:.0%} ({s.share_low:.0%}-{s.share_high:.0%})"
    rows.append((op["name"], round(s.intensity, 2), *gflops, part))
with parts():
    roof, part = compperf.tr("roof"), compperf.tr("share")
print(table([operation, "FLOP/byte", "GFLOP/s", roof, part], rows))
# The verdicts in a table of their own, so that each table fits 80 columns.
with parts():
    said = {"yes": compperf.tr("yes"), "no": compperf.tr("no")}
    said["unclear"] = compperf.tr("unclear")
    claims = [compperf.tr("memory-bound"), compperf.tr("below half")]
rows = [
    (op["name"], said[b.outcome], said[h.outcome]) for op, *_, b, h in results
]
print(table([operation, *claims], rows))
memory = sum(bound.yes for *_, bound, _ in results)
compute = sum(bound.no for *_, bound, _ in results)
print(compperf.tr("{m} memory-bound, {c} compute-bound", m=memory, c=compute))

# %%
# The picture
# -----------
# The roofline on log scales: the slanted part is the bandwidth, the flat
# part the peak, and they meet at the ridge point. Each dot is one operation
# at its intensity and measured FLOP/s, its interval as an error bar. The
# distance from a dot up to the line is what that operation leaves unused.

intensities = [share.intensity for _, _, share, _, _ in results]
span = [min(intensities) / 2, max(max(intensities), limits.ridge) * 2]
grid = [span[0] * (span[1] / span[0]) ** (i / 100) for i in range(101)]
fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
ax.plot(grid, [limits.roof(i) / 1e9 for i in grid], color="black")
ax.axvline(limits.ridge, color="gray", linestyle=":")
ridge = compperf.tr("ridge {ridge:.1f} FLOP/byte", ridge=limits.ridge)
top = (limits.ridge, limits.peak.value / 1e9)
offset = {"textcoords": "offset points"}
ax.annotate(ridge, top, xytext=(-5, -15), ha="right", **offset)
for op, _, s, _, _ in results:
    y = s.achieved / 1e9
    bar = [[y - s.low / 1e9], [s.high / 1e9 - y]]
    ax.errorbar(
        s.intensity, y, yerr=bar, marker="o", capsize=2, label=op["name"]
    )
ax.set(xscale="log", yscale="log")
# A legend beside the axes names the dots by their code, in every language:
# labels next to the dots overlapped where products sit close together.
legend = {"loc": "upper left", "bbox_to_anchor": (1.01, 1)}
ax.legend(**legend, prop={"family": "monospace", "size": 7})
ax.set_xlabel(compperf.tr("arithmetic intensity (FLOP/byte, upper bound)"))
ax.set_title(compperf.tr("roofline of {device} (GFLOP/s)", device=device))
plt.show()

# %%
# Summary
# -------
# * Arithmetic intensity, FLOP per byte moved, places an operation on the
#   roofline; the ridge point splits memory-bound from compute-bound.
# * ``FlopCounterMode`` counts the FLOP of matrix products; element-wise
#   operations and reductions need counting by hand.
# * Bytes from tensor sizes are a lower bound, so the intensity is an upper
#   bound: an operation may sit further left than drawn.
# * :doc:`/auto_examples/limits/plot_3b_layers_under_the_roof` places the
#   layers of a network the same way.
#
# Exercises
# ---------
# 1. What is the intensity of ``x + y`` in float32, and how does it change in
#    float64?
# 2. At which square size ``n`` does a float32 matrix product cross this
#    machine's ridge point?
#
# Answers
# -------
# **1.** One FLOP per element for 12 bytes (two reads, one write of 4
# bytes): 1/12 FLOP per byte. In float64 each element takes 8 bytes, so the
# intensity halves and, under the same bandwidth, so do the FLOP/s.
#
# **2.** ``2 n³`` FLOP over ``12 n²`` bytes is ``n / 6`` FLOP per byte; it
# equals the ridge point at ``n = 6 x ridge``, the size the line below gives
# for this machine's ridge point.

print(compperf.tr("size at the ridge point: n = {n:.0f}", n=6 * limits.ridge))
