"""
Data parallelism from scratch
=============================

You split a batch between two processes, each with a copy of the model, add
up their gradients with ``all_reduce`` and take the same step everywhere; you
check that this is one process's step on the whole batch, and what summing,
not averaging, does.

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

RANKS, STEPS = 2, 40
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
print(compperf.environment(device))
print(compperf.tr("ranks: {n}, backend: {b}", n=RANKS, b=backend))

# %%
# What every rank runs
# --------------------
# Each rank is a Python process of its own: the page writes its code to a file
# and PyTorch's launcher ``torchrun`` starts it, as
# ``python -m torch.distributed.run --standalone --nproc-per-node=2 ranks.py``.
# The launcher gives each rank its number and a meeting point;
# ``init_process_group`` connects them. Every rank builds the model from the
# same seed, so the replicas start equal, and trains it four times for the same
# number of steps, then writes parameters and losses to ``rank<r>.json``:
#
# * ``whole``: alone, on the whole batch;
# * ``averaged``: on its half, gradients summed by ``all_reduce`` and divided by
#   the number of ranks;
# * ``summed``: the same without the division;
# * ``twice_lr``: alone on the whole batch, with twice the learning rate.

RANK_CODE = """
import json, sys, time
from pathlib import Path
import torch
import torch.distributed as dist
from torch import nn

results, backend, steps = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
device = torch.device("cuda", dist.get_node_local_rank()) if backend == "nccl" else "cpu"
if backend == "nccl":
    torch.cuda.set_device(device)
# The same data on every rank; each rank trains on its own rows.
generator = torch.Generator().manual_seed(1)
X = torch.randn(64, 16, generator=generator)
y = X @ torch.randn(16, 1, generator=generator) + 0.1 * torch.randn(64, 1, generator=generator)
X, y = X.to(device), y.to(device)
mine = slice(rank * len(X) // world, (rank + 1) * len(X) // world)
communication = []  # the seconds of each step's all_reduce calls

def make_model():
    torch.manual_seed(0)  # the same initial parameters on every rank
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)

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
report = {"rank": rank, "world": world, "whole": train(everything),
          "averaged": train(mine, average=True), "summed": train(mine, average=False),
          "twice_lr": train(everything, lr=0.2), "all_reduce_seconds": communication}
(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
"""

# %%
# Launching the ranks
# -------------------
# ``compperf.run_ranks`` runs the script under ``torchrun`` with a timeout,
# in a new temporary folder, and returns what each rank wrote. Both ranks
# applied the same averaged gradient to the same parameters, so their replicas
# must be equal, not just close: the last line counts the parameters that
# differ between the two ranks.

arguments = [backend, str(STEPS)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=120)
print(run)
print(watched.disturbance)
rank0, rank1 = run[0], run[1]


def parameters(report, name):
    return torch.tensor(report[name]["parameters"])


def largest_difference(a, b):
    return float((parameters(rank0, a) - parameters(rank0, b)).abs().max())


replica0 = parameters(rank0, "averaged")
replica1 = parameters(rank1, "averaged")
differing, total = int((replica0 != replica1).sum()), replica0.numel()
print(compperf.tr("differing: {n} of {m} parameters", n=differing, m=total))

# %%
# Two half batches, one whole batch
# ---------------------------------
# The loss is the mean over a batch's rows, so the whole batch's gradient is
# the mean of the two halves' gradients: averaged over the ranks, the
# distributed step is one process's step on the whole batch. Sums in another
# order round differently, so each verdict compares the largest difference of
# any parameter with ``TOLERANCE`` (float32 keeps about seven digits).
#
# Without the division every rank steps along the *sum*, twice the mean, as one
# process with twice the learning rate would. *yes* for the averaged run
# against the whole batch means two ranks took the whole batch's steps; for
# the summed run, *no* against the whole batch and *yes* against twice the
# learning rate mean that summing went exactly there. Other outcomes say this
# run behaved otherwise, by the differences printed.
TOLERANCE = 1e-5
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
for verdict in same.values():
    print(verdict)

# %%
# The losses step by step
# -----------------------
# Each rank saw the loss of its half; their mean is the whole batch's loss. The
# averaged run lies on the single process's curve, the summed one on the curve
# of twice the learning rate.
fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
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
# tensor) in the averaged and summed runs; the line gives rank 0's timed steps
# and the median of a step's calls, mostly their fixed cost for so tiny a
# model: :doc:`/auto_examples/distributed/plot_3_communication_costs` measures
# how it grows with size.
seconds = torch.tensor(rank0["all_reduce_seconds"])
steps, per_step = len(seconds), float(seconds.median())
print(compperf.tr("steps: {n}, all_reduce: {t:time}", n=steps, t=per_step))

# %%
# Summary
# -------
# * Data parallelism keeps a replica of the model per rank, gives each rank its
#   share of the batch, and reduces the gradients so that all take the same step.
# * ``dist.all_reduce`` leaves the *sum* on every rank; divided by the number of
#   ranks, it gives one process's step on the whole batch, to rounding.
# * Summing over ``n`` ranks acts like an ``n`` times larger learning rate.
# * Each rank is a process started by ``torchrun``, its code and its results files.
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
#    (``dist.broadcast(p, src=0)`` for each parameter) is the other fix;
#    ``DistributedDataParallel`` does the same when it is built, for the
#    parameters and the buffers, in a few coalesced broadcasts.
# 2. Training one process with the learning rate times ``n`` on this page's
#    data and model, for the same number of steps; each line gives the loss
#    after the last step:
from torch import nn

generator = torch.Generator().manual_seed(1)
X = torch.randn(64, 16, generator=generator)
w = torch.randn(16, 1, generator=generator)
y = X @ w + 0.1 * torch.randn(64, 1, generator=generator)
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
#    and every rank then divides by the total row count. Checked on this
#    page's data split 40 and 24, with one process's gradients ``g0`` and
#    ``g1``: *no* for the plain average, *yes* for the weighted one.


def gradient(rows):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
    nn.functional.mse_loss(model(X[rows]), y[rows]).backward()
    return torch.cat([p.grad.flatten() for p in model.parameters()])


whole = gradient(slice(None))
g0, g1 = gradient(slice(0, 40)), gradient(slice(40, None))
averages = {
    "(g0 + g1) / 2": (g0 + g1) / 2,
    "(40 g0 + 24 g1) / 64": (40 * g0 + 24 * g1) / 64,
}
for subject, average in averages.items():
    gap = float((average - whole).abs().max())
    verdict = compperf.conclude(
        "same gradient", subject, gap, gap, below=TOLERANCE
    )
    print(verdict)
