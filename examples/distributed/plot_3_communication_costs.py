"""
What communication costs
========================

You time messages between two ranks from a kilobyte to many megabytes and fit
the cost of one message to a latency plus size over bandwidth: the two
numbers that decide what any collective costs on this machine.

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

RANKS = 2
SIZES = [2**k for k in range(7, 23, 3)]  # float32 values: 512 B to 16 MB
ROUNDS = 6
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    SIZES = [2**k for k in range(8, 21, 4)]
# sphinx_gallery_end_ignore
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
print(compperf.environment(device))
print(compperf.tr("ranks: {n}, backend: {b}", n=RANKS, b=backend))

# %%
# The cost model
# --------------
# Sending one message of ``S`` bytes costs ``α + S / β``: a latency ``α``
# (software, the trip through the kernel or the wire) and the bytes over the
# link's bandwidth ``β``. Every collective, an all-reduce included, is built
# from such messages, so these two numbers predict its cost too:
# :doc:`/auto_examples/distributed/plot_3b_ring_and_parameter_server` puts
# them to that test.
#
# The rank code times, for each size and in rounds, a message there and back
# between rank 0 and rank 1: half of it is one message.

RANK_CODE = """
import json
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

results, backend = Path(sys.argv[1]), sys.argv[2]
sizes = [int(size) for size in sys.argv[3].split(",")]
rounds = int(sys.argv[4])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    device = torch.device("cuda", dist.get_node_local_rank())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")
wait = torch.cuda.synchronize if device.type == "cuda" else lambda: None

def ping_pong(tensor):  # there and back: two messages
    if rank == 0:
        dist.send(tensor, dst=1)
        dist.recv(tensor, src=1)
    elif rank == 1:
        dist.recv(tensor, src=0)
        dist.send(tensor, dst=0)

seconds = {size: [] for size in sizes}
for round_number in range(rounds + 1):  # round 0 warms up
    for size in sizes:
        tensor = torch.ones(size, device=device)
        repeats = max(3, min(50, 2**22 // size))
        dist.barrier()
        wait()
        start = time.perf_counter()
        for _ in range(repeats):
            ping_pong(tensor)
        wait()
        if round_number:
            seconds[size].append((time.perf_counter() - start) / repeats)
report = {"rank": rank, "world": world, "seconds": seconds}
(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
"""

# %%
# Launching the ranks
# -------------------
# The table after the launch gives rank 0's median time of one message
# (half of the time there and back) for each message size, and the rate it
# reached: bytes over time.
arguments = [backend, ",".join(map(str, SIZES)), str(ROUNDS)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
print(watched.disturbance)
rank0 = run[0]
nbytes = np.array(SIZES, dtype=float) * 4
seconds = [np.median(rank0["seconds"][str(size)]) for size in SIZES]
one_way = np.array(seconds) / 2
print(f"{'bytes':>10} {'send (s)':>12} {'GB/s':>8}")
for size, t in zip(nbytes, one_way, strict=True):
    print(f"{size:>10.0f} {t:>12.2e} {size / t / 1e9:>8.3f}")

# %%
# Latency and bandwidth
# ---------------------
# A least-squares fit of ``α + S / β`` to the one-way times gives this
# machine's latency and bandwidth between two processes (through gloo and
# the loopback interface on a CPU). The fit weighs relative errors, so that
# small and large messages count alike.


def fit(times):
    """(α seconds, β bytes per second) of times ≈ α + bytes / β, on relative errors."""
    design = np.stack([np.ones_like(nbytes), nbytes], axis=1) / times[:, None]
    (alpha, inverse_beta), *_ = np.linalg.lstsq(
        design, np.ones_like(times), rcond=None
    )
    return float(alpha), float(1 / inverse_beta)


alpha, beta = fit(one_way)
a, b = alpha, beta / 1e9
print(compperf.tr("latency α: {a:time}, bandwidth β: {b:.3g} GB/s", a=a, b=b))

# %%
# The figure shows the measured medians as points and the fitted model as a
# line: flat where the latency dominates, rising with the size where the
# bandwidth does. A point far from the line is a size the two numbers do not
# explain.
fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
measured, fitted = (
    compperf.tr("one message, measured"),
    compperf.tr("fit α + S/β"),
)
ax.loglog(nbytes, one_way * 1e6, "o", color="C2", label=measured)
ax.loglog(nbytes, (alpha + nbytes / beta) * 1e6, "-", color="C2", label=fitted)
ax.set_xlabel(compperf.tr("message size S (bytes)"))
ax.set_ylabel(compperf.tr("time per call (µs)"))
ax.set_title(compperf.tr("One message on {b}, {n} ranks", b=backend, n=RANKS))
ax.legend()
plt.show()

# %%
# One message or many?
# --------------------
# Latency is paid per message, so the same bytes cost less in one large
# message than in many small ones: DDP's gradient buckets rest on this. The
# verdict compares, round by round, one message of the largest size with as
# many messages of the smallest size as carry the same bytes (their number
# times one small message's time). Its line prints the claim "faster", its
# outcome and the time ratio, against the threshold 1 / 1.05: *yes* when
# the whole interval lies below it (one message is faster, as the latency
# says), *no* when it lies at or above it, *unclear* when it straddles the
# threshold or the machine was disturbed.
small, large = (rank0["seconds"][str(size)] for size in (SIZES[0], SIZES[-1]))
count = SIZES[-1] // SIZES[0]
rounds = [big / (count * one) for big, one in zip(large, small, strict=True)]
ratio = compperf.Ratio.from_rounds("one message", "many messages", rounds)
subject = compperf.tr("one large message vs many small ones, same bytes")
faster = compperf.conclude("faster", subject, ratio.low, ratio.high,
                           below=1 / 1.05, disturbed=watched.disturbance.disturbed,
                           value=ratio.estimate)  # fmt: skip
print(faster)

# %%
# Faster links, not measured here
# -------------------------------
# An all-reduce of ``S`` bytes over ``n`` ranks makes every rank send
# ``2 (n - 1) / n · S`` in a ring, and one rank receive and send
# ``(n - 1) S`` each as a parameter server (the next page derives both).
# With bandwidths from datasheets instead of a measurement, these formulas
# say what a GPU cluster changes; the lines are arithmetic, not
# measurements. NVIDIA gives 900 GB/s of NVLink bandwidth per H100 SXM GPU
# (both directions together, so 450 GB/s each way), and 400 Gb/s (50 GB/s)
# per NDR InfiniBand port (ConnectX-7). The rows give one all-reduce of 1 GB
# of gradients over 8 ranks, bandwidth term only, at this machine's measured
# ``β``, then at NVLink 4's and InfiniBand NDR's.
gradient_bytes, ranks = 1e9, 8
links = [beta, 450e9, 50e9]  # bytes per second: measured, NVLink 4, NDR
print(compperf.tr("β (GB/s; rows 2, 3: datasheet), ring (ms), server (ms)"))
for bandwidth in links:
    ring_ms = 2 * (ranks - 1) / ranks * gradient_bytes / bandwidth * 1e3
    server_ms = 2 * (ranks - 1) * gradient_bytes / bandwidth * 1e3
    print(f"{bandwidth / 1e9:>8.3g} {ring_ms:>10.1f} {server_ms:>10.1f}")

# %%
# Summary
# -------
# * A message costs a latency plus its size over the bandwidth; small
#   messages pay mostly latency, large ones mostly bandwidth, so the same
#   bytes travel faster in one large message than in many small ones.
# * The fitted ``α`` and ``β`` above are this machine's, between processes
#   sharing its CPU; NVLink and InfiniBand change ``β`` by orders of
#   magnitude, which is why the numbers on a GPU cluster differ so much.
#
# Exercises
# ---------
# 1. From this page's ``α`` and ``β``, from what message size on does the
#    bandwidth term outweigh the latency?
# 2. DDP's default bucket is 25 MB, and an all-reduce over two ranks costs
#    about ``2 α + S / β`` (the ring model of the next page). On this
#    machine, what share of the time of reducing one such bucket is latency?
#
# Answers
# -------
# 1. The two terms are equal at ``S = α β``; larger messages pay mostly
#    bandwidth, smaller ones mostly latency:
print(compperf.tr("S = α β = {b:bytes}", b=alpha * beta))

# %%
# 2. With latency ``2 α`` and bandwidth time ``S / β``:
bucket = 25 * 2**20
latency_share = 2 * alpha / (2 * alpha + bucket / beta)
print(compperf.tr("latency share of a 25 MB bucket: {s:.1%}", s=latency_share))
