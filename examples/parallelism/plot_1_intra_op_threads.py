"""
Threads inside one operator
===========================

You change how many threads PyTorch gives one operator and measure what more
threads buy three operations, with Amdahl's law fitted to each result.

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# Intra-op threads are a CPU matter: on a GPU one kernel runs on thousands of
# device threads whatever the CPU thread count says. So this page measures the
# CPU, on any machine.
import os
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

import compperf

device = torch.device("cpu")
print(compperf.environment(device))

# %%
# The thread pool PyTorch uses
# ----------------------------
# ``torch.__config__.parallel_info()`` says which library runs the pool
# (OpenMP, or PyTorch's own) and whether ``OMP_NUM_THREADS`` and
# ``MKL_NUM_THREADS`` were set. ``at::get_num_threads()`` is
# ``torch.get_num_threads()``, the threads one operator splits its work over
# (intra-op); ``at::get_num_interop_threads()`` is the next page's pool
# (:doc:`/auto_examples/parallelism/plot_2_inter_op`). The next line counts
# logical CPUs and the physical cores Linux reports (two hyper-threads make
# one; ``0`` elsewhere). ``torch.set_num_threads(n)`` changes the count; its
# documentation asks you to call it before any eager, JIT or autograd code
# runs, because OpenMP and MKL keep the setting per thread: a thread that has
# already run an operator keeps its old count. The variables act only when a
# process starts, so the last line is the pool of a child started with both
# set to 1.
print(torch.__config__.parallel_info())
max_threads = torch.get_num_threads()
topology = Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology")
cores = len({(t / "thread_siblings_list").read_text() for t in topology})
print(compperf.tr("logical CPUs: {n}, cores: {c}", n=os.cpu_count(), c=cores))
one_thread = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
code = "import torch; print(torch.get_num_threads())"
child = subprocess.check_output(
    [sys.executable, "-c", code], env=one_thread, text=True, timeout=60
)
child_threads = int(child.split()[-1])
print(compperf.tr("child's threads: {n}", n=child_threads))

# %%
# Speed-up against threads
# ------------------------
# A large matrix product has arithmetic for every thread; ``torch.exp`` over
# millions of values does a little per value it reads and writes; an
# addition on a thousand values is below PyTorch's grain size
# (``at::internal::GRAIN_SIZE``, 32768 elements), which it never splits.
# ``compperf.interleave`` times each at every thread count in turns (1, 2, 1,
# 2, …). The speed-up with ``n`` threads is the median per-round ratio of the
# time with one to the time with ``n``, with its confidence interval: look at
# how far each interval lies from 1.
n = 1024
elements = 2**22
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
if os.environ.get("COMPPERF_FAST") == "1":
    n, elements = 256, 2**18
# sphinx_gallery_end_ignore
a, b = torch.randn(n, n), torch.randn(n, n)
values, exps = torch.randn(elements), torch.empty(elements)
small, small_out = torch.randn(1000), torch.empty(1000)
workloads = {
    "torch.mm(a, b)": lambda: torch.mm(a, b),
    "torch.exp(values)": lambda: torch.exp(values, out=exps),
    "torch.add(small, 1)": lambda: torch.add(small, 1, out=small_out),
}
counts = sorted({1, 2, max_threads} | {c for c in (4, 8) if c < max_threads})


def with_threads(threads, operation):
    def call():
        torch.set_num_threads(threads)
        operation()

    return call


comparisons, speedups = {}, {}
with compperf.watch() as watched:
    for name, op in workloads.items():
        variants = {
            compperf.tr("{w}, {n} threads", w=name, n=c): with_threads(c, op)
            for c in counts
        }
        comparisons[name] = compperf.interleave(
            variants, device=device, budget=1.5, min_rounds=8
        )
        one, *_ = variants
        speedups[name] = [comparisons[name].ratio(one, v) for v in variants]
        for c, r in zip(counts[1:], speedups[name][1:], strict=True):
            print(compperf.tr("{w}, {n} threads: {r}", w=name, n=c, r=r))
torch.set_num_threads(max_threads)

# %%
# Amdahl's law
# ------------
# If a share ``p`` of the work splits over ``n`` threads, the speed-up is
# ``S(n) = 1 / ((1 - p) + p / n)``. A least-squares fit of ``1 / S`` gives
# ``p`` (0 where threads cost more than they bring); the interval at the
# largest thread count, its range.


def amdahl_share(threads, speedup):
    """Least-squares p of 1/S - 1 = p * (1/n - 1), clipped to [0, 1]."""
    x = 1 / np.asarray(threads, dtype=float) - 1
    y = 1 / np.asarray(speedup, dtype=float) - 1
    return float(np.clip(np.sum(x * y) / np.sum(x * x), 0.0, 1.0))


shares = {}
for name, ratios in speedups.items():
    p = amdahl_share(counts[1:], [r.estimate for r in ratios[1:]])
    lo = amdahl_share(counts[-1:], [ratios[-1].low])
    hi = amdahl_share(counts[-1:], [ratios[-1].high])
    shares[name] = (p, lo, hi)
    fit = compperf.tr("p = {p:.0%} ({a:.0%}–{b:.0%})", p=p, a=lo, b=hi)
    print(compperf.tr("{w}: {fit}", w=name, fit=fit))

# %%
# The verdicts
# ------------
# ``Comparison.faster`` asks whether all the pool's threads beat one by more
# than 5 %: *yes*; *no*, not measurably here; *unclear*, the interval
# straddles 1 / 1.05 or the machine was disturbed (the next line says what
# compperf saw). The last verdict: on ``n`` separate cores the matrix product
# gains more than half the ideal speed-up, ``mark = (1 + n) / 2``; on halves
# of one physical core, or cores other programs hold, less. *Yes*: these CPUs
# behave like separate cores; *no*: here they do not; *unclear*: this run
# cannot tell.
verdicts = {}
for name, comparison in comparisons.items():
    one, *_, every = comparison.names  # one thread, all the pool's threads
    verdicts[name] = comparison.faster(every, one, subject=name)
    print(verdicts[name])
print(watched.disturbance)
matmul, mark = next(iter(speedups)), (1 + counts[-1]) / 2
one, *_, every = comparisons[matmul].names
time_ratio = comparisons[matmul].ratio(every, one)
like_cores = compperf.conclude(
    "like separate cores",
    matmul,
    time_ratio.low,
    time_ratio.high,
    below=1 / mark,
    disturbed=watched.disturbance.disturbed,
    value=time_ratio.estimate,
)
print(like_cores)

# %%
# The figure shows each speed-up with its interval, Amdahl's curve for the
# fitted ``p``, and the ideal ``S(n) = n`` that no real operator reaches.
fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
grid = np.linspace(1, counts[-1], 50)
for index, (name, ratios) in enumerate(speedups.items()):
    est, low, high = np.array([[r.estimate, r.low, r.high] for r in ratios]).T
    x = np.array(counts) + (index - 1) * 0.04 * counts[-1]  # side by side
    ax.errorbar(
        x, est, [est - low, high - est], fmt="o", capsize=3, label=name
    )
    p = shares[name][0]
    ax.plot(grid, 1 / ((1 - p) + p / grid), color=f"C{index}", alpha=0.6)
ideal = compperf.tr("ideal: S(n) = n")
ax.plot(grid, grid, color="gray", linestyle=":", label=ideal)
ax.set_xticks(counts)
ax.set_xlabel(compperf.tr("intra-op threads"))
ax.set_ylabel(compperf.tr("speed-up over one thread"))
ax.set_title(compperf.tr("Speed-up against threads, with Amdahl fits"))
legend = fig.legend(loc="outside upper center", ncols=2)
for text in legend.get_texts():
    if text.get_text() in speedups:  # the operations' names are code
        text.set_fontfamily("monospace")
plt.show()

# %%
# Summary
# -------
# * One operator splits its work over ``torch.get_num_threads()`` threads:
#   ``torch.set_num_threads`` changes them, ``OMP_NUM_THREADS`` sets them at
#   a process's start, ``torch.__config__.parallel_info()`` shows them.
# * Work below the grain size is never split; more threads cannot help it.
# * Amdahl's ``p`` summarises a measured speed-up; where "cores" share
#   physical units, even a matrix product gains less than their count says.
#
# Exercises
# ---------
# 1. With this ``p`` for the matrix product, what speed-up does Amdahl's law
#    predict on 16 threads, and what is its limit?
# 2. At which size does ``torch.add`` start to use more than one thread?
# 3. Why might two threads not speed up a memory-bound operation?
#
# Answers
# -------
# 1. ``S(16) = 1 / ((1 - p) + p / 16)``, and the limit for many threads is
#    ``1 / (1 - p)``. With this page's fit for the matrix product, the line
#    below gives both (the limit is ``inf`` where ``p`` is 100 %):
p = shares[matmul][0]
s16 = 1 / ((1 - p) + p / 16)
limit = 1 / (1 - p) if p < 1 else float("inf")
print(compperf.tr("S(16) = {s:.1f}, limit: {m:.1f}", s=s16, m=limit))

# %%
# A ``p`` fitted from one or two thread counts says little about 16: the
# memory bandwidth, the caches and the clock speed all change as threads are
# added, and a law with one number cannot know that.
#
# 2. The code below times ``torch.add`` on both sides of the grain size. Below
#    it, both thread counts run the same single-threaded loop, so any
#    speed-up there is noise. Above it, PyTorch splits the loop and a second
#    thread can take half the work, if it gets a core: on a busy machine it
#    waits for one, and every call waits for it. Each line gives a size and
#    its speed-up with all the threads over one.
sizes = [2**14, 2**16]
around = {}
for size in sizes:
    x, out = torch.randn(size), torch.empty(size)

    def add(x=x, out=out):
        torch.add(x, 1, out=out)

    variants = {
        f"torch.set_num_threads({c}); torch.add(x, 1), x.numel() == {size}": (
            with_threads(c, add)
        )
        for c in (1, counts[-1])
    }
    around[size] = compperf.interleave(variants, device=device, budget=0.75)
    r = around[size].ratio(*around[size].names)
    print(compperf.tr("torch.add, {n} values: {r}", n=size, r=r))
torch.set_num_threads(max_threads)

# %%
# 3. An element-wise operation reads and writes each value once and computes
#    little: its speed is set by memory bandwidth, which one core may already
#    use up, and which two virtual cores on one physical core share. The
#    chapter :doc:`/auto_examples/limits/index` measures that ceiling.
