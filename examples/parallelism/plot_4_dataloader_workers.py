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
# Python 3.12 and later warn when a process with threads (PyTorch's pool)
# forks; the workers below use none of those threads.
warnings.filterwarnings("ignore", r"This process .* is multi-threaded")

# %%
# A slow dataset and the model's step
# -----------------------------------
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
# The step is a few matrix products on one intra-op thread (one core for the
# model, the others for loading), as many as cost about one batch's loading:
# loading could then hide completely behind the computation, if a core is
# free for it.
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
# ``num_workers=0`` loads in the main process, between steps;
# ``num_workers=k`` starts ``k`` processes that load whole batches, each up to
# ``prefetch_factor`` ahead, while the main process computes.
# ``persistent_workers=True`` keeps them between epochs, ``pin_memory=True``
# copies each batch into pinned memory (where there is an accelerator such as
# CUDA; PyTorch turns it off on Apple's MPS), and ``timeout=60`` turns a
# worker silent for a minute into an error.
#
# The workers must find ``SlowDataset``. This page runs as a module
# ``__main__`` that no other process can import, as a notebook does, so they
# start by ``fork``, a copy of this process. ``spawn`` and ``forkserver``
# (Windows, macOS, Python 3.14 by default) need the dataset in a module of
# its own; such a system measures ``num_workers=0`` alone.
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
    for batch in loader:
        step(batch)


loaders = {f"num_workers={w}": make_loader(w) for w in worker_counts}

# %%
# How much of the loading hides
# -----------------------------
# ``compperf.interleave`` times one epoch with each loader in turns. The
# workers stay alive between epochs, so this is the steady state; exercise 4
# measures starting them. The last line says what compperf saw of the
# rest of the machine.
epochs = {name: lambda ld=ld: epoch(ld) for name, ld in loaders.items()}
comparison = compperf.interleave(
    epochs, device=device, budget=6.0, min_rounds=10, num_threads=1
)
for name in comparison.names:
    print(comparison.measurements[name])
print(comparison.disturbance)

# %%
# The verdicts. The first worker can hide the loading behind the
# computation: the epoch then gets faster by up to the loading time, longer
# than its CPU time on a busy machine. More workers help only while a core
# is free for each: with one core computing, ``os.cpu_count() - 1`` run at
# once. ``Comparison.faster`` decides each step up (one worker against none,
# then each larger count against one) from the interval of the epochs' time
# ratio, against 1 / 1.05. *Yes*: more than 5 % faster; for one worker,
# loading overlapped the computation. *No*: not measurably faster here; for
# more workers than one, the cores had run out. *Unclear*: the interval
# straddles the threshold, or the machine was disturbed. The last two lines
# set the time one worker saved per epoch (negative where it cost time)
# against the loading's CPU time. A system that cannot fork prints none.
verdicts = {}
if len(worker_counts) > 1:
    for more, fewer in [(1, 0)] + [(more, 1) for more in worker_counts[2:]]:
        a, b = f"num_workers={more}", f"num_workers={fewer}"
        verdicts[f"{more} vs {fewer}"] = comparison.faster(a, b)
        print(verdicts[f"{more} vs {fewer}"])
    whole = comparison.measurements["num_workers=0"].median
    gain = comparison.ratio("num_workers=1", "num_workers=0")
    a, b = (whole * (1 - r) for r in (gain.high, gain.low))
    print(compperf.tr("saved by one worker: {a:time} to {b:time}", a=a, b=b))
    print(compperf.tr("epoch's loading (CPU time): {t:time}", t=load_seconds))

# %%
# The figure shows each epoch's median with its IQR, and two lines: loading
# plus computation one after the other, and the longer of the two, what a
# perfect overlap would give.
timed = [comparison.measurements[name] for name in comparison.names]
medians = [m.median * 1e3 for m in timed]
# Error bars from the median down to the first quartile and up to the third.
down = [(m.median - m.quartiles[0]) * 1e3 for m in timed]
up = [(m.quartiles[1] - m.median) * 1e3 for m in timed]
fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
ax.bar(comparison.names, medians, yerr=[down, up], capsize=4, color="C0")
ax.tick_params(axis="x", labelfontfamily="monospace")  # settings are code
load_ms = load_seconds * 1e3
compute_ms = batches * products * one_product.median * 1e3
both = compperf.tr("loading + computation")
overlap = compperf.tr("perfect overlap")
ax.axhline(load_ms + compute_ms, color="C3", linestyle="--", label=both)
ax.axhline(max(load_ms, compute_ms), color="C2", linestyle=":", label=overlap)
ax.set_xlabel(compperf.tr("num_workers"))
ax.set_ylabel(compperf.tr("one epoch (ms)"))
ax.set_title(compperf.tr("Epoch time against DataLoader workers"))
fig.legend(loc="outside upper center", ncols=2)
plt.show()

# %%
# Summary
# -------
# * ``num_workers=k`` loads batches in ``k`` processes while the model
#   computes; ``prefetch_factor`` batches per worker wait ready.
# * Loading hides behind the computation only while a core is free for it:
#   beyond ``os.cpu_count() - 1`` busy workers, more workers only take turns.
# * ``persistent_workers=True`` pays the workers' start once, not every
#   epoch; ``pin_memory=True`` helps only with an accelerator such as CUDA.
# * In a notebook or a gallery, the dataset's class must reach the workers:
#   ``fork`` copies it, other start methods need it in a module.
#
# Exercises
# ---------
# 1. Without workers, an epoch costs loading plus computation. What does it
#    cost at best with enough workers, and what with one core in all?
# 2. Why does each worker run with ``torch.get_num_threads() == 1``?
# 3. When does a larger ``prefetch_factor`` help?
# 4. What does starting the workers again in every epoch cost?
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
    worker_threads = next(iter(threads_loader))
    del threads_loader
    print(compperf.tr("threads in a worker: {n}", n=worker_threads))

# %%
# 3. When the cost of items varies: a worker that meets a slow batch can
#    fall behind while the batches it prepared earlier keep the model fed.
#    With every item costing the same, as here, two batches ahead are
#    plenty.

# %%
# 4. Without ``persistent_workers``, every epoch starts its workers again and
#    waits for their first batches. The verdict compares one epoch with one
#    worker both ways: *yes*, restarting cost more than 5 %; *no*, it did not
#    cost measurably more here; *unclear* otherwise. Then the loaders go, and
#    the last line checks that no worker process is left.
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
    verdicts["persistent"] = restart.faster(*restart.names)
    print(verdicts["persistent"])
loaders.clear()
epochs.clear()  # its functions hold the loaders too
deadline = time.monotonic() + 30
while multiprocessing.active_children() and time.monotonic() < deadline:
    time.sleep(0.1)
left = len(multiprocessing.active_children())
print(compperf.tr("worker processes left: {n}", n=left))
torch.set_num_threads(cores)
