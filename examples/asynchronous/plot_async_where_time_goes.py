"""
Where the time goes
===================

You repeat the loop of matrix products from :doc:`plot_async_matmul` many
times and split each run in two: the time until the loop returns, and the wait
for its result. You learn to read a median and its IQR, to let a verdict
decide whether the result was ready when the loop returned, and how much of
the machine the loop used.

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced every number on this
# page.
import matplotlib.pyplot as plt
import numpy as np
import torch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The work is the previous lesson's: ten products of one square matrix with
# itself in float32, 384 x 384 on a CPU, 2048 x 2048 on Apple MPS, 4096 x 4096
# on CUDA.
size = {"cpu": 384, "mps": 2048, "cuda": 4096}[device.type]
repeats = 15
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    size, repeats = 128, 5
# sphinx_gallery_end_ignore
steps = 10
a_torch = torch.randn(size, size, device=device)


def torch_matmuls(a):
    for _ in range(steps):
        b = torch.mm(a, a)
    return b


# %%
# Returning and waiting
# ---------------------
# One run of each clock proves little, so you repeat the loop and split each
# run in two parts: the time until the loop returns, and the time you then
# wait for the result (``.item()`` blocks until the last product exists). The
# first runs can be slower than the rest (caches, clock speed, a device that
# wakes up), so they are timed but kept apart: the table shows the median and
# the interquartile range (IQR) over the runs after them, then the machine's
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
# Compare the single runs of the previous lesson with the median in the
# table's last row: trust the median, and the IQR beside it for how much a
# single run can vary.
#
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
# * Repeat a measurement, keep the warm-up runs apart, and read the median
#   with its IQR rather than any single run.
# * Splitting each run into "returned" and "waited" shows where the time
#   goes: on a GPU the loop returns early and the wait holds the device's
#   work; on a CPU the wait is almost nothing.
# * A verdict compares the interval of the median ratio with a threshold, and
#   says *unclear* when the runs cannot tell.
#
# Exercises
# ---------
# 1. On a CPU, time the same matrix products as this page. Can you still see
#    asynchrony through the backend?
# 2. Why does the page time the return and the wait separately, when their
#    sum is the synchronized time?
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
# 2. The sum alone says how long a step takes, not why. The split shows the
#    two parts the frontend and the backend spend: on a GPU, a short return
#    (queueing the kernels) and a long wait (the device doing the work); on a
#    CPU, a long return and a wait of almost nothing. That difference is the
#    asynchrony this chapter is about.
