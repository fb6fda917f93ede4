"""
Memory and caches
=================

You measure how fast this device copies bytes, from working sets that fit its
first cache to ones four times its last, and whether a byte in a cache is
faster than one in memory. The bandwidth from memory is the second ceiling of
:doc:`/auto_examples/limits/plot_2_ceilings`, measured there on one thread of
a CPU; this page copies with all of torch's threads, so on a CPU the two
numbers can differ.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.
# ``seconds`` is the median time of one call, as ``compperf.measure`` takes it.

import matplotlib.pyplot as plt
import torch

import compperf

# Bytes that a copy touches (source and destination), up to 4× the last cache.
WORKING_SETS = [2**k for k in range(14, 28, 2)]
TIMING = {"min_run_time": 0.05, "max_run_time": 0.3}
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    WORKING_SETS = [2**k for k in range(14, 24, 3)]
    TIMING = {"min_run_time": 0.01, "max_run_time": 0.05}
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))


def seconds(fn, *args, **kwargs):
    m = compperf.measure(fn, *args, device=device, **TIMING, **kwargs)
    return m.median


# %%
# Bandwidth: a copy and a triad across the caches
# ------------------------------------------------
# ``dst.copy_(src)`` reads and writes each byte once; the triad
# ``a = b + s * c`` reads two tensors and writes one, as in McCalpin's
# STREAM benchmark. Both count only the bytes they must move (a lower bound:
# a CPU also reads a line before it writes it). The working sets grow past
# each cache that Linux names in ``/sys/devices/system/cpu/cpu0/cache``; the
# lines give the size of each level; the plot draws the bandwidths by
# working set and marks the caches.

caches = compperf.cache_sizes() if device.type == "cpu" else {}
for level, size in caches.items():
    print(compperf.tr("L{level} cache: {size:bytes}", level=level, size=size))
if caches:
    WORKING_SETS = [w for w in WORKING_SETS if w <= 4 * max(caches.values())]
    WORKING_SETS.append(4 * max(caches.values()))
bandwidths = {"copy": [], "triad": []}
for working_set in WORKING_SETS:
    n = working_set // 8  # two float32 tensors for the copy
    src, dst = torch.ones(n, device=device), torch.empty(n, device=device)
    bandwidths["copy"].append(8 * n / seconds(dst.copy_, src))
    n = working_set // 12  # three for the triad
    a, b, c = (torch.ones(n, device=device) for _ in "abc")
    t = seconds(torch.add, b, c, alpha=3.0, out=a, description="torch.add")
    bandwidths["triad"].append(12 * n / t)

# %%
# Is a byte of the first cache copied faster than one from memory?
# ``compperf.interleave`` times the copies of the smallest and the largest
# working set in alternating rounds. The verdict takes the interval of their
# time per byte (cache over memory) against 1 / 1.2: *yes* when it lies wholly
# below, *no* when it lies at or above, *unclear* when it reaches across or
# the machine was disturbed. Each copy also pays the fixed cost of a call
# (the overhead of :doc:`/auto_examples/limits/plot_2_ceilings`); the small
# copy moves few bytes per call, so that cost can outweigh what the cache
# saves, and the verdict counts it, as any code that copies small tensors
# pays it.

small, large = WORKING_SETS[0] // 8, WORKING_SETS[-1] // 8
copies = {}
for size in (small, large):
    s, d = torch.ones(size, device=device), torch.empty(size, device=device)
    copies[str(size)] = lambda s=s, d=d: d.copy_(s)
rounds = compperf.interleave(copies, device=device, budget=1.0)
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
# The picture
# -----------
# Bandwidth by working set, the cache sizes dotted. Where the bandwidth steps
# down at a dotted line, the data stops fitting that cache; at the smallest
# working sets, the fixed cost of each call can hold the bandwidth down.

fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
# Each line is named by its code, drawn as it is in every language.
names = {"copy": "dst.copy_(src)", "triad": "a = b + s * c"}
for name, values in bandwidths.items():
    gbs = [v / 1e9 for v in values]
    ax.plot(WORKING_SETS, gbs, marker="o", label=names[name])
for level, size in caches.items():
    ax.axvline(size, color="gray", linestyle=":")
    # Cache levels are names, drawn as they are.
    at = {"xycoords": ("data", "axes fraction"), "fontfamily": "monospace"}
    ax.annotate(f"L{level}", (size, 0.95), **at)
ax.set(xscale="log", xlabel=compperf.tr("working set (bytes)"))
ax.set(ylabel=compperf.tr("GB/s"), title=compperf.tr("memory and caches"))
outside = {"loc": "center left", "bbox_to_anchor": (1.01, 0.5)}
ax.legend(prop={"family": "monospace", "size": 7}, **outside)
plt.show()

# %%
# Summary
# -------
# * Bandwidth depends on where the data lives and on the size of each call: a
#   copy that fits a cache can beat memory only when it is large enough that
#   the fixed cost of the call does not dominate; memory is the ceiling for
#   large tensors.
# * Count only the bytes an operation must move: a lower bound, since a CPU
#   also reads a line before it writes it.
# * Measure memory with a working set of at least 4× the last cache.
#
# Exercises
# ---------
# 1. Why is the triad's bandwidth different from the copy's?
# 2. How long does a copy of 1 GiB take at the bandwidth measured from memory,
#    and how long would it take at the smallest working set's?
#
# Answers
# -------
# **1.** It moves three streams instead of two and does arithmetic on the
# way; how each stream is read and written, and whether the hardware
# prefetches them alike, changes the bytes per second.
#
# **2.** Time is bytes over bandwidth. The lines below divide 1 GiB by the
# copy's bandwidth at the largest and at the smallest working set. At the
# smallest set's rate, 1 GiB takes 65,536 calls of 16 KiB, and each pays the
# fixed cost of a call.

gib = 2**30
memory, cache = bandwidths["copy"][-1], bandwidths["copy"][0]
print(compperf.tr("1 GiB from memory: {t:time}", t=gib / memory))
print(compperf.tr("1 GiB at the smallest set's rate: {t:time}", t=gib / cache))
