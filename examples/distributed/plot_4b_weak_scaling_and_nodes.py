"""
Weak scaling and several machines
=================================

You give each of two ranks a whole batch of its own (weak scaling), find out
from the numbers whether the pair gets through more rows per second than one
rank, and see how the same job starts on two machines.

To run this example yourself, install PyTorch, then ``pip install
matplotlib numpy``, and compperf as :ref:`run-yourself` explains. It starts
its processes with PyTorch's launcher, ``torchrun``.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced the numbers below.

import matplotlib.pyplot as plt
import numpy as np

import compperf
from compperf.i18n import parts, table

RANKS = 2
BATCH, WIDTH, DEPTH, ROUNDS = 256, 512, 4, 6
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BATCH, WIDTH = 64, 256
# sphinx_gallery_end_ignore
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
print(compperf.environment(device))
print(compperf.tr("ranks: {n}, backend: {b}", n=RANKS, b=backend))

# %%
# Two ways to run one step
# ------------------------
# Weak scaling keeps the batch of each rank (``BATCH`` rows) and grows the
# total with the ranks. The step and the model are those of
# :doc:`/auto_examples/distributed/plot_4_scaling`; one launch of two ranks
# runs two configurations in rounds, so that a busy moment of the machine
# hits both alike:
#
# * ``1 rank, 1 thread``: rank 0 alone trains on one batch while rank 1
#   waits at a barrier;
# * ``2 ranks, whole batch``: each rank trains on a batch of its own, one
#   thread each, and the gradients are averaged with one ``all_reduce``.

RANK_CODE = '''
import json
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

results, backend = Path(sys.argv[1]), sys.argv[2]
batch, width, depth, rounds = (int(value) for value in sys.argv[3:7])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    device = torch.device("cuda", dist.get_node_local_rank())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")
wait = torch.cuda.synchronize if device.type == "cuda" else lambda: None
torch.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)])
model = model.to(device)
data = torch.randn(batch, width, device=device)
parameters = list(model.parameters())

def step(ranks):
    """One training step on the whole batch; (compute, communication) seconds."""
    wait()
    start = time.perf_counter()
    model(data).square().mean().backward()
    wait()
    computed = time.perf_counter() - start
    communicated = 0.0
    if ranks > 1:
        flat = torch.cat([p.grad.flatten() for p in parameters])
        dist.all_reduce(flat)
        flat /= ranks
        wait()
        communicated = time.perf_counter() - start - computed
    for p in parameters:
        p.grad = None
    return computed, communicated

configurations = {"1 rank, 1 thread": 1, "2 ranks, whole batch": 2}  # name: ranks
torch.set_num_threads(1)
steps = 3
times = {name: {"compute": [], "communication": []} for name in configurations}
for round_number in range(rounds + 1):  # round 0 warms up
    for name, ranks in configurations.items():
        dist.barrier()
        if rank < ranks:
            parts = [step(ranks) for _ in range(steps)]
            if round_number:
                times[name]["compute"].append(sum(p[0] for p in parts) / steps)
                times[name]["communication"].append(sum(p[1] for p in parts) / steps)
report = {"rank": rank, "world": world, "local_rank": dist.get_node_local_rank(),
          "configurations": configurations, "times": times}
(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
'''

# %%
# Launching the ranks
# -------------------
# The launch's line says how many ranks ran. In the table, throughput counts
# the rows of all ranks together per second.
arguments = [backend, str(BATCH), str(WIDTH), str(DEPTH), str(ROUNDS)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
print(watched.disturbance)
rank0 = run[0]
names, times = list(rank0["configurations"]), rank0["times"]
step_seconds = {
    name: np.add(times[name]["compute"], times[name]["communication"])
    for name in names
}
labels = [compperf.tr("1 rank, 1 thread"), compperf.tr("2 ranks, whole batch")]
rows = []
for label, name in zip(labels, names, strict=True):
    ranks = rank0["configurations"][name]
    total = np.median(step_seconds[name])
    parts_ms = [np.median(times[name][part]) * 1e3 for part in times[name]]
    ms = [round(value, 1) for value in (total * 1e3, *parts_ms)]
    rows.append((label, *ms, round(ranks * BATCH / total)))
with parts():
    header = ["", compperf.tr("step (ms)"), compperf.tr("compute (ms)")]
    header += [compperf.tr("all-reduce (ms)"), compperf.tr("rows/s")]
print(table(header, rows))

# %%
# Do two ranks get through more rows?
# -----------------------------------
# Two ranks do twice the rows of one; they win if their time per row, half
# of their step, is shorter than one rank's. The verdict's line prints the
# claim "faster", its outcome and the ratio of the times per row, against
# the threshold 1 / 1.05: *yes* when the whole interval lies below it, *no*
# when it lies at or above it (the ranks fight for the same cores, or the
# all-reduce eats the gain), *unclear* when it straddles the threshold or
# the machine was disturbed. The efficiency, one rank's step time over two
# ranks', is ideally 1.
one, two = names
rounds = step_seconds[two] / step_seconds[one]
weak = compperf.Ratio.from_rounds(two, one, list(rounds))
per_row = compperf.Ratio.from_rounds(two, one, list(rounds / RANKS))
subject = compperf.tr("2 ranks vs 1 rank, time per row")
disturbed = watched.disturbance.disturbed
faster = compperf.conclude("faster", subject, per_row.low, per_row.high,
                           below=1 / 1.05, disturbed=disturbed,
                           value=per_row.estimate)  # fmt: skip
print(faster)
print(compperf.tr("weak scaling efficiency: {e:.0%}", e=1 / weak.estimate))

# %%
# The figure shows both steps, split into computation and all-reduce.
fig, ax = plt.subplots(figsize=(7, 2.8), layout="constrained")
compute = [np.median(times[name]["compute"]) * 1e3 for name in names]
comm = [np.median(times[name]["communication"]) * 1e3 for name in names]
work = compperf.tr("compute (forward and backward)")
ax.barh(labels, compute, color="C0", label=work)
reduce = compperf.tr("all-reduce")
ax.barh(labels, comm, left=compute, color="C3", label=reduce)
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time per step, rank 0 (ms)"))
ax.set_title(compperf.tr("One training step, {n} rows per rank", n=BATCH))
fig.legend(loc="outside upper center", ncols=2)
plt.show()

# %%
# Two machines
# ------------
# On a cluster, ``torchrun`` runs once on every machine (a *node*). Each
# launcher starts ``--nproc-per-node`` ranks (one per GPU, usually) and all
# launchers meet at a rendezvous endpoint, a host and port that every node
# can reach; ``--rdzv-id`` names the job, so that two jobs never meet. On a
# single machine, ``--standalone`` replaces these options with a rendezvous
# on a free local port, which is how this chapter runs during the docs
# build. For this page's script saved as ``ranks.py``, on two machines with
# one rank each, you run the command below on each machine.
#
# The launcher gives every rank its place in environment variables:
# ``RANK`` (0 to ``WORLD_SIZE - 1`` over all machines), ``WORLD_SIZE``,
# ``MASTER_ADDR`` and ``MASTER_PORT`` (where the process group's store
# listens), which ``init_process_group`` reads, and ``LOCAL_RANK`` (the rank
# on its own machine), which the script reads through
# ``dist.get_node_local_rank()`` to pick its GPU; gloo and NCCL
# pick their network interface from ``GLOO_SOCKET_IFNAME`` and
# ``NCCL_SOCKET_IFNAME``. The table after the command gives the values the
# ranks of this run saw.
host, port = "node0.example.org", 29400
print(
    f"torchrun --nnodes=2 --nproc-per-node=1 --rdzv-backend=c10d "
    f"--rdzv-endpoint={host}:{port} --rdzv-id=scaling-job "
    f"ranks.py results/ {' '.join(arguments)}"
)
print("RANK WORLD_SIZE LOCAL_RANK")
for report in run.ranks:
    print(
        f"{report['rank']:>4} {report['world']:>10} {report['local_rank']:>10}"
    )

# %%
# Summary
# -------
# * Weak scaling keeps each rank's batch and grows the total; it is judged
#   by the time per row against one rank on the same hardware.
# * Its computation per rank stays the same as ranks are added, so only the
#   all-reduce and the sharing of cores stand between it and the ideal.
# * On several machines, one ``torchrun`` per machine meets the others at a
#   rendezvous endpoint (``--nnodes``, ``--rdzv-endpoint``, ``--rdzv-id``);
#   ranks learn their place from ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``.
#
# Exercises
# ---------
# 1. Why is weak scaling the easier of the two to do well?
# 2. What would the efficiency be if the all-reduce cost nothing?
# 3. On two machines with four GPUs each, which ``RANK`` does the third GPU
#    of the second machine get?
#
# Answers
# -------
# 1. In weak scaling each rank's computation stays the same while the
#    all-reduce's bandwidth term grows only a little with the number of
#    ranks (the ring's ``2 (n - 1) / n``; its latency term grows with
#    ``n``); in strong scaling each rank's computation shrinks
#    while the gradient to reduce keeps its size, so communication takes a
#    growing share of the step. Here it takes this share of the weak step:
communication = np.median(times["2 ranks, whole batch"]["communication"])
share = communication / np.median(step_seconds["2 ranks, whole batch"])
print(compperf.tr("all-reduce share of the step: {s:.0%}", s=share))

# %%
# 2. Only the computation of the two ranks remains:
compute_only = np.median(times["2 ranks, whole batch"]["compute"])
single = np.median(step_seconds["1 rank, 1 thread"])
print(compperf.tr("weak scaling efficiency: {e:.0%}", e=single / compute_only))

# %%
# 3. At the rendezvous each launcher gets a node number from 0 (not
#    necessarily in the order you start them), and the ranks are numbered
#    node by node: ``RANK`` is the node's number times ``--nproc-per-node``
#    plus ``LOCAL_RANK``:
node, per_node, local_rank = 1, 4, 2
rank = node * per_node + local_rank
print(f"RANK = {node} * {per_node} + {local_rank} = {rank}")
