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
# started. ``torch.get_num_threads()`` is the same count for operators that
# split their work (intra-op); ``torch.get_num_interop_threads()`` is the pool
# that runs independent TorchScript tasks (next page,
# :doc:`/auto_examples/parallelism/plot_2_inter_op`).
print(torch.__config__.parallel_info())
max_threads = torch.get_num_threads()
print(
    compperf.tr(
        "torch.get_num_threads() = {intra}, "
        "torch.get_num_interop_threads() = {inter}",
        intra=max_threads,
        inter=torch.get_num_interop_threads(),
    )
)

# %%
# How many cores are there really? ``os.cpu_count()`` counts logical CPUs. On
# Linux, each logical CPU names its physical core in
# ``/sys/devices/system/cpu/cpu*/topology``. Two logical CPUs on one core
# (hyper-threads) share that core's arithmetic units. A virtual machine only
# sees what the hypervisor shows it: two "cores" there may be two halves of
# one physical core on the host.


def cores_reported():
    """Distinct (package, core) pairs that Linux reports; None elsewhere."""
    cores = set()
    for topology in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology"):
        package = (topology / "physical_package_id").read_text().strip()
        cores.add((package, (topology / "core_id").read_text().strip()))
    return len(cores) or None


print(
    compperf.tr(
        "logical CPUs: {logical}; physical cores reported: {physical}",
        logical=os.cpu_count(),
        physical=cores_reported(),
    )
)

# %%
# Setting the thread count
# ------------------------
# ``torch.set_num_threads(n)`` changes the pool for the rest of the process.
# The environment variables act only when a process starts, before its first
# operator, so you set them outside Python or for a child process. The child
# below starts with ``OMP_NUM_THREADS=1`` and ``MKL_NUM_THREADS=1`` and prints
# what it sees; it has 60 seconds to finish. The POSIX ``env`` command starts
# it with the two variables added to this process's environment.
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
    print(
        compperf.tr(
            "A child started with OMP_NUM_THREADS=1 has "
            "torch.get_num_threads() = {threads}",
            threads=child_threads,
        )
    )
else:
    print(
        compperf.tr(
            "This system has no env command: set OMP_NUM_THREADS=1 in a "
            "shell and start Python from it to see the same."
        )
    )

# %%
# Three operations
# ----------------
# A large matrix product does many multiplications per byte it reads: every
# thread has arithmetic to do. ``torch.exp`` over millions of values does a
# little arithmetic per value it reads and writes. An addition on a thousand
# values is smaller than PyTorch's grain size (``at::internal::GRAIN_SIZE``,
# 32768 elements): PyTorch does not split it at all, whatever the pool.
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
    compperf.tr("matrix product {n} by {n}", n=n): lambda: torch.mm(a, b),
    compperf.tr("torch.exp on {elements} values", elements=elements): (
        lambda: torch.exp(values, out=exps)
    ),
    compperf.tr("addition on 1000 values"): lambda: torch.add(
        small, 1, out=small_out
    ),
}
counts = sorted({1, 2, max_threads} | {c for c in (4, 8) if c < max_threads})
print(compperf.tr("thread counts: {counts}", counts=counts))

# %%
# Speed-up against threads
# ------------------------
# For each operation, ``compperf.interleave`` times every thread count in
# turns (1, 2, 1, 2, …), so that a busy moment of the machine hits all of
# them alike. The speed-up with ``n`` threads is the time with one thread over
# the time with ``n``: the median of the per-round ratios, with its 95 %
# interval. Look at how far each interval lies from 1.


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
    print(name)
    for threads, ratio in zip(counts[1:], ratios[1:], strict=True):
        print(
            compperf.tr(
                "  with {threads} threads: speed-up {ratio}",
                threads=threads,
                ratio=ratio,
            )
        )

# %%
# Amdahl's law
# ------------
# If a share ``p`` of the work splits over ``n`` threads and the rest does
# not, the speed-up is ``S(n) = 1 / ((1 - p) + p / n)``. A least-squares fit
# of ``1 / S`` gives ``p``, and the speed-up's interval at the largest thread
# count gives a range for it. ``p`` lies between 0 and 1; a speed-up below 1
# (threads that cost more than they bring) shows as 0.


def amdahl_share(threads, speedup):
    """Least-squares p of 1/S - 1 = p * (1/n - 1), clipped to [0, 1]."""
    x = 1 / np.asarray(threads, dtype=float) - 1
    y = 1 / np.asarray(speedup, dtype=float) - 1
    return float(np.clip(np.sum(x * y) / np.sum(x * x), 0.0, 1.0))


shares = {}
for name, ratios in speedups.items():
    fitted = amdahl_share(counts[1:], [r.estimate for r in ratios[1:]])
    low = amdahl_share(counts[-1:], [ratios[-1].low])
    high = amdahl_share(counts[-1:], [ratios[-1].high])
    shares[name] = (fitted, low, high)
    print(
        compperf.tr(
            "{name}: p = {share:.0%} (from {low:.0%} to {high:.0%})",
            name=name,
            share=fitted,
            low=low,
            high=high,
        )
    )

# %%
# The verdicts
# ------------
# Each sentence below is chosen by ``Comparison.faster``: "yes" when the whole
# interval of the ratio lies below 1 / 1.05 (more than 5 % faster), "no" when
# it lies above, "unclear" otherwise. A busy machine widens the intervals, and
# then the page says "unclear" rather than guess.
verdicts = {}
for name, comparison in comparisons.items():
    verdict = comparison.faster(str(counts[-1]), "1", subject=name)
    verdicts[name] = verdict
    speedup = speedups[name][-1]
    if verdict.yes:
        compperf.say(
            "{name}: faster with {threads} threads than with one, speed-up "
            "{ratio}.",
            name=name,
            threads=counts[-1],
            ratio=speedup,
        )
    elif verdict.no:
        compperf.say(
            "{name}: not measurably faster with {threads} threads than with "
            "one here (speed-up {ratio}).",
            name=name,
            threads=counts[-1],
            ratio=speedup,
        )
    else:
        compperf.say(
            "{name}: whether it is faster with {threads} threads than with one "
            "is unclear here (speed-up {ratio}).",
            name=name,
            threads=counts[-1],
            ratio=speedup,
        )
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
matmul = next(iter(speedups))
matmul_speedup = speedups[matmul][-1]
mark = (1 + counts[-1]) / 2
like_cores = compperf.conclude(
    "like separate cores",
    matmul,
    1 / matmul_speedup.high,
    1 / matmul_speedup.low,
    below=1 / mark,
    disturbed=disturbance.disturbed,
    value=matmul_speedup.estimate,
)
if like_cores.yes:
    compperf.say(
        "With {threads} threads the matrix product sped up by more than "
        "{mark:.1f} times: these logical CPUs behave like separate cores.",
        mark=mark,
        threads=counts[-1],
    )
elif like_cores.no:
    compperf.say(
        "With {threads} threads the matrix product sped up by less than "
        "{mark:.1f} times: here these logical CPUs do not behave like "
        "separate cores. They may share physical cores, or other programs "
        "held them.",
        mark=mark,
        threads=counts[-1],
    )
else:
    compperf.say(
        "Whether these logical CPUs behave like separate cores is unclear "
        "here: the matrix product's speed-up interval spans {mark:.1f} "
        "times.",
        mark=mark,
    )

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
ax.plot(
    grid,
    grid,
    color="gray",
    linestyle=":",
    label=compperf.tr("ideal: S(n) = n"),
)
ax.set_xticks(counts)
ax.set_xlabel(compperf.tr("intra-op threads"))
ax.set_ylabel(compperf.tr("speed-up over one thread"))
ax.set_title(compperf.tr("Speed-up against threads, with Amdahl fits"))
fig.legend(loc="outside upper center", ncols=2)
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
#    ``1 / (1 - p)``. With this page's fit:
p = shares[matmul][0]
limit = 1 / (1 - p) if p < 1 else float("inf")
compperf.say(
    "With p = {share:.0%}, Amdahl's law predicts a speed-up of {s16:.1f} times "
    "on 16 threads and at most {limit:.1f} times on any number.",
    share=p,
    s16=1 / ((1 - p) + p / 16),
    limit=limit,
)

# %%
# A ``p`` fitted from one or two thread counts says little about 16: the
# memory bandwidth, the caches and the clock speed all change as threads are
# added, and a law with one number cannot know that.
#
# 2. The code below times ``torch.add`` on both sides of the grain size. Below
#    it, both thread counts run the same single-threaded loop, so any
#    speed-up there is noise. Above it, PyTorch splits the loop and a second
#    thread can take half the work, if it gets a core: on a busy machine it
#    waits for one, and every call waits for it.
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
    print(
        compperf.tr(
            "torch.add on {size} values, with {threads} threads: speed-up "
            "{ratio}",
            size=size,
            threads=counts[-1],
            ratio=around[size].ratio("1", str(counts[-1])),
        )
    )
torch.set_num_threads(max_threads)

# %%
# 3. An element-wise operation reads and writes each value once and computes
#    little: its speed is set by memory bandwidth, which one core may already
#    use up, and which two virtual cores on one physical core share. The
#    chapter :doc:`/auto_examples/limits/index` measures that ceiling.
