"""
Asynchrony through the backend
==============================

You multiply the same matrix many times with NumPy and with PyTorch, and time
the loop the naive way and the right way. You learn when the two clocks
disagree, why, and which PyTorch tools time device work correctly; the next
lesson, :doc:`plot_async_where_time_goes`, repeats the loop until the numbers
can be trusted.

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced every number on this
# page. ``compperf.try_gpu()`` picks the first GPU (CUDA or Apple MPS) and falls
# back to the CPU when there is none.
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.utils.benchmark

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The work
# --------
# The work is ten products of one square matrix with itself, in float32 on both
# sides. The matrix is larger on a GPU, so that the device has enough to do:
# 384 x 384 on a CPU, 2048 x 2048 on Apple MPS, 4096 x 4096 on CUDA.
size = {"cpu": 384, "mps": 2048, "cuda": 4096}[device.type]
repeats = 15
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    size, repeats = 128, 5
# sphinx_gallery_end_ignore
steps = 10

rng = np.random.default_rng(0)
a_numpy = rng.standard_normal((size, size), dtype=np.float32)
a_torch = torch.from_numpy(a_numpy).to(device)


def numpy_matmuls(a):
    for _ in range(steps):
        b = a @ a
    return b


def torch_matmuls(a):
    for _ in range(steps):
        b = torch.mm(a, a)
    return b


# %%
# NumPy runs on the CPU and returns only when the product is ready, so a plain
# clock is correct for it. Each loop runs once untimed first (a warm-up), so
# that one-off costs such as memory allocation stay out of the timings below.
numpy_matmuls(a_numpy)
start = time.perf_counter()
numpy_matmuls(a_numpy)
numpy_seconds = time.perf_counter() - start
print(compperf.tr("numpy: {t:time}", t=numpy_seconds))

# %%
# Naive and synchronized timing, the PyTorch way
# ----------------------------------------------
# The naive timer reads the clock as soon as the loop returns. The correct one
# first waits until the device has finished everything queued on it:
# ``torch.cuda.synchronize()`` on CUDA, or ``torch.accelerator.synchronize()``
# for whichever accelerator this machine has (a CPU has none, hence the
# check). Compare the two lines, but do not trust one run of each: the next
# lesson repeats the loop.


def wait_for_device():
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()


torch_matmuls(a_torch)  # A warm-up run, not timed.
wait_for_device()
start = time.perf_counter()
torch_matmuls(a_torch)
naive = time.perf_counter() - start
wait_for_device()

start = time.perf_counter()
torch_matmuls(a_torch)
wait_for_device()
synchronized = time.perf_counter() - start
print(compperf.tr("torch, naive: {t:time}", t=naive))
print(compperf.tr("torch, synchronized: {t:time}", t=synchronized))

# %%
# CUDA events time the work on the GPU's own clock: an event records a
# timestamp when the device reaches it in the queue, gaps where the device
# waited for Python included. ``elapsed_time`` returns milliseconds once the
# end event has happened, so you wait for that event first. On a GPU the cell
# prints the device time of the loop, close to the synchronized time above;
# elsewhere, what a GPU shows.

# compperf: cuda-only
if device.type == "cuda":
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    start_event.record()
    torch_matmuls(a_torch)
    end_event.record()
    end_event.synchronize()  # Wait until the device has passed the end event.
    seconds = start_event.elapsed_time(end_event) / 1e3
    print(compperf.tr("torch, CUDA events: {t:time}", t=seconds))
else:
    print(compperf.tr("CUDA events: on a GPU, about the synchronized time"))

# %%
# ``torch.utils.benchmark.Timer`` does all of this for you: it warms up, runs
# the statement in blocks long enough to hide the clock's own cost,
# synchronizes the accelerator at each clock read, and reports the median.
# Give it the number of threads your code uses: its default is one. The line
# below gives its median and IQR for one loop.
timer = torch.utils.benchmark.Timer(
    stmt="torch_matmuls(a)",
    globals={"torch_matmuls": torch_matmuls, "a": a_torch},
    num_threads=torch.get_num_threads(),
)
measured = timer.blocked_autorange(min_run_time=0.2)
m, iqr = measured.median, measured.iqr
print(compperf.tr("Timer: median {m:time}, IQR {i:time}", m=m, i=iqr))

# %%
# compperf wraps the same steps in one line per measurement, and synchronizes
# CUDA, MPS or nothing (on a CPU) for you. ``compperf.Benchmark`` is the book's
# ``d2l.Benchmark``; ``sync=False`` reproduces the naive timer on purpose.
names = compperf.tr("torch, naive"), compperf.tr("torch, synchronized")
with compperf.Benchmark(names[0], device=device, sync=False):
    torch_matmuls(a_torch)
with compperf.Benchmark(names[1], device=device):
    torch_matmuls(a_torch)

# %%
# The figure puts the single runs side by side, and the Timer's median with an
# error bar from the first to the third quartile of its blocks. On a GPU the
# naive bar is far shorter than the others: it shows only how long queueing
# took. On a CPU the work is done when the loop returns, so any gap between
# two bars is how much single runs vary on this machine: the next lesson
# repeats them.
clocks = {
    "numpy": numpy_seconds,
    names[0]: naive,
    names[1]: synchronized,
    "benchmark.Timer": m,
}
spread = np.abs(np.percentile(measured.times, [25, 75]) - m)
fig, ax = plt.subplots(figsize=(7, 2.5), layout="constrained")
ax.barh(list(clocks), np.array(list(clocks.values())) * 1e3)
ax.errorbar(m * 1e3, 3, xerr=spread[:, None] * 1e3, color="black", capsize=4)
ax.invert_yaxis()
for code in ax.get_yticklabels()[::3]:  # numpy and benchmark.Timer are code
    code.set_fontfamily("monospace")
ax.set_title(compperf.tr("One run per clock, and the Timer's median (ms)"))
plt.show()

# %%
# Summary
# -------
# * On a GPU, PyTorch queues kernels and returns at once; a clock read right
#   after the call measures how fast Python queued the work, not the work.
# * Time device work with a synchronization before each clock read
#   (``torch.cuda.synchronize``, ``torch.accelerator.synchronize``), with CUDA
#   events, or with ``torch.utils.benchmark.Timer``; compperf does the same on
#   every device.
# * PyTorch's CPU operators return when their result is ready: on a CPU the
#   naive and the synchronized clock agree.
#
# Exercises
# ---------
# 1. Why does ``time.perf_counter()`` around a CUDA loop mislead, and what is
#    the smallest change that fixes it?
# 2. The synchronized wall-clock time and the CUDA events measure the same loop.
#    Do the events leave out the time Python needs to launch the kernels? What
#    does the wall clock count that the events do not?
# 3. ``torch.utils.benchmark.Timer`` runs on one thread unless told otherwise.
#    Time the CPU products with one thread and with all of them.
#
# Answers
# -------
# 1. The kernels are still running when the clock stops. Synchronize before
#    each clock read (both ends: before the start, so that earlier work is not
#    billed to the loop, and before the stop), as ``wait_for_device`` does.
# 2. No. The events measure the device timeline from the first mark to the
#    second, idle gaps included: if Python needs longer to launch a kernel than
#    the device needs to run it, the device waits between kernels, and the
#    events count those waits as the wall clock does. Compared with the
#    synchronized wall clock, the events leave out only the host time before
#    the first mark reaches the device and the latency of the final wait, so a
#    launch-bound loop shows about the same time in both.
# 3. The code below times the loop on the CPU, on a matrix of at most 384 x
#    384 (the size this page uses on a CPU), with one thread and with all of
#    them.
a_cpu = a_torch[:384, :384].cpu()
for threads in sorted({1, torch.get_num_threads()}):
    cpu_timer = torch.utils.benchmark.Timer(
        stmt="torch_matmuls(a)",
        globals={"torch_matmuls": torch_matmuls, "a": a_cpu},
        num_threads=threads,
    )
    median = cpu_timer.blocked_autorange(min_run_time=0.1).median
    print(compperf.tr("threads: {n}, per loop: {t:time}", n=threads, t=median))
