"""After a build under .ci/fresh: the figures and graphs came from the wheels (issue 19).

    python .ci/check_fresh.py docs docs/_build/html

Every figure drawn for a language with a font wheel (zh_CN) shows its script and was drawn
with the wheel's font file (the PNG's ``compperf-fonts`` chunk); every graph page of an
executed chapter shows its picture rather than the text fallback. Exit status 1 otherwise.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "_ext"))

import compperf_project
from compperf_docs.languages import figures

from compperf import i18n

# The pages that draw graphs with graphviz, and what each prints when it cannot.
GRAPH_PAGES = {
    "asynchronous/plot_backend_dependency_graph": "no picture",
    "compilers/plot_1_imperative_symbolic": "graphviz cannot draw here",
}
_CJK = re.compile(r"[\u4e00-\u9fff]")
_OUTPUT = re.compile(r'class="sphx-glr-script-out".*?</pre>', re.DOTALL)


def problems(docs: Path, html: Path) -> list[str]:
    found = []
    for language in compperf_project.load().languages:
        if not language.font_wheel:
            continue
        wheel = {str(path) for path in i18n.wheel_fonts(language.code, language.font_wheel)}
        pngs = sorted((docs / "auto_examples").glob(f"*/images/*.{language.code}.png"))
        if not pngs:
            found.append(f"no {language.code} figure under {docs / 'auto_examples'}")
        script = 0
        for png in pngs:
            texts = figures.png_texts(png)
            used = json.loads(texts.get(figures.FONTS_KEY, "{}")).get(language.font)
            if used not in wheel:
                found.append(f"{png}: drawn with {used!r}, not the font of {language.font_wheel}")
            script += any(_CJK.search(t) for t in json.loads(texts.get(figures.TEXTS_KEY, "[]")))
        if pngs and not script:
            found.append(f"no {language.code} figure shows a character of its script")
        print(f"{language.code}: {len(pngs)} figures, {script} with its script, font {wheel}")
    for page, fallback in GRAPH_PAGES.items():
        path = html / "en" / "auto_examples" / f"{page}.html"
        if not path.is_file():
            continue  # a chapter this build did not have
        text = path.read_text(encoding="utf-8")
        printed = "".join(_OUTPUT.findall(text))  # what the page printed, not its code
        stem = page.rpartition("/")[2]
        if fallback in printed or f"sphx_glr_{stem}_001.png" not in text:
            found.append(f"{path}: no graph picture (it says {fallback!r} or shows no image)")
        else:
            print(f"{page}: picture")
    return found


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]), Path(sys.argv[2]))
    for problem in found:
        print(f"check_fresh: {problem}", file=sys.stderr)
    sys.exit(1 if found else 0)
