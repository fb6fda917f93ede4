"""The chapter "Many devices and machines": what each page claims holds when it runs.

Every example runs alone through the shared harness (a fresh process, the tests' fast
settings), and starts its ranks under torchrun itself; a probe expression hands back, as
JSON, the values the page computed, and the records of the messages it printed and drew,
which must read in every language. Each page runs once per test session.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import pytest
from harness import Run, examples, numbers, share, shared_run

from compperf import i18n, records

# Every check here runs the chapter's pages: `nox -s examples`, not `nox -s tests`.
pytestmark = pytest.mark.executes

CHAPTER = "distributed"
OUTCOMES = {"yes", "no", "unclear"}

PROBES = {
    "plot_1_data_parallel_from_scratch.py": """{
        "device": str(device), "backend": backend, "ranks": len(run),
        "worlds": [r["world"] for r in run.ranks],
        "differing": differing, "checks": checks, "tolerance": TOLERANCE,
        "outcomes": {name: verdict.outcome for name, verdict in same.items()},
        "steps": STEPS,
        "calls": len(seconds),
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
    "plot_2_distributed_data_parallel.py": """{
        "device": str(device), "backend": backend,
        "difference": difference, "agree": agree.outcome,
        "kinds": [sorted({e[0] for e in r["events"]}) for r in run.ranks],
        "threads": [[sorted({e[1] for e in r["events"] if e[0] == kind}) for kind in ("backward", "all-reduce")] for r in run.ranks],
        "overlap": overlap, "parameters": rank0["parameters"], "buckets": rank0["buckets"],
        "depth": DEPTH,
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
    "plot_2b_buckets_and_no_sync.py": """{
        "device": str(device), "backend": backend,
        "buckets": rank0["buckets"], "counted": {**{f"{c} MB": count_buckets(c) for c in BUCKET_CAPS_MB}, "default": count_buckets(25, first_mb=1)},
        "caps": BUCKET_CAPS_MB, "rounds": {k: len(v) for k, v in seconds.items()},
        "faster": faster.outcome, "best": best, "ratio": ratio,
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
    "plot_2c_no_sync.py": """{
        "device": str(device), "backend": backend,
        "reductions": [rank0["sync_every"]["reductions"], rank0["no_sync"]["reductions"]],
        "worst": worst, "same": same.outcome, "saved": saved,
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
    "plot_3_communication_costs.py": """{
        "device": str(device), "backend": backend, "world": rank0["world"],
        "alpha": alpha, "beta": beta, "sizes": SIZES, "one_way": one_way.tolist(),
        "rounds": [len(rank0["seconds"][str(size)]) for size in SIZES],
        "crossover": alpha * beta, "latency_share": latency_share, "faster": faster.outcome,
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
    "plot_3b_ring_and_parameter_server.py": """{
        "device": str(device), "backend": backend, "n": n,
        "alpha": alpha, "beta": beta, "ring_beta": ring_beta,
        "sizes": SIZES, "one_way": one_way.tolist(), "ring": ring.tolist(),
        "server": server.tolist(),
        "ring_model": ring_model.tolist(), "server_model": server_model.tolist(),
        "predicted": predicted, "faster": faster.outcome, "rounds": ratio.rounds,
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
    "plot_4_scaling.py": """{
        "device": str(device), "backend": backend, "cores": cores,
        "names": names, "rounds": {k: len(v) for k, v in step_seconds.items()},
        "communication": {k: float(np.median(rank0["times"][k]["communication"])) for k in names},
        "faster": faster.outcome, "more_threads": more_threads.outcome, "split": split.outcome,
        "speedup": speedup, "split_value": split.value,
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
    "plot_4b_weak_scaling_and_nodes.py": """{
        "device": str(device), "backend": backend,
        "names": names, "rounds": {k: len(v) for k, v in step_seconds.items()},
        "communication": {k: float(np.median(rank0["times"][k]["communication"])) for k in names},
        "faster": faster.outcome, "per_row": per_row.estimate, "weak": weak.estimate,
        "ranks": [[r["rank"], r["world"], r["local_rank"]] for r in run.ranks],
        "figures": len(plt.get_fignums()),
        "keys": [figure["key"] for figure in compperf.records.figures()],
    }""",
}


share(PROBES)  # the session's one run of each example evaluates them


@cache
def _recorded(name: str) -> tuple[Run, list[dict]]:
    """Each example run alone once per test session, with its probe and its messages."""
    run = shared_run(name, PROBES[name]).check()
    return run, run.records


def ran(name: str) -> Run:
    return _recorded(name)[0]


def prose(out: str) -> str:
    """The printed output with line breaks folded, as the examples wrap their sentences."""
    return " ".join(out.split())


def test_the_chapter_has_its_examples_and_every_one_a_probe():
    assert sorted(PROBES) == [path.name for path in examples(CHAPTER)]


def test_every_page_launches_its_ranks_with_torchrun_from_a_written_file():
    for path in examples(CHAPTER):
        source = path.read_text(encoding="utf-8")
        assert re.search(r"^RANK_CODE = (\"\"\"|''')$", source, re.MULTILINE), path.name
        assert re.search(r"compperf\.run_ranks\(\s*RANK_CODE", source), path.name
        assert "multiprocessing" not in source, path.name  # no home-made process pool
        assert "dist.destroy_process_group()" in source, path.name


def test_two_ranks_on_half_batches_are_one_process_on_the_whole_batch():
    run = ran("plot_1_data_parallel_from_scratch.py")
    p = run.probe
    assert p["ranks"] == 2
    assert p["worlds"] == [2, 2]
    assert p["differing"] == 0  # the replicas are bitwise equal
    assert p["checks"]["averaged"] < p["tolerance"]
    assert p["outcomes"] == {"averaged": "yes", "summed": "no", "summed_vs_twice_lr": "yes"}
    text = prose(run.stdout)
    for claim in (  # every verdict prints its line
        "same parameters (averaged gradients vs whole batch): yes",
        "same parameters (summed gradients vs whole batch): no",
        "same parameters (summed vs twice the learning rate): yes",
    ):
        assert claim in text
    assert "differing: 0 of " in text
    assert p["calls"] == 2 * p["steps"]  # the averaged and the summed runs
    assert f"steps: {p['calls']}, all_reduce: " in text
    assert "learning rate x 16: loss " in run.stdout
    # The executed answer on uneven rows: only the row-weighted average is the whole batch's.
    assert "same gradient ((g0 + g1) / 2): no" in text
    assert "same gradient ((40 g0 + 24 g1) / 64): yes" in text
    assert p["figures"] == 1


def test_ddp_matches_the_hand_written_all_reduce():
    run = ran("plot_2_distributed_data_parallel.py")
    p = run.probe
    assert p["agree"] == "yes"
    assert p["difference"] <= 1e-5
    assert p["parameters"] == 2 * p["depth"]  # a weight and a bias per layer
    assert 1 <= p["buckets"] < p["parameters"]  # 4 MB buckets hold several tensors
    text = prose(run.stdout)
    assert "same parameters (DDP vs by hand): yes" in text  # the verdict prints its line
    assert f"all-reduces by hand: {p['parameters']}" in text
    assert f"buckets DDP reduced: {p['buckets']}" in text


def test_ddp_profile_shows_backward_and_all_reduce_on_each_rank():
    run = ran("plot_2_distributed_data_parallel.py")
    p = run.probe
    assert p["kinds"] == [["all-reduce", "backward"]] * 2
    if p["backend"] == "gloo":
        for backward, communication in p["threads"]:
            assert len(backward) == 1  # autograd on the CPU runs in the calling thread
            assert not set(backward) & set(communication)  # gloo reduces in its own threads
    assert p["overlap"] >= 0
    assert p["figures"] == 1


def test_ddp_counts_its_buckets():
    run = ran("plot_2b_buckets_and_no_sync.py")
    p = run.probe
    # The answer's rule for counting buckets is what DDP reported.
    assert p["buckets"] == p["counted"]
    counts = [p["buckets"][f"{cap} MB"] for cap in p["caps"]]
    assert counts == sorted(counts, reverse=True)  # larger caps, fewer buckets
    rounds = set(p["rounds"].values())
    assert len(rounds) == 1
    assert rounds.pop() >= 6
    assert p["faster"] in OUTCOMES
    assert p["best"] in p["rounds"]
    assert p["ratio"] > 0
    text = prose(run.stdout)
    assert "faster (DDP default vs one all-reduce after backward): " in text  # the verdict's line
    assert "default / after backward: " in text
    assert "fastest: " in text
    assert p["figures"] == 1


def test_no_sync_halves_the_all_reduces():
    run = ran("plot_2c_no_sync.py")
    p = run.probe
    # no_sync: the whole batch's gradient, with half the bucket all-reduces.
    assert p["same"] == "yes"
    assert p["worst"] < 1e-5
    every, no_sync = p["reductions"]
    assert every == 2 * no_sync
    assert p["saved"] == every - no_sync > 0
    text = prose(run.stdout)
    assert f"bucket all-reduces without no_sync: {every}" in text
    assert f"bucket all-reduces with no_sync: {no_sync}" in text
    assert "same gradient (no_sync accumulation): yes" in text  # the verdict's line
    assert f"k = 4: {2 * every} without no_sync, {no_sync} with" in text
    assert p["figures"] == 1


def test_one_message_fit():
    run = ran("plot_3_communication_costs.py")
    p = run.probe
    assert p["world"] == 2
    assert p["alpha"] > 0
    assert p["beta"] > 0
    assert len(p["one_way"]) == len(p["sizes"])
    assert set(p["rounds"]) == {6}
    assert p["crossover"] == pytest.approx(p["alpha"] * p["beta"])
    assert 0 < p["latency_share"] < 1
    text = prose(run.stdout)
    assert "latency α: " in text
    assert ", bandwidth β: " in text
    assert "latency share of a 25 MB bucket: " in text
    assert "datasheet" in text  # cited numbers are labelled as such
    assert p["faster"] in OUTCOMES
    assert "faster (one large message vs many small ones, same bytes): " in text  # its line
    assert p["figures"] == 1


def test_ring_and_parameter_server_against_their_models():
    run = ran("plot_3b_ring_and_parameter_server.py")
    p = run.probe
    assert p["n"] == 2
    assert p["alpha"] > 0
    assert p["beta"] > 0
    assert all(r < s for r, s in zip(p["ring_model"], p["server_model"], strict=True))
    assert p["predicted"] == pytest.approx(p["ring_model"][-1] / p["server_model"][-1])
    assert 0.5 <= p["predicted"] < 1  # two ranks: S/beta + 2 alpha against 2 S/beta + 2 alpha
    assert p["faster"] in OUTCOMES
    assert p["rounds"] >= 6
    text = prose(run.stdout)
    assert re.search(r"send/recv: α .+?, β .+?/s\s+all_reduce: α .+?, β .+?/s", text)  # fits
    assert "reduce + broadcast (µs)" in text  # the models' table
    assert "faster (all_reduce vs reduce+broadcast): " in text  # the verdict's line
    assert p["figures"] == 1


def test_strong_scaling_runs_every_configuration_and_prints_its_verdicts():
    run = ran("plot_4_scaling.py")
    p = run.probe
    assert p["names"] == ["1 rank, 1 thread", "1 rank, 2 threads", "2 ranks, half batch"]
    assert set(p["rounds"].values()) == {6}
    assert p["communication"]["1 rank, 1 thread"] == 0.0
    assert p["communication"]["2 ranks, half batch"] > 0
    assert p["faster"] in OUTCOMES
    assert p["more_threads"] in OUTCOMES
    assert p["split"] in OUTCOMES
    assert p["speedup"] == pytest.approx(1 / p["split_value"])  # the answer reads the verdict
    text = prose(run.stdout)
    for claim in ("faster (2 ranks vs 1 rank, 2 threads): ", "faster (2 ranks vs 1 rank, 1 thread): ",
                  "faster (2 threads vs 1 thread, 1 rank): "):  # fmt: skip
        assert claim in text  # every verdict prints its line
    assert f"speedup: {p['speedup']:.2f}, ideal: 2" in text
    assert p["figures"] == 1


def test_weak_scaling_runs_both_configurations_and_prints_the_multi_node_commands():
    run = ran("plot_4b_weak_scaling_and_nodes.py")
    p = run.probe
    assert p["names"] == ["1 rank, 1 thread", "2 ranks, whole batch"]
    assert set(p["rounds"].values()) == {6}
    assert p["communication"]["1 rank, 1 thread"] == 0.0
    assert p["communication"]["2 ranks, whole batch"] > 0
    assert p["faster"] in OUTCOMES
    assert p["per_row"] == pytest.approx(p["weak"] / 2)  # two ranks do twice the rows
    assert p["ranks"] == [[0, 2, 0], [1, 2, 1]]
    commands = [line for line in run.stdout.splitlines() if line.startswith("torchrun ")]
    assert len(commands) == 1  # the same command on each machine
    for option in ("--nnodes=2", "--rdzv-endpoint=", "--rdzv-id=", "ranks.py"):
        assert option in commands[0]
    text = prose(run.stdout)
    assert "faster (2 ranks vs 1 rank, time per row): " in text  # the verdict's line
    assert "weak scaling efficiency: " in text
    assert "RANK WORLD_SIZE LOCAL_RANK" in run.stdout
    assert "RANK = 1 * 4 + 2 = 6" in run.stdout
    assert p["figures"] == 1


# Every language but the source language, as the catalogs that ship with compperf hold them.
TRANSLATED = i18n.available_languages()[1:]
# Pages whose verdicts' subjects are still plain English (issue 26): each leaves this set
# once its subjects are messages (compperf.tr) that its catalogs translate.
KEYS_NOT_YET_TRANSLATED: set[str] = set()
_SCRIPT = {"zh_CN": "CJK", "ru": "CYRILLIC"}


def _in_script(text: str, code: str) -> bool:
    return any(_SCRIPT[code] in unicodedata.name(char, "") for char in text)


@pytest.mark.parametrize("code", TRANSLATED)
@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_message_reads_in_the_language_with_the_same_numbers(name: str, code: str):
    """What the page printed and drew, rendered in another language from the records alone
    (as the zh_CN and ru builds do): translated, and with the numbers the run measured."""
    run, records = _recorded(name)
    assert records, f"{name} printed no message through compperf.tr or compperf.say"
    for record in records:
        english = i18n.render(record, "en")
        translated = i18n.render(record, code, strict=True)
        if record.get("wrap"):  # a conclusion printed with compperf.say: the page shows it
            assert english in run.stdout, english
            assert _in_script(translated, code), f"{code} paragraph not translated: {english}"
        assert numbers(translated, code) == numbers(english), (
            f"{name}: the {code} text has other numbers than the English one:\n"
            f"{english}\n{translated}"
        )


@pytest.mark.parametrize("code", TRANSLATED)
@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_key_figure_reads_in_the_language(name: str, code: str):
    """The keys of what the page measured and concluded, read back in another language as
    the Results page reads them (issue 26): every part of every key has a translation."""
    keys = ran(name).probe["keys"]
    assert keys, f"{name} recorded no key figure"
    example = f"{CHAPTER}/{name.removesuffix('.py')}"
    missing = []
    for key in keys:
        try:
            shown = records.label(key, code, example, strict=True)
        except i18n.MissingTranslation as error:
            missing.append(str(error))
            continue
        assert _in_script(shown, code), f"{key!r} reads in {code} as {shown!r}"
    if name in KEYS_NOT_YET_TRANSLATED:
        assert missing, f"every key of {name} translates now: remove it from the set"
        return
    assert not missing, missing
