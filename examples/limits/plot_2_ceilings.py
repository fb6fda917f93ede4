"""
This machine's ceilings
=======================

You measure the fastest matrix product this device sustains, set it beside
what the hardware's description promises, and let ``compperf.ceilings``
measure the three ceilings (peak, bandwidth, cost of a call) once.
:doc:`/auto_examples/limits/plot_2b_memory_and_caches` measures the memory
and caches in detail.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.
# ``seconds`` is the median time of one call, as ``compperf.measure`` takes it.

from pathlib import Path

import matplotlib.pyplot as plt
import torch

import compperf
from compperf.i18n import table

SIZES = [128, 256, 512]  # n of the n x n matrix products
TIMING = {"min_run_time": 0.05, "max_run_time": 0.3}
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    SIZES = [64, 128]
    TIMING = {"min_run_time": 0.01, "max_run_time": 0.05}
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))


def seconds(fn, *args, **kwargs):
    m = compperf.measure(fn, *args, device=device, **TIMING, **kwargs)
    return m.median


# %%
# Peak arithmetic: a matrix-product sweep
# ---------------------------------------
# A large matrix product does the most arithmetic per byte: the best FLOP/s
# a sweep of them sustains is the practical ceiling, the "maximum achievable
# matmul FLOPS". The sweep varies the size, the dtype and, on a CPU, the
# number of threads; a CPU without bfloat16 instructions emulates bfloat16,
# slowly. The table gives GFLOP/s by dtype and threads (rows) and size
# (columns), the line under it the best rate of the whole table.

dtypes = [torch.float32, torch.float64, torch.bfloat16]
threads = [1, torch.get_num_threads()] if device.type == "cpu" else [None]
default_threads = torch.get_num_threads()
rates, rows = {}, []
for dtype in dtypes:
    for count in sorted(set(threads), key=str):
        for n in SIZES:
            a, b = (torch.randn(n, n, device=device).to(dtype) for _ in "ab")
            t = seconds(
                torch.mm, a, b, description="torch.mm", num_threads=count
            )
            rates[dtype, count, n] = 2 * n**3 / t
        gflops = [round(rates[dtype, count, n] / 1e9, 1) for n in SIZES]
        rows.append([str(dtype), count or "-", *gflops])
torch.set_num_threads(default_threads)
header = ["dtype", "num_threads", *(f"n = {n}" for n in SIZES)]
print(table(header, rows, title="GFLOP/s"))
best = max(rates, key=rates.get)
print(compperf.tr("best: {f:flops}", f=rates[best]))

# %%
# What the hardware promises
# --------------------------
# On a CPU, the theoretical peak is cores x clock x FLOP per cycle. PyTorch
# names the vector instructions it dispatches to
# (``torch.backends.cpu.get_cpu_capability()``): an AVX2 register holds 8
# float32 values, an AVX-512 register 16, and a fused multiply-add (FMA)
# counts as two FLOP. No name says how many FMA units a core has: the cell
# assumes two full-width FMA units, as on Intel Xeon cores with two AVX-512
# FMA units (AMD's Zen 4 runs a 512-bit FMA as two 256-bit halves, half that
# peak), and takes the clock that ``/proc/cpuinfo`` reports now, which under a
# hypervisor may not be the clock the core runs at. It prints the
# instructions, then the clock, the FLOP per cycle and one core's peak. A CUDA
# device's properties give its bandwidth but not its peak: the lines give its
# name, its multiprocessors (SMs) and its bandwidth in theory. Where nothing
# can be derived, nothing is printed.

LANES = {"AVX512": 16, "AVX2": 8, "NO AVX": 4, "DEFAULT": 4}
FMA_UNITS = 2  # Assumed, not derivable from the ISA name.
per_core = None
capability = torch.backends.cpu.get_cpu_capability()
cpuinfo = Path("/proc/cpuinfo")
lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
mhz = [float(x.split(":")[1]) for x in lines if x.startswith("cpu MHz")]
if device.type == "cpu" and capability in LANES and mhz:
    ghz = max(mhz) / 1e3
    k = LANES[capability] * 2 * FMA_UNITS  # float32 FLOP per cycle
    per_core = ghz * 1e9 * k
    print(capability)
    print(compperf.tr("{g:.3} GHz x {k}: {f:flops}", g=ghz, k=k, f=per_core))
elif device.type == "cuda":
    props = torch.cuda.get_device_properties(device)
    # memory_clock_rate is in kHz, memory_bus_width in bits; DDR: two per clock.
    gbs = 2 * props.memory_clock_rate * 1e3 * props.memory_bus_width / 8 / 1e9
    sms = props.multi_processor_count
    print(props.name)
    print(compperf.tr("SMs: {s}, {b:.0f} GB/s in theory", s=sms, b=gbs))

# %%
# On a GPU you can also time with CUDA events, timestamps that the GPU writes
# into its own stream, so the host's clock stays out, and so does the launch
# delay while the GPU has work queued: kernels shorter than a launch leave
# gaps between them, and the events measure those too. On a GPU the cell
# prints the rate they time; elsewhere, what a GPU shows.

# compperf: cuda-only
if device.type == "cuda":
    n = SIZES[-1]
    a = torch.randn(n, n, device=device)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.mm(a, a)
    start.record()
    for _ in range(10):
        torch.mm(a, a)
    end.record()
    end.synchronize()
    per_call = start.elapsed_time(end) / 1e3 / 10  # elapsed_time is in ms
    rate = 2 * n**3 / per_call
    print(compperf.tr("CUDA events, n = {n}: {f:flops}", n=n, f=rate))
else:
    print(compperf.tr("CUDA events: on a GPU, about the sweep's float32 rate"))

# %%
# The ceilings, measured once
# ---------------------------
# ``compperf.ceilings`` measures the three ceilings once per process and
# keeps them: the peak over a few matrix sizes, the copy bandwidth on at least
# 4× the last cache and the cost of a one-element addition, on one thread on a
# CPU, as the chapter's other pages use them
# (:doc:`/auto_examples/limits/plot_3_roofline` draws its roofline from them).
# Where one core's theoretical peak was derived, the verdict takes the
# measured peak over it against 0.5: *yes* when the whole interval lies below,
# *no* when it lies at or above, *unclear* when it reaches across or the
# machine was disturbed.

limits = compperf.ceilings(
    device, num_threads=1 if device.type == "cpu" else None
)
print(limits)
if per_core is not None:
    half = compperf.conclude(
        "below half of the theoretical peak",
        "torch.mm float32 num_threads=1",
        limits.peak.low / per_core,
        limits.peak.high / per_core,
        below=0.5,
        disturbed=limits.disturbed,
    )
    print(half)

# %%
# The picture
# -----------
# FLOP/s of the matrix products by size, one line per dtype and thread count;
# the dashed line is one core's theoretical peak, where it was derived.

fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
for dtype in dtypes:
    for count in sorted(set(threads), key=str):
        # Each line is named by its code, drawn as it is in every language.
        label = (
            f"{dtype}" if count is None else f"{dtype}, num_threads={count}"
        )
        gflops = [rates[dtype, count, n] / 1e9 for n in SIZES]
        ax.plot(SIZES, gflops, marker="o", label=label)
if per_core is not None:
    ax.axhline(per_core / 1e9, color="gray", linestyle="--")
    ax.annotate(compperf.tr("theory, one core"), (SIZES[0], per_core / 1e9))
ax.set(xscale="log", xlabel=compperf.tr("n (n x n matrices)"))
ax.set_title(compperf.tr("matrix products (GFLOP/s)"))
outside = {"loc": "center left", "bbox_to_anchor": (1.01, 0.5)}
ax.legend(prop={"family": "monospace", "size": 7}, **outside)
plt.show()

# %%
# Summary
# -------
# * The practical arithmetic ceiling is the best FLOP/s a large matrix
#   product sustains; measure it over sizes, dtypes and threads.
# * A theoretical peak needs the core count, the clock and the FLOP per
#   cycle; only some of them are written anywhere you can read.
# * ``compperf.ceilings`` measures the three ceilings once and keeps them.
#
# Exercises
# ---------
# 1. What is the ridge point of this machine (peak over bandwidth), and
#    what does an operation need to do per byte to reach the peak?
# 2. Why does float64 reach fewer FLOP/s than float32?
#
# Answers
# -------
# **1.** The ridge point is where the roofline bends: below it the bytes
# limit, above it the arithmetic. The line below gives this machine's ridge
# point in FLOP per byte and its interval.

low, high = limits.ridge_interval
ridge = limits.ridge
print(compperf.tr("ridge: {r:.1f} ({a:.1f}-{b:.1f})", r=ridge, a=low, b=high))

# %%
# **2.** A vector register holds half as many float64 values as float32
# values, so each instruction does half the FLOP.
