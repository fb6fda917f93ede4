"""The checks can fail: a tiny broken site and a failing notebook make them fail.

Each case runs the same test or helper as the real checks, on a synthetic site or
notebook in a temporary folder, and expects the failure that a reader would hit.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
import test_browser
import test_links
from playwright.sync_api import Page
from sitecheck import browser, learner
from sitecheck.server import serve

SITE_URL = "http://127.0.0.1:8765/"
PAGE = """<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>
<link rel="canonical" href="{site_url}{lang}/{name}"></head>
<body><h1 id="top">{title}</h1>
<nav>{switcher}</nav>
<main>{body}</main></body></html>
"""


def _page(root: Path, lang: str, name: str, body: str, switch_to: dict[str, str]) -> None:
    switcher = " ".join(
        f'<a href="{href}" hreflang="{code}">{code}</a>' for code, href in switch_to.items()
    )
    path = root / lang / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        PAGE.format(
            lang=lang, title=name, site_url=SITE_URL, name=name, switcher=switcher, body=body
        ),
        encoding="utf-8",
    )


@pytest.fixture
def tiny_site(tmp_path: Path) -> Path:
    """Two languages; en/page.html switches to zh_CN/page.html, which does not exist."""
    root = tmp_path / "html"
    for lang, other in (("en", "zh_CN"), ("zh_CN", "en")):
        _page(root, lang, "index.html", '<a href="#top">top</a>', {other: f"../{other}/index.html"})
        (root / lang / "searchindex.js").write_text("Search.setIndex({})", encoding="utf-8")
    _page(root, "en", "page.html", '<a href="index.html">home</a>', {"zh_CN": "../zh_CN/page.html"})
    (root / "index.html").write_text(
        '<a href="en/index.html">English</a> <a href="zh_CN/index.html">中文</a>', encoding="utf-8"
    )
    return root


def test_link_check_passes_on_a_sound_site(tiny_site: Path) -> None:
    (tiny_site / "en" / "page.html").unlink()  # the one page with a dangling switcher link
    test_links.test_internal_links_resolve(tiny_site, "en")
    test_links.test_internal_links_resolve(tiny_site, "zh_CN")


def test_link_check_fails_on_a_broken_link(tiny_site: Path) -> None:
    _page(
        tiny_site,
        "en",
        "broken.html",
        '<a href="missing.html">x</a> <a href="index.html#nowhere">y</a>',
        {},
    )
    with pytest.raises(AssertionError) as failure:
        test_links.test_internal_links_resolve(tiny_site, "en")
    message = str(failure.value)
    assert "en/broken.html: <a href> 'missing.html': no file en/missing.html" in message
    assert (
        "en/broken.html: <a href> 'index.html#nowhere': no id 'nowhere' in en/index.html" in message
    )


def test_link_check_fails_on_a_missing_switch_target(tiny_site: Path) -> None:
    with pytest.raises(AssertionError) as failure:
        test_links.test_internal_links_resolve(tiny_site, "en")
    assert "'../zh_CN/page.html': no file zh_CN/page.html" in str(failure.value)


def test_switcher_check_fails_on_a_missing_switch_target(
    tiny_site: Path, new_page: Callable[..., Page]
) -> None:
    with serve(tiny_site) as url, pytest.raises(AssertionError) as failure:
        test_browser.test_switcher_leads_to_the_same_page(
            url, tiny_site, ["en", "zh_CN"], "en", new_page
        )
    message = str(failure.value)
    assert f"en/page.html: the zh_CN link to {url}zh_CN/page.html gave HTTP 404" in message
    assert "index.html" not in message  # the pages whose switcher works pass


def test_switcher_check_fails_when_the_link_goes_elsewhere(
    tiny_site: Path, new_page: Callable[..., Page]
) -> None:
    _page(tiny_site, "zh_CN", "page.html", "", {"en": "../en/index.html"})
    with serve(tiny_site) as url, pytest.raises(AssertionError) as failure:
        test_browser.test_switcher_leads_to_the_same_page(
            url, tiny_site, ["en", "zh_CN"], "zh_CN", new_page
        )
    assert "zh_CN/page.html: no visible link to en/page.html" in str(failure.value)


# A root page that sends the reader on while its own body still arrives: the browser
# aborts the rest of that first response (net::ERR_ABORTED), as a slow server makes it
# do with the real root page. The padding keeps the body arriving when the script runs.
_SELF_REPLACING_ROOT = (
    '<!DOCTYPE html><html><head><script>window.location.replace("en/index.html")</script>'
    "</head><body>{padding}</body></html>"
)


def test_page_log_accepts_a_page_that_replaces_itself_while_loading(
    tiny_site: Path, new_page: Callable[..., Page]
) -> None:
    root = _SELF_REPLACING_ROOT.format(padding="<!-- padding -->" * 400_000)
    (tiny_site / "index.html").write_text(root, encoding="utf-8")
    page = new_page()
    with serve(tiny_site) as url:
        assert browser.open_logged(page, url + "index.html") == []
        assert page.url == f"{url}en/index.html"


def test_page_log_reports_a_failed_request(tiny_site: Path, new_page: Callable[..., Page]) -> None:
    _page(tiny_site, "en", "image.html", '<img src="missing.png" alt="x">', {})
    with serve(tiny_site) as url:
        problems = browser.open_logged(new_page(), f"{url}en/image.html")
    assert f"HTTP 404: {url}en/missing.png" in problems


def _notebook(folder: Path, *sources: str) -> Path:
    path = folder / "example.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]), path
    )
    return path


def test_notebook_runner_passes_a_working_notebook(tmp_path: Path) -> None:
    env = learner.learner_env(Path(sys.prefix), tmp_path)
    notebook = _notebook(tmp_path, "x = 6 * 7", "print('answer', x)")
    executed = learner.run_notebook(Path(sys.executable), notebook, env, timeout=120)
    assert "answer 42" in executed.read_text(encoding="utf-8")


def test_notebook_runner_fails_on_a_failing_cell(tmp_path: Path) -> None:
    env = learner.learner_env(Path(sys.prefix), tmp_path)
    notebook = _notebook(tmp_path, "x = 1", "y = x / 0", "print('never reached')")
    with pytest.raises(learner.LearnerError) as failure:
        learner.run_notebook(Path(sys.executable), notebook, env, timeout=120)
    message = str(failure.value)
    assert "notebook example.ipynb failed" in message
    assert "y = x / 0" in message
    assert "ZeroDivisionError" in message


def test_missing_cjk_font_fails_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from sitecheck import fonts

    monkeypatch.setattr(fonts, "_has_font_for", lambda subtag: False)
    message = fonts.missing_fonts(["en", "zh-CN", "ru"])
    assert message is not None
    assert "zh-CN" in message
    assert "fonts-noto-cjk" in message
    assert fonts.missing_fonts(["en", "ru"]) is None


_INTERFACE_PAGE = """<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>页面</title></head>
<body>
<input type="checkbox" aria-label="{toggle}">
<nav><a href="../en/page.html" lang="en">English</a> <a class="reference" title="compperf.Timer">计时</a></nav>
<article><p>Prose is the page catalogs' concern.</p>
<div class="sphx-glr-download"><a class="download"><code>{download}plot_async_matmul.ipynb</code></a></div>
<img class="sphx-glr-single-img" alt="{alt}"></article>
<footer>{footer}</footer>
</body></html>
"""


def _interface_problems(tmp_path: Path, new_page: Callable[..., Page], **text: str) -> list[str]:
    from sitecheck import interface

    root = tmp_path / "html"
    (root / "zh_CN").mkdir(parents=True)
    (root / "zh_CN" / "page.html").write_text(_INTERFACE_PAGE.format(**text), encoding="utf-8")
    page = new_page()
    with serve(root) as url:
        page.goto(f"{url}zh_CN/page.html")
        return interface.problems(interface.collect(page, "zh_CN/page.html"))


def test_interface_check_passes_a_translated_page(
    tmp_path: Path, new_page: Callable[..., Page]
) -> None:
    assert not _interface_problems(
        tmp_path,
        new_page,
        toggle="显示或隐藏站点导航侧边栏",
        download="下载 Jupyter 笔记本：",
        alt="在 CPU 上的 10 次矩阵乘法",
        footer="使用 <a>Sphinx</a> 和 <a>@pradyunsg</a> 的 <a>Furo</a> 主题构建",
    )


def test_interface_check_names_the_page_element_and_english(
    tmp_path: Path, new_page: Callable[..., Page]
) -> None:
    found = _interface_problems(
        tmp_path,
        new_page,
        toggle="Toggle site navigation sidebar",
        download="Download Jupyter notebook: ",
        alt="10 matrix products on cpu",
        footer="使用 <a>Sphinx</a> 和 <a>@pradyunsg</a>'s <a>Furo</a> 构建",
    )
    message = "\n".join(found)
    assert len(found) == 4, message
    assert "zh_CN/page.html: input[aria-label]: 'Toggle site navigation sidebar'" in message
    assert "'Download Jupyter notebook: plot_async_matmul.ipynb' (English: Download notebook)" in (
        message
    )
    assert "img.sphx-glr-single-img[alt]: '10 matrix products on cpu'" in message
    assert "zh_CN/page.html: footer: \"'s\" (English: 's)" in message
    assert "Prose" not in message  # the article's prose
    assert "English'" not in message  # marked lang="en"
