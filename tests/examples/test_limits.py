"""The chapter "The machine's limits": what each page claims holds when it runs.

Every example runs alone through the shared harness (a fresh process, the tests' fast
settings); a probe hands back the numbers and verdicts the page printed its sentences from,
and the records of its messages, which must read in every language.
"""

from __future__ import annotations

import shutil
import unicodedata
from functools import cache

import pytest
from harness import examples, numbers, share, shared_run

from compperf import i18n

# Every check here runs the chapter's pages: `nox -s examples`, not `nox -s tests`.
pytestmark = pytest.mark.executes

CHAPTER = "limits"
TRANSLATED = ("zh_CN", "ru")

# What both roofline pages place with Ceilings.place, read the same way on each.
_PLACED = """
        "ridge_interval": list(limits.ridge_interval),
        "shares": [[s.intensity, s.roof, s.achieved, s.low, s.high, s.bound, s.roof_low,
                    s.roof_high, s.share_low, s.share_high, len(s.rounds)]
                   for _, _, s, _, _ in results],
        "bounds": [b.outcome for *_, b, _ in results],
        "bounds_disturbed": [b.disturbed for *_, b, _ in results],
        "halves": [[h.outcome, h.low, h.high, h.disturbed] for *_, h in results],
        "memory_bound": memory, "compute_bound": compute,
        "figures": len(plt.get_fignums()),
    }"""
PROBES = {
    "plot_1_three_regimes.py": """{
        "device": str(device),
        "chain_sizes": CHAIN_SIZES, "matmul_sizes": MATMUL_SIZES,
        "chain_times": chain_times, "matmul_times": matmul_times,
        "chain": chain_boundary.record(), "matmul": matmul_boundary.record(),
        "t0": t0, "c": c,
        "figures": len(plt.get_fignums()),
    }""",
    "plot_2_ceilings.py": """{
        "device": str(device),
        "rates": {f"{d}|{t}|{n}": r for (d, t, n), r in rates.items()},
        "best": rates[best], "sizes": SIZES, "threads": threads,
        "per_core": per_core,
        "capability": __import__("torch").backends.cpu.get_cpu_capability(),
        "caches": compperf.cache_sizes() if device.type == "cpu" else {},
        "ridge": limits.ridge, "ridge_interval": list(limits.ridge_interval),
        "peak": [limits.peak.low, limits.peak.value, limits.peak.high],
        "llc": limits.last_level_cache, "working_set": limits.working_set,
        "half": half.record() if per_core is not None else None,
        "figures": len(plt.get_fignums()),
    }""",
    "plot_2b_memory_and_caches.py": """{
        "device": str(device),
        "caches": caches, "working_sets": WORKING_SETS,
        "bandwidths": bandwidths,
        "cache_faster": cache_faster.record(),
        "figures": len(plt.get_fignums()),
    }""",
    "plot_3_roofline.py": """{
        "device": str(device),
        "names": [op["name"] for op in operations],
        "flops": [op["flops"] for op in operations],
        "counted": [op["counted"] for op in operations],
        "bytes": [op["bytes"] for op in operations],
        "N": N, "matmul_sizes": MATMUL_SIZES, "ridge": limits.ridge,
        "peak": limits.peak.value, "bandwidth": limits.bandwidth.value,
    """
    + _PLACED,
    "plot_3b_layers_under_the_roof.py": """{
        "device": str(device),
        "names": [op["name"] for op in operations],
        "flops": [op["flops"] for op in operations],
        "bytes": [op["bytes"] for op in operations],
        "batches": LINEAR_BATCHES, "ridge": limits.ridge,
        "peak": limits.peak.value, "bandwidth": limits.bandwidth.value,
    """
    + _PLACED,
    "plot_4_moving_a_point.py": """{
        "device": str(device),
        "n": n, "variants": list(variants), "bytes_moved": bytes_moved,
        "points": points,
        "fusion": fusion.faster("torch.compile", "eager").record()
                  if "torch.compile" in variants else None,
        "batching": batching.faster("1 x batch 64", "64 x batch 1").record(),
        "dtypes": [precision.faster(a, b).record()
                   for a, b in (("float32", "float64"), ("bfloat16", "float32"))],
        "peak": limits.peak.value, "bandwidth": limits.bandwidth.value,
        "figures": len(plt.get_fignums()),
    }""",
    "plot_5_access_patterns.py": """{
        "device": str(device),
        "n": n, "orders": list(indices),
        "index_ok": [sorted(i.tolist()) == list(range(n)) for i in indices.values()],
        "stride_head": indices["stride 16"][:3].tolist(),
        "reads": {name: reads.faster("in order", name).record()
                  for name in ("stride 16", "random")},
        "same_values": bool((b_t == b).all()), "b_t_stride": list(b_t.stride()),
        "chase_sizes": CHASE_SIZES, "latency": latency,
        "cycle": [(j := 0) == 0 and [(j := t[j]) for _ in t].index(0) == len(t) - 1
                  for t in tables.values()],
        "chains": chains.faster(str(first), str(last), margin=1.5).record(),
        "figures": len(plt.get_fignums()),
    }""",
}


share(PROBES)  # the session's one run of each example evaluates them


@cache
def _recorded(name: str):
    """Each example run alone once per test session, with its probe and its messages."""
    run = shared_run(name, PROBES[name]).check()
    return run, run.records


def ran(name: str):
    return _recorded(name)[0]


def prose(out: str) -> str:
    return " ".join(out.split())


def test_the_chapter_has_its_examples_and_every_one_a_probe():
    assert sorted(PROBES) == [path.name for path in examples(CHAPTER)]


def test_three_regimes_boundaries_follow_the_verdicts():
    run = ran("plot_1_three_regimes.py")
    p = run.probe
    assert len(p["chain_times"]) == len(p["chain_sizes"])
    assert all(t > 0 for t in p["chain_times"] + p["matmul_times"])
    text = prose(run.stdout)
    names = {"chain": "element-wise chain", "matmul": "matrix product"}
    for key in ("chain", "matmul"):
        found = p[key]
        assert found["claim"] == "crossover"
        assert found["subject"] == names[key]
        sizes = p[f"{key}_sizes"][1:]
        if found["outcome"] == "yes":
            assert found["low"] < found["high"]
            assert found["low"] in sizes
            assert found["value"] == found["high"]
        # The verdict's own line, under compperf's name for its claim.
        line = f"crossover ({names[key]}): {found['outcome']}"
        assert line in text
    # The fit of exercise 1: t0 is the smallest size's time, c the slope to the largest.
    slope = (p["chain_times"][-1] - p["chain_times"][0]) / (
        p["chain_sizes"][-1] - p["chain_sizes"][0]
    )
    assert p["t0"] == p["chain_times"][0]
    assert p["c"] == pytest.approx(slope)
    assert p["figures"] == 1


def test_ceilings_page_sweeps_and_derives_what_it_prints():
    run = ran("plot_2_ceilings.py")
    p = run.probe
    assert p["best"] == max(p["rates"].values())
    assert len(p["rates"]) == 3 * len(set(map(str, p["threads"]))) * len(p["sizes"])
    lanes = {"AVX512": 16, "AVX2": 8, "NO AVX": 4, "DEFAULT": 4}
    if p["device"] == "cpu" and p["per_core"] is not None:
        assert p["capability"] in lanes
        assert p["per_core"] / (lanes[p["capability"]] * 2 * 2) > 1e8  # a clock in Hz
        assert p["half"]["claim"] == "below half of the theoretical peak"
    if p["caches"]:  # the bandwidth is measured on at least 4x the last cache
        llc = max(int(v) for v in p["caches"].values())
        assert p["llc"] == llc
        assert p["working_set"] >= 4 * llc - 16
    low, high = p["ridge_interval"]
    assert low <= p["ridge"] <= high
    assert p["peak"][0] <= p["peak"][1] <= p["peak"][2]
    text = prose(run.stdout)
    # Each verdict prints its own line: compperf's claim, the code it is about, the outcome.
    if p["half"] is not None:
        line = f"below half of the theoretical peak ({p['half']['subject']}): "
        assert line + p["half"]["outcome"] in text
    else:
        assert "below half of the theoretical peak" not in text
    best = p["best"] / 1e9
    assert f"best: {best:.3g} GFLOP/s" in text or best >= 1000 or best < 1
    assert f"ridge: {p['ridge']:.1f}" in text
    assert p["figures"] == 1


def test_memory_page_sweeps_past_the_last_cache_and_says_what_it_decided():
    run = ran("plot_2b_memory_and_caches.py")
    p = run.probe
    if p["caches"]:
        llc = max(int(v) for v in p["caches"].values())
        assert p["working_sets"][-1] == 4 * llc
    for values in p["bandwidths"].values():
        assert len(values) == len(p["working_sets"])
        assert all(v > 0 for v in values)
    text = prose(run.stdout)
    # The verdict prints its own line: compperf's claim, the code it is about, the outcome.
    assert p["cache_faster"]["subject"] == "dst.copy_(src)"
    assert f"cache faster than memory (dst.copy_(src)): {p['cache_faster']['outcome']}" in text
    assert "1 GiB from memory: " in text
    assert p["figures"] == 1


def _placed_and_decided(run) -> None:
    """Each operation's share, read in rounds against a roof timed with it, and its two
    verdicts (memory-bound, below half), in the tables as in the probe."""
    p = run.probe
    low, high = p["ridge_interval"]
    for (
        intensity,
        roof,
        achieved,
        a_low,
        a_high,
        bound,
        roof_low,
        roof_high,
        share_low,
        share_high,
        rounds,
    ), outcome, disturbed, half in zip(
        p["shares"], p["bounds"], p["bounds_disturbed"], p["halves"], strict=True
    ):
        # The roof is timed again in every round with the operation (Ceilings.place):
        # its median lies among the rounds' roofs, each min(peak, intensity x bandwidth).
        assert rounds >= 6
        assert roof_low <= roof <= roof_high
        assert a_low <= achieved <= a_high
        # Numbers from a disturbed machine decide nothing (compperf.conclude).
        expected = "yes" if intensity < low else "no" if intensity >= high else "unclear"
        assert outcome == ("unclear" if disturbed else expected)
        assert bound == ("memory" if intensity < p["peak"] / p["bandwidth"] else "compute")
        # The verdict is decided on the interval of the rounds' shares.
        assert (half[1], half[2]) == pytest.approx((share_low, share_high))
        expected = "yes" if half[2] < 0.5 else "no" if half[1] >= 0.5 else "unclear"
        assert half[0] == ("unclear" if half[3] else expected)
    assert p["memory_bound"] == p["bounds"].count("yes")
    assert p["compute_bound"] == p["bounds"].count("no")
    counts = f"{p['memory_bound']} memory-bound, {p['compute_bound']} compute-bound"
    assert counts in prose(run.stdout)
    # The verdict table says each outcome in words: in its row, or once above the table
    # when every row has the same (compperf.i18n.table).
    lines = [line.split() for line in run.stdout.splitlines()]
    bounds, halves = p["bounds"], [half[0] for half in p["halves"]]
    for claim, outcomes in (("memory-bound", bounds), ("below half", halves)):
        if len(set(outcomes)) == 1:
            assert f"{claim}: {outcomes[0]}".split() in lines
    for name, bound, half in zip(p["names"], bounds, halves, strict=True):
        cells = [c for c, same in ((bound, bounds), (half, halves)) if len(set(same)) > 1]
        assert name.split() + cells in lines


def test_roofline_counts_places_and_decides_each_operation():
    run = ran("plot_3_roofline.py")
    p = run.probe
    assert len(p["names"]) >= 6
    by_name = dict(zip(p["names"], zip(p["flops"], p["counted"], p["bytes"], strict=True),
                       strict=True))  # fmt: skip
    n = p["N"]
    assert by_name["x + y"] == (n, 0, 3 * 4 * n)  # FlopCounterMode counts no additions
    assert by_name["x.sum()"][1] == 0
    for size in p["matmul_sizes"]:
        assert by_name[f"a @ b, n = {size}"] == (2 * size**3, 2 * size**3, 3 * 4 * size**2)
    _placed_and_decided(run)
    assert f"size at the ridge point: n = {6 * p['ridge']:.0f}" in run.stdout
    assert p["figures"] == 1


def test_layers_are_counted_placed_and_decided():
    run = ran("plot_3b_layers_under_the_roof.py")
    p = run.probe
    by_name = dict(zip(p["names"], zip(p["flops"], p["bytes"], strict=True), strict=True))
    for batch in p["batches"]:  # the weights and bias once, a row in and out per sample
        flops, moved = by_name[f"nn.Linear, {batch} x 512"]
        assert (flops, moved) == (2 * batch * 512 * 512, 4 * (512 * 512 + 512 + 2 * 512 * batch))
    assert by_name["nn.Linear(512, 256)"][0] == 2 * 512 * 512 * 256
    _placed_and_decided(run)
    text = prose(run.stdout)
    assert "nn.Linear, 1 x 512 on " in text  # its measurement, then the fixed cost's
    assert "share of the fixed cost: " in text
    if p["ridge"] < 128:  # the batch at which the layer's intensity reaches the ridge point
        r = p["ridge"]
        batch = 4 * r * (512 * 512 + 512) / (2 * 512 * 512 - 4096 * r)
        assert f"batch at the ridge point: {batch:.0f}" in text
    assert p["figures"] == 1


def test_moving_points_prints_what_each_comparison_decided():
    run = ran("plot_4_moving_a_point.py")
    p = run.probe
    n = p["n"]
    assert p["bytes_moved"] == {"eager": 32 * n, "torch.compile": 8 * n}
    text = prose(run.stdout)
    if shutil.which("g++") or shutil.which("clang++"):
        assert "torch.compile" in p["variants"]
    if p["fusion"] is None:
        assert "torch.compile failed here" in text
    else:
        fused, eager = p["points"]["torch.compile"][0], p["points"]["eager"][0]
        assert fused == pytest.approx(4 * eager)  # the same FLOP on a quarter of the bytes
    # Each move prints compperf's verdict line, its claim in compperf's words.
    moves = [p["batching"], *p["dtypes"]] + ([p["fusion"]] if p["fusion"] else [])
    for verdict in moves:
        assert verdict["claim"] == "faster"
        assert f"faster ({verdict['subject']}): {verdict['outcome']}" in text
    assert p["batching"]["subject"] == "1 x batch 64 vs 64 x batch 1"
    assert [v["subject"] for v in p["dtypes"]] == ["float32 vs float64", "bfloat16 vs float32"]
    # Intensity of the dtype points: the same FLOP on 8, 4 and 2 bytes per value.
    points = p["points"]
    assert points["float32"][0] == pytest.approx(2 * points["float64"][0])
    assert points["bfloat16"][0] == pytest.approx(2 * points["float32"][0])
    assert p["figures"] == 1


def test_access_patterns_read_the_same_bytes_and_say_what_was_decided():
    run = ran("plot_5_access_patterns.py")
    p = run.probe
    assert p["orders"] == ["in order", "stride 16", "random"]
    assert all(p["index_ok"])  # every order reads every element once
    assert p["stride_head"] == [0, 16, 32]
    assert p["same_values"]
    assert p["b_t_stride"] == [1, 256]  # stored transposed
    assert all(p["cycle"])  # each chain is one cycle through all its entries
    assert len(p["latency"]) == len(p["chase_sizes"])
    text = prose(run.stdout)
    # Each comparison prints compperf's verdict line: claim, the two variants, outcome.
    for order, verdict in p["reads"].items():
        assert verdict["subject"] == f"in order vs {order}"
        assert f"faster (in order vs {order}): {verdict['outcome']}" in text
    first, last = p["chase_sizes"][0], p["chase_sizes"][-1]
    assert p["chains"]["threshold"] == pytest.approx(1 / 1.5)
    assert f"faster ({first} vs {last}): {p['chains']['outcome']}" in text
    for pair in ("a @ b_t vs a @ b", "F.conv2d(image_cl) vs F.conv2d(image)"):
        assert f"faster ({pair}): " in text
    assert p["figures"] == 1


_SCRIPT = {"zh_CN": "CJK", "ru": "CYRILLIC"}


def _in_script(text: str, code: str) -> bool:
    return any(_SCRIPT[code] in unicodedata.name(char, "") for char in text)


@pytest.mark.parametrize("code", TRANSLATED)
@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_message_reads_in_the_language_with_the_same_numbers(name: str, code: str):
    _, records = _recorded(name)
    assert records, f"{name} printed no message through compperf.tr or compperf.say"
    for record in records:
        english = i18n.render(record, "en")
        translated = i18n.render(record, code, strict=True)
        if record.get("wrap"):
            assert _in_script(translated, code), f"{code} paragraph not translated: {english}"
        assert numbers(translated, code) == numbers(english), (
            f"{name}: the {code} text has other numbers than the English one:\n"
            f"{english}\n{translated}"
        )
