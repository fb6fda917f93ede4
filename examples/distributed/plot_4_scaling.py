"""
Scaling honestly
================

You time the same training step on one rank and on two, with one and two
threads per rank, for a fixed total batch (strong scaling) and for a fixed
batch per rank (weak scaling), find out from the numbers whether two ranks
on a small machine are faster and why, and see what the same job looks like
on two machines.

To run this example yourself, install PyTorch, then ``pip install
matplotlib numpy``, and compperf as :ref:`run-yourself` explains. It starts
its processes with PyTorch's launcher, ``torchrun``.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced the numbers below;
# the next one names the backend and how many CPU cores this process may
# use, which decides much of what follows.

import os

import matplotlib.pyplot as plt
import numpy as np

import compperf

RANKS = 2
BATCH, WIDTH, DEPTH, ROUNDS = 256, 512, 4, 6
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
if os.environ.get("COMPPERF_FAST") == "1":
    BATCH, WIDTH = 64, 256
# sphinx_gallery_end_ignore
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
cores = (
    len(os.sched_getaffinity(0))
    if hasattr(os, "sched_getaffinity")
    else os.cpu_count()
)
print(compperf.environment(device))
print(compperf.tr("backend: {b}, CPU cores here: {c}", b=backend, c=cores))

# %%
# Four ways to run one step
# -------------------------
# Strong scaling keeps the total batch (``BATCH`` rows) and splits it over
# more ranks; weak scaling keeps the batch of each rank and grows the total.
# One launch of two ranks runs four configurations in rounds, so that a
# busy moment of the machine hits all of them alike:
#
# * ``1 rank, 1 thread``: rank 0 alone trains on the whole batch while rank 1
#   waits at a barrier;
# * ``1 rank, 2 threads``: the same with two intra-op threads;
# * ``2 ranks, half batch`` (strong): each rank takes half of the batch, one
#   thread each, and the gradients are averaged with one ``all_reduce``;
# * ``2 ranks, whole batch`` (weak): each rank takes a whole batch of its own.
#
# Every step times its computation (forward and backward) and its
# communication (the all-reduce) apart.

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
results.mkdir(parents=True, exist_ok=True)
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


torch.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)])
model = model.to(device)
data = torch.randn(batch, width, device=device)
parameters = list(model.parameters())


def step(rows, ranks):
    """One training step on `rows` rows; (compute, communication) seconds."""
    wait()
    start = time.perf_counter()
    model(data[:rows]).square().mean().backward()
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


configurations = {  # name: (ranks taking part, threads per rank, rows per rank)
    "1 rank, 1 thread": (1, 1, batch),
    "1 rank, 2 threads": (1, 2, batch),
    "2 ranks, half batch": (2, 1, batch // 2),
    "2 ranks, whole batch": (2, 1, batch),
}
steps = 3
times = {name: {"compute": [], "communication": []} for name in configurations}
for round_number in range(rounds + 1):  # round 0 warms up
    for name, (ranks, threads, rows) in configurations.items():
        torch.set_num_threads(threads)
        dist.barrier()
        if rank < ranks:
            parts = [step(rows, ranks) for _ in range(steps)]
            if round_number:
                times[name]["compute"].append(sum(p[0] for p in parts) / steps)
                times[name]["communication"].append(sum(p[1] for p in parts) / steps)
report = {"rank": rank, "world": world, "local_rank": dist.get_node_local_rank(),
          "batch": batch, "configurations": configurations, "times": times}
(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
'''

# %%
# Launching the ranks
# -------------------
arguments = [backend, str(BATCH), str(WIDTH), str(DEPTH), str(ROUNDS)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
print(watched.disturbance)
rank0 = run[0]
disturbed = watched.disturbance.disturbed
names, times = list(rank0["configurations"]), rank0["times"]
step_seconds = {
    name: np.add(
        times[name]["compute"],
        times[name]["communication"],
    )
    for name in names
}

# %%
# Step times and throughput
# -------------------------
# The launch's line says how many ranks ran. In the table, throughput counts
# the rows of all ranks together per second. The communication column is the
# all-reduce after backward; the two one-rank configurations have none.
print(f"{'':>22} {'step':>9} {'compute':>9} {'comm.':>9} {'rows/s':>9}")
for name in names:
    ranks, threads, rows = rank0["configurations"][name]
    compute = np.median(times[name]["compute"])
    communication = np.median(times[name]["communication"])
    total = np.median(step_seconds[name])
    print(
        f"{name:>22} {total * 1e3:>7.1f}ms {compute * 1e3:>7.1f}ms "
        f"{communication * 1e3:>7.1f}ms {ranks * rows / total:>9.0f}"
    )


def ratio(a, b):
    return compperf.Ratio.from_rounds(
        a, b, list(step_seconds[a] / step_seconds[b])
    )


strong = ratio("2 ranks, half batch", "1 rank, 1 thread")
threads = ratio("1 rank, 2 threads", "1 rank, 1 thread")
same_cores = ratio("2 ranks, half batch", "1 rank, 2 threads")
weak = ratio("2 ranks, whole batch", "1 rank, 1 thread")


def faster_than(subject, ratio):
    """compperf's verdict on a time ratio: faster below 1 / 1.05."""
    return compperf.conclude("faster", subject, ratio.low, ratio.high,
                             below=1 / 1.05, disturbed=disturbed,
                             value=ratio.estimate)  # fmt: skip


# %%
# Are two ranks faster?
# ---------------------
# The fair comparison gives both sides the same cores: two ranks with one
# thread each against one rank with two threads. Two more verdicts ask the
# plain strong-scaling question, two ranks against one rank with one thread
# (a time ratio of 0.5 would be the ideal speedup of 2), and whether a
# second thread helps one rank. Each line prints the claim "faster", its
# outcome, the measured time ratio and its interval, against the threshold
# 1 / 1.05:
#
# * *yes*: the whole interval lies below it: the first side is faster here.
# * *no*: the whole interval lies at or above it: not faster. Two ranks
#   share the same cores, so they compute no faster than two threads do,
#   and they add an all-reduce on top. Threads meet at the end of every
#   operation, which waits for the slower of the two, and on a machine
#   whose cores are busy with other work one of them is often not running.
# * *unclear*: the interval straddles the threshold, or the machine was
#   disturbed while the rounds ran; this run does not decide.
#
# The last line gives the all-reduce's share of the two ranks' step.
faster = faster_than(compperf.tr("2 ranks vs 1 rank, 2 threads"), same_cores)
print(faster)
split = faster_than(compperf.tr("2 ranks vs 1 rank, 1 thread"), strong)
print(split)
subject = compperf.tr("2 threads vs 1 thread, 1 rank")
more_threads = faster_than(subject, threads)
print(more_threads)
communication = np.median(times["2 ranks, half batch"]["communication"])
share = communication / np.median(step_seconds["2 ranks, half batch"])
print(compperf.tr("all-reduce share of the step: {s:.0%}", s=share))

# %%
# Weak scaling keeps each rank's work; ideal is a ratio of 1 (twice the rows
# in the same time). The efficiency is one rank's time over two ranks' time;
# 1 is ideal. The figure below shows each configuration's step, split into
# computation and all-reduce.
print(compperf.tr("weak scaling efficiency: {e:.0%}", e=1 / weak.estimate))

fig, ax = plt.subplots(figsize=(7, 3.8), layout="constrained")
compute = [np.median(times[name]["compute"]) * 1e3 for name in names]
comm = [np.median(times[name]["communication"]) * 1e3 for name in names]
label = {  # the configurations' names in the reader's language
    "1 rank, 1 thread": compperf.tr("1 rank, 1 thread"),
    "1 rank, 2 threads": compperf.tr("1 rank, 2 threads"),
    "2 ranks, half batch": compperf.tr("2 ranks, half batch"),
    "2 ranks, whole batch": compperf.tr("2 ranks, whole batch"),
}
rows = [label[name] for name in names]
ax.barh(
    rows,
    compute,
    color="C0",
    label=compperf.tr("compute (forward and backward)"),
)
ax.barh(rows, comm, left=compute, color="C3", label=compperf.tr("all-reduce"))
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time per step, rank 0 (ms)"))
ax.set_title(
    compperf.tr("One training step, {n} rows in total or per rank", n=BATCH)
)
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
# The launcher gives every rank its place in environment variables, which
# ``init_process_group`` reads: ``RANK`` (0 to ``WORLD_SIZE - 1`` over all
# machines), ``LOCAL_RANK`` (the rank on its own machine, which picks its
# GPU), ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, and ``MASTER_ADDR`` and
# ``MASTER_PORT`` (where the process group's store listens); gloo and NCCL
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
# * Strong scaling splits a fixed batch over more ranks; weak scaling keeps
#   each rank's batch. Both are judged against one rank on the same
#   hardware, from step times measured in rounds.
# * Ranks on one CPU share its cores: two ranks with one thread each have no
#   more compute than one rank with two threads, and they pay for the
#   all-reduce on top.
# * Data parallelism pays when each rank brings hardware of its own (a GPU,
#   a machine) and the communication is small against the computation.
# * On several machines, one ``torchrun`` per machine meets the others at a
#   rendezvous endpoint (``--nnodes``, ``--rdzv-endpoint``, ``--rdzv-id``);
#   ranks learn their place from ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``.
#
# Exercises
# ---------
# 1. From the table above, what would the strong-scaling time of two ranks
#    be if the all-reduce cost nothing?
# 2. What bandwidth does the all-reduce of this model's gradients reach?
#    Compare it with the ``β`` of the previous page,
#    :doc:`/auto_examples/distributed/plot_3_communication_costs`.
# 3. Why is weak scaling the easier of the two to do well?
#
# Answers
# -------
# 1. Only the computation remains; compare it with the step of one rank with
#    one thread:
compute_only = np.median(times["2 ranks, half batch"]["compute"])
single = np.median(step_seconds["1 rank, 1 thread"])
print(compperf.tr("2 ranks, computation only: {t:time}", t=compute_only))
print(compperf.tr("1 rank, 1 thread, whole step: {t:time}", t=single))

# %%
# 2. The gradients are ``DEPTH`` layers of ``WIDTH * WIDTH + WIDTH`` float32
#    values; for two ranks the ring model is ``2 α + S / β``, so ``S`` over
#    the measured time (the all-reduce of two ranks on half batches, in the
#    table above) is a lower bound of the link's bandwidth ``β``:
gradient_bytes = DEPTH * (WIDTH * WIDTH + WIDTH) * 4
bandwidth = gradient_bytes / communication
print(compperf.tr("gradients: {b:bytes}", b=gradient_bytes))
print(compperf.tr("effective bandwidth: {v:.3g} GB/s", v=bandwidth / 1e9))

# %%
# 3. In weak scaling each rank's computation stays the same while the
#    all-reduce grows only a little with the number of ranks (the ring's
#    ``2 (n - 1) / n``); in strong scaling each rank's computation shrinks
#    with more ranks while the gradient to reduce keeps its size, so
#    communication takes a growing share of the step.
