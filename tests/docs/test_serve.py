"""``nox -s serve`` rebuilds once per saved file and never while idle (docs/_ext/compperf_serve.py).

sphinx-autobuild builds again for every change its watcher reports that its filter lets
through. A polling watcher (``WATCHFILES_FORCE_POLLING=1``) reports every file and folder
whose modification time or size changed, so the snapshots here see what such a watcher
sees: whatever a build changes in the watched folders must be ignored (or the build starts
another), and an editor's save must count as the one file it saved.
"""

from __future__ import annotations

import os
from pathlib import Path

import compperf_serve
import pytest
import tiny_site

EXAMPLE = '''
"""
Served
======

Shown while writing.
"""

import compperf

print(compperf.environment())
'''


def _snapshot(site: tiny_site.Site) -> dict[Path, tuple[bool, int, int]]:
    """Every file and folder a watcher of the site sees: (is a folder, mtime, size)."""
    seen = {}
    for top in (site.docs, site.examples):
        for folder, folders, files in os.walk(top):
            for name in [*folders, *files, ""]:
                path = Path(folder, name) if name else Path(folder)
                info = path.lstat()
                seen[path] = (path.is_dir(), info.st_mtime_ns, info.st_size)
    return seen


def _changed(before: dict, after: dict) -> set[Path]:
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


def _started_a_build(site: tiny_site.Site, changed: set[Path]) -> list[str]:
    return sorted(
        path.relative_to(site.root).as_posix()
        for path in changed
        if not compperf_serve.ignored(path, site.root)
    )


@pytest.fixture(scope="module")
def site(tiny_sites: tiny_site.Sites) -> tiny_site.Site:
    return tiny_sites.make("served", examples={"plot_served.py": EXAMPLE})


def _serve_build(site: tiny_site.Site) -> None:
    """One build as ``nox -s serve`` starts it: nothing executes, no bytecode."""
    result = site.build(
        "-D", "plot_gallery=0",  # and nb_execution_mode=off: the tiny site has no myst-nb
        env=site.env(PYTHONDONTWRITEBYTECODE="1"),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_build_starts_no_other_build(site: tiny_site.Site) -> None:
    # The first build creates docs/_build and docs/auto_examples: docs/ itself changes.
    before = _snapshot(site)
    _serve_build(site)
    changed = _changed(before, _snapshot(site))
    assert site.docs in changed
    assert _started_a_build(site, changed) == []
    # A saved example: the build that follows writes its pages again, nothing that counts.
    example = site.examples / "tiny" / "plot_served.py"
    example.write_text(example.read_text(encoding="utf-8") + "\n# %%\nprint(1)\n", "utf-8")
    saved = _snapshot(site)
    _serve_build(site)
    assert _started_a_build(site, _changed(saved, _snapshot(site))) == []


def test_an_editors_save_is_the_one_file_it_saved(site: tiny_site.Site) -> None:
    folder = site.examples / "tiny"
    example = folder / "plot_served.py"
    before = _snapshot(site)
    # vim: swap file while typing, then :w (probe, backup, the file, backup removed).
    swap = folder / ".plot_served.py.swp"
    swap.write_bytes(b"b0VIM 9.1")
    assert _started_a_build(site, _changed(before, _snapshot(site))) == []
    (folder / "4913").write_bytes(b"")
    (folder / "4913").unlink()
    backup = folder / "plot_served.py~"
    example.rename(backup)
    example.write_text(backup.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    backup.unlink()
    # emacs, in the same folder: its lock and auto-save files.
    (folder / "#plot_served.py#").write_text("draft", encoding="utf-8")
    (folder / ".#plot_served.py").write_text("user@host.1234", encoding="utf-8")
    changed = _changed(before, _snapshot(site)) | {folder / "4913", backup}
    assert folder in changed  # what a polling watcher reports for the folder
    assert _started_a_build(site, changed) == ["examples/tiny/plot_served.py"]


@pytest.mark.parametrize(
    "path",
    [
        "docs/_ext/compperf_docs/__pycache__/order.cpython-311.pyc",
        "src/compperf/__pycache__",
        "src/compperf/locales/ru/LC_MESSAGES/compperf.mo",
        "docs/auto_examples/tiny/plot_served.py.md5",
        "examples/serialization/checkpoints_output/model.pt",
    ],
)
def test_what_builds_and_runs_write_is_ignored(path: str, tmp_path: Path) -> None:
    assert compperf_serve.ignored(tmp_path / path, tmp_path)


@pytest.mark.parametrize(
    "path",
    [
        "docs/index.rst",
        "docs/_ext/compperf_docs/order.py",
        "docs/locales/ru/LC_MESSAGES/index.po",
        "src/compperf/verdicts.py",
        "examples/asynchronous/plot_cost_model.py",
        "docs/_templates/page.html",
    ],
)
def test_a_saved_source_is_never_ignored(path: str, tmp_path: Path) -> None:
    assert not compperf_serve.ignored(tmp_path / path, tmp_path)
