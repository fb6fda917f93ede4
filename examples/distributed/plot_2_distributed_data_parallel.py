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
print(
    compperf.tr(
        "{ranks} ranks, backend {backend}", ranks=RANKS, backend=backend
    )
)

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
# rounding.
TOLERANCE = 1e-5
difference = float(
    (torch.tensor(rank0["ddp"]) - torch.tensor(rank0["by_hand"])).abs().max()
)
agree = compperf.conclude("same parameters", "DDP vs by hand", difference, difference,
                          below=TOLERANCE)  # fmt: skip
if agree.yes:
    compperf.say(
        "DDP and the hand-written all-reduce end with the same parameters: the "
        "largest difference is {difference:.1e} (tolerance {tolerance:.0e}).",
        difference=difference,
        tolerance=TOLERANCE,
    )
else:
    compperf.say(
        "DDP and the hand-written all-reduce differ by {difference:.1e} here, "
        "more than the tolerance {tolerance:.0e}.",
        difference=difference,
        tolerance=TOLERANCE,
    )

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
    origin = min(start for _, _, start, _ in report["events"])
    for kind, thread, start, end in report["events"]:
        key = (report["rank"], kind, thread)
        if key not in rows:
            rows[key] = len(rows)
            labels.append(
                compperf.tr(
                    "rank {rank}, thread {thread}",
                    rank=report["rank"],
                    thread=thread,
                )
            )
        ax.barh(rows[key], (end - start) / 1e3, left=(start - origin) / 1e3,
                color=colors[kind], height=0.6)  # fmt: skip
ax.set_yticks(range(len(labels)), labels)
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time since the first backward operation (ms)"))
ax.set_title(
    compperf.tr("One DDP step, 4 MB buckets, {backend}", backend=backend)
)
fig.legend(
    [plt.Rectangle((0, 0), 1, 1, color=color) for color in colors.values()],
    [compperf.tr("backward (compute)"), compperf.tr("all-reduce of a bucket")],
    loc="outside upper center",
    ncols=2,
)
plt.show()

# %%
# The profile gives the overlap on rank 0 as a number: the time during which
# some all-reduce ran while the backward pass had not finished.
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
print(
    compperf.tr(
        "rank 0: backward {backward} ms, all-reduce running during it {overlap} ms "
        "(summed over buckets)",
        backward=f"{(backward_end - backward_start) / 1e3:.1f}",
        overlap=f"{overlap / 1e3:.1f}",
    )
)

# %%
# Bucket sizes
# ------------
# Smaller buckets start communicating earlier but pay a fixed cost per
# message; larger ones pay it less often but wait longer for their last
# gradient. The rounds time every bucket size and the hand-written version
# (all-reduce after the whole backward) on rank 0; the ratios are medians of
# per-round ratios with their 95 % intervals.
seconds = rank0["seconds"]
names = list(seconds)
print(
    compperf.tr(
        "{megabytes:.1f} MB of gradients per step; buckets reduced per step: {buckets}",
        megabytes=rank0["gradient_megabytes"],
        buckets=rank0["buckets"],
    )
)
for name in names:
    print(
        f"{name:>15}: median {compperf.format_time(torch.tensor(seconds[name]).median().item())}"
    )
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
for name, ratio in ratios.items():
    print(
        compperf.tr(
            "{name} over after backward: {ratio}", name=name, ratio=ratio
        )
    )

# %%
# Does DDP's default overlap pay here? The verdict compares DDP with 25 MB
# buckets against reducing after backward: "yes" when the whole interval of
# the time ratio lies below 1 / 1.05.
default = ratios["25 MB"]
faster = compperf.conclude("faster", "DDP 25 MB vs all-reduce after backward",
                           default.low, default.high, below=1 / 1.05, disturbed=disturbed)  # fmt: skip
if faster.yes:
    compperf.say(
        "With 25 MB buckets, DDP's step takes {ratio:.2f}× the time of reducing "
        "after backward: overlapping communication with backward pays here.",
        ratio=default.estimate,
    )
elif faster.no:
    compperf.say(
        "With 25 MB buckets, DDP's step takes {ratio:.2f}× the time of reducing "
        "after backward: no gain here. With one thread per rank on a shared CPU, "
        "gloo's threads and backward compete for the same cores, so overlapping "
        "saves little; on GPUs, NCCL runs beside the computation.",
        ratio=default.estimate,
    )
else:
    compperf.say(
        "With 25 MB buckets, DDP's step takes {ratio:.2f}× the time of reducing "
        "after backward, but the interval ({low:.2f}–{high:.2f}×) does not decide "
        "whether it is faster: unclear here.",
        ratio=default.estimate,
        low=default.low,
        high=default.high,
    )

fig, ax = plt.subplots(figsize=(7, 3.5))
medians = [torch.tensor(seconds[name]).median().item() * 1e3 for name in names]
ax.bar(range(len(names)), medians, color=["C0"] * (len(names) - 1) + ["C7"])
caps = [float(name.split()[0]) for name in names[:-1]]  # "25 MB" -> 25.0
ticks = [compperf.tr("{cap:g} MB", cap=cap) for cap in caps]
ax.set_xticks(range(len(names)), [*ticks, compperf.tr("after backward")])
ax.set_xlabel(compperf.tr("bucket_cap_mb"))
ax.set_ylabel(compperf.tr("time per step, rank 0 (ms)"))
ax.set_title(
    compperf.tr(
        "Training step against bucket size, {backend}", backend=backend
    )
)
fig.tight_layout()
plt.show()

# %%
# Accumulating gradients with ``no_sync``
# ---------------------------------------
# Two micro-batches of half the batch each, every loss halved, give the
# gradient of the whole batch. Without ``no_sync`` DDP reduces every bucket
# after each micro-batch; inside ``no_sync`` it only adds up the local
# gradients, and the backward after it reduces the sum once. The difference
# to the whole batch's gradient is relative to its largest value.
for key in ("sync_every", "no_sync"):
    print(
        compperf.tr(
            "{mode}: {n} bucket all-reduces",
            mode=key,
            n=rank0[key]["reductions"],
        )
    )
whole = torch.tensor(rank0["whole_batch_gradient"])
worst = max(
    float(
        (torch.tensor(rank0[key]["gradient"]) - whole).abs().max()
        / whole.abs().max()
    )
    for key in ("sync_every", "no_sync")
)
same = compperf.conclude(
    "same gradient", "no_sync accumulation", worst, worst, below=TOLERANCE
)
fewer = rank0["no_sync"]["reductions"] < rank0["sync_every"]["reductions"]
if same.yes and fewer:
    compperf.say(
        "Both ways give the whole batch's gradient (largest relative difference "
        "{worst:.1e}); bucket all-reduces: {no_sync} with no_sync, {every} without.",
        worst=worst,
        no_sync=rank0["no_sync"]["reductions"],
        every=rank0["sync_every"]["reductions"],
    )
else:
    compperf.say(
        "Here the accumulated gradients differ from the whole batch's by "
        "{worst:.1e} (relative), or no_sync did not reduce fewer buckets; look at the numbers.",
        worst=worst,
    )

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
#    (``bucket_cap_mb * 2**20`` bytes). Counting that way:
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


for cap in BUCKET_CAPS_MB:
    print(
        compperf.tr(
            "{cap} MB: buckets counted {counted}, reported by DDP {reported}",
            cap=cap,
            counted=count_buckets(cap),
            reported=rank0["buckets"][f"{cap} MB"],
        )
    )

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
print(
    compperf.tr(
        "bucket all-reduces saved per optimizer step: {saved}", saved=saved
    )
)
