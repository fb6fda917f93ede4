"""
Accumulating gradients with ``no_sync``
=======================================

You accumulate the gradients of two micro-batches under
``DistributedDataParallel`` (DDP), once as usual and once with ``no_sync``,
count the all-reduces each way makes, and check that both give the whole
batch's gradient.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. It starts its
processes with PyTorch's launcher, ``torchrun``.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced the numbers below.
# As in :doc:`/auto_examples/distributed/plot_2b_buckets_and_no_sync`, two
# ranks talk through NCCL when there is a GPU for each, else through gloo on
# the CPU.

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
# Two micro-batches of half the batch each, every loss halved, give the
# gradient of the whole batch. Without ``no_sync`` DDP reduces every bucket
# after each micro-batch; inside ``no_sync`` it only adds up the local
# gradients, and the backward after it reduces the sum once. The script
# wraps the deep model of the previous page in DDP with 4 MB buckets,
# counts the buckets it reduces with a communication hook, accumulates two
# micro-batches each way, and computes the whole batch's gradient to
# compare with.

RANK_CODE = """
import contextlib
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP

results, backend = Path(sys.argv[1]), sys.argv[2]
width, depth = int(sys.argv[3]), int(sys.argv[4])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    device = torch.device("cuda", dist.get_node_local_rank())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")

def deep_model():
    torch.manual_seed(0)
    layers = [nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)]
    return nn.Sequential(*layers).to(device)

batch = torch.randn(32, width, device=device)
reduced = []

def counting_hook(state, bucket):
    reduced.append(bucket.index())
    return allreduce_hook(state, bucket)

ids = [device.index] if device.type == "cuda" else None
accumulated = DDP(deep_model(), device_ids=ids, bucket_cap_mb=4)
accumulated.register_comm_hook(None, counting_hook)
accumulated(batch).square().mean().backward()  # DDP rebuilds its buckets after it

def accumulate(first_context):
    reduced.clear()
    accumulated.zero_grad()
    first, second = batch.chunk(2)
    with first_context:
        (accumulated(first).square().mean() / 2).backward()
    (accumulated(second).square().mean() / 2).backward()
    gradient = torch.cat([p.grad.flatten() for p in accumulated.parameters()])
    return {"reductions": len(reduced), "gradient": gradient.cpu().tolist()}

report = {"rank": rank}
report["sync_every"] = accumulate(contextlib.nullcontext())
report["no_sync"] = accumulate(accumulated.no_sync())
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
# ``compperf.run_ranks`` runs the script under ``torchrun`` with a timeout,
# in a new temporary folder, and returns what each rank wrote. The two lines
# after the launch count the bucket all-reduces each way.
arguments = [backend, str(WIDTH), str(DEPTH)]
run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
rank0 = run[0]
every = rank0["sync_every"]["reductions"]
print(compperf.tr("bucket all-reduces without no_sync: {n}", n=every))
once = rank0["no_sync"]["reductions"]
print(compperf.tr("bucket all-reduces with no_sync: {n}", n=once))

# %%
# The same gradient
# -----------------
# The verdict compares both ways' gradients with the whole batch's, relative
# to its largest value. Its line prints the claim "same gradient", its
# outcome and the larger difference, against the tolerance: *yes* means that
# ``no_sync`` saved its all-reduces without changing the step; *no*, that
# one of the two ways gives another gradient.
TOLERANCE = 1e-5
whole = torch.tensor(rank0["whole_batch_gradient"])
worst = max(
    float((torch.tensor(rank0[key]["gradient"]) - whole).abs().max())
    for key in ("sync_every", "no_sync")
) / float(whole.abs().max())
subject = compperf.tr("no_sync accumulation")
same = compperf.conclude(
    "same gradient", subject, worst, worst, below=TOLERANCE
)
print(same)

# %%
# The figure counts the bucket all-reduces of one optimizer step each way.
fig, ax = plt.subplots(figsize=(7, 2.6), layout="constrained")
ways = [compperf.tr("without no_sync"), compperf.tr("with no_sync")]
ax.barh(ways, [every, once], color=["C7", "C0"])
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("bucket all-reduces per optimizer step"))
ax.set_title(compperf.tr("Two micro-batches, {b}", b=backend))
plt.show()

# %%
# Summary
# -------
# * ``no_sync`` skips the reduction for micro-batches whose gradients you only
#   accumulate: one all-reduce per optimizer step instead of one per
#   micro-batch.
# * The accumulated gradient is the whole batch's, to rounding, either way.
#
# Exercises
# ---------
# 1. With ``k`` micro-batches per optimizer step, how much gradient traffic
#    does ``no_sync`` save?
# 2. How many bucket all-reduces would four micro-batches make each way?
#
# Answers
# -------
# 1. Without ``no_sync``, every micro-batch all-reduces every gradient:
#    ``k`` times the model's gradients per optimizer step. With it, once:
#    ``(k - 1) / k`` of the traffic is saved. For ``k = 2`` with 4 MB buckets,
#    the run above:
saved = every - once
print(compperf.tr("bucket all-reduces saved per step: {n}", n=saved))

# %%
# 2. Each backward outside ``no_sync`` reduces every bucket once, so ``k``
#    micro-batches make ``k`` times the buckets without it and one time with
#    it:
k = 4
a, b = k * once, once
print(compperf.tr("k = {k}: {a} without no_sync, {b} with", k=k, a=a, b=b))
