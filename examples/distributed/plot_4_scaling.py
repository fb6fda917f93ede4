"""
Scaling honestly
================

You time the same training step on one rank and on two, with one and two
threads per rank, for a fixed total batch (strong scaling), and find out
from the numbers whether two ranks on a small machine are faster and why.

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
# Three ways to run one step
# --------------------------
# Strong scaling keeps the total batch (``BATCH`` rows) and splits it over
# more ranks. One launch of two ranks runs three configurations in rounds,
# so that a busy moment of the machine hits all of them alike:
#
# * ``1 rank, 1 thread``: rank 0 alone trains on the whole batch while rank 1
#   waits at a barrier;
# * ``1 rank, 2 threads``: the same with two intra-op threads;
# * ``2 ranks, half batch``: each rank takes half of the batch, one thread
#   each, and the gradients are averaged with one ``all_reduce``.
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
report = {"rank": rank, "configurations": configurations, "times": times}
(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
'''

# %%
# Launching the ranks
# -------------------
# The launch's line says how many ranks ran. In the table, throughput counts
# the rows of all ranks together per second. The communication column is the
# all-reduce after backward; the two one-rank configurations have none.
arguments = [backend, str(BATCH), str(WIDTH), str(DEPTH), str(ROUNDS)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
print(watched.disturbance)
rank0 = run[0]
disturbed = watched.disturbance.disturbed
names, times = list(rank0["configurations"]), rank0["times"]
step_seconds = {
    name: np.add(times[name]["compute"], times[name]["communication"])
    for name in names
}
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


def faster_than(subject, a, b):
    """compperf's verdict on the step-time ratio a / b: faster below 1/1.05."""
    ratio = compperf.Ratio.from_rounds(a, b, step_seconds[a] / step_seconds[b])
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
# outcome, the time ratio and its interval, against the threshold 1 / 1.05:
# *yes* when the whole interval lies below it, *no* when it lies at or above
# it, *unclear* when it straddles the threshold or the machine was
# disturbed. Two ranks share the same cores as two threads, so on a quiet
# machine they compute no faster and add an all-reduce on top. But threads
# wait for the slower of the two at the end of every operation, and on a
# busy machine one of them is often not running: there two ranks can beat
# two threads. The last line gives the all-reduce's share of the two ranks'
# step.
two, one, threads = names[2], names[0], names[1]
subject = compperf.tr("2 ranks vs 1 rank, 2 threads")
faster = faster_than(subject, two, threads)
print(faster)
split = faster_than(compperf.tr("2 ranks vs 1 rank, 1 thread"), two, one)
print(split)
subject = compperf.tr("2 threads vs 1 thread, 1 rank")
more_threads = faster_than(subject, threads, one)
print(more_threads)
communication = np.median(times["2 ranks, half batch"]["communication"])
share = communication / np.median(step_seconds["2 ranks, half batch"])
print(compperf.tr("all-reduce share of the step: {s:.0%}", s=share))

# %%
# The figure shows each configuration's step, split into computation and
# all-reduce.
fig, ax = plt.subplots(figsize=(7, 3.2), layout="constrained")
compute = [np.median(times[name]["compute"]) * 1e3 for name in names]
comm = [np.median(times[name]["communication"]) * 1e3 for name in names]
# the configurations' names in the reader's language
rows = [compperf.tr("1 rank, 1 thread"), compperf.tr("1 rank, 2 threads")]
rows.append(compperf.tr("2 ranks, half batch"))
ax.barh(
    rows,
    compute,
    color="C0",
    label=compperf.tr("compute (forward and backward)"),
)
ax.barh(rows, comm, left=compute, color="C3", label=compperf.tr("all-reduce"))
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time per step, rank 0 (ms)"))
ax.set_title(compperf.tr("One training step, {n} rows in total", n=BATCH))
fig.legend(loc="outside upper center", ncols=2)
plt.show()

# %%
# Summary
# -------
# * Strong scaling splits a fixed batch over more ranks; it is judged
#   against one rank on the same hardware, from step times measured in
#   rounds.
# * Ranks on one CPU share its cores: two ranks with one thread each have no
#   more compute than one rank with two threads, and they pay for the
#   all-reduce on top.
# * Data parallelism pays when each rank brings hardware of its own (a GPU,
#   a machine) and the communication is small against the computation.
#   :doc:`/auto_examples/distributed/plot_4b_weak_scaling_and_nodes` keeps
#   each rank's batch instead, and runs the job on two machines.
#
# Exercises
# ---------
# 1. From the table above, what would the strong-scaling time of two ranks
#    be if the all-reduce cost nothing?
# 2. What bandwidth does the all-reduce of this model's gradients reach?
#    Compare it with the ``β`` that
#    :doc:`/auto_examples/distributed/plot_3_communication_costs` measures.
# 3. What speedup did two ranks reach over one rank with one thread, and
#    what would be ideal?
#
# Answers
# -------
# 1. Only the computation remains; compare it with the step of one rank with
#    one thread in the table above:
compute_only = np.median(times["2 ranks, half batch"]["compute"])
print(compperf.tr("2 ranks, computation only: {t:time}", t=compute_only))

# %%
# 2. The gradients are ``DEPTH`` layers of ``WIDTH * WIDTH + WIDTH`` float32
#    values; for two ranks the ring model is ``2 α + S / β``, so ``S`` over
#    the measured time (the all-reduce of two ranks on half batches, in the
#    table above) is a lower bound of the link's bandwidth ``β``:
b = DEPTH * (WIDTH * WIDTH + WIDTH) * 4  # bytes
v = b / communication / 1e9  # GB/s
print(compperf.tr("gradients: {b:bytes}, bandwidth: {v:.3g} GB/s", b=b, v=v))

# %%
# 3. The speedup is one rank's step time over two ranks' step time, the
#    inverse of the time ratio of the second verdict; ideal is the number
#    of ranks:
speedup = 1 / split.value
print(compperf.tr("speedup: {s:.2f}, ideal: {i}", s=speedup, i=RANKS))
