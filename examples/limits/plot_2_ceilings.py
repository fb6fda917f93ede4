"""
This machine's ceilings
=======================

You measure the fastest matrix product this device sustains, the bandwidth
of its memory and caches, and the cost of one call, and set them beside what
the hardware's description promises, where that can be derived.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.

from pathlib import Path

import matplotlib.pyplot as plt
import torch

import compperf

SIZES = [128, 256, 512]  # n of the n x n matrix products
# Bytes that a copy touches (source and destination), up to 4× the last cache.
WORKING_SETS = [2**k for k in range(14, 28, 2)]
TIMING = {"min_run_time": 0.05, "max_run_time": 0.3}
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    SIZES = [64, 128]
    WORKING_SETS = [2**k for k in range(14, 24, 3)]
    TIMING = {"min_run_time": 0.01, "max_run_time": 0.05}
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Peak arithmetic: a matrix-product sweep
# ---------------------------------------
# A large matrix product is the most arithmetic a device does per byte: the
# best FLOP/s it sustains over a sweep is the practical ceiling, the
# "maximum achievable matmul FLOPS". The sweep varies the size, the dtype
# and, on a CPU, the number of threads. bfloat16 is tried where the device
# supports it; on a CPU without bfloat16 instructions it is emulated and slow.
# The table gives one row per product, the line under it the best rate of
# the whole table.

dtypes = [torch.float32, torch.float64, torch.bfloat16]
threads = [1, torch.get_num_threads()] if device.type == "cpu" else [None]
default_threads = torch.get_num_threads()
rates = {}
print(compperf.tr("dtype           threads      n   GFLOP/s"))
for dtype in dtypes:
    for count in sorted(set(threads), key=str):
        for n in SIZES:
            a = torch.randn(n, n, device=device).to(dtype)
            b = torch.randn(n, n, device=device).to(dtype)
            m = compperf.measure(
                torch.mm,
                a,
                b,
                device=device,
                description="torch.mm",
                num_threads=count,
                **TIMING,
            )
            rates[dtype, count, n] = 2 * n**3 / m.median
            rate = rates[dtype, count, n] / 1e9
            print(f"{dtype!s:<15} {count or '-':>7} {n:>6} {rate:9.1f}")
torch.set_num_threads(default_threads)
best = max(rates, key=rates.get)
print(compperf.tr("best: {f:flops}", f=rates[best]))

# %%
# What the hardware promises
# --------------------------
# On a CPU, the theoretical peak is cores x clock x FLOP per cycle. PyTorch
# names the vector instructions it dispatches to
# (``torch.backends.cpu.get_cpu_capability()``): AVX2 holds 8 float32 values
# per register, AVX-512 holds 16. A fused multiply-add (FMA) counts as two
# FLOP. How many FMA units a core has is not in any of these names; the cell
# assumes two, as on current x86 server cores, and says so. The clock is
# what ``/proc/cpuinfo`` reports now, not the turbo clock. On a CUDA device
# the properties give the memory clock and bus width, from which the memory
# bandwidth follows; the arithmetic peak needs the cores per multiprocessor,
# which the properties do not give.
#
# On a CPU, where the vector instructions have an entry below and the clock
# is reported, the first line names the instructions and the second gives
# the clock, the float32 FLOP per cycle of one core and the peak they make
# for that core (the whole CPU's is that times the number of cores). Where
# nothing can be derived, the cell prints nothing and the page compares no
# measurement with a theory. On a CUDA device the lines give the device's
# name, its multiprocessors (SMs) and its memory bandwidth in theory; other
# devices report nothing to derive from.

LANES = {"AVX512": 16, "AVX2": 8, "NO AVX": 4, "DEFAULT": 4}
FMA_UNITS = 2  # Assumed, not derivable from the ISA name.
per_core = theoretical_bandwidth = None
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
    theoretical_bandwidth = (
        2 * props.memory_clock_rate * 1e3 * props.memory_bus_width / 8
    )
    sms, gbs = props.multi_processor_count, theoretical_bandwidth / 1e9
    print(props.name)
    print(compperf.tr("SMs: {s}, {b:.0f} GB/s in theory", s=sms, b=gbs))

# %%
# On a GPU you can also time with CUDA events: the GPU writes a timestamp
# into its own stream before and after the work, so the host's clock and the
# launch delay stay out. ``compperf.measure`` synchronizes and reads the
# host's clock instead; on a GPU the two agree once the work is large. On a
# GPU the cell prints the rate the events time; on any other device it prints
# what a GPU shows.

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
    seconds = start.elapsed_time(end) / 1e3 / 10  # elapsed_time is in ms
    rate = 2 * n**3 / seconds
    print(compperf.tr("CUDA events, n = {n}: {f:flops}", n=n, f=rate))
else:
    print(compperf.tr("CUDA events: on a GPU, about the rate of the sweep"))

# %%
# Bandwidth: a copy and a triad across the caches
# ------------------------------------------------
# ``dst.copy_(src)`` reads and writes each byte once; the triad
# ``a = b + s * c`` reads two tensors and writes one, as in McCalpin's
# STREAM benchmark. Both count only the bytes they must move (a lower bound:
# a CPU also reads a line before it writes it). The working sets grow past
# each cache that Linux names in ``/sys/devices/system/cpu/cpu0/cache``
# (the first line gives their bytes by level); the plot marks them.

caches = compperf.cache_sizes() if device.type == "cpu" else {}
print(compperf.tr("caches (bytes by level): {caches}", caches=caches or "-"))
if caches:
    WORKING_SETS = [w for w in WORKING_SETS if w <= 4 * max(caches.values())]
    WORKING_SETS.append(4 * max(caches.values()))
bandwidths = {"copy": [], "triad": []}
for working_set in WORKING_SETS:
    n = working_set // 8  # two float32 tensors for the copy
    src, dst = torch.ones(n, device=device), torch.empty(n, device=device)
    m = compperf.measure(dst.copy_, src, device=device, **TIMING)
    bandwidths["copy"].append(8 * n / m.median)
    n = working_set // 12  # three for the triad
    b, c = torch.ones(n, device=device), torch.ones(n, device=device)
    a = torch.empty(n, device=device)
    m = compperf.measure(
        torch.add,
        b,
        c,
        alpha=3.0,
        out=a,
        device=device,
        description="torch.add",
        **TIMING,
    )
    bandwidths["triad"].append(12 * n / m.median)
print(compperf.tr("working set   copy GB/s  triad GB/s"))
for i, working_set in enumerate(WORKING_SETS):
    print(
        f"{working_set / 2**20:>9.2f} MiB {bandwidths['copy'][i] / 1e9:>10.1f} "
        f"{bandwidths['triad'][i] / 1e9:>11.1f}"
    )

# %%
# Is the smallest working set, which fits the first cache, really served
# faster than the largest, which only memory holds? ``compperf.interleave``
# times both copies in rounds; the ratio of their time per byte decides.
# The verdict line prints the claim "cache faster than memory", its outcome
# and the interval of that ratio (a byte of the smallest working set over a
# byte from memory), against the threshold 1 / 1.2: *yes* when the whole
# interval lies below it (a byte from the first cache costs less than 1 / 1.2
# of a byte from memory: the caches are faster), *no* when it lies at or
# above it (no faster here), *unclear* when it reaches across it or the
# machine was disturbed.

small, large = WORKING_SETS[0] // 8, WORKING_SETS[-1] // 8
pairs = {
    size: (torch.ones(size, device=device), torch.empty(size, device=device))
    for size in (small, large)
}
rounds = compperf.interleave(
    {
        str(size): (lambda s=s, d=d: d.copy_(s))
        for size, (s, d) in pairs.items()
    },
    device=device,
    budget=1.0,
)
ratio = rounds.ratio(str(small), str(large))
per_byte = [value * large / small for value in (ratio.low, ratio.high)]
cache_faster = compperf.conclude(
    "cache faster than memory",
    "dst.copy_(src)",
    *per_byte,
    below=1 / 1.2,
    disturbed=rounds.disturbance.disturbed,
)
print(cache_faster)

# %%
# The ceilings, measured once
# ---------------------------
# ``compperf.ceilings`` measures the three ceilings once per process and
# keeps them for the device, dtype and thread count: the peak over a few
# matrix sizes, the copy bandwidth with a working set of at least 4× the
# last cache, and the per-call cost of an addition of one element. The next
# page, :doc:`/auto_examples/limits/plot_3_roofline`, draws its roofline from
# them. On a CPU it uses one thread, as the
# other pages of this chapter do.
#
# Where the theoretical peak of one core could be derived, compperf's verdict
# sets the measured peak beside it. Its line prints the claim "below half of
# the theoretical peak", its outcome and the interval of the measured peak
# over the theoretical one, against the threshold 0.5: *yes* when the whole
# interval lies below 0.5 (one thread reaches less than half of one core's
# theoretical peak), *no* when it lies at 0.5 or above (at least half),
# *unclear* when it reaches across 0.5 or the machine was disturbed.

limits = compperf.ceilings(
    device, num_threads=1 if device.type == "cpu" else None
)
print(limits)
if per_core is not None:
    low, high = limits.peak.low / per_core, limits.peak.high / per_core
    half = compperf.conclude(
        "below half of the theoretical peak",
        "torch.mm float32 num_threads=1",
        low,
        high,
        below=0.5,
        disturbed=limits.disturbed,
    )
    print(half)

# %%
# The picture
# -----------
# Top: FLOP/s of the matrix products by size, one line per dtype and
# thread count. Bottom: bandwidth by working set, with the cache sizes as
# dotted lines; the steps down show where the data stops fitting a cache.

fig, (left, right) = plt.subplots(2, 1, figsize=(7, 7.5), layout="constrained")
for dtype in dtypes:
    for count in sorted(set(threads), key=str):
        label = compperf.tr("{d}, threads: {c}", d=str(dtype), c=count or "-")
        left.plot(
            SIZES,
            [rates[dtype, count, n] / 1e9 for n in SIZES],
            marker="o",
            label=label,
        )
if per_core is not None:
    left.axhline(per_core / 1e9, color="gray", linestyle="--")
    left.annotate(compperf.tr("theory, one core"), (SIZES[0], per_core / 1e9))
left.set(
    xscale="log",
    xlabel=compperf.tr("n (n x n matrices)"),
    ylabel=compperf.tr("GFLOP/s"),
    title=compperf.tr("matrix products"),
)
left.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7)
# Each line is named by its code, drawn as it is in every language.
names = {"copy": "dst.copy_(src)", "triad": "a = b + s * c"}
for name, values in bandwidths.items():
    right.plot(
        WORKING_SETS, [v / 1e9 for v in values], marker="o", label=names[name]
    )
for level, size in caches.items():
    right.axvline(size, color="gray", linestyle=":")
    right.annotate(
        f"L{level}",  # Cache levels are names, drawn as they are.
        (size, 0.95),
        xycoords=("data", "axes fraction"),
        fontfamily="monospace",
    )
right.set(
    xscale="log",
    xlabel=compperf.tr("working set (bytes)"),
    ylabel=compperf.tr("GB/s"),
    title=compperf.tr("memory and caches"),
)
right.legend(
    loc="center left",
    bbox_to_anchor=(1.01, 0.5),
    prop={"family": "monospace", "size": 7},
)
plt.show()

# %%
# Summary
# -------
# * The practical arithmetic ceiling is the best FLOP/s a large matrix
#   product sustains; measure it over sizes, dtypes and threads.
# * Bandwidth depends on where the data lives: each cache level is faster
#   than the next, and memory is the ceiling for large tensors.
# * A theoretical peak needs the core count, the clock and the FLOP per
#   cycle; only some of them are written anywhere you can read.
# * ``compperf.ceilings`` measures the three ceilings once and keeps them.
#
# Exercises
# ---------
# 1. What is the ridge point of this machine (peak over bandwidth), and
#    what does an operation need to do per byte to reach the peak?
# 2. Why does float64 reach fewer FLOP/s than float32?
# 3. Why is the triad's bandwidth different from the copy's?
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
#
# **3.** It moves three streams instead of two and does arithmetic on the
# way; how each stream is read and written, and whether the hardware
# prefetches them alike, changes the bytes per second.
