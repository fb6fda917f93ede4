"""The notebooks' Markdown comes from the pandoc the project pins, whatever is on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pypandoc
import pytest
import tiny_site
from compperf_docs.execute import gallery
from compperf_docs.publish import notebook_markdown

PINNED = Path(pypandoc.__file__).resolve().parent / "files" / "pandoc"
# A newer pandoc on PATH, which pypandoc would prefer: it only says that it was run.
FAKE = "#!/bin/sh\necho called >> {marker}\necho 'pandoc 99.0'\n"
CONVERT = """
import sys
from pathlib import Path
import pypandoc
from compperf_docs.execute import gallery

docs = Path(sys.argv[1])
conf = gallery.gallery_conf(docs, docs.parent / "examples", [])
print(pypandoc.convert_text("*x*", to="md", format="rst", **conf["pypandoc"]).strip())
print(pypandoc.get_pandoc_path())
"""


def test_a_newer_pandoc_on_path_is_not_used(tmp_path: Path) -> None:
    folder, marker = tmp_path / "bin", tmp_path / "called"
    folder.mkdir()
    fake = folder / "pandoc"
    fake.write_text(FAKE.format(marker=marker), encoding="utf-8")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYPANDOC_PANDOC"}
    env["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(tiny_site.DOCS_EXT)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CONVERT), str(tiny_site.DOCS)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert not marker.exists(), "the pandoc on PATH converted the notebook"
    converted, used = result.stdout.strip().splitlines()
    assert converted == "*x*"
    assert Path(used).resolve() == PINNED


def test_a_new_pandoc_version_converts_the_notebooks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYPANDOC_PANDOC", raising=False)  # restored afterwards
    conf = gallery.gallery_conf(tiny_site.DOCS, tiny_site.DOCS.parent / "examples", [])
    before = gallery._conversion_recipe(conf)
    assert f"pandoc {pypandoc.get_pandoc_version()}" in before
    monkeypatch.setattr(notebook_markdown, "pandoc_version", lambda: "99.0")
    assert gallery._conversion_recipe(conf) != before
