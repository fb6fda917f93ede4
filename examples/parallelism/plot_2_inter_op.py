"""
Two jobs at once
================

You run two independent pieces of work side by side with Python threads, see
that ``torch.jit.fork`` does not do that in eager mode, and learn from the
measurements and a profiler timeline when running jobs side by side helps.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The jobs run on the CPU, where the threads live; the last section says what
# changes on a GPU.
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
# Two independent jobs
# --------------------
# Each job is a chain of matrix products that depend on each other; the two
# chains do not depend on each other, so they could run at the same time.
# PyTorch itself never starts them side by side: in eager mode every call runs
# to the end before Python gets the next one.
n, steps = 256, 4
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
if os.environ.get("COMPPERF_FAST") == "1":
    n, steps = 128, 3
# sphinx_gallery_end_ignore
inputs = [torch.randn(n, n) / n**0.5 for _ in range(2)]


def job(x):
    for _ in range(steps):
        x = torch.mm(x, x)
    return x


def one_after_the_other():
    return [job(x) for x in inputs]


# %%
# Python threads
# --------------
# A PyTorch operator releases Python's global interpreter lock (GIL) while it
# computes, so a second Python thread can start its own operator meanwhile.
# Each call starts one thread per job and joins it with a timeout: a stuck
# job ends the page with an error instead of hanging it, and a daemon thread
# never keeps Python from exiting.
TIMEOUT = 60  # seconds any job may take


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


seen = []
probe = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
probe.start()
probe.join(timeout=TIMEOUT)
print(
    compperf.tr(
        "A new Python thread sees torch.get_num_threads() = {threads}",
        threads=seen[0],
    )
)
for side_by_side, sequential in zip(
    in_threads(), one_after_the_other(), strict=True
):
    torch.testing.assert_close(side_by_side, sequential)
print(compperf.tr("Both ways compute the same results."))

# %%
# ``torch.jit.fork``: the TorchScript way, and what it does in eager mode
# -----------------------------------------------------------------------
# ``torch.jit.fork(fn, x)`` returns a future and ``torch.jit.wait`` its value.
# Inside a ``torch.jit.script`` function, TorchScript's interpreter runs the
# forked call on the inter-op pool (``torch.get_num_interop_threads()``).
# Called from Python, as here, torch 2.13 runs ``fn`` at once, on the calling
# thread, and returns a future that is already done; it also warns that
# TorchScript is deprecated. The check below asks the future whether it is
# done at the moment ``fork`` returns, and which thread ran the job.
ran_on = []


def job_and_thread(x):
    ran_on.append(threading.get_ident())
    return job(x)


with compperf.shown_warnings(r"`torch\.jit\."):
    future = torch.jit.fork(job_and_thread, inputs[0])
    done_at_return = future.done()
    torch.jit.wait(future)
same_thread = ran_on == [threading.get_ident()]
if done_at_return and same_thread:
    compperf.say(
        "torch.jit.fork ran the job on the calling thread and had finished "
        "it when it returned: in eager mode it runs nothing side by side."
    )
else:
    compperf.say(
        "torch.jit.fork returned before the job had finished (done at "
        "return: {done}, same thread: {same}): this build runs it "
        "asynchronously.",
        done=done_at_return,
        same=same_thread,
    )

# %%
# When do threads help?
# ---------------------
# Two cases. First, each job's operators use every intra-op thread: the
# matrix product already fills all the cores, and a second job can only take
# turns with it. Second, each operator gets one thread
# (``torch.set_num_threads(1)``, as each ``DataLoader`` worker and each
# ``torchrun`` rank does): one job fills one core, and a second job may fill
# another. ``compperf.interleave`` times both ways in turns, for each case.
cases = {
    compperf.tr(
        "{threads} intra-op threads per operator", threads=max_threads
    ): (max_threads),
    compperf.tr("1 intra-op thread per operator"): 1,
}
comparisons = {}
for case, threads in cases.items():
    comparisons[case] = compperf.interleave(
        {"sequential": one_after_the_other, "threads": in_threads},
        device=device,
        budget=2.0,
        min_rounds=10,
        num_threads=threads,
    )
    print(case)
    print(comparisons[case].ratio("sequential", "threads"))

# %%
# The verdicts
# ------------
# "Overlapped" here means that two threads finished both jobs more than 5 %
# faster than one thread running them one after the other, with the whole
# 95 % interval of the ratio on that side (``Comparison.faster``).
verdicts = {}
for case, comparison in comparisons.items():
    verdicts[case] = comparison.faster("threads", "sequential", subject=case)
    gain = comparison.ratio("sequential", "threads")
    if verdicts[case].yes:
        compperf.say(
            "{case}: the two jobs overlapped; two threads finish both "
            "{gain} faster.",
            case=case,
            gain=gain,
        )
    elif verdicts[case].no:
        compperf.say(
            "{case}: the two jobs did not overlap measurably here (two "
            "threads against one after the other: {gain}).",
            case=case,
            gain=gain,
        )
    else:
        compperf.say(
            "{case}: whether the two jobs overlapped is unclear here (two "
            "threads against one after the other: {gain}).",
            case=case,
            gain=gain,
        )
print(comparisons[next(iter(cases))].disturbance)

# %%
# A check on the check
# --------------------
# Two jobs on ``os.cpu_count()`` cores can overlap into at most that many
# times faster. A ratio whose whole interval lies beyond it cannot come from
# overlap: then the sequential way was slowed down, typically by intra-op
# threads that wait for each other at the end of every operator while
# another process holds a core. The sentence below says which it was.
cores = os.cpu_count()
for case, comparison in comparisons.items():
    gain = comparison.ratio("sequential", "threads")
    beyond = compperf.conclude(
        "beyond the cores",
        case,
        -gain.high,
        -gain.low,
        below=-cores,
        disturbed=comparison.disturbance.disturbed,
    )
    if beyond.yes:
        compperf.say(
            "{case}: the gain is larger than {cores} cores explain: the "
            "sequential way lost time waiting, not only the threaded way "
            "gained it.",
            case=case,
            cores=cores,
        )
    elif beyond.no:
        compperf.say(
            "{case}: the gain is within what {cores} cores can give.",
            case=case,
            cores=cores,
        )
    else:
        compperf.say(
            "{case}: whether the gain exceeds what {cores} cores can give is "
            "unclear here.",
            case=case,
            cores=cores,
        )

# %%
# What ran when
# -------------
# ``torch.profiler.profile`` records every operator with its start, its end
# and the thread that ran it; by default only on the thread that started the
# profiler, and on all threads with ``profile_all_threads=True`` in its
# experimental configuration. The timeline below shows one call of each way,
# in each case: one row per thread, one bar per matrix product
# (``aten::mm``). Where the bars of the two threads stand above each other,
# the jobs ran at the same time.


def timeline(work, threads):
    torch.set_num_threads(threads)
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


ways = {
    "sequential": (one_after_the_other, compperf.tr("one after the other")),
    "threads": (in_threads, compperf.tr("two Python threads")),
}
fig, axes = plt.subplots(4, 1, figsize=(7, 6), sharex=True)
rows = [(case, way) for case in cases for way in ways]
for ax, (case, way) in zip(axes, rows, strict=True):
    bars = timeline(ways[way][0], cases[case])
    threads_seen = sorted({thread for thread, _, _ in bars})
    for row, thread in enumerate(threads_seen):
        spans = [(s, d) for t, s, d in bars if t == thread]
        ax.broken_barh(
            spans,
            (row - 0.4, 0.8),
            color=f"C{row}",
            edgecolor="white",
            linewidth=0.8,
        )
    ax.set_yticks(range(len(threads_seen)))
    ax.set_yticklabels(
        [compperf.tr("thread {i}", i=i + 1) for i in range(len(threads_seen))]
    )
    ax.set_title(
        compperf.tr("{case}: {way}", case=case, way=ways[way][1]),
        fontsize=9,
    )
axes[-1].set_xlabel(compperf.tr("time since the first product (ms)"))
fig.tight_layout()
plt.show()

# %%
# Summary
# -------
# * PyTorch runs independent operators side by side only when you start them
#   from different threads; its operators release the GIL, so Python threads
#   work.
# * ``torch.jit.fork`` is TorchScript's way (deprecated); from eager Python it
#   runs the job at once on the calling thread.
# * Side by side pays only when one job cannot fill the cores: with every
#   intra-op thread busy, a second job only takes turns.
#
# Exercises
# ---------
# 1. The page starts new threads in every call. When would that cost
#    matter?
# 2. On a GPU, would two Python threads make two jobs overlap?
# 3. Run the second case with three jobs, each on its own thread. What do
#    you expect on two cores?
#
# Answers
# -------
# 1. When a job is short: starting and joining a thread costs microseconds
#    to tens of microseconds, which a job of a few microseconds would feel;
#    a pool made once (``concurrent.futures.ThreadPoolExecutor``) pays it
#    once. Here is what one start and join costs on this machine, against the
#    time of one job:


def start_and_join():
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join(timeout=TIMEOUT)


starts = compperf.measure(
    start_and_join,
    device=device,
    description=compperf.tr("start a Python thread"),
    min_run_time=0.05,
)
one_job = compperf.measure(
    job,
    inputs[0],
    device=device,
    description=compperf.tr("one job"),
    min_run_time=0.1,
)
print(compperf.compare([starts, one_job]))

# %%
# 2. Not by themselves. Both threads queue kernels on the same CUDA stream, the
#    current stream of the device, and a stream runs its kernels in order.
#    Each thread would need its own stream (``torch.cuda.Stream``, next page,
#    :doc:`/auto_examples/parallelism/plot_3_streams_and_copies`),
#    and even then kernels run side by side only when each leaves part of the
#    GPU free.
#
# 3. Three jobs on two cores: three threads share two cores, so at best
#    they take one and a half job-times each instead of one. The code below
#    measures it with one intra-op thread.
inputs.append(torch.randn(n, n) / n**0.5)
three = compperf.interleave(
    {"sequential": one_after_the_other, "threads": in_threads},
    device=device,
    budget=1.0,
    num_threads=1,
)
print(
    compperf.tr(
        "three jobs, one after the other against three threads: {gain}",
        gain=three.ratio("sequential", "threads"),
    )
)
