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
# the second how many CPU cores this process may use, which decides much of
# what follows.

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
print(compperf.tr("{ranks} ranks, backend {backend}; CPU cores for this process: {cores}",
                  ranks=RANKS, backend=backend, cores=cores))  # fmt: skip

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
names = list(rank0["configurations"])
step_seconds = {
    name: np.add(
        rank0["times"][name]["compute"], rank0["times"][name]["communication"]
    )
    for name in names
}

# %%
# Step times and throughput
# -------------------------
# Throughput counts the rows of all ranks together per second. The
# communication column is the all-reduce after backward; the two one-rank
# configurations have none.
print(f"{'':>22} {'step':>9} {'compute':>9} {'comm.':>9} {'rows/s':>9}")
for name in names:
    ranks, threads, rows = rank0["configurations"][name]
    compute = np.median(rank0["times"][name]["compute"])
    communication = np.median(rank0["times"][name]["communication"])
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
for label, value in (
    (compperf.tr("strong scaling, 2 ranks over 1 rank"), strong),
    (compperf.tr("2 threads over 1 thread, 1 rank"), threads),
    (compperf.tr("2 ranks over 1 rank with 2 threads"), same_cores),
    (compperf.tr("weak scaling, 2 ranks over 1 rank"), weak),
):
    print(compperf.tr("{label}: time ratio {ratio}", label=label, ratio=value))

# %%
# Are two ranks faster?
# ---------------------
# The fair comparison gives both sides the same cores: two ranks with one
# thread each against one rank with two threads. "Faster" needs the whole
# interval of the time ratio below 1 / 1.05.
faster = compperf.conclude("faster", "2 ranks vs 1 rank, 2 threads", same_cores.low,
                           same_cores.high, below=1 / 1.05, disturbed=disturbed)  # fmt: skip
communication = np.median(
    rank0["times"]["2 ranks, half batch"]["communication"]
)
share = communication / np.median(step_seconds["2 ranks, half batch"])
if faster.yes:
    compperf.say(
        "Two ranks take {ratio:.2f}× the time of one rank with two threads: "
        "faster here, although {share:.0%} of their step is the all-reduce.",
        ratio=same_cores.estimate,
        share=share,
    )
elif faster.no:
    compperf.say(
        "Two ranks take {ratio:.2f}× the time of one rank with two threads: not "
        "faster. They share the same {cores} cores, so they compute no faster "
        "than two threads do, and they add an all-reduce that is {share:.0%} of "
        "their step.",
        ratio=same_cores.estimate,
        cores=cores,
        share=share,
    )
else:
    compperf.say(
        "Two ranks take {ratio:.2f}× the time of one rank with two threads, but "
        "the interval ({low:.2f}–{high:.2f}×) does not decide: unclear here. "
        "The all-reduce is {share:.0%} of their step.",
        ratio=same_cores.estimate,
        low=same_cores.low,
        high=same_cores.high,
        share=share,
    )

# %%
# Against one rank with one thread, the plain strong-scaling question: does
# splitting the batch over two ranks make the step faster?
split = compperf.conclude("faster", "2 ranks vs 1 rank, 1 thread", strong.low,
                          strong.high, below=1 / 1.05, disturbed=disturbed)  # fmt: skip
if split.yes:
    compperf.say(
        "Splitting the batch over two ranks makes the step {speedup:.2f}× faster "
        "than one rank with one thread (2× would be ideal).",
        speedup=1 / strong.estimate,
    )
elif split.no:
    compperf.say(
        "Splitting the batch over two ranks does not make the step faster than "
        "one rank with one thread (time ratio {ratio:.2f}×): each rank computes "
        "half, but waits for a core and for the all-reduce.",
        ratio=strong.estimate,
    )
else:
    compperf.say(
        "Two ranks against one rank with one thread: time ratio {ratio:.2f}×, "
        "interval {low:.2f}–{high:.2f}×, which does not decide: unclear here.",
        ratio=strong.estimate,
        low=strong.low,
        high=strong.high,
    )

# %%
# Threads are the other way to use the second core. Whether they help one
# rank here:
more_threads = compperf.conclude("faster", "2 threads vs 1 thread, 1 rank", threads.low,
                                 threads.high, below=1 / 1.05, disturbed=disturbed)  # fmt: skip
if more_threads.yes:
    compperf.say(
        "Two threads take {ratio:.2f}× the time of one thread for one rank: the "
        "second core helps.",
        ratio=threads.estimate,
    )
elif more_threads.no:
    compperf.say(
        "Two threads take {ratio:.2f}× the time of one thread for one rank: no "
        "help here. The threads meet at the end of every operation, so each "
        "operation waits for the slower of the two, and on a machine whose "
        "cores are busy with other work one of them is often not running.",
        ratio=threads.estimate,
    )
else:
    compperf.say(
        "Two threads take {ratio:.2f}× the time of one thread for one rank, but "
        "the interval ({low:.2f}–{high:.2f}×) does not decide: unclear here.",
        ratio=threads.estimate,
        low=threads.low,
        high=threads.high,
    )

# %%
# Weak scaling keeps each rank's work; ideal is a ratio of 1 (twice the rows
# in the same time). The efficiency is one rank's time over two ranks' time.
compperf.say(
    "Weak scaling efficiency with 2 ranks: {efficiency:.0%} (1 is ideal); strong "
    "scaling speedup over one rank with one thread: {speedup:.2f}× (2 is ideal).",
    efficiency=1 / weak.estimate,
    speedup=1 / strong.estimate,
)

fig, ax = plt.subplots(figsize=(7, 3.8), layout="constrained")
compute = [np.median(rank0["times"][name]["compute"]) * 1e3 for name in names]
comm = [
    np.median(rank0["times"][name]["communication"]) * 1e3 for name in names
]
# The configurations' names in the reader's language, for the figure's axis.
label = {
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
ax.set_title(compperf.tr("One training step, {batch} rows in total or per rank",
                         batch=BATCH))  # fmt: skip
fig.legend(loc="outside upper center", ncols=2)
plt.show()

# %%
# Two machines
# ------------
# On a cluster, ``torchrun`` runs once on every machine (a *node*). Each
# launcher starts ``--nproc-per-node`` ranks (one per GPU, usually) and all
# launchers meet at a rendezvous endpoint, a host and port that every node
# can reach; ``--rdzv-id`` names the job, so that two jobs never meet. For
# this page's script saved as ``ranks.py``, on two machines with one rank
# each, the commands are:
host, port = "node0.example.org", 29400
for node in (0, 1):
    print(compperf.tr("# on machine {node}:", node=node))
    print(
        f"torchrun --nnodes=2 --nproc-per-node=1 --rdzv-backend=c10d "
        f"--rdzv-endpoint={host}:{port} --rdzv-id=scaling-job "
        f"ranks.py results/ {' '.join(arguments)}"
    )

# %%
# The launcher gives every rank its place in environment variables, which
# ``init_process_group`` reads: ``RANK`` (0 to ``WORLD_SIZE - 1`` over all
# machines), ``LOCAL_RANK`` (the rank on its own machine, which picks its
# GPU), ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, and ``MASTER_ADDR`` and
# ``MASTER_PORT`` (where the process group's store listens). The network
# interface gloo and NCCL use can be chosen with ``GLOO_SOCKET_IFNAME`` and
# ``NCCL_SOCKET_IFNAME``. The ranks of this run saw:
for report in run.ranks:
    print(
        compperf.tr(
            "rank {rank} of {world}, local rank {local}",
            rank=report["rank"],
            world=report["world"],
            local=report["local_rank"],
        )
    )

# %%
# On a single machine, ``--standalone`` replaces the rendezvous options: the
# launcher runs its own rendezvous on a free local port, which is how this
# chapter runs during the docs build without colliding with other builds.
#
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
# 1. Only the computation remains; compare it with one rank:
compute_only = np.median(rank0["times"]["2 ranks, half batch"]["compute"])
print(
    compperf.tr(
        "2 ranks, half batch, computation only: {compute}; 1 rank, 1 thread: {single}",
        compute=compperf.format_time(float(compute_only)),
        single=compperf.format_time(
            float(np.median(step_seconds["1 rank, 1 thread"]))
        ),
    )
)

# %%
# 2. The gradients are ``DEPTH`` layers of ``WIDTH * WIDTH + WIDTH`` float32
#    values; for two ranks the ring model is ``2 α + S / β``, so ``S`` over
#    the measured time is a lower bound of the link's bandwidth ``β``:
gradient_bytes = DEPTH * (WIDTH * WIDTH + WIDTH) * 4
compperf.say(
    "The all-reduce of {mb:.1f} MB took {measured}: an effective bandwidth of "
    "{bandwidth:.2f} GB/s, to compare with the previous page's β.",
    mb=gradient_bytes / 1e6,
    measured=compperf.format_time(float(communication)),
    bandwidth=gradient_bytes / communication / 1e9,
)

# %%
# 3. In weak scaling each rank's computation stays the same while the
#    all-reduce grows only a little with the number of ranks (the ring's
#    ``2 (n - 1) / n``); in strong scaling each rank's computation shrinks
#    with more ranks while the gradient to reduce keeps its size, so
#    communication takes a growing share of the step.
