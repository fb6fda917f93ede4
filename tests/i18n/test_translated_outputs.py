"""What an example printed and drew, shown in each language of a tiny site; executed once.

The English build executes the example and records its messages and figures; the other
languages (from ``[tool.compperf]``) render the printed conclusion and draw the figure
again from that record, with translations from compperf catalogs that this test writes
(a temporary copy of compperf's locales, which the tiny site's conf.py points
``compperf.i18n.LOCALES`` at). A figure label or a message that no catalog translates
stops the build with an error naming the example.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import string
import subprocess
from pathlib import Path
from types import SimpleNamespace

import compperf_project
import pytest
import tiny_site
from compperf_docs.languages import figures
from compperf_docs.languages import printed as printed_module

from compperf import i18n, numerals

DOCS = tiny_site.DOCS
PROJECT = tiny_site.project(chapters=("tiny",))
FIRST, *OTHERS = PROJECT.languages

CONF = tiny_site.conf(
    "import compperf.i18n\n"
    "# The test's own copy of compperf's catalogs, with the tiny example's messages.\n"
    'compperf.i18n.LOCALES = DOCS.parent / "compperf-locales"\n'
    + tiny_site.TRANSLATED
    + tiny_site.NO_SEARCH_DICTIONARY
)

EXAMPLE = '''
"""
Two timers
==========

Prints a conclusion and draws the two timers.
"""

import matplotlib.pyplot as plt

import compperf
from compperf import tr

print(compperf.environment())
compperf.say(
    "The naive timer measured {naive:.1f} ms and the synchronized timer {synced:.1f} ms: "
    "only the second one waits for the device to finish the work it was given.",
    naive=1.25,
    synced=20.5,
)
print("tensor([1, 2, 3])")
compperf.conclude("faster", "synchronized vs naive timer", 0.5, 0.8, below=1.0)

fig, ax = plt.subplots()
ax.bar([tr("naive timer"), tr("synchronized timer")], [1.25, 20.5], label=tr("measured"))
ax.set_title(tr("Two timers on {device}", device="cpu"))
ax.set_ylabel(tr("time (ms)"))
ax.annotate(tr("waits for the device"), xy=(1, 20.5), xytext=(0, 10))
ax.legend()
# Code is raw data, drawn in a monospace family: it stays as drawn in every language.
ax.text(0, 15, "torch.compile", fontfamily="monospace")
'''

SENTENCE = (
    "The naive timer measured {naive:.1f} ms and the synchronized timer {synced:.1f} ms: "
    "only the second one waits for the device to finish the work it was given."
)
# The example's messages in each language the test knows: Chinese and Russian.
MESSAGES = {
    "zh_CN": {
        SENTENCE: "朴素计时器测得 {naive:.1f} 毫秒，同步计时器测得 {synced:.1f} 毫秒："
        "只有后者会等待设备完成交给它的工作。",
        "naive timer": "朴素计时器",
        "synchronized timer": "同步计时器",
        "measured": "测量值",
        "Two timers on {device}": "{device} 上的两个计时器",
        "time (ms)": "时间（毫秒）",
        "waits for the device": "等待设备",
    },
    "ru": {
        SENTENCE: "Наивный таймер намерил {naive:.1f} мс, а синхронизированный — "
        "{synced:.1f} мс: только второй ждёт, пока устройство закончит данную ему работу.",
        "naive timer": "наивный таймер",
        "synchronized timer": "синхронизированный таймер",
        "measured": "измерено",
        "Two timers on {device}": "Два таймера на {device}",
        "time (ms)": "время (мс)",
        "waits for the device": "ждёт устройство",
    },
}
COMMENT = "Code is raw data, drawn in a monospace family: it stays as drawn in every language."
# The comment, in the example's catalog, and the page's prose, in the page catalog: the
# language's downloads translate both.
MESSAGES["zh_CN"][("comment", COMMENT)] = "代码是原始数据，用等宽字体绘制：在每种语言中都保持原样。"
MESSAGES["ru"][("comment", COMMENT)] = (
    "Код — это исходные данные, он нарисован моноширинным шрифтом и остаётся как есть на "
    "любом языке."
)
PROSE = {
    "zh_CN": {
        "Two timers": "两个计时器",
        "Prints a conclusion and draws the two timers.": "打印一个结论，并画出两个计时器。",
    },
    "ru": {
        "Two timers": "Два таймера",
        "Prints a conclusion and draws the two timers.": "Печатает вывод и рисует два таймера.",
    },
}
VALUES = {"naive": 1.25, "synced": 20.5}
FIGURE_TEXTS = (
    "naive timer",
    "synchronized timer",
    "measured",
    "time (ms)",
    "waits for the device",
)


def _languages() -> list[compperf_project.Language]:
    known = [language for language in OTHERS if language.code in MESSAGES]
    if not known:
        pytest.skip("the site has none of the languages this test translates to")
    return known


def _write_catalog(path: Path, language: str, messages: dict[str, str], mo: bool) -> None:
    tiny_site.write_po(path, language, messages, mo=mo)


def _project(root: Path, example: str, messages: dict[str, dict[str, str]]) -> Path:
    site = tiny_site.make(
        root, examples={"plot_timers.py": example}, project=PROJECT, conf=CONF, wheel=True
    )
    docs = site.docs
    locales = root / "compperf-locales"
    if i18n.LOCALES.is_dir():  # compperf's own catalogs, as installed
        shutil.copytree(i18n.LOCALES, locales)
    for language in OTHERS:
        folder = docs / "locales" / language.code / "LC_MESSAGES"
        folder.mkdir(parents=True)
        ui = DOCS / "locales" / language.code / "LC_MESSAGES" / "sphinx.po"
        shutil.copy(ui, folder / "sphinx.po")
        for page in ("index", "auto_examples/tiny/index"):
            _write_catalog(folder / f"{page}.po", language.code, {}, mo=False)
        prose = PROSE.get(language.code, {})
        _write_catalog(folder / "auto_examples/tiny/plot_timers.po", language.code, prose, mo=False)
        mo = locales / language.code / "LC_MESSAGES" / "examples" / "tiny" / "plot_timers.mo"
        _write_catalog(mo, language.code, messages.get(language.code, {}), mo=True)
        # The downloads read the comments' translations from the .po beside it.
        _write_catalog(
            mo.with_suffix(".po"), language.code, messages.get(language.code, {}), mo=False
        )
    return docs


def _build(docs: Path, language: str) -> subprocess.CompletedProcess[str]:
    return tiny_site.Site(docs.parent).build(language=language, nitpicky=False, quiet=False)


@pytest.fixture(scope="module")
def site(tiny_sites: tiny_site.Sites) -> SimpleNamespace:
    docs = _project(tiny_sites.folder("outputs"), EXAMPLE, MESSAGES)
    logs = {}
    for language in PROJECT.codes:
        result = _build(docs, language)
        assert result.returncode == 0, result.stdout + result.stderr
        logs[language] = result.stdout + result.stderr
    return SimpleNamespace(docs=docs, html=docs / "_build" / "html", logs=logs)


def _page(site: SimpleNamespace, language: str) -> str:
    return (site.html / language / "auto_examples" / "tiny" / "plot_timers.html").read_text("utf-8")


def _outputs(page: str) -> str:
    blocks = re.findall(r'<div class="sphx-glr-script-out.*?</pre>', page, re.DOTALL)
    return "\n".join(re.sub(r"<[^>]+>", "", block) for block in blocks)


def _figure(site: SimpleNamespace, language: str) -> Path:
    page = _page(site, language)
    (src,) = re.findall(r'<img src="([^"]+sphx_glr_plot_timers_001[^"]*)"', page)
    path = (site.html / language / "auto_examples" / "tiny" / src).resolve()
    assert path.is_file(), src
    return path


def test_english_build_records_messages_and_pickles_figures(site: SimpleNamespace) -> None:
    gallery = site.docs / "auto_examples" / "tiny"
    data = json.loads((gallery / "plot_timers.messages.json").read_text("utf-8"))
    assert data["example"] == "examples/tiny/plot_timers.py"
    recorded = {record["message"] for record in data["records"]}
    printed = {key for key in MESSAGES["zh_CN"] if isinstance(key, str)}  # not the comment
    provenance = {message for message in recorded if message.startswith("Measured on")}
    assert recorded - provenance == printed
    assert (gallery / "images" / "sphx_glr_plot_timers_001.pickle").is_file()
    assert "executed 1 out of 1" in site.logs[FIRST.code]


@pytest.mark.parametrize("code", PROJECT.codes)
def test_each_page_says_how_disturbed_its_run_was(site: SimpleNamespace, code: str) -> None:
    """The run's account (compperf.watch) and verdicts, recorded once, shown in each language."""
    run = json.loads(
        (site.docs / "auto_examples" / "tiny" / "plot_timers.verdicts.json").read_text("utf-8")
    )
    assert run["example"] == "examples/tiny/plot_timers.py"
    assert [v["outcome"] for v in run["verdicts"]] == ["yes"]
    assert set(run["disturbance"]) >= {"steal", "pressure", "drift", "disturbed", "reasons"}
    assert run["seconds"] > 0
    lines = re.findall(
        r'<p class="compperf-run"><strong>(.*?)</strong>(.*?)</p>', _page(site, code), re.DOTALL
    )
    assert len(lines) == 1, lines
    label, text = (html.unescape(part).strip() for part in lines[0])
    english = i18n.render(run["message"], FIRST.code)
    assert text == i18n.render(run["message"], code, strict=code != FIRST.code)
    if code == FIRST.code:
        assert label == "The machine during this run:"
        # The end of the build lists the disturbed examples, as information (-W stays green).
        assert re.search(
            r"compperf: [01] of 1 recorded example runs were disturbed", site.logs[code]
        )
    else:
        assert label != "The machine during this run:"
        assert text != english


def test_english_page_is_unchanged(site: SimpleNamespace) -> None:
    outputs = _outputs(_page(site, FIRST.code))
    assert "The naive timer measured 1.2 ms" in outputs
    assert _figure(site, FIRST.code).name == "sphx_glr_plot_timers_001.png"


def _as_printed(template: str, code: str) -> str:
    """``template`` filled with :data:`VALUES`, numbers in ``code``'s convention, as compperf
    prints them (compperf.numerals: «1,2 мс» in Russian)."""

    class Printed(string.Formatter):
        def format_field(self, value: object, spec: str) -> str:
            return numerals.localize(super().format_field(value, spec), value, code)

    return Printed().format(template, **VALUES)


@pytest.mark.parametrize("language", _languages() if MESSAGES else [], ids=lambda x: x.code)
def test_printed_sentence_is_in_the_pages_language(
    site: SimpleNamespace, language: compperf_project.Language
) -> None:
    assert "executed 0 out of 0" in site.logs[language.code]
    outputs = _outputs(_page(site, language.code))
    translated = i18n.wrap(_as_printed(MESSAGES[language.code][SENTENCE], language.code))
    assert translated in outputs
    assert "The naive timer" not in outputs
    assert "only the second one waits" not in outputs
    assert "tensor([1, 2, 3])" in outputs  # raw data stays as printed


@pytest.mark.parametrize("language", _languages() if MESSAGES else [], ids=lambda x: x.code)
def test_figure_is_drawn_in_the_pages_language(
    site: SimpleNamespace, language: compperf_project.Language
) -> None:
    figure = _figure(site, language.code)
    assert figure.name == f"sphx_glr_plot_timers_001.{language.code}.png"
    assert figure.read_bytes() != _figure(site, FIRST.code).read_bytes()
    texts = json.loads(figures.png_texts(figure)[figures.TEXTS_KEY])
    table = MESSAGES[language.code]
    for english in FIGURE_TEXTS:
        assert table[english] in texts
        assert english not in texts
    assert table["Two timers on {device}"].format(device="cpu") in texts
    assert "torch.compile" in texts
    page = _page(site, language.code)
    assert f'alt="{table["Two timers on {device}"].format(device="cpu")}"' in page
    thumb = (
        site.html / language.code / "_images" / f"sphx_glr_plot_timers_thumb.{language.code}.png"
    )
    assert thumb.is_file()
    assert f"sphx_glr_plot_timers_thumb.{language.code}.png" in (
        site.html / language.code / "auto_examples" / "tiny" / "index.html"
    ).read_text("utf-8")


def test_rebuild_draws_nothing_again(site: SimpleNamespace) -> None:
    language = _languages()[0].code
    figure = site.docs / "auto_examples" / "tiny" / "images"
    figure /= f"sphx_glr_plot_timers_001.{language}.png"
    before = figure.stat().st_mtime_ns
    result = _build(site.docs, language)
    assert result.returncode == 0, result.stdout + result.stderr
    assert figure.stat().st_mtime_ns == before


UNTRANSLATED = EXAMPLE.replace('ax.set_ylabel(tr("time (ms)"))', 'ax.set_ylabel("seconds")')
UNKNOWN = EXAMPLE.replace(
    "print(compperf.environment())",
    'print(compperf.environment())\ncompperf.say("A sentence that nobody translated.")',
)


@pytest.mark.parametrize(
    ("example", "named"),
    [
        (UNTRANSLATED, "figure sphx_glr_plot_timers_001.png shows 'seconds', which is no message"),
        (UNKNOWN, "the message 'A sentence that nobody translated.' has no"),
    ],
    ids=["figure-label", "message"],
)
def test_untranslatable_output_stops_the_build_naming_the_example(
    tmp_path: Path, example: str, named: str
) -> None:
    language = _languages()[0].code
    docs = _project(tmp_path, example, MESSAGES)
    english = _build(docs, FIRST.code)
    assert english.returncode == 0, english.stdout + english.stderr
    result = _build(docs, language)
    assert result.returncode != 0
    assert f"examples/tiny/plot_timers.py: {named}" in result.stderr, result.stderr


def test_english_build_runs_an_example_without_records_again(site: SimpleNamespace) -> None:
    """Outputs from before messages were recorded cannot be shown in other languages."""
    sidecar = site.docs / "auto_examples" / "tiny" / "plot_timers.messages.json"
    sidecar.unlink()
    result = _build(site.docs, FIRST.code)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "executed 1 out of 1" in result.stdout + result.stderr
    assert sidecar.is_file()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0.5", False),
        ("−1.5", False),
        ("1e6", False),
        ("$10^{3}$", False),
        ("$\\times 10^{-3}$", False),
        ("2x", True),
        ("time (ms)", True),
        ("时间", True),
        ("$x$ axis", True),
    ],
)
def test_only_text_with_letters_needs_a_message(text: str, words: bool) -> None:
    assert figures.has_words(text) is words


def test_printed_messages_are_replaced_where_they_fill_whole_lines() -> None:
    texts = {"A long\nconclusion.": "Длинный\nвывод.", "A long": "Длинный", "ok": "ок"}
    printed = "A long\nconclusion.\nA long time ago\nA long\nok"
    assert printed_module.replace_messages(printed, texts) == (
        "Длинный\nвывод.\nA long time ago\nДлинный\nок"
    )


def test_lines_that_lost_their_shared_indent_are_still_replaced() -> None:
    # sphinx-gallery strips the indentation all lines of a block share: a right-aligned
    # "{size:>10,} bytes" row arrives with fewer leading spaces than it was printed with.
    texts = {
        "     9,691 bytes  the whole model": "     9,691 байт  вся модель",
        "   657,928 bytes  the weights alone": "   657,928 байт  только веса",
    }
    shown = "  9,691 bytes  the whole model\n657,928 bytes  the weights alone"
    replaced = printed_module.replace_messages(shown, texts)
    assert replaced == "  9,691 байт  вся модель\n657,928 байт  только веса"
    assert printed_module.english_left(replaced, texts) == []
    # What the replacement could not place is named, not left silently English.
    assert printed_module.english_left(f"x {shown}", texts) == [
        "   657,928 bytes  the weights alone"
    ]


def test_a_missing_font_names_the_package_to_install() -> None:
    language = compperf_project.Language(
        code="xx", name="X", tag="xx", search="en", font="No Such Font 42", font_package="fonts-x"
    )
    with pytest.raises(
        figures.FigureTextError, match=r"'No Such Font 42'.*apt-get install fonts-x"
    ):
        figures.check_font(language)
