"""
DistributedDataParallel
=======================

You train with PyTorch's ``DistributedDataParallel`` (DDP) instead of the
hand-written all-reduce, look at a profile of one step on each rank to see the
gradients travel while the backward pass still runs, sweep the size of DDP's
gradient buckets, and accumulate gradients over micro-batches with ``no_sync``.

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
BUCKET_CAPS_MB = [1, 4, 25]  # 25 MB is DDP's default
WIDTH, DEPTH, ROUNDS = 512, 8, 6
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    WIDTH, DEPTH, ROUNDS = 256, 4, 6
# sphinx_gallery_end_ignore
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
print(compperf.environment(device))
print(compperf.tr("ranks: {n}, backend: {b}", n=RANKS, b=backend))

# %%
# What every rank runs
# --------------------
# The script below does four things on each rank, and writes what it saw to
# ``rank<r>.json``:
#
# 1. It trains the small model of the previous example
#    (:doc:`/auto_examples/distributed/plot_1_data_parallel_from_scratch`) with DDP and with the
#    hand-written all-reduce, to compare their parameters.
# 2. It builds a deeper model (``DEPTH`` layers of ``WIDTH`` by ``WIDTH``) once
#    per bucket size, and times training steps in rounds: each round runs
#    every bucket size, and the hand-written version that starts reducing only
#    after the whole backward pass.
# 3. It profiles one DDP step with ``torch.profiler`` and keeps, for each
#    backward operation and each all-reduce, its thread and its start and end.
# 4. It accumulates two micro-batches, once with ``no_sync`` on the first, and
#    counts how many buckets DDP reduces (a communication hook counts them).
#
# DDP sorts the gradients into *buckets* of about ``bucket_cap_mb`` megabytes,
# in the reverse order of the layers (the order backward produces them), and
# starts an asynchronous all-reduce of a bucket as soon as all its gradients
# are ready, while backward computes the earlier layers.

RANK_CODE = """
import json
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile

results, backend = Path(sys.argv[1]), sys.argv[2]
caps = [float(cap) for cap in sys.argv[3].split(",")]
width, depth, rounds = (int(value) for value in sys.argv[4:7])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    device = torch.device("cuda", dist.get_node_local_rank())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")


def wait():
    if device.type == "cuda":
        torch.cuda.synchronize(device)


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


# 2. Bucket sizes, timed in rounds.
def deep_model():
    torch.manual_seed(0)
    layers = [nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)]
    return nn.Sequential(*layers).to(device)


batch = torch.randn(32, width, device=device)


def ddp_step(model):
    model(batch).square().mean().backward()


by_hand = deep_model()


def all_reduce_after_backward(model=by_hand):
    model(batch).square().mean().backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
        parameter.grad /= world


variants = {f"{cap:g} MB": (wrap(deep_model(), bucket_cap_mb=cap), ddp_step) for cap in caps}
variants["after backward"] = (by_hand, all_reduce_after_backward)
steps_per_round = 2
seconds = {name: [] for name in variants}
for round_number in range(rounds + 1):  # round 0 warms up (DDP rebuilds its buckets)
    for name, (model, step) in variants.items():
        wait()
        start = time.perf_counter()
        for _ in range(steps_per_round):
            step(model)
        wait()
        if round_number:
            seconds[name].append((time.perf_counter() - start) / steps_per_round)
report["seconds"] = seconds
report["buckets"] = {}
for name, (model, step) in variants.items():
    if isinstance(model, DDP):
        logged = model._get_ddp_logging_data()  # what DDP itself records
        report["buckets"][name] = logged.get("num_buckets_reduced")
report["gradient_megabytes"] = sum(p.numel() * 4 for p in by_hand.parameters()) / 1e6

# 3. One profiled DDP step, 4 MB buckets.
model = variants["4 MB"][0]
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
with profile(activities=activities) as profiled:
    ddp_step(model)
    wait()
events = []
for event in profiled.events():
    name = event.name
    if name.startswith("autograd::engine::evaluate_function:"):
        kind = "backward"
    elif "all_reduce" in name or "AllReduce" in name:
        kind = "all-reduce"
    else:
        continue
    events.append([kind, event.thread, event.time_range.start, event.time_range.end])
report["events"] = events

# 4. Gradient accumulation with no_sync, buckets counted by a communication hook.
reduced = []


def counting_hook(state, bucket):
    reduced.append(bucket.index())
    return allreduce_hook(state, bucket)


accumulated = wrap(deep_model(), bucket_cap_mb=4)
accumulated.register_comm_hook(None, counting_hook)
ddp_step(accumulated)  # one step first: DDP rebuilds its buckets after it
micro_batches = batch.chunk(2)
for use_no_sync in (False, True):
    reduced.clear()
    accumulated.zero_grad()
    if use_no_sync:
        with accumulated.no_sync():
            (accumulated(micro_batches[0]).square().mean() / 2).backward()
    else:
        (accumulated(micro_batches[0]).square().mean() / 2).backward()
    (accumulated(micro_batches[1]).square().mean() / 2).backward()
    wait()
    key = "no_sync" if use_no_sync else "sync_every"
    report[key] = {
        "reductions": len(reduced),
        "gradient": torch.cat([p.grad.flatten() for p in accumulated.parameters()]).cpu().tolist(),
    }
whole = deep_model()
whole(batch).square().mean().backward()
local = torch.cat([p.grad.flatten() for p in whole.parameters()])
dist.all_reduce(local)
report["whole_batch_gradient"] = (local / world).cpu().tolist()

(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
"""

# %%
# Launching the ranks
# -------------------
# As before, ``compperf.run_ranks`` runs the script under ``torchrun`` with a
# timeout, in a new temporary folder, and returns what each rank wrote.
arguments = [
    backend,
    ",".join(map(str, BUCKET_CAPS_MB)),
    str(WIDTH),
    str(DEPTH),
    str(ROUNDS),
]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
print(watched.disturbance)
rank0 = run[0]
disturbed = watched.disturbance.disturbed

# %%
# DDP computes what the hand-written version computes
# ---------------------------------------------------
# DDP averages the gradients over the ranks, as the previous example
# (:doc:`/auto_examples/distributed/plot_1_data_parallel_from_scratch`) did by
# hand; with the same seed, data and steps, the parameters must agree to
# rounding. The verdict's line prints the claim "same parameters", its
# outcome and the largest difference of any parameter, against the tolerance:
# *yes* means that DDP and the hand-written all-reduce end with the same
# parameters, to rounding; *no* means that some parameter differs by more
# than rounding explains, and the two did not compute the same steps.
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
# Each row of the timeline is one thread of one rank. The backward pass runs
# in the rank's main thread, layer after layer from the last; the
# all-reduces of the buckets run in gloo's own threads (on a GPU, NCCL
# kernels run on a stream of their own). Look for all-reduce bars that start
# before the last backward bar ends: that is the overlap DDP is built for.
fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
rows, labels = {}, []
colors = {"backward": "C0", "all-reduce": "C3"}
for report in run.ranks:
    rank = report["rank"]
    origin = min(start for _, _, start, _ in report["events"])
    for kind, thread, start, end in report["events"]:
        key = (rank, kind, thread)
        if key not in rows:
            rows[key] = len(rows)
            labels.append(
                compperf.tr("rank {r}, thread {t}", r=rank, t=thread)
            )
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
backward_start = min(
    start for kind, _, start, _ in events if kind == "backward"
)
overlap = sum(
    max(0.0, min(end, backward_end) - max(start, backward_start))
    for kind, _, start, end in events
    if kind == "all-reduce"
)
backward_seconds = (backward_end - backward_start) / 1e6  # from µs
print(compperf.tr("rank 0, backward: {t:time}", t=backward_seconds))
print(compperf.tr("all-reduce during backward: {t:time}", t=overlap / 1e6))

# %%
# Bucket sizes
# ------------
# Smaller buckets start communicating earlier but pay a fixed cost per
# message; larger ones pay it less often but wait longer for their last
# gradient. The rounds time every bucket size and the hand-written version
# (all-reduce after the whole backward) on rank 0. The lines below give the
# size of the gradients, the number of buckets DDP reduced per step at each
# cap, each variant's median step time, and each bucket size's time over
# reducing after backward: a median of per-round ratios with its interval.
seconds = rank0["seconds"]
names = list(seconds)
caps = [float(name.split()[0]) for name in names[:-1]]  # "25 MB" -> 25.0
shown = [compperf.tr("{cap:g} MB", cap=cap) for cap in caps]
shown.append(compperf.tr("after backward"))
gradient_bytes = rank0["gradient_megabytes"] * 1e6
print(compperf.tr("gradients per step: {b:bytes}", b=gradient_bytes))
buckets = ", ".join(
    f"{cap:g}: {n}"
    for cap, n in zip(caps, rank0["buckets"].values(), strict=True)
)
print(compperf.tr("buckets per step (MB: buckets): {b}", b=buckets))
medians = [torch.tensor(seconds[name]).median().item() for name in names]
for label, median in zip(shown, medians, strict=True):
    print(compperf.tr("{name}: median {t:time}", name=label, t=median))
ratios = {
    name: compperf.Ratio.from_rounds(
        name,
        "after backward",
        [
            a / b
            for a, b in zip(
                seconds[name], seconds["after backward"], strict=True
            )
        ],
    )
    for name in names[:-1]
}
for label, ratio in zip(shown[:-1], ratios.values(), strict=True):
    print(compperf.tr("{name} / after backward: {r}", name=label, r=ratio))

# %%
# Does DDP's default overlap pay here? The verdict compares DDP with 25 MB
# buckets against reducing after backward. Its line prints the claim
# "faster", its outcome and the interval of the time ratio, against the
# threshold 1 / 1.05:
#
# * *yes*: the whole interval lies below it. Overlapping communication with
#   backward pays on this machine.
# * *no*: the whole interval lies at or above it: no gain here. With one
#   thread per rank on a shared CPU, gloo's threads and backward compete for
#   the same cores, so overlapping saves little; on GPUs, NCCL runs beside
#   the computation.
# * *unclear*: the interval straddles the threshold, or the machine was
#   disturbed while the rounds ran; this run does not decide.
#
# The bar chart after it shows the median step time of every variant.
default = ratios["25 MB"]
subject = compperf.tr("DDP 25 MB vs all-reduce after backward")
faster = compperf.conclude("faster", subject, default.low, default.high,
                           below=1 / 1.05, disturbed=disturbed)  # fmt: skip
print(faster)

fig, ax = plt.subplots(figsize=(7, 3.5))
milliseconds = [median * 1e3 for median in medians]
ax.bar(range(len(names)), milliseconds, color=["C0"] * len(caps) + ["C7"])
ax.set_xticks(range(len(names)), shown)
ax.set_xlabel(compperf.tr("bucket_cap_mb"))
ax.set_ylabel(compperf.tr("time per step, rank 0 (ms)"))
ax.set_title(compperf.tr("Training step against bucket size, {b}", b=backend))
fig.tight_layout()
plt.show()

# %%
# Accumulating gradients with ``no_sync``
# ---------------------------------------
# Two micro-batches of half the batch each, every loss halved, give the
# gradient of the whole batch. Without ``no_sync`` DDP reduces every bucket
# after each micro-batch; inside ``no_sync`` it only adds up the local
# gradients, and the backward after it reduces the sum once. The two lines
# below count the bucket all-reduces each way.
#
# The verdict compares the accumulated gradients of both ways with the whole
# batch's gradient; the difference is relative to the gradient's largest
# value. Its line prints the claim "same gradient", its outcome and the
# larger of the two differences, against the tolerance: *yes* means that both
# ways give the whole batch's gradient, to rounding, so ``no_sync`` saved
# its all-reduces without changing the step; *no* means that one of them
# gives another gradient.
every = rank0["sync_every"]["reductions"]
print(compperf.tr("bucket all-reduces without no_sync: {n}", n=every))
once = rank0["no_sync"]["reductions"]
print(compperf.tr("bucket all-reduces with no_sync: {n}", n=once))
whole = torch.tensor(rank0["whole_batch_gradient"])
worst = max(
    float(
        (torch.tensor(rank0[key]["gradient"]) - whole).abs().max()
        / whole.abs().max()
    )
    for key in ("sync_every", "no_sync")
)
subject = compperf.tr("no_sync accumulation")
same = compperf.conclude(
    "same gradient", subject, worst, worst, below=TOLERANCE
)
print(same)

# %%
# Summary
# -------
# * ``DistributedDataParallel`` averages gradients over the ranks as the
#   hand-written version does, and gives the same parameters.
# * It groups gradients into buckets (``bucket_cap_mb``, 25 MB by default) and
#   reduces each bucket as soon as backward has produced it, so communication
#   can overlap the rest of backward; whether that pays depends on having
#   spare hardware for the communication.
# * ``no_sync`` skips the reduction for micro-batches whose gradients you only
#   accumulate: one all-reduce per optimizer step instead of one per
#   micro-batch.
#
# Exercises
# ---------
# 1. How many buckets does the deep model need at 1 MB, 4 MB and 25 MB? Work
#    it out from the gradient size, and compare with the counts above.
# 2. Why does DDP fill buckets in the reverse order of the model's layers?
# 3. With ``k`` micro-batches per optimizer step, how much gradient traffic
#    does ``no_sync`` save?
#
# Answers
# -------
# 1. Each layer holds a ``WIDTH`` by ``WIDTH`` weight and a bias of
#    ``WIDTH`` float32 values. DDP takes the tensors from the last layer on
#    and closes a bucket once it holds at least the cap, in MiB
#    (``bucket_cap_mb * 2**20`` bytes). Counting that way, next to what DDP
#    reported:
sizes = [
    WIDTH * 4,
    WIDTH * WIDTH * 4,
] * DEPTH  # bytes, bias then weight, last layer first


def count_buckets(cap_mb):
    buckets, filled = 0, 0
    for size in sizes:
        filled += size
        if filled >= cap_mb * 2**20:
            buckets, filled = buckets + 1, 0
    return buckets + (filled > 0)


print(compperf.tr("bucket_cap_mb, buckets counted, buckets reported by DDP"))
for cap in BUCKET_CAPS_MB:
    reported = rank0["buckets"][f"{cap} MB"]
    print(f"{cap:>13} {count_buckets(cap):>15} {reported:>15}")

# %%
# 2. Backward produces the gradients of the last layer first. Buckets in that
#    order fill up one after the other while backward runs, and each can be
#    sent as soon as it is full. In forward order, the first bucket would
#    only be complete at the very end of backward.
#
# 3. Without ``no_sync``, every micro-batch all-reduces every gradient:
#    ``k`` times the model's gradients per optimizer step. With it, once:
#    ``(k - 1) / k`` of the traffic is saved. For ``k = 2`` with 4 MB buckets,
#    the run above:
saved = rank0["sync_every"]["reductions"] - rank0["no_sync"]["reductions"]
print(compperf.tr("bucket all-reduces saved per step: {n}", n=saved))
