"""Each example's verdicts on a quiet and on a loaded machine, and the disturbance recorded.

Run: ``python benchmarks/under_load.py [--chapters=asynchronous,...] [--real]``. Every
example of each chapter runs alone twice (``tests/examples/harness.py``): quietly, then
while one busy loop per CPU competes for the cores. Per page it prints each verdict's
outcome in both runs (``FLIP`` where yes became no or back, which must never happen), the
running times and what ``compperf.watch`` recorded in each run. Fast mode
(``COMPPERF_FAST=1``) unless ``--real`` asks for the sizes the site uses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "examples"))

from harness import chapters, quiet_and_loaded, verdict_flips


def _disturbance(record: dict) -> str:
    if not record:
        return "not recorded"
    steal = "n/a" if record["steal"] is None else f"{record['steal']:.1%}"
    pressure = "n/a" if record["pressure"] is None else f"{record['pressure']:.0%}"
    state = "DISTURBED (" + ", ".join(record["reasons"]) + ")" if record["disturbed"] else "quiet"
    return f"{state}: steal {steal}, pressure {pressure}, probe drift {record['drift']:.2f}x"


def _outcomes(verdicts: list[dict]) -> dict[tuple[str, str, int], dict]:
    seen: dict[tuple[str, str], int] = {}
    keyed = {}
    for verdict in verdicts:
        pair = (verdict["claim"], verdict["subject"])
        seen[pair] = seen.get(pair, -1) + 1
        keyed[(*pair, seen[pair])] = verdict
    return keyed


def _interval(verdict: dict | None) -> str:
    if verdict is None:
        return "(not made)"
    return f"{verdict['outcome']:<8} [{verdict['low']:.3g}, {verdict['high']:.3g}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", default="asynchronous", help="comma-separated chapters")
    parser.add_argument("--real", action="store_true", help="the site's sizes, not fast mode")
    options = parser.parse_args()
    env = {"COMPPERF_FAST": "0"} if options.real else {}
    wanted = [name.strip() for name in options.chapters.split(",") if name.strip()]
    unknown = sorted(set(wanted) - set(chapters()))
    if unknown:
        parser.error(f"no chapter named {', '.join(unknown)} (choose among {chapters()})")
    flips = 0
    for chapter in wanted:
        for name, (quiet, loaded) in quiet_and_loaded(chapter, **env).items():
            print(f"\n== {chapter}/{name}")
            for label, run in (("quiet ", quiet), ("loaded", loaded)):
                seconds = run.account.get("seconds", float("nan"))
                print(f"  {label} run {seconds:6.1f} s  {_disturbance(run.disturbance)}")
            a, b = _outcomes(quiet.verdicts), _outcomes(loaded.verdicts)
            for key in sorted(a.keys() | b.keys(), key=lambda k: (k[0], k[1], k[2])):
                claim, subject, index = key
                first, second = a.get(key), b.get(key)
                mark = ""
                if first and second and {first["outcome"], second["outcome"]} == {"yes", "no"}:
                    mark = "  FLIP"
                suffix = f" #{index + 1}" if index else ""
                print(f"  {claim} ({subject}){suffix}")
                print(f"      quiet {_interval(first)}   loaded {_interval(second)}{mark}")
            if not a and not b:
                print("  (no verdicts on this device)")
            flips += len(verdict_flips(quiet.verdicts, loaded.verdicts))
    print(f"\n{flips} verdict(s) flipped between yes and no")
    return 1 if flips else 0


if __name__ == "__main__":
    sys.exit(main())
