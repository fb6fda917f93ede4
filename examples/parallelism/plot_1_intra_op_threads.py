"""
Threads inside one operator
===========================

You read how many threads PyTorch gives one operator, change that number, and
measure what more threads buy a large matrix product, an element-wise
operation and a small operation, with Amdahl's law fitted to each result.

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
import shutil
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
# (OpenMP, or PyTorch's own), how many threads it has, and whether
# ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` were set when the process
# started. Its line ``at::get_num_threads()`` is what
# ``torch.get_num_threads()`` returns, the count for operators that split
# their work (intra-op); ``at::get_num_interop_threads()`` is the pool that
# runs independent TorchScript tasks (next page,
# :doc:`/auto_examples/parallelism/plot_2_inter_op`).
print(torch.__config__.parallel_info())
max_threads = torch.get_num_threads()

# %%
# How many cores are there really? ``os.cpu_count()`` counts logical CPUs. On
# Linux, each logical CPU names its physical core in
# ``/sys/devices/system/cpu/cpu*/topology``. Two logical CPUs on one core
# (hyper-threads) share that core's arithmetic units. A virtual machine only
# sees what the hypervisor shows it: two "cores" there may be two halves of
# one physical core on the host. The line below gives both counts; where the
# system has no such files (not Linux), the count of cores is ``None``.


def cores_reported():
    """Distinct (package, core) pairs that Linux reports; None elsewhere."""
    cores = set()
    for topology in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology"):
        package = (topology / "physical_package_id").read_text().strip()
        cores.add((package, (topology / "core_id").read_text().strip()))
    return len(cores) or None


logical, physical = os.cpu_count(), cores_reported()
print(compperf.tr("logical CPUs: {n}, cores: {c}", n=logical, c=physical))

# %%
# Setting the thread count
# ------------------------
# ``torch.set_num_threads(n)`` changes the pool for the rest of the process.
# The environment variables act only when a process starts, before its first
# operator, so you set them outside Python or for a child process. The child
# below starts with ``OMP_NUM_THREADS=1`` and ``MKL_NUM_THREADS=1`` and prints
# what it sees; it has 60 seconds to finish. The POSIX ``env`` command starts
# it with the two variables added to this process's environment. The line
# below is the child's ``torch.get_num_threads()``: 1, whatever this process
# has. A system without the ``env`` command prints nothing here; set
# ``OMP_NUM_THREADS=1`` in a shell and start Python from it to see the same.
child_threads = None
if shutil.which("env"):
    variables = ["OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1"]
    code = "import torch; print(torch.get_num_threads())"
    child = subprocess.run(
        ["env", *variables, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    child_threads = int(child.stdout.split()[-1])
    print(compperf.tr("child's threads: {n}", n=child_threads))

# %%
# Three operations
# ----------------
# A large matrix product does many multiplications per byte it reads: every
# thread has arithmetic to do. ``torch.exp`` over millions of values does a
# little arithmetic per value it reads and writes. An addition on a thousand
# values is smaller than PyTorch's grain size (``at::internal::GRAIN_SIZE``,
# 32768 elements): PyTorch does not split it at all, whatever the pool. Each
# operation is named by its call below (each writes into a tensor made for
# it, ``out=``); the matrices are ``n`` by ``n``, the exponential runs on
# ``elements`` values. The line after the code lists the
# thread counts measured: 1, 2, some counts between, and all of the pool.
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
print(compperf.tr("thread counts: {c}", c=counts))

# %%
# Speed-up against threads
# ------------------------
# For each operation, ``compperf.interleave`` times every thread count in
# turns (1, 2, 1, 2, …), so that a busy moment of the machine hits all of
# them alike. The speed-up with ``n`` threads is the time with one thread over
# the time with ``n``: the median of the per-round ratios, with its 95 %
# interval. Each line below gives one operation, one thread count and its
# speed-up. Look at how far each interval lies from 1.


def with_threads(threads, operation):
    def call():
        torch.set_num_threads(threads)
        operation()

    return call


comparisons = {}
for name, operation in workloads.items():
    comparisons[name] = compperf.interleave(
        {str(c): with_threads(c, operation) for c in counts},
        device=device,
        budget=1.5,
        min_rounds=8,
    )
torch.set_num_threads(max_threads)
speedups = {
    name: [comparison.ratio("1", str(c)) for c in counts]
    for name, comparison in comparisons.items()
}
for name, ratios in speedups.items():
    for c, r in zip(counts[1:], ratios[1:], strict=True):
        print(compperf.tr("{w}, {n} threads: {r}", w=name, n=c, r=r))

# %%
# Amdahl's law
# ------------
# If a share ``p`` of the work splits over ``n`` threads and the rest does
# not, the speed-up is ``S(n) = 1 / ((1 - p) + p / n)``. A least-squares fit
# of ``1 / S`` gives ``p``, and the speed-up's interval at the largest thread
# count gives a range for it. ``p`` lies between 0 and 1; a speed-up below 1
# (threads that cost more than they bring) shows as 0. Each line below gives
# an operation's fitted ``p`` and that range.


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
# ``Comparison.faster`` decides, for each operation, whether it runs faster
# with all the pool's threads (the largest count above) than with one. Its
# line prints the claim "faster", the operation, the outcome, and the
# interval of the time with all the threads over the time with one, against
# the threshold 1 / 1.05:
#
# * *yes*: the whole interval lies below it: more than 5 % faster with all
#   the threads.
# * *no*: the whole interval lies at it or above: not measurably faster here.
# * *unclear*: the interval straddles it, or the machine was disturbed. A busy
#   machine widens the intervals, and then the page says "unclear" rather
#   than guess.
#
# The last line says what compperf saw of the rest of the machine meanwhile.
verdicts = {}
for name, comparison in comparisons.items():
    verdicts[name] = comparison.faster(str(counts[-1]), "1", subject=name)
    print(verdicts[name])
disturbance = comparisons[next(iter(comparisons))].disturbance
for comparison in comparisons.values():
    disturbance = disturbance.combine(comparison.disturbance)
print(disturbance)

# %%
# What kind of cores?
# -------------------
# The matrix product is the operation most able to use every thread. If
# ``n`` logical CPUs are ``n`` separate cores, it gains more than half the
# ideal speed-up, ``(1 + n) / 2`` (1.5 on two). If they are halves of one
# physical core, or other programs hold them, it gains less. The verdict
# below asks whether the whole interval of its speed-up lies above that mark.
# Its line gives the time with all the threads over the time with one (the
# inverse of the speed-up), its interval, and the threshold ``1 / mark``:
#
# * *yes*: the whole interval lies below ``1 / mark``: the matrix product
#   sped up by more than ``mark`` times, and these logical CPUs behave like
#   separate cores.
# * *no*: the whole interval lies at ``1 / mark`` or above: it sped up by less,
#   and here these logical CPUs do not behave like separate cores. They may
#   share physical cores, or other programs held them.
# * *unclear*: the interval straddles ``1 / mark`` (or the machine was
#   disturbed): this run cannot tell.
matmul = next(iter(speedups))
mark = (1 + counts[-1]) / 2
time_ratio = comparisons[matmul].ratio(str(counts[-1]), "1")
like_cores = compperf.conclude(
    "like separate cores",
    matmul,
    time_ratio.low,
    time_ratio.high,
    below=1 / mark,
    disturbed=disturbance.disturbed,
    value=time_ratio.estimate,
)
print(like_cores)

# %%
# The figure shows each speed-up with its interval, Amdahl's curve for the
# fitted ``p``, and the ideal ``S(n) = n`` that no real operator reaches.
fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
grid = np.linspace(1, counts[-1], 50)
for index, (name, ratios) in enumerate(speedups.items()):
    estimate = np.array([r.estimate for r in ratios])
    error = [
        estimate - [r.low for r in ratios],
        [r.high for r in ratios] - estimate,
    ]
    shift = (index - 1) * 0.04 * counts[-1]
    ax.errorbar(
        np.array(counts) + shift,
        estimate,
        yerr=error,
        fmt="o",
        capsize=4,
        color=f"C{index}",
        label=name,
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
# * One operator splits its work over ``torch.get_num_threads()`` threads;
#   ``torch.set_num_threads`` changes that, ``OMP_NUM_THREADS`` and
#   ``MKL_NUM_THREADS`` set it when a process starts, and
#   ``torch.__config__.parallel_info()`` shows what is in force.
# * Work below the grain size is never split, so more threads cannot help it.
# * Amdahl's share ``p`` summarises the measured speed-up; on a virtual
#   machine whose "cores" share physical units, even a matrix product may
#   gain less than the core count suggests.
#
# Exercises
# ---------
# 1. With the ``p`` fitted here for the matrix product, what speed-up does
#    Amdahl's law predict on 16 threads, and what is its limit?
# 2. At which size does ``torch.add`` start to use more than one thread?
#    Time it on both sides of 32768 elements.
# 3. Why might two threads on this machine make a memory-bound operation no
#    faster, even where they speed up the matrix product?
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

    around[size] = compperf.interleave(
        {str(c): with_threads(c, add) for c in (1, counts[-1])},
        device=device,
        budget=0.75,
    )
    r = around[size].ratio("1", str(counts[-1]))
    print(compperf.tr("torch.add, {n} values: {r}", n=size, r=r))
torch.set_num_threads(max_threads)

# %%
# 3. An element-wise operation reads and writes each value once and computes
#    little: its speed is set by memory bandwidth, which one core may already
#    use up, and which two virtual cores on one physical core share. The
#    chapter :doc:`/auto_examples/limits/index` measures that ceiling.
