"""
Asynchrony through the backend
==============================

You multiply the same matrix many times with NumPy and with PyTorch, and time
the loop twice: once the naive way and once with the device synchronized.
You learn when the two clocks disagree, and why.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced every number on this
# page. ``compperf.try_gpu()`` picks the first GPU (CUDA or Apple MPS) and falls
# back to the CPU when there is none.
import os
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import torch

import compperf

# Set by the tests, never by the docs build.
FAST = os.environ.get("COMPPERF_FAST") == "1"
device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The work
# --------
# The work is ten products of one square matrix with itself, in float32 on both
# sides. The matrix is larger on a GPU, so that the device has enough to do.
size = {"cpu": 512, "mps": 2048, "cuda": 4096}[device.type]
if FAST:
    size = 128
steps = 10
print(f"{steps} products of a {size} x {size} float32 matrix on {device}")

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
# timer is correct for it. Each loop runs once untimed first (a warm-up), so
# that one-off costs such as memory allocation stay out of the timings below.
numpy_matmuls(a_numpy)
with compperf.Benchmark("numpy", device="cpu"):
    numpy_matmuls(a_numpy)

# %%
# Naive and synchronized timing
# -----------------------------
# Now you time the PyTorch loop as the naive code does (``sync=False``: read the
# clock as soon as the loop returns) and then with the device synchronized
# before the clock stops. Compare the two lines and the ratio below them, but
# do not trust one run of each: on a busy machine a single run can be far off,
# which is why the next section repeats the loop and shows the spread.
torch_matmuls(a_torch)
with compperf.Benchmark("torch, naive", device=device, sync=False) as naive:
    torch_matmuls(a_torch)
with compperf.Benchmark("torch, synchronized", device=device) as synchronized:
    torch_matmuls(a_torch)
print(f"synchronized / naive: {synchronized.elapsed / naive.elapsed:.2f}")

# %%
# Where the time goes
# -------------------
# One run of each proves little, so you repeat the loop and split each run in
# two parts: the time until the loop returns, and the time you then wait for the
# result (``.item()`` on one element of the last product blocks until that
# product exists). Each run starts with an empty queue. The table shows the
# median and the interquartile range (IQR) of each part over all runs.
repeats = 5 if FAST else 15
returned, waited = compperf.Timer(), compperf.Timer()
for _ in range(repeats):
    compperf.synchronize(device)  # nothing queued before the clock starts
    returned.start()
    b = torch_matmuls(a_torch)
    returned.stop()
    waited.start()
    b[0, 0].item()
    waited.stop()

naive_times = np.array(returned.times)
synchronized_times = naive_times + np.array(waited.times)
parts = {
    "loop returned (naive)": naive_times,
    "then waited for the result": waited.times,
    "result ready (synchronized)": synchronized_times,
}
rows = {
    name: compperf.Measurement.from_times(
        list(times), description=name, device=device, warmup=1
    )
    for name, times in parts.items()
}
print(
    compperf.compare(
        list(rows.values()),
        title=f"{repeats} runs on {device}, one warm-up run",
    )
)


# %%
# The sentence below is chosen by the code from what it just measured. The
# two timings agree when their medians differ by less than the sum of their
# IQRs, or by less than 5 % when both spreads are tiny.
returned_row, ready_row = (
    rows["loop returned (naive)"],
    rows["result ready (synchronized)"],
)
naive_median, naive_iqr = returned_row.median, returned_row.iqr
synchronized_median, synchronized_iqr = ready_row.median, ready_row.iqr
gap = synchronized_median - naive_median
timings_agree = gap <= max(naive_iqr + synchronized_iqr, 0.05 * naive_median)
queued_share = 1 - naive_median / synchronized_median
if timings_agree:
    print(
        textwrap.fill(
            f"On {device} the naive and synchronized timings agree: the result was ready "
            f"when the loop returned (waiting added {compperf.format_time(gap)}). "
            "The operations ran synchronously."
        )
    )
else:
    print(
        textwrap.fill(
            f"On {device} the loop returned after {compperf.format_time(naive_median)}, but the "
            f"result was ready only after {compperf.format_time(synchronized_median)}: "
            f"{queued_share:.0%} of the time, the work was still queued when Python went on. "
            "A naive timer measures only how fast you queue work."
        )
    )

# %%
# On a CUDA or MPS device, the naive time is how long it took to *queue* the
# ten products; the device runs them after the loop has returned. PyTorch's CPU
# operations run synchronously: each call returns when its result is ready, so
# on a CPU the two timings agree (this answers the book's exercise for
# PyTorch). The figure shows every run as a bar: the lower part is the time
# until the loop returned, the upper part the wait for the result.
fig, ax = plt.subplots(figsize=(7, 3.5))
runs = np.arange(1, repeats + 1)
ax.bar(runs, naive_times * 1e3, label="until the loop returned")
ax.bar(
    runs,
    np.array(waited.times) * 1e3,
    bottom=naive_times * 1e3,
    label="waiting for the result",
)
ax.set_xlabel("run")
ax.set_ylabel("time (ms)")
ax.set_title(f"{steps} matrix products on {device}")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
