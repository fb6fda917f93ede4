"""compperf.run_ranks: ranks under torchrun, their results, failures and timeouts.

Each launch starts real processes (the launcher and its ranks import torch), so the
tests launch few and small: one run of two ranks that talk, a failing rank, a timeout.
"""

from __future__ import annotations

import importlib

import pytest

import compperf

launch = importlib.import_module("compperf.launch")

# Each rank adds its rank + 1 with all_reduce and reports the sum, its rank and the
# world size, its thread count and an extra argument.
TALKING = """
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
total = torch.tensor([rank + 1.0])
dist.all_reduce(total)
Path(sys.argv[1], f"rank{rank}.json").write_text(json.dumps({
    "rank": rank, "world": dist.get_world_size(), "sum": total.item(),
    "threads": torch.get_num_threads(), "extra": sys.argv[2],
}))
dist.destroy_process_group()
"""


def test_two_ranks_report_in_rank_order():
    run = compperf.run_ranks(TALKING, 2, args=["hello"], timeout=120)
    assert len(run) == 2
    assert run.nproc == 2
    assert run.threads_per_rank == 1
    assert [r["rank"] for r in run.ranks] == [0, 1]
    assert all(r["world"] == 2 and r["sum"] == 3.0 for r in run.ranks)
    assert all(r["threads"] == 1 and r["extra"] == "hello" for r in run.ranks)
    assert "--standalone" in run.command
    assert "--nproc-per-node=2" in run.command
    assert run.seconds > 0
    assert "nproc=2" in repr(run)


def test_a_failing_rank_raises_with_its_output_and_the_caller():
    code = "import sys\nprint('rank is unhappy', file=sys.stderr)\nsys.exit(3)\n"
    with pytest.raises(RuntimeError) as raised:
        compperf.run_ranks(code, 1, timeout=120, name="plot_example.py")
    message = str(raised.value)
    assert message.startswith("plot_example.py: 1 ranks under torchrun failed")
    assert "rank is unhappy" in message


def test_the_caller_is_named_by_default():
    with pytest.raises(RuntimeError, match=r"test_launch\.py: ranks \[0\] exited without"):
        compperf.run_ranks("pass\n", 1, timeout=120)


def test_a_launch_past_its_timeout_is_ended():
    with pytest.raises(TimeoutError, match="did not finish within 1 s"):
        compperf.run_ranks("import time\ntime.sleep(600)\n", 1, timeout=1)


@pytest.mark.parametrize(
    "options", [{"nproc": 0}, {"nproc": 1, "threads_per_rank": 0}, {"nproc": 1, "timeout": 0}]
)
def test_arguments_are_checked(options):
    with pytest.raises(ValueError, match="need nproc >= 1"):
        compperf.run_ranks("pass\n", **options)


def test_rank_output_quotes_each_rank_then_the_launcher(tmp_path):
    for rank, text in ((0, "first\n"), (1, "")):
        folder = tmp_path / "run" / "attempt_0" / str(rank)
        folder.mkdir(parents=True)
        (folder / "stderr.log").write_text(text, encoding="utf-8")
    quoted = launch._rank_output(tmp_path, "launcher said\n")
    assert quoted == "--- local rank 0, stderr:\nfirst\n--- torchrun:\nlauncher said"
