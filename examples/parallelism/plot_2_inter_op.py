"""
Two jobs at once
================

You run two independent pieces of work side by side with Python threads, see
that ``torch.jit.fork`` does not do that in eager mode, and watch on a
profiler timeline which thread ran each operator.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The jobs run on the CPU, where the threads live; the answers say what
# changes on a GPU.
import os
import threading
import warnings

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
# PyTorch itself never starts them side by side: in eager mode on a CPU every
# call runs to the end before Python gets the next one (a CUDA call returns
# once its kernel is queued, but one stream runs its kernels in order). The
# two ways of running them are named once, for the figure below.
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


sequential = compperf.tr("one after the other")
threaded = compperf.tr("a Python thread per job")

# %%
# Python threads
# --------------
# A PyTorch operator releases Python's global interpreter lock (GIL) while it
# computes, so a second Python thread can start its own operator meanwhile.
# Each call starts one thread per job and joins it with a timeout: a stuck job
# ends the page with an error instead of hanging it, and a daemon thread never
# keeps Python from exiting. The line below is what
# ``torch.get_num_threads()`` returns in a new thread: the same thread count
# as the main thread's. With the OpenMP backend each Python thread that runs a
# parallel operator gets its own team of that many threads, so two jobs can
# run twice that many threads at once. ``torch.testing.assert_close`` then
# checks that both ways compute the same results; it stops the page with an
# error where they differ.
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
print(compperf.tr("torch.get_num_threads() in a new thread: {n}", n=seen[0]))
for side_by_side, in_order in zip(
    in_threads(), one_after_the_other(), strict=True
):
    torch.testing.assert_close(side_by_side, in_order)

# %%
# ``torch.jit.fork``: the TorchScript way, and what it does in eager mode
# -----------------------------------------------------------------------
# ``torch.jit.fork(fn, x)`` returns a future and ``torch.jit.wait`` its value.
# Inside a ``torch.jit.script`` function, TorchScript's interpreter runs the
# forked call on the inter-op pool (``torch.get_num_interop_threads()``).
# Called from Python, as here, torch 2.13 runs ``fn`` at once, on the calling
# thread, and returns a future that is already done; it also warns that
# TorchScript is deprecated. The check below asks the future whether it is
# done at the moment ``fork`` returns, and which thread ran the job. Where
# both lines say ``True``, ``fork`` ran the job on the calling thread and had
# finished it when it returned: in eager mode it runs nothing side by side.
# A build that printed ``False`` in either line would run it asynchronously.
ran_on = []


def job_and_thread(x):
    ran_on.append(threading.get_ident())
    return job(x)


with compperf.shown_warnings(r"`torch\.jit\."):
    future = torch.jit.fork(job_and_thread, inputs[0])
    done_at_return = future.done()
    torch.jit.wait(future)
same_thread = ran_on == [threading.get_ident()]
print(compperf.tr("done when fork returned: {d}", d=done_at_return))
print(compperf.tr("ran on the calling thread: {s}", s=same_thread))

# %%
# What ran where
# --------------
# ``torch.profiler.profile`` records every operator with its start, its end
# and the thread that ran it; by default only on the thread that started the
# profiler, and on all threads with ``profile_all_threads=True`` in its
# experimental configuration. The timeline below shows one call of each way,
# after a call that warms it up, and of both jobs forked with
# ``torch.jit.fork``: one row per thread, one bar per matrix product
# (``aten::mm``), each panel on its own time scale. Two rows mean two threads
# ran the products; the forked jobs stay on one.


def with_fork():
    with warnings.catch_warnings():  # the deprecation is shown above
        warnings.simplefilter("ignore", DeprecationWarning)
        futures = [torch.jit.fork(job, x) for x in inputs]
        return [torch.jit.wait(future) for future in futures]


def timeline(work):
    work()  # warm-up
    every_thread = _ExperimentalConfig(profile_all_threads=True)
    with profile(
        activities=[ProfilerActivity.CPU], experimental_config=every_thread
    ) as recorded:
        work()
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


ways = {sequential: one_after_the_other, threaded: in_threads}
ways["torch.jit.fork"] = with_fork
fig, axes = plt.subplots(3, 1, figsize=(7, 4.2))
for ax, (way, work) in zip(axes, ways.items(), strict=True):
    bars = timeline(work)
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
    ax.set_title(way, fontsize=9)
axes[-1].title.set_fontfamily("monospace")  # torch.jit.fork is code
axes[-1].set_xlabel(compperf.tr("time since the first product (ms)"))
fig.suptitle(compperf.tr("Which thread ran each matrix product"))
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
# * The profiler with ``profile_all_threads=True`` shows which thread ran
#   each operator, and when.
#
# Exercises
# ---------
# 1. The page starts new threads in every call. When would that cost
#    matter?
# 2. On a GPU, would two Python threads make two jobs overlap?
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
#    Each thread would need its own stream (``torch.cuda.Stream``,
#    :doc:`/auto_examples/parallelism/plot_3_streams_and_copies`),
#    and even then kernels run side by side only when each leaves part of the
#    GPU free.
