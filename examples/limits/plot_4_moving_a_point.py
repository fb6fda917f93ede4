"""
What moves a point
==================

You move operations on the roofline: fusing an element-wise chain with
``torch.compile`` cuts its bytes, batching small matrix products moves them
out of the overhead regime, and a smaller dtype moves both point and roof.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. ``torch.compile``
on a CPU also needs a C++ compiler (``g++`` or ``clang++``); without one the
page says so and moves the other points.
"""

# %%
# The machine and its ceilings
# ----------------------------
# As on the previous pages (:doc:`/auto_examples/limits/plot_2_ceilings`,
# :doc:`/auto_examples/limits/plot_3_roofline`): the provenance, then the ceilings that
# ``compperf.ceilings`` measured once in this process (one thread on a CPU).
#
# Each move below is decided by ``Comparison.faster``, whose line gives the
# ratio of the two times and its interval against ``1 / 1.05``: *yes* when
# the whole interval lies below (the move saves more than 5 % of the time),
# *no* when it lies at or above, *unclear* when it reaches across or the
# machine was disturbed.

import time
import warnings

import matplotlib.pyplot as plt
import torch
from torch import nn

import compperf
from compperf.i18n import Text, parts, table

BATCH = 64
BUDGET = 1.0  # seconds per comparison
ELEMENTS = None  # of the chain; None: twice the last cache
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET = 0.3
    ELEMENTS = 2**22  # 16 MiB: beyond the caches, as in the full build
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
if device.type == "cpu":
    torch.set_num_threads(1)
print(compperf.environment(device))
limits = compperf.ceilings(device)
print(limits)
points = {}  # name: (intensity, FLOP/s)


# %%
# Fusion: one pass over memory instead of four
# --------------------------------------------
# In eager mode, ``((x * 2 + 1) * 0.5).relu()`` runs four kernels, and each
# reads its input from memory and writes its output back: 32 bytes per
# element in float32 for 4 FLOP. ``torch.compile`` fuses the four into one
# kernel (on a CPU, C++ code that Inductor generates): it reads ``x`` once and
# writes the result once, 8 bytes per element for the same 4 FLOP (the
# chapter :doc:`/auto_examples/compilers/index` shows how). The intensity
# rises fourfold; whether the time falls is for the measurement to say. The
# first line says how long the compilation took and whether Inductor
# compiled or loaded its cache; where ``torch.compile`` fails (a CPU without
# a C++ compiler), it says why and the chain stays unfused.


def chain(x):
    return ((x * 2 + 1) * 0.5).relu()


n = ELEMENTS or max(2**20, 2 * (limits.last_level_cache or 2**24) // 4)
x = torch.randn(n, device=device)
eager = compperf.tr("eager")  # a name in the reader's language
variants = {eager: lambda: chain(x)}
start = time.perf_counter()
try:
    with warnings.catch_warnings():
        # Importing Inductor imports a PyTorch module that still uses the
        # deprecated torch.jit.script_method: it warns once per process.
        warnings.filterwarnings(
            "ignore", r"`torch\.jit\.script_method`", DeprecationWarning
        )
        # The first call compiles; inductor_cache() tells whether Inductor
        # compiled from scratch or loaded an earlier run's graphs from disk.
        with compperf.inductor_cache() as cache:
            fused = torch.compile(chain)
            torch.testing.assert_close(fused(x), chain(x))
    variants["torch.compile"] = lambda: fused(x)
    took = time.perf_counter() - start
    print(compperf.tr("torch.compile: {t:time} ({c})", t=took, c=cache))
except torch._dynamo.exc.BackendCompilerFailed as error:  # No C++ compiler.
    reason = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    print(compperf.tr("torch.compile failed here: {e}", e=reason))

fusion = compperf.interleave(variants, device=device, budget=BUDGET)
bytes_moved = {eager: 4 * 8 * n, "torch.compile": 8 * n}
for name in variants:
    share = limits.share(fusion.measurements[name], 4 * n, bytes_moved[name])
    points[name] = (share.intensity, share.achieved)
if "torch.compile" in variants:
    print(fusion.faster("torch.compile", eager))

# %%
# Batching: one call for many samples
# -----------------------------------
# ``nn.Linear(512, 512)`` on one sample reads its 1 MiB of weights to do
# 0.5 MFLOP: intensity about 0.5 FLOP per byte, and a short call whose fixed
# cost weighs. The same samples as one batch read the weights once for all of
# them. The comparison times 64 calls on one sample each against one call on
# all 64.

layer = nn.Linear(512, 512).to(device).requires_grad_(False)
samples = torch.randn(BATCH, 512, device=device)
one_by_one = [samples[i : i + 1] for i in range(BATCH)]
one_each, batched = compperf.tr("64 x batch 1"), compperf.tr("1 x batch 64")
calls = {one_each: lambda: [layer(s) for s in one_by_one]}
calls[batched] = lambda: layer(samples)
batching = compperf.interleave(calls, device=device, budget=BUDGET)
weights = (512 * 512 + 512) * 4
for name, count, batch in ((one_each, BATCH, 1), (batched, 1, BATCH)):
    flop, moved = 2 * batch * 512 * 512, weights + 2 * batch * 512 * 4
    m = batching.measurements[name]
    share = limits.share(m, count * flop, count * moved)
    points[name] = (share.intensity, share.achieved)
print(batching.faster(batched, one_each))

# %%
# The dtype: fewer bytes, and another roof
# ----------------------------------------
# A 128 x 128 matrix product in float64, float32 and bfloat16 does the same
# FLOP on 8, 4 and 2 bytes per value: the point moves right as the dtype
# shrinks. The roof moves too, because a vector register holds more of the
# smaller values; on a CPU without bfloat16 instructions, bfloat16 is
# converted on the way and can be slower than float32.

size = 128
dtypes = {"float64": torch.float64, "float32": torch.float32}
dtypes["bfloat16"] = torch.bfloat16
operands = {
    name: [torch.randn(size, size, device=device).to(dtype)] * 2
    for name, dtype in dtypes.items()
}
products = {d: (lambda a=a, b=b: a @ b) for d, (a, b) in operands.items()}
precision = compperf.interleave(products, device=device, budget=BUDGET)
for name, dtype in dtypes.items():
    moved = 3 * size**2 * torch.empty((), dtype=dtype).element_size()
    m = precision.measurements[name]
    share = limits.share(m, 2 * size**3, moved)
    points[name] = (share.intensity, share.achieved)
for smaller, larger in (("float32", "float64"), ("bfloat16", "float32")):
    print(precision.faster(smaller, larger))

# %%
# The picture
# -----------
# The float32 roofline of this machine, and an arrow for each move: from the
# eager chain to the fused one, from 64 single-sample calls to one batch, and
# from float64 through float32 to bfloat16. An arrow pointing up and right
# is the move described above; one pointing down cost time on this machine.
# The table gives each point's intensity, FLOP/s and share of the float32
# roof there (a rough guide only for float64 and bfloat16: see exercise 3).

moves = [(eager, "torch.compile"), (one_each, batched)]
moves += [("float64", "float32"), ("float32", "bfloat16")]
xs = [p[0] for p in points.values()]
span = [min(min(xs), limits.ridge) / 2, max(max(xs), limits.ridge) * 2]
grid = [span[0] * (span[1] / span[0]) ** (i / 100) for i in range(101)]
with parts():
    variant, part = compperf.tr("variant"), compperf.tr("share of roof")
rows = [
    (name, f"{i:.3f}", f"{f / 1e9:.2f}", f"{f / limits.roof(i):.0%}")
    for name, (i, f) in points.items()
]
print(table([variant, "FLOP/byte", "GFLOP/s", part], rows))
fig, ax = plt.subplots(figsize=(7, 5))
ax.plot(grid, [limits.roof(i) / 1e9 for i in grid], color="black")
for name, (intensity, rate) in points.items():
    ax.plot(intensity, rate / 1e9, marker="o", color="tab:blue")
    # Code is drawn as it is; a name in words is translated (Text).
    font = None if isinstance(name, Text) else "monospace"
    at = {"textcoords": "offset points", "xytext": (4, 4)}
    ax.annotate(name, (intensity, rate / 1e9), fontfamily=font, **at)
arrow = {"arrowstyle": "->", "color": "tab:red"}
for before, after in moves:
    if before in points and after in points:
        (x0, y0), (x1, y1) = points[before], points[after]
        ax.annotate("", (x1, y1 / 1e9), (x0, y0 / 1e9), arrowprops=arrow)
ax.set(xscale="log", yscale="log", ylabel=compperf.tr("GFLOP/s"))
ax.set_xlabel(compperf.tr("arithmetic intensity (FLOP/byte, upper bound)"))
ax.set_title(compperf.tr("moving points on the roofline of {d}", d=device))
fig.tight_layout()
plt.show()

# %%
# Summary
# -------
# * Fusion removes trips through memory: the same FLOP on fewer bytes, a
#   point further right under the slanted roof.
# * Batching shares the weights and the fixed cost of a call among many
#   samples: more FLOP per byte and per call.
# * A smaller dtype moves the point right and raises the roof where the
#   hardware has instructions for it; where it has none, it can cost time.
# * Every move is a comparison: measure it in rounds and let the interval
#   decide.
#
# Exercises
# ---------
# 1. What intensity does the fused chain reach, and how far can fusion move
#    an element-wise chain of ``k`` operations?
# 2. Would batching pay more or less for ``nn.Linear(4096, 4096)`` than for
#    the 512-wide layer here, and why?
# 3. Which roof should a bfloat16 point be compared with?
#
# Answers
# -------
# **1.** ``k`` operations on one float32 input and one output: ``k`` FLOP per
# element over 8 bytes, ``k / 8`` FLOP per byte, against ``1 / 8`` per kernel
# unfused. Fusion multiplies the intensity by ``k`` at most. The line below
# gives the intensity of this page's four operations, unfused and fused.

u, f = (4 * n / bytes_moved[k] for k in (eager, "torch.compile"))
print(compperf.tr("FLOP/byte: {u:.3f} unfused, {f:.3f} fused", u=u, f=f))

# %%
# **2.** More: its weights are 64 MiB, more than most caches hold, and
# reading them once per sample instead of once per batch costs 64 times the
# bytes from memory. On a GPU each call also launches kernels, and batching
# removes 63 of every 64 launches.
#
# **3.** With a bfloat16 roof: its peak is measured with bfloat16 matrix
# products (``compperf.ceilings(device, torch.bfloat16)``), and its bandwidth
# is the same bytes per second. The float32 roof drawn above is the right
# one only for float32 points.
