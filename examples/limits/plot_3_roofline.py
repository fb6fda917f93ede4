"""
The roofline
============

You count the FLOP and the bytes of a dozen operations you meet every day,
place each one under this machine's measured roofline, and read how much of
its roof it reaches and what holds it back.

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
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import compperf
from compperf.i18n import parts, table

ELEMENTS = None  # of the element-wise operations; None: from the last cache
MATMUL_SIZES = [64, 256, 512]
LINEAR_BATCHES = [1, 32, 512]
BUDGET = 0.5  # seconds of rounds per operation
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    ELEMENTS = 2**16
    MATMUL_SIZES = [64, 128]
    LINEAR_BATCHES = [1, 64]
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
# operations it knows: matrix products, ``nn.Linear``, convolutions,
# attention. It counts zero for element-wise operations and reductions, so
# for those the cell counts by hand: one FLOP per element for an addition, a
# ReLU or a sum, five per element for a softmax (maximum, subtraction,
# exponential, sum, division). PyTorch has no byte counter on a CPU; the bytes
# are what each operation must read and write at least: its inputs, weights
# and outputs, each once. Real traffic is higher, so the intensity
# (FLOP per byte) is an upper bound and the roof drawn for it too. The table
# shows, per operation, what ``FlopCounterMode`` counted, the FLOP the page
# uses (the count by hand where the counter says zero) and the bytes. Each
# operation is named by its code, with its sizes: ``a @ b, n = 64`` is the
# product of two 64 x 64 matrices, ``nn.Linear, 32 x 512`` the layer of
# 512 x 512 weights on a batch of 32 samples.


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
    make(
        "rows.softmax(-1)",
        lambda: rows.softmax(-1),
        [rows],
        [rows],
        flops=5 * N,
    ),
]
for n in MATMUL_SIZES:
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    operations.append(
        make(f"a @ b, n = {n}", lambda a=a, b=b: a @ b, [a, b], [a])
    )
linear = nn.Linear(512, 512).to(device).requires_grad_(False)
for batch in LINEAR_BATCHES:
    inp = torch.randn(batch, 512, device=device)
    out = linear(inp)
    operations.append(
        make(
            f"nn.Linear, {batch} x 512",
            lambda inp=inp: linear(inp),
            [inp, linear.weight, linear.bias],
            [out],
        )
    )
conv = nn.Conv2d(32, 32, 3, padding=1).to(device).requires_grad_(False)
image = torch.randn(1, 32, 32, 32, device=device)
operations.append(
    make(
        "nn.Conv2d(32, 32, 3)",
        lambda: conv(image),
        [image, conv.weight],
        [image],
    )
)
# The 512-256-128-2 perceptron of the compilers chapter, layer by layer.
mlp_input = torch.randn(512, 512, device=device)
for layer in (nn.Linear(512, 256), nn.Linear(256, 128), nn.Linear(128, 2)):
    layer = layer.to(device).requires_grad_(False)
    inp = torch.randn(512, layer.in_features, device=device)
    operations.append(
        make(
            f"nn.Linear({layer.in_features}, {layer.out_features})",
            lambda layer=layer, inp=inp: F.linear(
                inp, layer.weight, layer.bias
            ),
            [inp, layer.weight, layer.bias],
            [layer(inp)],
        )
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
# The ceilings were measured once, a while ago; ``limits.place`` times the
# operation again in rounds with the ceilings' own work (the peak's matrix
# product, the bandwidth's copy), so that each round's share is read against
# a roof timed at the same moment, and the interval comes from the rounds.
# The first table gives the intensity, the FLOP/s reached, the roof
# (both in GFLOP/s) and the share with its interval. A share above 100 % means
# that the bytes came from a cache, which is faster than the memory bandwidth
# under the roof.
#
# The second table holds two verdicts per operation. *memory-bound* is
# decided against the ridge point's interval: *yes* when the intensity lies
# below the whole interval, *no* when it lies at or above it, *unclear* when
# it lies inside it. *below half* asks whether the operation reaches less
# than half of its roof: *yes* when the whole share interval lies below
# 50 %, *no* when it lies at 50 % or above, *unclear* when it reaches across
# 50 %. Numbers measured while the machine was disturbed decide nothing: both
# verdicts are then *unclear*. The line under the tables counts the
# operations of each kind.

results = []
for op in operations:
    share = limits.place(
        op["fn"],
        op["flops"],
        op["bytes"],
        description=op["name"],
        budget=BUDGET,
    )
    bound = limits.memory_bound(share.intensity, op["name"])
    half = compperf.conclude(
        "below half of its roof",
        op["name"],
        share.share_low,
        share.share_high,
        below=0.5,
        disturbed=share.disturbed,
    )
    results.append((op, share.measurement, share, bound, half))
rows = [
    (
        op["name"],
        round(share.intensity, 2),
        round(share.achieved / 1e9, 2),
        round(share.roof / 1e9, 2),
        f"{share.share:.0%} ({share.share_low:.0%}-{share.share_high:.0%})",
    )
    for op, _, share, _, _ in results
]
with parts():
    roof, part = compperf.tr("roof"), compperf.tr("share")
print(table([operation, "FLOP/byte", "GFLOP/s", roof, part], rows))
# The verdicts in a table of their own, so that each table fits 80 columns.
with parts():
    said = {"yes": compperf.tr("yes"), "no": compperf.tr("no")}
    said["unclear"] = compperf.tr("unclear")
    claims = [compperf.tr("memory-bound"), compperf.tr("below half")]
rows = [
    (op["name"], said[bound.outcome], said[half.outcome])
    for op, _, _, bound, half in results
]
print(table([operation, *claims], rows))
memory = sum(bound.yes for *_, bound, _ in results)
compute = sum(bound.no for *_, bound, _ in results)
print(compperf.tr("{m} memory-bound, {c} compute-bound", m=memory, c=compute))

# %%
# The picture
# -----------
# The roofline on log scales: the slanted part is the bandwidth (FLOP/s =
# intensity x bandwidth), the flat part the peak, and they meet at the ridge
# point. Each dot is one operation at its intensity and measured FLOP/s, with
# its interval as an error bar. The distance between a dot and the line above
# it is what that operation leaves on the table.

intensities = [share.intensity for _, _, share, _, _ in results]
span = [min(intensities) / 2, max(max(intensities), limits.ridge) * 2]
grid = [span[0] * (span[1] / span[0]) ** (i / 100) for i in range(101)]
fig, ax = plt.subplots(figsize=(7, 5))
ax.plot(grid, [limits.roof(i) / 1e9 for i in grid], color="black")
ax.axvline(limits.ridge, color="gray", linestyle=":")
ax.annotate(
    compperf.tr("ridge {ridge:.1f} FLOP/byte", ridge=limits.ridge),
    (limits.ridge, limits.peak.value / 1e9),
    textcoords="offset points",
    xytext=(-5, -15),
    horizontalalignment="right",
)
for op, _, share, _, _ in results:
    ax.errorbar(
        share.intensity,
        share.achieved / 1e9,
        yerr=[
            [(share.achieved - share.low) / 1e9],
            [(share.high - share.achieved) / 1e9],
        ],
        marker="o",
        capsize=2,
    )
    ax.annotate(
        op["name"],
        (share.intensity, share.achieved / 1e9),
        fontsize=7,
        fontfamily="monospace",
        textcoords="offset points",
        xytext=(4, 4),
    )
ax.set(
    xscale="log",
    yscale="log",
    xlabel=compperf.tr("arithmetic intensity (FLOP/byte, upper bound)"),
    ylabel=compperf.tr("GFLOP/s"),
    title=compperf.tr("roofline of {device}", device=device),
)
fig.tight_layout()
plt.show()

# %%
# Summary
# -------
# * Arithmetic intensity, FLOP per byte moved, places an operation on the
#   roofline; the ridge point splits memory-bound from compute-bound.
# * ``FlopCounterMode`` counts the FLOP of matrix products and convolutions;
#   element-wise operations and reductions need counting by hand.
# * Bytes from tensor sizes are a lower bound, so the intensity is an upper
#   bound: an operation may sit further left than drawn.
# * A point far below its roof is limited by something else: overhead for
#   small calls, or a kernel that does not reach the ceiling.
#
# Exercises
# ---------
# 1. What is the intensity of ``x + y`` in float32, and how does it change in
#    float64?
# 2. At which square size ``n`` does a float32 matrix product cross this
#    machine's ridge point?
# 3. What limits ``nn.Linear, 1 x 512`` (one sample): its bytes, or the fixed
#    cost of a call?
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

# %%
# **3.** At batch 1 the layer does 2 x 512 x 512 FLOP and reads its 1 MiB
# of weights once: memory-bound. Compare its time per call with the cost of
# the smallest call that ``compperf.ceilings`` measured, ``torch.add`` on one
# element: the lines below give both times and the share of the first that
# the second makes up. That share is what the fixed cost can explain, and the
# rest is reading the weights. Weights that fit a cache come from it after
# the first call, which can put the point above the memory roof.

one = next(m for op, m, *_ in results if op["name"] == "nn.Linear, 1 x 512")
fixed = limits.overhead.value
print(compperf.tr("{o}: {t:time} per call", o=one.description, t=one.median))
print(compperf.tr("torch.add, one element: {t:time}", t=fixed))
print(compperf.tr("share of the fixed cost: {s:.0%}", s=fixed / one.median))
