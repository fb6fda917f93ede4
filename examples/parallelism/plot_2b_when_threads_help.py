"""
When two threads pay
====================

You time two independent jobs one after the other and with a Python thread
each, once with every intra-op thread and once with one, and learn from the
verdicts and a profiler timeline when running jobs side by side helps.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The jobs run on the CPU, where the threads live.
import os
import threading

import matplotlib.pyplot as plt
import torch
from torch.profiler import ProfilerActivity, _ExperimentalConfig, profile

import compperf

device = torch.device("cpu")
print(compperf.environment(device))
max_threads = torch.get_num_threads()

# %%
# Two jobs, two ways to run them
# ------------------------------
# The jobs and the ways to run them are those of
# :doc:`/auto_examples/parallelism/plot_2_inter_op`, which explains them: two
# chains of matrix products that do not depend on each other, run one after
# the other or with a Python thread per job, each joined with a timeout.
n, steps = 256, 4
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
if os.environ.get("COMPPERF_FAST") == "1":
    n, steps = 128, 3
# sphinx_gallery_end_ignore
inputs = [torch.randn(n, n) / n**0.5 for _ in range(2)]
TIMEOUT = 60  # seconds any job may take


def job(x):
    for _ in range(steps):
        x = torch.mm(x, x)
    return x


def one_after_the_other():
    return [job(x) for x in inputs]


def in_threads():
    results = [None] * len(inputs)

    def run(i):
        results[i] = job(inputs[i])

    threads = [
        threading.Thread(target=run, args=(i,), daemon=True)
        for i in range(len(inputs))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=TIMEOUT)
        if thread.is_alive():
            raise TimeoutError(f"a job ran longer than {TIMEOUT} s")
    return results


sequential = compperf.tr("one after the other")
threaded = compperf.tr("a Python thread per job")

# %%
# When do threads help?
# ---------------------
# Two cases. First, each job's operators use every intra-op thread: the
# matrix product already fills all the cores, and a second job can only take
# turns with it. Second, each operator gets one thread
# (``torch.set_num_threads(1)``, as each ``DataLoader`` worker does;
# ``torchrun`` sets ``OMP_NUM_THREADS=1`` when it starts several processes
# per node and the variable is unset): one job fills one core, and a second
# job may fill another. ``compperf.interleave`` times both ways in turns, for
# each case; each way's time is kept under its name, the number of jobs and
# the case. Each case's line gives the time with a thread per job over the
# time one after the other, the median of the rounds' ratios: below 1, the
# threads finished first. Its interval comes from the rounds' ratios: the
# narrowest that holds the median with at least 95 % confidence, and the
# line prints the confidence it reached.
cases = {
    compperf.tr("intra-op threads: all {n}", n=max_threads): max_threads,
    compperf.tr("intra-op threads: 1"): 1,
}
ways = {sequential: one_after_the_other, threaded: in_threads}


# Both ways, each named with the number of jobs and the case.
def named(case):
    return {
        compperf.tr("{w}, {n} jobs, {c}", w=w, n=len(inputs), c=case): f
        for w, f in ways.items()
    }


comparisons = {}
for case, threads in cases.items():
    comparison = compperf.interleave(
        named(case),
        device=device,
        budget=2.0,
        min_rounds=10,
        num_threads=threads,
    )
    one, each = comparison.names  # one after the other, a thread per job
    ratio = comparison.ratio(each, one)
    print(compperf.tr("{case}: {r}", case=case, r=ratio))
    comparisons[case] = comparison

# %%
# The verdicts
# ------------
# The two jobs overlapped when a thread per job finished both more than 5 %
# faster than one thread running them one after the other, with the whole
# interval of the ratio above on that side: ``Comparison.faster`` decides it.
# Each case's line prints the claim "faster", the case, the outcome, and, as
# *measured* with its interval, the same ratio as above, against the
# threshold 1 / 1.05:
#
# * *yes*: the whole interval lies below it: the two jobs overlapped.
# * *no*: the whole interval lies at it or above: the two jobs did not
#   overlap measurably here.
# * *unclear*: the interval straddles it, or the machine was disturbed: this
#   run cannot tell whether they overlapped.
#
# The last line says what compperf saw of the rest of the machine.
verdicts = {}
for case, comparison in comparisons.items():
    one, each = comparison.names
    verdicts[case] = comparison.faster(each, one, subject=case)
    print(verdicts[case])
print(comparisons[next(iter(cases))].disturbance)

# %%
# A check on the check
# --------------------
# Two jobs on ``os.cpu_count()`` cores can overlap into at most that many
# times faster. A ratio whose whole interval lies beyond it cannot come from
# overlap: then the sequential way was slowed down, typically by intra-op
# threads that wait for each other at the end of every operator while
# another process holds a core. In time: the threads' time over the time one
# after the other cannot lie below ``1 / cores``. Each case's line below
# prints the claim "beyond the cores", that time ratio, its interval and the
# threshold ``1 / cores``:
#
# * *yes*: the whole interval lies below it: the gain is larger than the
#   cores explain, so the sequential way lost time waiting, not only the
#   threaded way gained it.
# * *no*: the whole interval lies at it or above: the gain is within what the
#   cores can give.
# * *unclear*: the interval straddles it, or the machine was disturbed.
cores = os.cpu_count()
beyond_cores = {}
for case, comparison in comparisons.items():
    one, each = comparison.names
    ratio = comparison.ratio(each, one)
    beyond_cores[case] = compperf.conclude(
        "beyond the cores",
        case,
        ratio.low,
        ratio.high,
        below=1 / cores,
        disturbed=comparison.disturbance.disturbed,
        value=ratio.estimate,
    )
    print(beyond_cores[case])

# %%
# What ran when
# -------------
# The profiler records every thread, as on the previous page. The timeline
# below shows one call of each way, in each case: one row per thread, one bar
# per matrix product (``aten::mm``). Where the bars of the two threads stand
# above each other, the jobs ran at the same time.


def timeline(work, threads):
    torch.set_num_threads(threads)
    work()  # warm-up
    every_thread = _ExperimentalConfig(profile_all_threads=True)
    with profile(
        activities=[ProfilerActivity.CPU], experimental_config=every_thread
    ) as recorded:
        work()
    torch.set_num_threads(max_threads)
    products = [e for e in recorded.events() if e.name == "aten::mm"]
    start = min(e.time_range.start for e in products)
    return [
        (
            e.thread,
            (e.time_range.start - start) / 1e3,
            (e.time_range.end - e.time_range.start) / 1e3,
        )
        for e in products
    ]


fig, axes = plt.subplots(4, 1, figsize=(7, 4.6), sharex=True)
rows = [(case, way) for case in cases for way in ways]
for ax, (case, way) in zip(axes, rows, strict=True):
    bars = timeline(ways[way], cases[case])
    threads_seen = sorted({thread for thread, _, _ in bars})
    for row, thread in enumerate(threads_seen):
        spans = [(s, d) for t, s, d in bars if t == thread]
        ax.broken_barh(
            spans, (row - 0.4, 0.8), color=f"C{row}", edgecolor="white"
        )
    ax.set_yticks(range(len(threads_seen)))
    ax.set_yticklabels(
        [compperf.tr("thread {i}", i=i + 1) for i in range(len(threads_seen))]
    )
    ax.set_title(compperf.tr("{case}: {way}", case=case, way=way), fontsize=9)
axes[-1].set_xlabel(compperf.tr("time since the first product (ms)"))
fig.tight_layout()
plt.show()

# %%
# Summary
# -------
# * Side by side pays only when one job cannot fill the cores: with every
#   intra-op thread busy, a second job only takes turns.
# * A gain larger than the cores allow does not come from overlap: the way
#   it is compared with lost time waiting.
#
# Exercises
# ---------
# 1. Run the second case with three jobs, each on its own thread. What do
#    you expect on two cores?
# 2. Why does the profiler need ``profile_all_threads=True`` on this page?
#
# Answers
# -------
# 1. Three jobs on two cores: three threads share two cores, so at best
#    they take one and a half job-times each instead of one. The code below
#    measures it with one intra-op thread; the line gives the time with a
#    thread per job over the time one after the other, with its interval as
#    above (overlap alone cannot take it below 1/2 on two cores).
inputs.append(torch.randn(n, n) / n**0.5)
one_thread = list(cases)[1]  # the second case: one intra-op thread
three = compperf.interleave(
    named(one_thread), device=device, budget=1.0, num_threads=1
)
one, each = three.names
print(compperf.tr("three jobs: {r}", r=three.ratio(each, one)))

# %%
# 2. By default it records only the thread that started it, and with a
#    thread per job that thread runs no product: it starts the others and
#    waits. The line counts the products that a default profile records of
#    one such call, out of all the products the call runs.
with profile(activities=[ProfilerActivity.CPU]) as by_default:
    in_threads()
products = [e for e in by_default.events() if e.name == "aten::mm"]
k, total = len(products), len(inputs) * steps
print(compperf.tr("products recorded by default: {k} of {n}", k=k, n=total))
