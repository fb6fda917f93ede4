"""
Asynchrony through the backend
==============================

You multiply the same matrix many times with NumPy and with PyTorch, and time
the loop the naive way and the right way. You learn when the two clocks
disagree, why, and which PyTorch tools time device work correctly.

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
seconds = time.perf_counter() - start
print(compperf.tr("numpy: {t:time}", t=seconds))

# %%
# Naive and synchronized timing, the PyTorch way
# ----------------------------------------------
# The naive timer reads the clock as soon as the loop returns. The correct one
# first waits until the device has finished everything queued on it:
# ``torch.cuda.synchronize()`` on CUDA, or ``torch.accelerator.synchronize()``
# for whichever accelerator this machine has (a CPU has none, hence the
# check). Compare the two lines, but do not trust one run of each: a later
# section repeats the loop.


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
with compperf.Benchmark(
    compperf.tr("torch, naive"), device=device, sync=False
):
    torch_matmuls(a_torch)
with compperf.Benchmark(
    compperf.tr("torch, synchronized"), device=device
) as synchronized_benchmark:
    torch_matmuls(a_torch)

# %%
# Where the time goes
# -------------------
# One run of each proves little, so you repeat the loop and split each run in
# two parts: the time until the loop returns, and the time you then wait for
# the result (``.item()`` blocks until the last product exists). The first
# runs can be slower than the rest (caches, clock speed, a device that wakes
# up), so they are timed but kept apart: the table shows the median and the
# interquartile range (IQR) over the runs after them, then the machine's
# account of the whole loop (``compperf.watch``).
warmup_runs = 3
returned, waited = compperf.Timer(), compperf.Timer()
with compperf.watch() as watched:
    for _ in range(warmup_runs + repeats):
        compperf.synchronize(device)  # Nothing queued when the clock starts.
        returned.start()
        b = torch_matmuls(a_torch)
        returned.stop()
        waited.start()
        b[0, 0].item()
        waited.stop()

all_returned = np.array(returned.times)
all_waited = np.array(waited.times)
naive_times = all_returned[warmup_runs:]
wait_times = all_waited[warmup_runs:]
synchronized_times = naive_times + wait_times


def row(times, description):
    return compperf.Measurement.from_times(
        list(times),
        description=description,
        device=device,
        warmup=warmup_runs,
        disturbance=watched.disturbance,
    )


returned_row = row(naive_times, compperf.tr("loop returned (naive)"))
waited_row = row(wait_times, compperf.tr("then waited for the result"))
ready_row = row(synchronized_times, compperf.tr("result ready (synchronized)"))
print(compperf.compare([returned_row, waited_row, ready_row]))
print(watched.disturbance)


# %%
# Now let compperf's verdict decide, not two medians: was the result ready
# when the loop returned? Each run gives the ratio of the synchronized time to
# the naive one, and the verdict holds the median ratio's confidence interval
# against 1.05 (waiting adds less than 5 %):
#
# * *yes*: the timings agree; the operations ran synchronously.
# * *no*: the work was still queued when Python went on, and a naive timer
#   measures only how fast you queue work.
# * *unclear*: this run cannot tell; run the page again on a quieter machine.
ratio = compperf.Ratio.from_rounds(
    "synchronized", "naive", list(synchronized_times / naive_times)
)
claim = "result ready when the loop returns"
synchronous = compperf.conclude(
    claim,
    str(device),
    ratio.low,
    ratio.high,
    below=1.05,
    disturbed=watched.disturbance.disturbed,
    value=ratio.estimate,
)
print(synchronous)

# %%
# Compare the single runs printed earlier with the median in the table's last
# row: trust the median, and the IQR beside it for how much a single run can
# vary.

# %%
# How much of the machine that is
# -------------------------------
# The ten products are ``10 * 2 * size**3`` floating-point operations. Divided
# by the median time they give a rate, and against the peak this device
# reaches on a matrix product (``compperf.ceilings``, which the page
# :doc:`/auto_examples/limits/plot_2_ceilings` builds up) a share of the
# machine, with a range from the interval of the median.
share = compperf.ceilings(device).peak_share(ready_row, steps * 2 * size**3)
print(compperf.tr("synchronized loop: {s}", s=share))

# %%
# On a CUDA or MPS device, the naive time is how long it took to *queue* the
# ten products; PyTorch's CPU operators return when their result is ready.
# The figure shows every run as a bar: the time until the loop returned, then
# the wait for the result. The pale bars on the left are the warm-up runs.
fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
runs = np.arange(1, warmup_runs + repeats + 1)
shade = [0.35] * warmup_runs + [1.0] * repeats
bottom = ax.bar(runs, all_returned * 1e3, label=returned_row.description)
top = ax.bar(
    runs,
    all_waited * 1e3,
    bottom=all_returned * 1e3,
    label=waited_row.description,
)
for bar, alpha in zip([*bottom, *top], shade * 2, strict=True):
    bar.set_alpha(alpha)
ax.axvspan(0.5, warmup_runs + 0.5, color="0.9", zorder=0)
ax.set_xlabel(compperf.tr("run (the first ones warm up)"))
ax.set_ylabel(compperf.tr("time (ms)"))
ax.set_title(compperf.tr("Each run: the loop, then the wait for the result"))
fig.legend(loc="outside upper center", ncols=2)
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
# 1. On a CPU, time the same matrix products as this page. Can you still see
#    asynchrony through the backend?
# 2. Why does ``time.perf_counter()`` around a CUDA loop mislead, and what is
#    the smallest change that fixes it?
# 3. The synchronized wall-clock time and the CUDA events measure the same loop.
#    Do the events leave out the time Python needs to launch the kernels? What
#    does the wall clock count that the events do not?
# 4. ``torch.utils.benchmark.Timer`` runs on one thread unless told otherwise.
#    Time the CPU products with one thread and with all of them.
#
# Answers
# -------
# 1. The loop below runs on the CPU, whatever device the page used, on a
#    matrix of at most 384 x 384 (the size this page uses on a CPU). If the
#    time until the loop returns and the time until the result is ready agree,
#    there is no asynchrony to see. The verdict's claim is "result ready when
#    the loop returns", decided from ready / returned per run (the time until
#    the result was read over the time until the loop returned) against 1.05:
#    *yes* means the result was ready when the loop returned, because
#    PyTorch's CPU operators do not run asynchronously; *no* that reading it
#    added more than 5 % of the loop; *unclear* that this run cannot tell.
a_cpu = a_torch[:384, :384].cpu()
torch_matmuls(a_cpu)  # A warm-up run, not timed.
cpu_returned, cpu_ready = compperf.Timer(), compperf.Timer()
cpu_runs = 6  # the fewest that give a 95 % interval of the median
for _ in range(cpu_runs):
    cpu_returned.start()
    cpu_ready.start()
    b = torch_matmuls(a_cpu)
    cpu_returned.stop()
    b[0, 0].item()
    cpu_ready.stop()
cpu_ratio = compperf.Ratio.from_rounds(
    "ready", "returned", list(np.array(cpu_ready.times) / cpu_returned.times)
)
cpu_synchronous = compperf.conclude(
    claim,
    "cpu",
    cpu_ratio.low,
    cpu_ratio.high,
    below=1.05,
    value=cpu_ratio.estimate,
)
print(cpu_synchronous)

# %%
# 2. The kernels are still running when the clock stops. Synchronize before
#    each clock read (both ends: before the start, so that earlier work is not
#    billed to the loop, and before the stop), as ``wait_for_device`` does.
# 3. No. The events measure the device timeline from the first mark to the
#    second, idle gaps included: if Python needs longer to launch a kernel than
#    the device needs to run it, the device waits between kernels, and the
#    events count those waits as the wall clock does. Compared with the
#    synchronized wall clock, the events leave out only the host time before
#    the first mark reaches the device and the latency of the final wait, so a
#    launch-bound loop shows about the same time in both.
# 4. The code below times the CPU loop with one thread and with all of them.
for threads in sorted({1, torch.get_num_threads()}):
    cpu_timer = torch.utils.benchmark.Timer(
        stmt="torch_matmuls(a)",
        globals={"torch_matmuls": torch_matmuls, "a": a_cpu},
        num_threads=threads,
    )
    median = cpu_timer.blocked_autorange(min_run_time=0.1).median
    print(compperf.tr("threads: {n}, per loop: {t:time}", n=threads, t=median))
