"""A learner downloads an example and runs it in a fresh environment, as the page says."""

from __future__ import annotations

import os
import re
import shutil
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from sitecheck import learner

# Short examples, so the run stays well inside the time limit on a laptop CPU. Not run
# with COMPPERF_FAST: the learner runs what they downloaded, as it is.
NOTEBOOK_PAGE = "auto_examples/asynchronous/plot_async_matmul.html"
SCRIPT_PAGE = "auto_examples/compilers/plot_1_imperative_symbolic.html"
TIME_LIMIT = 600  # seconds per example, installs included
# Where the learner's torch comes from; nox -s site passes its own COMPPERF_TORCH.
TORCH = os.environ.get("COMPPERF_TORCH", "torch==2.13.0")


def _download(site_url: str, page: str, suffix: str, folder: Path, language: str = "en") -> Path:
    """Fetch the page's download link ending in ``suffix`` into ``folder``, as a browser would."""
    page_url = f"{site_url}{language}/{page}"
    with urllib.request.urlopen(page_url) as response:
        soup = BeautifulSoup(response.read(), "html.parser")
    hrefs = [a["href"] for a in soup.select("a.download[href]") if a["href"].endswith(suffix)]
    assert hrefs, f"{page_url} has no {suffix} download link"
    url = urllib.parse.urljoin(page_url, hrefs[0])
    target = folder / Path(urllib.parse.urlsplit(url).path).name
    with urllib.request.urlopen(url) as response:
        target.write_bytes(response.read())
    return target


@pytest.fixture(scope="module")
def learner_python(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A fresh venv with only torch, ipykernel and nbclient, and a bare home folder."""
    base = tmp_path_factory.mktemp("learner")
    venv, home = base / "venv", base / "home"
    home.mkdir()
    env = learner.learner_env(venv, home)
    python = learner.create_venv(venv, TORCH, env)
    yield python, env
    shutil.rmtree(venv, ignore_errors=True)  # about a gigabyte, mostly torch


def test_downloaded_notebook_runs(
    site_url: str, learner_python: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    python, env = learner_python
    notebook = _download(site_url, NOTEBOOK_PAGE, ".ipynb", tmp_path)
    install = learner.first_cell_install(notebook)
    assert any(arg.startswith(f"{site_url}wheels/compperf-") for arg in install), (
        f"the notebook installs {install}, not compperf from {site_url}wheels/: rebuild the "
        f"site with COMPPERF_SITE_URL={site_url} after deleting docs/auto_examples "
        "(sphinx-gallery rewrites a notebook only when its example changed)"
    )
    executed = learner.run_notebook(python, notebook, env, TIME_LIMIT)
    outputs = executed.read_text(encoding="utf-8")
    assert "Measured on " in outputs, "the executed notebook does not say where it ran"


def test_downloaded_script_runs(
    site_url: str, learner_python: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The .py, after installing what its notebook's first cell installs."""
    python, env = learner_python
    script = _download(site_url, SCRIPT_PAGE, ".py", tmp_path)
    notebook = _download(site_url, SCRIPT_PAGE, ".ipynb", tmp_path)
    for install in learner.first_cell_installs(notebook):
        learner.pip_install(python, install, env, TIME_LIMIT)
    printed = learner.run_script(python, script, env, TIME_LIMIT)
    assert "Measured on " in printed, f"{script.name} did not say where it ran:\n{printed}"


# The language whose downloads must print in it: Chinese, where a stray English sentence
# is easy to tell from the rest.
CHINESE = "zh_CN"
_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_downloaded_chinese_script_prints_chinese(
    site_url: str, learner_python: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The zh_CN page's .py selects its language and prints its sentences in Chinese."""
    python, env = learner_python
    script = _download(site_url, SCRIPT_PAGE, ".py", tmp_path, CHINESE)
    notebook = _download(site_url, SCRIPT_PAGE, ".ipynb", tmp_path, CHINESE)
    assert f'compperf.use_language("{CHINESE}")' in script.read_text(encoding="utf-8")
    for install in learner.first_cell_installs(notebook):
        learner.pip_install(python, install, env, TIME_LIMIT)
    printed = learner.run_script(python, script, env, TIME_LIMIT)
    chinese = [line for line in printed.splitlines() if _CJK.search(line)]
    assert chinese, f"{script.name} from the {CHINESE} page printed no Chinese:\n{printed}"
    assert "Measured on " not in printed, "the provenance line is still English"
