"""
DistributedDataParallel
=======================

You train with PyTorch's ``DistributedDataParallel`` (DDP) instead of the
hand-written all-reduce, and look at a profile of one step on each rank to see
the gradients travel while the backward pass still runs. The next lessons
are :doc:`/auto_examples/distributed/plot_2b_buckets_and_no_sync` and
:doc:`/auto_examples/distributed/plot_2c_no_sync`.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. It starts its
processes with PyTorch's launcher, ``torchrun``.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced the numbers below.
# As in the previous example,
# :doc:`/auto_examples/distributed/plot_1_data_parallel_from_scratch`, two ranks talk through NCCL when there is a GPU
# for each, else through gloo on the CPU.

import matplotlib.pyplot as plt
import torch

import compperf

RANKS = 2
WIDTH, DEPTH = 512, 8
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    WIDTH, DEPTH = 256, 4
# sphinx_gallery_end_ignore
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
print(compperf.environment(device))
print(compperf.tr("ranks: {n}, backend: {b}", n=RANKS, b=backend))

# %%
# What every rank runs
# --------------------
# The script below does two things on each rank, and writes what it saw to
# ``rank<r>.json``:
#
# 1. It trains the small model of the previous example with DDP and with the
#    hand-written all-reduce, to compare their parameters.
# 2. It builds a deeper model (``DEPTH`` layers of ``WIDTH`` by ``WIDTH``),
#    profiles one DDP step with ``torch.profiler`` and keeps, for each
#    backward operation and each all-reduce, its thread and its start and end.
#
# DDP sorts the gradients into *buckets* of about ``bucket_cap_mb`` megabytes,
# in the reverse order of the layers (the order backward produces them), and
# starts an asynchronous all-reduce of a bucket as soon as all its gradients
# are ready and the buckets before it have started, while backward computes
# the earlier layers.

RANK_CODE = """
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile

results, backend = Path(sys.argv[1]), sys.argv[2]
width, depth = int(sys.argv[3]), int(sys.argv[4])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    device = torch.device("cuda", dist.get_node_local_rank())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")


def wrap(model, **options):
    ids = [device.index] if device.type == "cuda" else None
    return DDP(model, device_ids=ids, **options)


# 1. The previous example's training, with DDP and by hand.
generator = torch.Generator().manual_seed(1)
X = torch.randn(64, 16, generator=generator)
y = X @ torch.randn(16, 1, generator=generator) + 0.1 * torch.randn(64, 1, generator=generator)
X, y = X.to(device), y.to(device)
mine = slice(rank * len(X) // world, (rank + 1) * len(X) // world)


def small_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)


def train_small(use_ddp, steps=20):
    model = wrap(small_model()) if use_ddp else small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(X[mine]), y[mine]).backward()
        if not use_ddp:
            for parameter in model.parameters():
                dist.all_reduce(parameter.grad)
                parameter.grad /= world
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()]).cpu().tolist()


report = {"rank": rank, "ddp": train_small(True), "by_hand": train_small(False)}

# 2. One profiled DDP step of a deeper model, 4 MB buckets.
torch.manual_seed(0)
layers = [nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)]
model = wrap(nn.Sequential(*layers).to(device), bucket_cap_mb=4)
batch = torch.randn(32, width, device=device)
for _ in range(3):  # warm-up: DDP rebuilds its buckets after the first step
    model(batch).square().mean().backward()
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
with profile(activities=activities) as profiled:
    model(batch).square().mean().backward()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
events = []
for event in profiled.events():
    if event.name.startswith("autograd::engine::evaluate_function:"):
        kind = "backward"
    elif "all_reduce" in event.name or "AllReduce" in event.name:
        kind = "all-reduce"
    else:
        continue
    events.append([kind, event.thread, event.time_range.start, event.time_range.end])
report["events"] = events
report["parameters"] = len(list(model.parameters()))
report["buckets"] = model._get_ddp_logging_data().get("num_buckets_reduced")

(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
"""

# %%
# Launching the ranks
# -------------------
# As before, ``compperf.run_ranks`` runs the script under ``torchrun`` with a
# timeout, in a new temporary folder, and returns what each rank wrote.
arguments = [backend, str(WIDTH), str(DEPTH)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=120)
print(run)
print(watched.disturbance)
rank0 = run[0]

# %%
# DDP computes what the hand-written version computes
# ---------------------------------------------------
# DDP averages the gradients over the ranks, as the previous example did by
# hand; with the same seed, data and steps, the parameters must agree to
# rounding. The verdict's line prints the claim "same parameters", its
# outcome and the largest difference, against the tolerance: *yes* means
# that DDP and the hand-written all-reduce end with the same parameters, to
# rounding; *no*, that they did not compute the same steps.
TOLERANCE = 1e-5
difference = float(
    (torch.tensor(rank0["ddp"]) - torch.tensor(rank0["by_hand"])).abs().max()
)
subject = compperf.tr("DDP vs by hand")
agree = compperf.conclude(
    "same parameters", subject, difference, difference, below=TOLERANCE
)
print(agree)

# %%
# One step on each rank
# ---------------------
# Each row of the timeline is one thread of one rank. On a CPU the backward
# pass runs in the rank's main thread, layer after layer from the last; the
# all-reduces of the buckets run in gloo's own threads. (On a GPU, autograd
# runs backward in a thread of its own for the device, whose bars are kernel
# launches rather than kernels, and NCCL kernels run on a stream of their
# own.) Look for all-reduce bars that start before the last backward bar
# ends: that is the overlap DDP is built for.
fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
rows, labels = {}, []
colors = {"backward": "C0", "all-reduce": "C3"}
for report in run.ranks:
    rank, events = report["rank"], report["events"]
    origin = min(start for _, _, start, _ in events)
    for kind, thread, start, end in events:
        key = (rank, kind, thread)
        if key not in rows:
            rows[key] = len(rows)
            label = compperf.tr("rank {r}, thread {t}", r=rank, t=thread)
            labels.append(label)
        ax.barh(rows[key], (end - start) / 1e3, left=(start - origin) / 1e3,
                color=colors[kind], height=0.6)  # fmt: skip
ax.set_yticks(range(len(labels)), labels)
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time since the first backward operation (ms)"))
ax.set_title(compperf.tr("One DDP step, 4 MB buckets, {b}", b=backend))
fig.legend(
    [plt.Rectangle((0, 0), 1, 1, color=color) for color in colors.values()],
    [compperf.tr("backward (compute)"), compperf.tr("all-reduce of a bucket")],
    loc="outside upper center",
    ncols=2,
)
plt.show()

# %%
# The profile gives the overlap on rank 0 as a number: the time during which
# some all-reduce ran while the backward pass had not finished (summed over
# the buckets), next to the duration of the backward pass.
events = rank0["events"]
backward_end = max(end for kind, _, _, end in events if kind == "backward")
backward_start = min(s for kind, _, s, _ in events if kind == "backward")
overlap = sum(
    max(0.0, min(end, backward_end) - max(start, backward_start))
    for kind, _, start, end in events
    if kind == "all-reduce"
)
backward_seconds = (backward_end - backward_start) / 1e6  # from µs
print(compperf.tr("rank 0, backward: {t:time}", t=backward_seconds))
print(compperf.tr("all-reduce during backward: {t:time}", t=overlap / 1e6))

# %%
# Summary
# -------
# * ``DistributedDataParallel`` averages gradients over the ranks as the
#   hand-written version does, and gives the same parameters.
# * It groups gradients into buckets and reduces each bucket as soon as
#   backward has produced it, so communication can overlap the rest of
#   backward; a profile of one step shows, on each rank, when the
#   all-reduces ran against the backward operations.
#
# Exercises
# ---------
# 1. Why does DDP fill buckets in the reverse order of the model's layers?
# 2. The hand-written version calls ``all_reduce`` once per parameter. How
#    many calls would it make per step for the deep model, and how many
#    buckets did DDP reduce in the profiled step?
#
# Answers
# -------
# 1. Backward produces the gradients of the last layer first. Buckets in that
#    order fill up one after the other while backward runs, and each can be
#    sent as soon as it is full. In forward order, the first bucket would
#    only be complete at the very end of backward.
#
# 2. One call per weight and per bias, against one per bucket, as rank 0
#    counted them:
print(compperf.tr("all-reduces by hand: {n}", n=rank0["parameters"]))
print(compperf.tr("buckets DDP reduced: {n}", n=rank0["buckets"]))
