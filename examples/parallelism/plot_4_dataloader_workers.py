"""
Feeding the model: DataLoader workers
=====================================

You load batches whose items cost a known amount of CPU time, with
``num_workers``, ``prefetch_factor``, ``persistent_workers`` and
``pin_memory``, and measure how much of the loading hides behind the model's
computation, and where the cores run out.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
import multiprocessing
import os
import time
import warnings

import matplotlib.pyplot as plt
import torch
from torch.utils.data import DataLoader, Dataset

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))
cores = os.cpu_count()

# %%
# A dataset whose items cost known CPU time
# -----------------------------------------
# Each item burns ``cost`` seconds of CPU time (``time.thread_time``, the
# time its thread really ran) before it returns a small tensor, as decoding
# an image or a sentence would. Loading a batch of ``batch_size`` items costs
# ``batch_size * cost`` of CPU time; on a busy machine it takes longer.


class SlowDataset(Dataset):
    def __init__(self, length, cost, features=256):
        self.length, self.cost, self.features = length, cost, features

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        start = time.thread_time()
        while time.thread_time() - start < self.cost:
            pass
        return torch.full((self.features,), float(index))


cost, batch_size, batches = 0.001, 8, 5
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
if os.environ.get("COMPPERF_FAST") == "1":
    batches = 3
# sphinx_gallery_end_ignore
dataset = SlowDataset(batch_size * batches, cost)
load_seconds = len(dataset) * cost  # CPU time of one epoch's loading

# %%
# The model's step
# ----------------
# The step is a few matrix products on the batch, on one intra-op thread
# (one core for the model, the others for loading), sized to cost about as
# much as loading one batch. Then loading could hide completely behind the
# computation, if a core is free for it. The two lines below give one
# batch's loading cost in CPU time and the number of products in its step.
torch.set_num_threads(1)
weight = torch.randn(256, 256, device=device) / 16
one_product = compperf.measure(
    lambda: torch.mm(torch.randn(batch_size, 256, device=device), weight),
    device=device,
    description="torch.mm(batch, weight)",
    min_run_time=0.05,
)
products = max(1, round(batch_size * cost / one_product.median))


def step(batch):
    x = batch.to(device, non_blocking=True)
    for _ in range(products):
        x = torch.tanh(torch.mm(x, weight))
    return x.sum().item()


load_batch = batch_size * cost
print(compperf.tr("batch's loading (CPU time): {t:time}", t=load_batch))
print(compperf.tr("products in one step: {n}", n=products))

# %%
# Loaders
# -------
# ``num_workers=0`` loads in the main process, between steps. With
# ``num_workers=k``, ``k`` worker processes load whole batches, each up to
# ``prefetch_factor`` batches ahead, while the main process computes.
# ``persistent_workers=True`` keeps the workers alive between epochs, and
# ``pin_memory=True`` copies each batch into pinned memory (only worth it with
# a CUDA device, and a warning without one). ``timeout=60`` makes a worker
# that delivers nothing for a minute an error instead of a hang.
#
# A worker must find the dataset's class. sphinx-gallery, like a notebook,
# runs this page as a module ``__main__`` that no other process can import,
# so the workers are started by ``fork`` (a copy of this process, class
# included) where the system has it. The ``spawn`` and ``forkserver``
# methods (Windows, macOS and Python 3.14 by default) would start fresh
# interpreters and fail to find ``SlowDataset``; there, put the dataset in a
# module of its own. Such a system measures ``num_workers=0`` alone: the line
# below lists the worker counts measured.
context = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
worker_counts = sorted({0, 1, 2, cores}) if context else [0]
print(compperf.tr("worker counts: {c}", c=worker_counts))


def make_loader(workers, persistent=True):
    if workers == 0:
        return DataLoader(dataset, batch_size=batch_size)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=workers,
        prefetch_factor=2,
        persistent_workers=persistent,
        pin_memory=device.type == "cuda",
        timeout=60,
        multiprocessing_context=context,
    )


def epoch(loader):
    # Python 3.12 and later warn when a process with threads (here
    # PyTorch's thread pool) forks; the workers use none of those threads.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", r"This process .* is multi-threaded", DeprecationWarning
        )
        for batch in loader:
            step(batch)


# Each loader is named by its setting, as the lines and the figure show it.
loaders = {f"num_workers={w}": make_loader(w) for w in worker_counts}

# %%
# How much of the loading hides
# -----------------------------
# ``compperf.interleave`` times one epoch with each loader in turns. The
# workers stay alive between epochs, so this is the steady state; the next
# section measures starting them. Each line gives an epoch's median with
# each loader; the last, what compperf saw of the rest of the machine.
comparison = compperf.interleave(
    {
        name: lambda loader=loader: epoch(loader)
        for name, loader in loaders.items()
    },
    device=device,
    budget=6.0,
    min_rounds=10,
    num_threads=1,
)
for name in comparison.names:
    print(comparison.measurements[name])
print(comparison.disturbance)

# %%
# The verdicts. The first worker can hide the loading behind the
# computation: the epoch then gets faster by up to the loading time, which
# on a busy machine is longer than its CPU time. More
# workers help only while a core is free for each of them; with one core
# computing, ``os.cpu_count() - 1`` workers are all that can run at once.
#
# ``Comparison.faster`` decides each step up: one worker against none, then
# each larger count against one. Each verdict line prints the claim "faster",
# the two loaders, the outcome and the interval of their epochs' time ratio,
# against the threshold 1 / 1.05:
#
# * *yes*: the whole interval lies below it: more than 5 % faster. For one
#   worker against none, loading overlapped the computation.
# * *no*: the whole interval lies at it or above: not measurably faster here.
#   For more workers than one, the cores had run out.
# * *unclear*: the interval straddles it, or the machine was disturbed: this
#   run cannot tell.
#
# After the verdicts, two lines set the gain against the loading: the
# interval of the time one worker saved per epoch (negative where it cost
# time), and the loading's CPU time per epoch. A system that cannot fork
# prints none of these lines.


def versus(a, b):
    return compperf.tr("{candidate} vs {baseline}", candidate=a, baseline=b)


verdicts = {}
if len(worker_counts) > 1:
    whole = comparison.measurements["num_workers=0"].median
    gain = comparison.ratio("num_workers=1", "num_workers=0")
    saved = [whole * (1 - r) for r in (gain.high, gain.low)]
    for more, fewer in [(1, 0)] + [(more, 1) for more in worker_counts[2:]]:
        a, b = f"num_workers={more}", f"num_workers={fewer}"
        verdicts[f"{more} vs {fewer}"] = comparison.faster(
            a, b, subject=versus(a, b)
        )
        print(verdicts[f"{more} vs {fewer}"])
    a, b = saved
    print(compperf.tr("saved by one worker: {a:time} to {b:time}", a=a, b=b))
    print(compperf.tr("epoch's loading (CPU time): {t:time}", t=load_seconds))

# %%
# The figure shows each epoch's median with its IQR, and two lines: loading
# plus computation one after the other, and the longer of the two, what a
# perfect overlap would give.
names = list(comparison.names)
timed = [comparison.measurements[name] for name in names]
medians = [m.median * 1e3 for m in timed]
# Error bars from the median down to the first quartile and up to the third.
down = [(m.median - m.quartiles[0]) * 1e3 for m in timed]
up = [(m.quartiles[1] - m.median) * 1e3 for m in timed]
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
ax.bar(names, medians, yerr=[down, up], capsize=4, color="C0")
# the loaders' settings are code
ax.tick_params(axis="x", labelfontfamily="monospace")
compute_ms = batches * products * one_product.median * 1e3
ax.axhline(
    load_seconds * 1e3 + compute_ms,
    color="C3",
    linestyle="--",
    label=compperf.tr("loading + computation"),
)
ax.axhline(
    max(load_seconds * 1e3, compute_ms),
    color="C2",
    linestyle=":",
    label=compperf.tr("perfect overlap"),
)
ax.set_xlabel(compperf.tr("num_workers"))
ax.set_ylabel(compperf.tr("one epoch (ms)"))
ax.set_title(compperf.tr("Epoch time against DataLoader workers"))
fig.legend(loc="outside upper center", ncols=2)
plt.show()

# %%
# Starting workers
# ----------------
# Without ``persistent_workers``, every epoch starts its workers again and
# waits for their first batches. The comparison below times one epoch with
# one worker both ways. Its verdict line says whether the persistent worker
# was faster: *yes* when the whole interval of the time with a persistent
# worker over the time with one restarted every epoch lies below 1 / 1.05
# (restarting cost more than 5 %), *no* when it lies at it or above
# (restarting did not cost measurably more here), *unclear* otherwise.
if context:
    restart = compperf.interleave(
        {
            "persistent_workers=True": lambda: epoch(loaders["num_workers=1"]),
            "persistent_workers=False": lambda: epoch(
                make_loader(1, persistent=False)
            ),
        },
        device=device,
        budget=2.0,
        num_threads=1,
    )
    a, b = "persistent_workers=True", "persistent_workers=False"
    verdicts["persistent"] = restart.faster(a, b, subject=versus(a, b))
    print(verdicts["persistent"])

# %%
# Every worker ends with its loader. The lines below drop the loaders and
# check that no worker process is left.
loaders.clear()
deadline = time.monotonic() + 30
while multiprocessing.active_children() and time.monotonic() < deadline:
    time.sleep(0.1)
left = len(multiprocessing.active_children())
print(compperf.tr("worker processes left: {n}", n=left))
torch.set_num_threads(cores)

# %%
# Summary
# -------
# * ``num_workers=k`` loads batches in ``k`` processes while the model
#   computes; ``prefetch_factor`` batches per worker wait ready.
# * Loading hides behind the computation only while a core is free for it:
#   beyond ``os.cpu_count() - 1`` busy workers, more workers only take turns.
# * ``persistent_workers=True`` pays the workers' start once, not every
#   epoch; ``pin_memory=True`` helps only with a CUDA device.
# * In a notebook or a gallery, the dataset's class must reach the workers:
#   ``fork`` copies it, other start methods need it in a module.
#
# Exercises
# ---------
# 1. Without workers, an epoch costs loading plus computation. What does it
#    cost at best with enough workers, and what with one core in all?
# 2. Why does each worker run with ``torch.get_num_threads() == 1``?
# 3. When does a larger ``prefetch_factor`` help?
#
# Answers
# -------
# 1. At best the longer of the two, the "perfect overlap" line; with one core
#    the loading and the computation take turns on it, and the epoch costs
#    their sum again, workers or not.
# 2. PyTorch's worker loop calls ``torch.set_num_threads(1)``: ``k`` workers
#    with a full thread pool each would oversubscribe the cores. A worker
#    reports it:
if context:
    threads_loader = DataLoader(
        [0],
        num_workers=1,
        collate_fn=lambda _: torch.get_num_threads(),
        timeout=60,
        multiprocessing_context=context,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", r"This process .* is multi-threaded", DeprecationWarning
        )
        worker_threads = next(iter(threads_loader))
    del threads_loader
    print(compperf.tr("threads in a worker: {n}", n=worker_threads))

# %%
# 3. When the cost of items varies: a worker that meets a slow batch can
#    fall behind while the batches it prepared earlier keep the model fed.
#    With every item costing the same, as here, two batches ahead are
#    plenty.
