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

import os
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
                torch.mm, a, b, device=device, num_threads=count, **TIMING
            )
            rates[dtype, count, n] = 2 * n**3 / m.median
            print(
                f"{dtype!s:<15} {count or '-':>7} {n:>6} "
                f"{rates[dtype, count, n] / 1e9:9.1f}"
            )
torch.set_num_threads(default_threads)
best = max(rates, key=rates.get)
print()
compperf.say(
    "best sustained: {rate:.1f} GFLOP/s ({dtype}, n = {n}, threads: {threads})",
    rate=rates[best] / 1e9,
    dtype=str(best[0]),
    n=best[2],
    threads=best[1] or "-",
)

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

LANES = {"AVX512": 16, "AVX2": 8, "NO AVX": 4, "DEFAULT": 4}
FMA_UNITS = 2  # Assumed, not derivable from the ISA name.
per_core = theoretical_bandwidth = None
if device.type == "cpu":
    capability = torch.backends.cpu.get_cpu_capability()
    cpuinfo = Path("/proc/cpuinfo")
    mhz = []
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("cpu MHz"):
                mhz.append(float(line.split(":")[1]))
    cores = os.cpu_count() or 1
    if capability in LANES and mhz:
        per_cycle = LANES[capability] * 2 * FMA_UNITS
        per_core = max(mhz) * 1e6 * per_cycle
        compperf.say(
            "{capability}: {ghz:.2f} GHz x {per_cycle} float32 FLOP per cycle "
            "= {core:.0f} GFLOP/s per core in theory, {peak:.0f} GFLOP/s for "
            "all {cores} cores",
            capability=capability,
            ghz=max(mhz) / 1e3,
            per_cycle=per_cycle,
            core=per_core / 1e9,
            peak=cores * per_core / 1e9,
            cores=cores,
        )
    else:
        compperf.say(
            "the theoretical peak cannot be derived here (ISA {capability}, "
            "clock not reported)",
            capability=capability,
        )
elif device.type == "cuda":
    props = torch.cuda.get_device_properties(device)
    # memory_clock_rate is in kHz, memory_bus_width in bits; DDR: two per clock.
    theoretical_bandwidth = (
        2 * props.memory_clock_rate * 1e3 * props.memory_bus_width / 8
    )
    compperf.say(
        "{name}: {sms} multiprocessors, memory {bandwidth:.0f} GB/s in theory; "
        "its peak FLOP/s cannot be derived from the device properties",
        name=props.name,
        sms=props.multi_processor_count,
        bandwidth=theoretical_bandwidth / 1e9,
    )
else:
    compperf.say(
        "{device} reports no properties to derive a peak from", device=device
    )

# %%
# On a GPU you can also time with CUDA events: the GPU writes a timestamp
# into its own stream before and after the work, so the host's clock and the
# launch delay stay out. ``compperf.measure`` synchronizes and reads the
# host's clock instead; on a GPU the two agree once the work is large.

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
    compperf.say(
        "CUDA events: {rate:.1f} GFLOP/s for n = {n}",
        rate=2 * n**3 / seconds / 1e9,
        n=n,
    )
else:
    compperf.say(
        "{device} has no CUDA events: the host's clock times the work, which "
        "on a CPU runs while the clock waits",
        device=device,
    )

# %%
# Bandwidth: a copy and a triad across the caches
# ------------------------------------------------
# ``dst.copy_(src)`` reads and writes each byte once; the triad
# ``a = b + s * c`` reads two tensors and writes one, as in McCalpin's
# STREAM benchmark. Both count only the bytes they must move (a lower bound:
# a CPU also reads a line before it writes it). The working sets grow past
# each cache that Linux names in ``/sys/devices/system/cpu/cpu0/cache``; the
# plot marks them.

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
        torch.add, b, c, alpha=3.0, out=a, device=device, **TIMING
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
    "copy",
    *per_byte,
    below=1 / 1.2,
    disturbed=rounds.disturbance.disturbed,
)
if cache_faster.yes:
    compperf.say(
        "a byte from the smallest working set costs {low:.2f}–{high:.2f}× the "
        "time of a byte from memory: the caches are faster",
        low=per_byte[0],
        high=per_byte[1],
    )
elif cache_faster.no:
    compperf.say(
        "a byte from the smallest working set costs {low:.2f}–{high:.2f}× the "
        "time of a byte from memory: no faster here",
        low=per_byte[0],
        high=per_byte[1],
    )
else:
    compperf.say(
        "unclear here whether the caches are faster ({low:.2f}–{high:.2f}× "
        "the time per byte of memory)",
        low=per_byte[0],
        high=per_byte[1],
    )

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

limits = compperf.ceilings(
    device, num_threads=1 if device.type == "cpu" else None
)
print(limits)
if per_core is not None:
    low, high = limits.peak.low / per_core, limits.peak.high / per_core
    half = compperf.conclude(
        "below half of the theoretical peak",
        "float32 matmul, one thread",
        low,
        high,
        below=0.5,
        disturbed=limits.disturbed,
    )
    if half.yes:
        compperf.say(
            "one thread reaches {low:.0%}-{high:.0%} of one core's theoretical "
            "peak: less than half",
            low=low,
            high=high,
        )
    elif half.no:
        compperf.say(
            "one thread reaches {low:.0%}-{high:.0%} of one core's theoretical "
            "peak: at least half",
            low=low,
            high=high,
        )
    else:
        compperf.say(
            "unclear here whether one thread reaches half of one core's "
            "theoretical peak ({low:.0%}-{high:.0%})",
            low=low,
            high=high,
        )

# %%
# The picture
# -----------
# Top: FLOP/s of the matrix products by size, one line per dtype and
# thread count. Bottom: bandwidth by working set, with the cache sizes as
# dotted lines; the steps down show where the data stops fitting a cache.

fig, (left, right) = plt.subplots(2, 1, figsize=(7, 7.5), layout="constrained")
for dtype in dtypes:
    for count in sorted(set(threads), key=str):
        label = compperf.tr(
            "{dtype}, threads: {threads}",
            dtype=str(dtype),
            threads=count or "-",
        )
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
names = {"copy": compperf.tr("copy"), "triad": compperf.tr("triad")}
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
right.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7)
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
# limit, above it the arithmetic.

print(
    compperf.tr(
        "ridge point: {ridge:.1f} FLOP per byte (interval {low:.1f}-{high:.1f})",
        ridge=limits.ridge,
        low=limits.ridge_interval[0],
        high=limits.ridge_interval[1],
    )
)

# %%
# **2.** A vector register holds half as many float64 values as float32
# values, so each instruction does half the FLOP.
#
# **3.** It moves three streams instead of two and does arithmetic on the
# way; how each stream is read and written, and whether the hardware
# prefetches them alike, changes the bytes per second.
