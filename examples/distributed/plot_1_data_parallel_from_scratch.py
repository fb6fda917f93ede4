"""
Data parallelism from scratch
=============================

You split a batch between two processes, keep a copy of the model in each,
add up their gradients with ``all_reduce`` and take the same step everywhere;
then you check that this gives the parameters that one process gets from the
whole batch, and see what goes wrong if the gradients are summed, not averaged.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. It starts its
processes with PyTorch's launcher, ``torchrun``; nothing else is needed.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced the numbers below.
# The two processes (the *ranks*) talk through ``torch.distributed``: with the
# NCCL backend when there is a GPU for each rank, else with gloo on the CPU.

import matplotlib.pyplot as plt
import torch

import compperf

RANKS = 2
STEPS = 40
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
print(compperf.environment(device))
print(compperf.tr("ranks: {n}, backend: {b}", n=RANKS, b=backend))

# %%
# What every rank runs
# --------------------
# Each rank is a separate Python process, so its code lives in a script of its
# own: the page writes it to a file and PyTorch's launcher starts it, as
# ``python -m torch.distributed.run --standalone --nproc-per-node=2 ranks.py``
# (that is ``torchrun``). The launcher gives each rank its number and the
# address of a meeting point; ``init_process_group`` connects them.
#
# Every rank builds the same model from the same seed, so the replicas start
# equal. It then trains four times for the same number of steps:
#
# * ``whole``: alone, on the whole batch (what one process would do);
# * ``averaged``: on its half of the batch, with gradients summed by
#   ``all_reduce`` and divided by the number of ranks;
# * ``summed``: the same without the division;
# * ``twice_lr``: alone on the whole batch, with twice the learning rate.
#
# It writes the parameters and the losses to ``rank<r>.json`` in the folder it
# gets as first argument; the page reads those files.

RANK_CODE = """
import json
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

results, backend, steps = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    device = torch.device("cuda", dist.get_node_local_rank())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")

# The same data on every rank; each rank trains on its own rows.
generator = torch.Generator().manual_seed(1)
X = torch.randn(64, 16, generator=generator)
y = X @ torch.randn(16, 1, generator=generator) + 0.1 * torch.randn(64, 1, generator=generator)
X, y = X.to(device), y.to(device)
mine = slice(rank * len(X) // world, (rank + 1) * len(X) // world)


def make_model():
    torch.manual_seed(0)  # the same initial parameters on every rank
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)


communication = []


def all_reduce_gradients(model, average):
    start = time.perf_counter()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)  # the sum over all ranks, on every rank
        if average:
            parameter.grad /= world
    communication.append(time.perf_counter() - start)


def train(rows, lr=0.1, average=None):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[rows]), y[rows])
        loss.backward()
        if average is not None:
            all_reduce_gradients(model, average)
        optimizer.step()
        losses.append(loss.item())
    parameters = torch.cat([p.detach().flatten() for p in model.parameters()])
    return {"parameters": parameters.cpu().tolist(), "losses": losses}


everything = slice(None)
report = {
    "rank": rank,
    "world": world,
    "whole": train(everything),
    "averaged": train(mine, average=True),
    "summed": train(mine, average=False),
    "twice_lr": train(everything, lr=0.2),
    "all_reduce_seconds": communication,
}
(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
"""

# %%
# Launching the ranks
# -------------------
# ``compperf.run_ranks`` writes the script into a new temporary folder, runs
# the launcher with a timeout, and returns what each rank wrote; if a rank
# fails, it raises an error with that rank's last lines of output.

with compperf.watch() as watched:
    run = compperf.run_ranks(
        RANK_CODE, RANKS, args=[backend, str(STEPS)], timeout=120
    )
print(run)
print(watched.disturbance)
rank0, rank1 = run[0], run[1]


def parameters(report, name):
    return torch.tensor(report[name]["parameters"])


# %%
# The replicas stay equal
# -----------------------
# Both ranks applied the same averaged gradient to the same parameters, so
# their replicas must be equal after every step: not close, equal. The line
# below counts the parameters that differ between rank 0 and rank 1.
replica0 = parameters(rank0, "averaged")
replica1 = parameters(rank1, "averaged")
differing = int((replica0 != replica1).sum())
total = replica0.numel()
print(compperf.tr("differing: {n} of {m} parameters", n=differing, m=total))

# %%
# Two half batches, one whole batch
# ---------------------------------
# The loss is the mean over the rows of a batch, so the gradient of the whole
# batch is the mean of the two half batches' gradients. Averaged over the
# ranks, the distributed step is the step of one process on the whole batch.
# Floating-point sums in another order round differently, so you compare with
# a tolerance: the largest difference of any parameter must stay below
# ``TOLERANCE`` (float32 keeps about seven significant digits).
#
# Each verdict prints the claim "same parameters", what it compares, its
# outcome and the largest difference, against the tolerance. The first
# compares the averaged run with one process on the whole batch: *yes* means
# that two ranks on half batches took the whole batch's steps; *no*, that
# some parameter moved further apart than rounding explains.
TOLERANCE = 1e-5


def largest_difference(a, b):
    return float((parameters(rank0, a) - parameters(rank0, b)).abs().max())


checks = {
    "averaged": largest_difference("averaged", "whole"),
    "summed": largest_difference("summed", "whole"),
    "summed_vs_twice_lr": largest_difference("summed", "twice_lr"),
}
subjects = {
    "averaged": compperf.tr("averaged gradients vs whole batch"),
    "summed": compperf.tr("summed gradients vs whole batch"),
    "summed_vs_twice_lr": compperf.tr("summed vs twice the learning rate"),
}
same = {
    name: compperf.conclude(
        "same parameters", subjects[name], value, value, below=TOLERANCE
    )
    for name, value in checks.items()
}
print(same["averaged"])

# %%
# Summed, not averaged
# --------------------
# Without the division, every rank steps along the *sum* of the two
# gradients: twice the mean, as one process with twice the learning rate
# would. Against the whole batch, *no* means that summing moved the
# parameters away from the whole batch's; against twice the learning rate,
# *yes* means that it went exactly there. Other outcomes say that this run's
# summed gradients behaved otherwise, by the differences printed.
print(same["summed"])
print(same["summed_vs_twice_lr"])

# %%
# The losses step by step
# -----------------------
# Each rank saw the loss of its own half; their mean is the loss of the whole
# batch. The averaged run lies on the single process's curve; the summed one
# follows the curve of twice the learning rate.
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
whole_losses = rank0["whole"]["losses"]
for name, label, style in (
    ("whole", compperf.tr("one process, whole batch"), "-"),
    ("averaged", compperf.tr("2 ranks, averaged gradients"), "--"),
    ("summed", compperf.tr("2 ranks, summed gradients"), "-"),
    ("twice_lr", compperf.tr("one process, twice the learning rate"), ":"),
):
    both = [rank0[name]["losses"], rank1[name]["losses"]]
    ax.plot(torch.tensor(both).mean(0), style, label=label, linewidth=2)
ax.set_yscale("log")
ax.set_xlabel(compperf.tr("step"))
ax.set_ylabel(compperf.tr("training loss (mean squared error)"))
ax.set_title(compperf.tr("Data parallelism by hand, {b}", b=backend))
fig.legend(loc="outside upper center", ncols=2)
plt.show()

# %%
# What the communication costs
# ----------------------------
# Each rank timed its four ``all_reduce`` calls per step (one per parameter
# tensor) in the averaged and the summed runs; the line gives rank 0's timed
# steps and the median time of one step's calls. The model is tiny, so that
# is mostly the calls' fixed cost:
# :doc:`/auto_examples/distributed/plot_3_communication_costs` measures how it
# grows with size.
seconds = torch.tensor(rank0["all_reduce_seconds"])
steps, per_step = len(seconds), float(seconds.median())
print(compperf.tr("steps: {n}, all_reduce: {t:time}", n=steps, t=per_step))

# %%
# Summary
# -------
# * Data parallelism keeps one replica of the model per rank, gives each rank
#   its share of the batch, and makes the replicas take the same step by
#   reducing the gradients over the ranks.
# * ``dist.all_reduce`` leaves the *sum* on every rank; divide it by the number
#   of ranks, and the step equals one process's step on the whole batch, to
#   rounding.
# * Summed gradients are the whole-batch gradient times the number of ranks:
#   the same as raising the learning rate by that factor.
# * Each rank is a process started by ``torchrun``; its code lives in a file,
#   and it hands its results back as a file.
#
# Exercises
# ---------
# 1. Why must every rank build the model from the same seed? What happens if
#    only rank 0 sets it?
# 2. Summed gradients over ``n`` ranks act like a learning rate ``n`` times
#    larger. Train one process with the learning rate times 1, 2, 4, 8 and 16:
#    from how many ranks on would summing break this training?
# 3. Split the 64 rows unevenly (40 and 24). Is averaging the two gradients
#    still the whole-batch gradient? What would be?
#
# Answers
# -------
# 1. Without the same seed the replicas start from different parameters; the
#    averaged gradient then moves two different models, and they never agree.
#    Broadcasting rank 0's parameters once at the start
#    (``dist.broadcast(p, src=0)`` for each parameter) is the other fix, and
#    ``DistributedDataParallel`` does exactly that.
# 2. Training one process with the learning rate times ``n`` on this page's
#    data and model, for the same number of steps; each line gives the loss
#    after the last step:
from torch import nn

generator = torch.Generator().manual_seed(1)
X = torch.randn(64, 16, generator=generator)
y = X @ torch.randn(16, 1, generator=generator) + 0.1 * torch.randn(
    64, 1, generator=generator
)
for n in (1, 2, 4, 8, 16):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 * n)
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X), y)
        loss.backward()
        optimizer.step()
    print(compperf.tr("learning rate x {n}: loss {v:.3g}", n=n, v=loss.item()))

# %%
# A loss that grows, or becomes ``nan``, means the step is too large: where
# that starts above, summing over that many ranks breaks the training, while
# averaging works for any number of ranks.
#
# 3. No. With rows ``n_0`` and ``n_1``, the whole-batch gradient is
#    ``(n_0 g_0 + n_1 g_1) / (n_0 + n_1)``: each rank's gradient weighted by
#    its rows. A plain average gives the smaller share too much weight. Each
#    rank can multiply its gradient by its row count before ``all_reduce``,
#    and every rank then divides by the total row count.
