"""The deployment workflow: its plan step, the GPU runner setting and its CPU fallback.

`nox -s lint` validates the workflow against GitHub's schema and audits it with zizmor;
these tests run the plan step's script as GitHub would and check what the jobs use.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import compperf_project
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "docs.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _conf_chapters() -> list[str]:
    return compperf_project.chapters()


def _plan(workflow: dict, tmp_path: Path, gpu_runner: str, pages_url: str) -> dict[str, str]:
    """Run the plan step's script in the checkout; return what it wrote to GITHUB_OUTPUT."""
    (step,) = [s for s in workflow["jobs"]["plan"]["steps"] if s.get("id") == "plan"]
    output = tmp_path / "github_output"
    output.touch()
    env = {
        **os.environ,
        "GITHUB_OUTPUT": str(output),
        "GPU_RUNNER": gpu_runner,
        "PAGES_URL": pages_url,
        "OWNER": "someone",
        "REPO": "compperf",
    }
    subprocess.run(["bash", "-e", "-c", step["run"]], cwd=ROOT, env=env, check=True)
    lines = output.read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines)


def test_gpu_runner_is_one_setting_at_the_top(workflow: dict) -> None:
    assert "GPU_RUNNER" in workflow["env"]
    assert workflow["jobs"]["shard"]["runs-on"] == "${{ needs.plan.outputs.runner }}"
    text = WORKFLOW.read_text(encoding="utf-8")
    assert text.count("GPU_RUNNER") == 2  # set once at the top, read once by the plan


def test_plan_falls_back_to_a_cpu_runner(workflow: dict, tmp_path: Path) -> None:
    plan = _plan(workflow, tmp_path, gpu_runner="", pages_url="")
    assert plan["runner"] == "ubuntu-latest"
    assert plan["chapters"] == str(_conf_chapters()).replace("'", '"')
    assert plan["site-url"] == "https://someone.github.io/compperf/"


def test_plan_uses_the_gpu_label_and_the_pages_address(workflow: dict, tmp_path: Path) -> None:
    plan = _plan(workflow, tmp_path, gpu_runner="gpu-a100", pages_url="https://docs.example.org")
    assert plan["runner"] == "gpu-a100"
    assert plan["site-url"] == "https://docs.example.org/"


def test_shards_feed_the_merge(workflow: dict) -> None:
    jobs = workflow["jobs"]
    shard_run = " ".join(step.get("run", "") for step in jobs["shard"]["steps"])
    assert '--chapters="$CHAPTER"' in shard_run
    site_run = " ".join(step.get("run", "") for step in jobs["site"]["steps"])
    assert "--merge=shards" in site_run
    assert jobs["deploy"]["needs"] == "site"


def test_actions_are_pinned_to_commits(workflow: dict) -> None:
    uses = [
        step["uses"] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step
    ]
    assert uses
    for use in uses:
        assert re.fullmatch(r"actions/[a-z-]+@[0-9a-f]{40}", use), use
