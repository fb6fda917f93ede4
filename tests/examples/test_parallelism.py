"""The chapter "Parallelism on one machine": what each page says matches what it measured.

Every example runs alone through the shared harness (a fresh process, the tests' fast
settings); a probe hands back, as JSON, each verdict's outcome and the values the page's
sentences rest on. Each sentence about a speed-up or an overlap must be the one its
verdict's outcome chooses ("yes", "no" or "unclear"), and none of the other two.
"""

from __future__ import annotations

from functools import cache

import pytest
from harness import Run, examples, share, shared_run

# Every check here runs the chapter's pages: `nox -s examples`, not `nox -s tests`.
pytestmark = pytest.mark.executes

CHAPTER = "parallelism"

PROBES = {
    "plot_1_intra_op_threads.py": """{
        "device": str(device),
        "child_threads": child_threads,
        "max_threads": max_threads,
        "counts": counts,
        "outcomes": {str(name): v.outcome for name, v in verdicts.items()},
        "speedups": {str(name): [r.estimate for r in ratios] for name, ratios in speedups.items()},
        "shares": {str(name): list(share) for name, share in shares.items()},
        "like_cores": like_cores.outcome,
        "threads_after": torch.get_num_threads(),
        "figures": len(plt.get_fignums()),
    }""",
    "plot_2_inter_op.py": """{
        "device": str(device),
        "done_at_return": done_at_return,
        "same_thread": same_thread,
        "thread_sees": seen[0],
        "max_threads": max_threads,
        "alive_threads": __import__("threading").active_count(),
        "figures": len(plt.get_fignums()),
    }""",
    "plot_2b_when_threads_help.py": """{
        "device": str(device),
        "outcomes": {str(case): v.outcome for case, v in verdicts.items()},
        "beyond": {str(case): v.outcome for case, v in beyond_cores.items()},
        "recorded": k,
        "total": total,
        "alive_threads": __import__("threading").active_count(),
        "figures": len(plt.get_fignums()),
    }""",
    "plot_3_streams_and_copies.py": """{
        "device": str(device),
        "gpu": {memory: v.outcome for memory, v in gpu_verdicts.items()},
        "cpu": cpu_verdict.outcome,
        "alive_threads": __import__("threading").active_count(),
    }""",
    "plot_4_dataloader_workers.py": """{
        "device": str(device),
        "worker_counts": worker_counts,
        "outcomes": {key: v.outcome for key, v in verdicts.items()},
        "left": left,
        "worker_threads": worker_threads,
        "pin_memory": make_loader(1).pin_memory,
        "figures": len(plt.get_fignums()),
    }""",
}


share(PROBES)  # the session's one run of each example evaluates them


@cache
def ran(name: str) -> Run:
    return shared_run(name, PROBES[name]).check()


def prose(out: str) -> str:
    """The printed output with line breaks folded, as the examples wrap their sentences."""
    return " ".join(out.split())


def says_as_measured(text: str, outcome: str, sentences: dict[str, str]) -> None:
    """Fail unless ``text`` holds the sentence for ``outcome`` and neither of the others."""
    assert outcome in sentences, f"unknown outcome {outcome!r}"
    for which, sentence in sentences.items():
        if which == outcome:
            assert sentence in text, f"the verdict is {outcome!r} but the page lacks {sentence!r}"
        else:
            assert sentence not in text, (
                f"the verdict is {outcome!r} but the page says {sentence!r} ({which!r})"
            )


def verdict_lines(claim: str, subject: str) -> dict[str, str]:
    """The start of ``print(verdict)``'s line for each outcome (English)."""
    return {outcome: f"{claim} ({subject}): {outcome}" for outcome in ("yes", "no", "unclear")}


def test_the_chapter_has_its_examples_and_every_one_a_probe():
    assert sorted(PROBES) == [path.name for path in examples(CHAPTER)]


def test_the_wording_check_fails_on_a_contradiction():
    sentences = {"yes": "A overlapped B", "no": "A did not overlap", "unclear": "unclear"}
    says_as_measured("so A overlapped B here", "yes", sentences)
    with pytest.raises(AssertionError, match="lacks"):
        says_as_measured("so A did not overlap here", "yes", sentences)
    with pytest.raises(AssertionError, match="says"):
        says_as_measured("A overlapped B; A did not overlap", "no", sentences)


def test_intra_op_page_says_what_it_measured():
    run = ran("plot_1_intra_op_threads.py")
    p = run.probe
    text = prose(run.stdout)
    # The environment variables act on a child process at its start.
    assert p["child_threads"] == 1
    assert "child's threads: 1" in text
    assert "torch.__config__.parallel_info()" not in run.stdout  # its output, not its name
    assert "ATen parallel backend" in run.stdout
    assert p["counts"][0] == 1
    assert 2 in p["counts"]
    assert p["threads_after"] == p["max_threads"]  # the page gives the pool back
    assert len(p["outcomes"]) == 3
    # Each verdict prints its own line; the prose says what each outcome means.
    for name, outcome in p["outcomes"].items():
        says_as_measured(text, outcome, verdict_lines("faster", name))
    says_as_measured(text, p["like_cores"], verdict_lines("like separate cores", "torch.mm(a, b)"))
    for low_high in p["shares"].values():
        assert all(0.0 <= share <= 1.0 for share in low_high)
    assert p["figures"] == 1


def test_inter_op_page_says_what_it_measured():
    run = ran("plot_2_inter_op.py")
    p = run.probe
    text = prose(run.stdout)
    # Eager torch.jit.fork runs the job on the calling thread, done when fork returns.
    assert p["done_at_return"]
    assert p["same_thread"]
    assert "done when fork returned: True" in text
    assert "ran on the calling thread: True" in text
    assert f"torch.get_num_threads() in a new thread: {p['max_threads']}" in text
    assert "DeprecationWarning caught: `torch.jit.fork` is deprecated" in run.stdout
    assert p["thread_sees"] == p["max_threads"]
    assert p["alive_threads"] == 1  # every job thread has ended
    assert p["figures"] == 1


def test_when_threads_help_page_says_what_it_measured():
    run = ran("plot_2b_when_threads_help.py")
    p = run.probe
    text = prose(run.stdout)
    assert len(p["outcomes"]) == 2
    assert set(p["beyond"]) == set(p["outcomes"])
    for case, outcome in p["outcomes"].items():
        says_as_measured(text, outcome, verdict_lines("faster", case))
        says_as_measured(text, p["beyond"][case], verdict_lines("beyond the cores", case))
    assert f"products recorded by default: {p['recorded']} of {p['total']}" in text
    assert p["alive_threads"] == 1  # every job thread has ended
    assert p["figures"] == 1


def test_streams_page_says_what_it_measured():
    run = ran("plot_3_streams_and_copies.py")
    p = run.probe
    text = prose(run.stdout)
    cpu_ways = "copy in a second thread vs copy, then product"
    says_as_measured(text, p["cpu"], verdict_lines("faster", cpu_ways))
    if p["device"].startswith("cuda"):
        assert set(p["gpu"]) == {"pinned", "pageable"}
        for memory, outcome in p["gpu"].items():
            says_as_measured(text, outcome, verdict_lines("faster", f"side_by_side({memory})"))
        assert "not sevens, after synchronizing: 0" in text
        assert "one product between events:" in text
    else:
        # Nothing measured on a GPU, and the line says so; the prose says what a GPU shows.
        assert p["gpu"] == {}
        assert "no CUDA device: nothing measured on a GPU here" in text
        assert "faster (side_by_side(" not in text
        assert "not sevens" not in text
    if p["device"] == "cpu":
        assert "pin_memory() failed:" in text
    assert p["alive_threads"] == 1


def test_dataloader_page_says_what_it_measured():
    run = ran("plot_4_dataloader_workers.py")
    p = run.probe
    text = prose(run.stdout)
    assert p["left"] == 0  # every worker process ended
    assert p["pin_memory"] == p["device"].startswith("cuda")
    assert "worker processes left: 0" in text
    if p["worker_counts"] == [0]:
        # Without fork only num_workers=0 runs: no verdict, no line about workers.
        assert p["outcomes"] == {}
        assert "faster (" not in text
        return
    assert p["worker_threads"] == 1
    assert "threads in a worker: 1" in text
    one = verdict_lines("faster", "num_workers=1 vs num_workers=0")
    says_as_measured(text, p["outcomes"]["1 vs 0"], one)
    assert "saved by one worker:" in text
    for more in p["worker_counts"][2:]:
        more_vs_one = verdict_lines("faster", f"num_workers={more} vs num_workers=1")
        says_as_measured(text, p["outcomes"][f"{more} vs 1"], more_vs_one)
    persistent = verdict_lines("faster", "persistent_workers=True vs persistent_workers=False")
    says_as_measured(text, p["outcomes"]["persistent"], persistent)
    assert p["figures"] == 1
