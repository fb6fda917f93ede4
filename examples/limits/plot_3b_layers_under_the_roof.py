"""
Layers under the roof
=====================

You place the layers of a network under this machine's roofline, as
:doc:`/auto_examples/limits/plot_3_roofline` placed single operations: a linear
layer at three batch sizes, a convolution and the three layers of a perceptron.
You see how the batch moves a layer from the memory roof toward the peak.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and its ceilings
# ----------------------------
# The first line says which device and software produced every number below;
# the second gives the ceilings that ``compperf.ceilings`` measures once per
# process (:doc:`/auto_examples/limits/plot_2_ceilings`). On a CPU this page
# uses one thread, as the previous pages do.

from math import inf

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import compperf
from compperf.i18n import parts, table

LINEAR_BATCHES = [1, 32, 512]
BUDGET = 0.5  # seconds of rounds per layer
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    LINEAR_BATCHES = [1, 64]
    BUDGET = 0.05
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
if device.type == "cpu":
    torch.set_num_threads(1)
print(compperf.environment(device))
limits = compperf.ceilings(device)
print(limits)

# %%
# FLOP and bytes of a layer
# -------------------------
# ``torch.utils.flop_counter.FlopCounterMode`` counts the FLOP of
# ``nn.Linear`` and of convolutions. The bytes are what a layer must read and
# write at least: its input, weights and bias, and its output, each once. Real
# traffic is higher, so the intensity is an upper bound. ``nn.Linear, 32 x
# 512`` is the layer of 512 x 512 weights on a batch of 32 samples; the last
# three rows are the 512-256-128-2 perceptron of the compilers chapter, layer
# by layer, on a batch of 512.


def make(name, layer, inp):
    """A layer on its input: the call, its FLOP as counted, and its bytes."""
    layer = layer.to(device).requires_grad_(False)
    with FlopCounterMode(display=False) as counter:
        out = layer(inp)
    tensors = [inp, *layer.parameters(), out]
    return {
        "name": name,
        "fn": lambda: layer(inp),
        "flops": counter.get_total_flops(),
        "bytes": sum(t.numel() * t.element_size() for t in tensors),
    }


linear = nn.Linear(512, 512)
operations = []
for batch in LINEAR_BATCHES:
    inp = torch.randn(batch, 512, device=device)
    operations.append(make(f"nn.Linear, {batch} x 512", linear, inp))
image = torch.randn(1, 32, 32, 32, device=device)
conv = nn.Conv2d(32, 32, 3, padding=1)
operations.append(make("nn.Conv2d(32, 32, 3)", conv, image))
for i, o in ((512, 256), (256, 128), (128, 2)):
    layer = nn.Linear(i, o)
    inp = torch.randn(512, i, device=device)
    operations.append(make(f"nn.Linear({i}, {o})", layer, inp))

with parts():
    operation, moved = compperf.tr("operation"), compperf.tr("bytes")
counts = [(op["name"], op["flops"], op["bytes"]) for op in operations]
print(table([operation, "FLOP", moved], counts))

# %%
# Under the roof
# --------------
# As on the previous page, ``limits.place`` times each layer in rounds with
# the ceilings' own work, so that each round's share is read against a roof
# timed at the same moment. The first table gives the intensity, the FLOP/s
# reached and the roof (both in GFLOP/s) and the share with its interval. A
# share above 100 % means the layer beat the roof timed with it: under the
# slanted part, its bytes came from a cache or cost less than the copy's;
# under the flat part, it ran faster than the peak's product. The second
# table holds the verdicts: *memory-bound* (*yes* when the intensity lies
# below the whole interval of the ridge point, *no* at or above it, *unclear*
# inside it) and *below half* (*yes* when the whole share interval lies below
# 50 %, *no* at or above, *unclear* across). A verdict that is the same for
# every layer is said once, on the line above that table. On a disturbed
# machine both are *unclear*.

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
# A blank line: a verdict said once above its table stays with that table.
print()
print(table([operation, *claims], rows))
memory = sum(bound.yes for *_, bound, _ in results)
compute = sum(bound.no for *_, bound, _ in results)
print(compperf.tr("{m} memory-bound, {c} compute-bound", m=memory, c=compute))

# %%
# The picture
# -----------
# The roofline on log scales, each layer a dot at its intensity and measured
# FLOP/s, its interval as an error bar. A larger batch moves the linear layer
# to the right: the same weights serve more samples. A dot above the slanted
# part of the roof read its bytes faster than the copy that set the roof:
# from a cache, for example weights that fit one.

intensities = [share.intensity for _, _, share, _, _ in results]
span = [min(intensities) / 2, max(max(intensities), limits.ridge) * 2]
grid = [span[0] * (span[1] / span[0]) ** (i / 100) for i in range(101)]
fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
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
# labels next to the dots overlapped where layers sit close together.
legend = {"loc": "upper left", "bbox_to_anchor": (1.01, 1)}
ax.legend(**legend, prop={"family": "monospace", "size": 7})
ax.set_xlabel(compperf.tr("arithmetic intensity (FLOP/byte, upper bound)"))
ax.set_title(compperf.tr("layers under the roof of {d} (GFLOP/s)", d=device))
plt.show()


# %%
# Summary
# -------
# * ``FlopCounterMode`` counts the FLOP of linear layers and convolutions; the
#   bytes are their inputs, weights and outputs.
# * A layer reads its weights once per call: a larger batch shares them over
#   more samples and raises the intensity.
# * A point far below its roof is limited by something else: the fixed cost
#   of a small call, or a kernel that does not reach the ceiling.
#
# Exercises
# ---------
# 1. What limits ``nn.Linear, 1 x 512`` (one sample): its bytes, or the fixed
#    cost of a call?
# 2. From which batch on does ``nn.Linear(512, 512)`` reach this machine's
#    ridge point?
#
# Answers
# -------
# **1.** At batch 1 the layer does 2 x 512 x 512 FLOP and reads its 1 MiB
# of weights once: memory-bound. Compare its time per call with the cost of
# the smallest call that ``compperf.ceilings`` measured, ``torch.add`` on one
# element: the lines below give both times and the share of the first that
# the second makes up. That share is what the fixed cost can explain, and the
# rest is reading the weights. Weights that fit a cache come from it after
# the first call, which can put the point above the memory roof.

one = next(m for op, m, *_ in results if op["name"] == "nn.Linear, 1 x 512")
fixed = limits.overhead.value
print(one)
print(limits.overhead.measurement)
print(compperf.tr("share of the fixed cost: {s:.0%}", s=fixed / one.median))

# %%
# **2.** A batch of ``B`` samples does ``2 x 512² x B`` FLOP and moves
# ``4 x (512² + 512 + 2 x 512 x B)`` bytes: the weights and the bias once,
# one input and one output row per sample. The intensity grows with ``B``
# towards ``512² / 2048 = 128`` FLOP per byte and never passes it. It
# equals the ridge point ``r`` at
# ``B = 4r (512² + 512) / (2 x 512² - 4096r)``, the batch that the line
# below gives for this machine.

weights = 512 * 512  # of nn.Linear(512, 512)
r = limits.ridge
# A ridge point at or past 128 FLOP/byte is never reached: inf.
batch = 4 * r * (weights + 512) / (2 * weights - 4096 * r) if r < 128 else inf
print(compperf.tr("batch at the ridge point: {b:.0f}", b=batch))
