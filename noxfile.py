"""The project's verbs: tests, lint, docs. Run ``nox -l`` to list them."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

import nox
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

nox.needs_version = ">=2025.2.9"  # nox.project.dependency_groups
nox.options.default_venv_backend = "venv"
# A bare `nox` checks style and runs the tests; executing the examples, the site build,
# translations and the browser checks are asked for by name (`nox -s examples`, ...).
nox.options.sessions = ["lint", "tests"]

# Languages, chapters and the site URL live in [tool.compperf] of pyproject.toml, read
# by docs/_ext/compperf_project.py (standard library only, so nox can import it too).
sys.path.insert(0, str(Path(__file__).resolve().parent / "docs" / "_ext"))
import compperf_project

PROJECT = compperf_project.load()

# The torch release the site is measured and tested with. On a CPU-only machine with a
# local CPU wheel this takes that wheel; on Linux with NVIDIA GPUs PyPI serves the CUDA
# build; on macOS the MPS-capable build. Override with COMPPERF_TORCH (see README).
TORCH = os.environ.get("COMPPERF_TORCH", "torch==2.13.0")


def install_torch(session: nox.Session) -> None:
    """Install the chosen torch build, with a pip that knows dependency groups.

    A reused environment whose torch is not the build asked for (another version, a
    ``+cpu`` build where CUDA is wanted, ...) is refused with a message: pip would
    otherwise call the requirement satisfied, and ``-R`` skips installing altogether.
    """
    session.install("--upgrade", "pip>=25.1")
    session.install(*shlex.split(TORCH))
    installed = session.run(
        "python", "-c", "import importlib.metadata as m; print(m.version('torch'))",
        silent=True, success_codes=[0, 1],
    )  # fmt: skip
    if installed is None:  # --install-only runs no command: the session's real run checks
        return
    problem = torch_mismatch(TORCH, installed.strip(), nvidia=_has_nvidia_gpu())
    if problem:
        session.error(
            f"{problem}; rebuild the environment: `rm -r {session.virtualenv.location}` "
            "(or `nox --reuse-venv=never`), then run the session again"
        )


def _has_nvidia_gpu() -> bool:
    return sys.platform == "linux" and shutil.which("nvidia-smi") is not None


def torch_mismatch(wanted: str, installed: str, *, nvidia: bool) -> str | None:
    """Why the installed torch is not the build ``wanted`` (pip arguments); ``None`` if it is.

    ``installed`` is the installed version (``""`` when there is none). Without a local
    label (``+cpu``, ``+cu128``) in ``wanted``, a machine with an NVIDIA GPU wants a CUDA
    build: a ``+cpu`` one does not do.
    """
    try:
        requirement = Requirement(next(a for a in shlex.split(wanted) if a.startswith("torch")))
    except (StopIteration, InvalidRequirement):
        return None  # a wheel path or URL: pip decides, nothing to compare
    if not installed:
        return f"torch is not installed, though {wanted!r} was asked for"
    try:
        version = Version(installed)
    except InvalidVersion:
        return f"torch reports the version {installed!r}, which is not a version"
    if not requirement.specifier.contains(version, prereleases=True):
        return f"torch {installed} is installed, but COMPPERF_TORCH asks for {wanted!r}"
    local_wanted = any("+" in spec.version for spec in requirement.specifier)
    if nvidia and not local_wanted and version.local == "cpu":
        return (
            f"torch {installed} is a CPU build, but this machine has an NVIDIA GPU and "
            f"{wanted!r} means the CUDA build here"
        )
    return None


def provide_dot(session: nox.Session) -> None:
    """Make the docs group's graphviz-pure the session's ``dot``.

    The ``graphviz`` package (the examples draw their graphs with it) runs ``dot`` by
    name; graphviz-pure installs its program as ``graphviz-pure`` so as never to shadow a
    system Graphviz. Here, inside the session's virtualenv only, it is ``dot`` too: the
    pictures come out the same on every machine, with or without Graphviz installed.
    """
    if session.virtualenv.location is None or session.bin is None:
        return
    binary = Path(session.bin) / ("graphviz-pure.exe" if os.name == "nt" else "graphviz-pure")
    if not binary.is_file():
        session.error(f"{binary} is missing: the docs group installs graphviz-pure")
    dot = binary.with_name(binary.name.replace("graphviz-pure", "dot"))
    if dot.is_symlink() or dot.is_file():
        dot.unlink()
    try:
        dot.symlink_to(binary.name)
    except OSError:  # no symlinks (Windows without developer mode)
        shutil.copy2(binary, dot)


def font_config(session: nox.Session) -> dict[str, str]:
    """``FONTCONFIG_FILE`` for a browser: the system's fonts plus the font wheels' folders.

    Chromium finds fonts through fontconfig, which knows nothing of the wheels the site
    group installs (noto-cjk-sans-otc draws Chinese); this configuration adds their
    folders, so a machine without fonts-noto-cjk shows characters, not boxes.
    """
    folders = session.run(
        "python", "-c",
        "import importlib.metadata as m, pathlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    for f in m.distribution(name).files or []:\n"
        "        if f.suffix.lower() in ('.ttc', '.otf', '.ttf'):\n"
        "            print(pathlib.Path(f.locate()).resolve().parent)",
        *sorted({language.font_wheel for language in PROJECT.languages if language.font_wheel}),
        silent=True,
    )  # fmt: skip
    if folders is None:  # --install-only
        return {}
    location = Path(session.virtualenv.location)
    config = location / "fonts.conf"
    dirs = "".join(f"  <dir>{folder}</dir>\n" for folder in sorted(set(folders.split())))
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
        "<fontconfig>\n"
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
        f"{dirs}  <cachedir>{location / 'fontconfig-cache'}</cachedir>\n"
        "</fontconfig>\n",
        encoding="utf-8",
    )
    return {"FONTCONFIG_FILE": str(config)}


def _install_tests(session: nox.Session) -> None:
    install_torch(session)
    session.install("-e", ".", "--group", "test")
    provide_dot(session)


@nox.session(default=True, reuse_venv=True)
def tests(session: nox.Session) -> None:
    """Run the test suite at the newest allowed versions, without executing the gallery's
    examples (``nox -s examples``); extra arguments go to pytest (``-m executes`` too)."""
    _install_tests(session)
    # The ten slowest tests end every run's report: where the suite's minutes go.
    session.run("pytest", "--durations=10", "-m", "not executes", *session.posargs)


@nox.session(default=False, reuse_venv=True)
def examples(session: nox.Session) -> None:
    """Execute every example alone and each chapter in gallery order, in fast mode, and
    check what the pages print and claim (the tests marked ``executes``, in tests/examples)."""
    _install_tests(session)
    session.run("pytest", "--durations=10", "-m", "executes", *session.posargs)


def lowest_constraints(requirements: list[str]) -> list[str]:
    """``name==X`` for each requirement with a lower bound ``>=X``, as pip constraints."""
    pins = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        lows = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if lows and requirement.name != "torch":
            pins.append(f"{requirement.name}=={max(lows, key=Version)}")
    return pins


@nox.session(reuse_venv=True)
def tests_lowest(session: nox.Session) -> None:
    """Run the tests the lowest allowed versions can change (:data:`LOWERED`) at those versions.

    torch stays the build ``COMPPERF_TORCH`` chooses (builds are chosen per machine,
    see README); what the docs group pins exactly is what the site is built with.
    """
    import nox.project

    groups = nox.project.dependency_groups(nox.project.load_toml("pyproject.toml"), "test")
    project = nox.project.load_toml("pyproject.toml")["project"]
    # In the venv, not session.create_tmp(): that sets TMPDIR for the tests, and the tiny
    # builds' sockets under a long TMPDIR exceed the AF_UNIX path limit.
    constraints = Path(session.virtualenv.location) / "lowest-constraints.txt"
    constraints.write_text(
        "\n".join(lowest_constraints([*project["dependencies"], *groups])) + "\n",
        encoding="utf-8",
    )
    install_torch(session)
    # setuptools 80.9 still ships pkg_resources, which jieba imports and which warns.
    session.install("setuptools==80.9.0")
    session.install("-e", ".", "--group", "test", "-c", str(constraints))
    provide_dot(session)
    session.run("python", "-m", "pip", "list", "--format=freeze", silent=False)
    # The figure checks redraw a docs build's pickled figures, made with the docs session's
    # versions: a numpy 2 pickle does not load under numpy 1. Here no build is theirs.
    no_build = Path(session.virtualenv.location) / "no-docs-build"
    no_build.mkdir(exist_ok=True)
    session.run("pytest", *(session.posargs or LOWERED), env={"COMPPERF_BUILT_DOCS": str(no_build)})


# What tests_lowest runs: the tests that meet what the lowered floors can change. The docs
# group pins the Sphinx stack exactly, so only compperf's own code, the catalogs (babel),
# the figures (matplotlib, numpy), the kernel (ipykernel) and the noxfile (nox) meet other
# versions there; one tiny build in each language carries them through the pipeline. The
# rest of tests/docs checks our pipeline on that same pinned stack, and the examples' runs
# exercise torch, which is not lowered: `nox -s examples` and the docs build run them.
LOWERED = (
    "tests/package",
    "tests/i18n",
    "tests/tooling",
    "tests/docs/test_tiny_build.py",
    "tests/docs/test_kernel.py",
    "tests/examples/test_source_checks.py",
)


# Packages PyPI has as source only (pure Python, no dependencies): pip cannot resolve them
# for another Python version with --only-binary=:all:, so they are checked one by one with
# --no-deps (their metadata comes from building the source with this interpreter).
SOURCE_ONLY = frozenset({"jieba"})


def claimed_pythons(project: dict) -> list[str]:
    """The minor versions the classifiers claim; they must start at requires-python's floor."""
    prefix = "Programming Language :: Python :: 3."
    minors = sorted(
        (
            int(c.removeprefix(prefix))
            for c in project.get("classifiers", [])
            if c.startswith(prefix)
        ),
    )
    versions = [f"3.{minor}" for minor in minors]
    floor = str(project["requires-python"]).removeprefix(">=")
    if not versions or versions[0] != floor or minors != list(range(minors[0], minors[-1] + 1)):
        raise ValueError(
            f"the classifiers claim Python {', '.join(versions) or 'nothing'}, not every minor "
            f"version from requires-python's {floor} on"
        )
    return versions


def for_python(requirements: list[str], version: str) -> list[str]:
    """The requirements that apply on Python ``version``, markers evaluated for it, dropped.

    pip evaluates markers for the running interpreter even with ``--python-version``.
    """
    environment = {"python_version": version, "python_full_version": f"{version}.0"}
    kept = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        requirement.marker = None
        kept.append(str(requirement))
    return kept


def lowest_pins(requirements: list[str]) -> list[str]:
    """Each requirement at its floor (``name==X`` for ``>=X``), exact pins kept, torch too."""
    pins = []
    for text in requirements:
        requirement = Requirement(text)
        lows = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        pins.append(f"{requirement.name}=={max(lows, key=Version)}" if lows else text)
    return pins


# pip reads a wheel's dependencies from the index's metadata file (PEP 658) where the index
# has one; where it has none, a dry run downloads every candidate wheel whole (torch and its
# CUDA libraries: about 3 GB per resolution). With fast-deps pip reads just the metadata,
# through HTTP range requests (falling back to the whole file where a server refuses them):
# the same resolution, at half the CPU time here and without the downloads.
FAST_DEPS = "--use-feature=fast-deps"


def resolution_commands(
    python: str, version: str, requirements: list[str], target: str, *, fast_deps: bool = False
) -> list[list[str]]:
    """pip dry runs that resolve ``requirements`` (markers already evaluated) for ``version``."""
    base = [
        python, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
        *([FAST_DEPS] if fast_deps else []), "--target", target, "--python-version", version,
    ]  # fmt: skip
    binary = [r for r in requirements if Requirement(r).name not in SOURCE_ONLY]
    source = [r for r in requirements if Requirement(r).name in SOURCE_ONLY]
    commands = [[*base, "--only-binary=:all:", *binary]]
    commands += [[*base, "--no-deps", requirement] for requirement in source]
    return commands


def check_python_versions(session: nox.Session) -> None:
    """For each claimed Python, the newest and the lowest set of every group must resolve."""
    import concurrent.futures
    import subprocess
    import tempfile

    import nox.project

    pyproject = nox.project.load_toml("pyproject.toml")
    project = pyproject["project"]
    try:
        versions = claimed_pythons(project)
    except ValueError as error:
        session.error(str(error))
    # What the sessions install together: the test group includes the docs group, so one
    # resolution covers tests, docs and serve.
    sets = {"tests+docs+serve": ["test", "serve"], "lint": ["lint"], "site": ["site"]}
    jobs: dict[tuple[str, str, str, str], list[str]] = {}
    python = str(Path(session.bin) / "python")
    # A pip that no longer knows the feature refuses the option: resolve without it then.
    fast_deps = (
        subprocess.run(
            [python, "-m", "pip", "install", FAST_DEPS, "--help"],
            capture_output=True, check=False, timeout=120,
        ).returncode
        == 0
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as target:
        for version in versions:
            for name, groups in sets.items():
                wanted = [*project["dependencies"]] if "test" in groups else []
                wanted += [r for g in groups for r in nox.project.dependency_groups(pyproject, g)]
                newest = for_python(wanted, version)
                for kind, requirements in (("newest", newest), ("lowest", lowest_pins(newest))):
                    for command in resolution_commands(
                        python, version, requirements, target, fast_deps=fast_deps
                    ):
                        if command not in jobs.values():  # a source-only pin: once a version
                            what = command[-1] if "--no-deps" in command else "wheels"
                            jobs[(version, name, kind, what)] = command
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            results = dict(
                zip(
                    jobs,
                    pool.map(
                        lambda c: subprocess.run(
                            c, capture_output=True, text=True, timeout=900, check=False
                        ),
                        jobs.values(),
                    ),
                    strict=True,
                )
            )
    failed = []
    for (version, name, kind, what), result in results.items():
        if result.returncode:
            name = f"{name}, {what}"
            errors = [
                line
                for line in result.stderr.splitlines()
                if line.startswith("ERROR") and "Ignored the following" not in line
            ]
            failed.append(f"Python {version}, {name} ({kind}): {' '.join(errors[:3])[:600]}")
    session.log(
        f"python versions: {len(results) - len(failed)} of {len(results)} resolutions "
        f"succeed for Python {', '.join(versions)}"
    )
    if failed:
        session.error(
            "these claimed sets do not resolve (change the floors, or claim less in "
            "classifiers and requires-python):\n  " + "\n  ".join(failed)
        )


@nox.session(default=True, reuse_venv=True)
def lint(session: nox.Session) -> None:
    """Check style with ruff, and the CI workflows with GitHub's schema and zizmor."""
    session.install("--upgrade", "pip>=25.1")
    session.install("--group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    workflows = sorted(map(str, Path(".github/workflows").glob("*.y*ml")))
    if workflows:
        # Both offline: the schema ships inside check-jsonschema; zizmor skips the audits
        # that ask GitHub's API. Any finding fails (zizmor exits non-zero).
        session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)
        session.run("zizmor", "--offline", "--no-progress", *workflows)
    # requires-python and the floors are true: pip's resolver, for each claimed version.
    check_python_versions(session)


DOCS_BUILD = Path("docs/_build")
# The first builds first and executes the examples; the others reuse its captured outputs.
DOCS_LANGUAGES = PROJECT.codes
# Tools that otherwise write under $HOME; inductor follows TMPDIR, which must be absolute.
DOCS_CACHE_VARIABLES = {
    "MPLCONFIGDIR": "matplotlib",
    "IPYTHONDIR": "ipython",
    "XDG_CACHE_HOME": "xdg",
    "JUPYTER_RUNTIME_DIR": "jupyter-runtime",
    "TMPDIR": "tmp",
}


# Where sockets may be made (multiprocessing's listeners under TMPDIR, Jupyter's runtime
# files): an AF_UNIX path holds at most 107 bytes, so under a deep checkout these folders
# move to a short one of their own in the system's temporary folder (issue 19).
SOCKET_FOLDERS = ("TMPDIR", "JUPYTER_RUNTIME_DIR")
SHORT_ENOUGH = 60


def docs_cache_env(cache: Path) -> dict[str, str]:
    """The cache variables for a docs build whose cache folder is ``cache`` (absolute).

    Each variable names a folder under ``cache``, created; :data:`SOCKET_FOLDERS` move to
    ``<system temp>/compperf-<hash of cache>/`` when the path under ``cache`` is longer than
    :data:`SHORT_ENOUGH`, so a 150-character checkout builds like a short one.
    """
    import hashlib
    import tempfile

    short = Path(tempfile.gettempdir()) / (
        "compperf-" + hashlib.sha256(str(cache).encode()).hexdigest()[:12]
    )
    env = {}
    for name, folder in DOCS_CACHE_VARIABLES.items():
        path = cache / folder
        if name in SOCKET_FOLDERS and len(str(path)) > SHORT_ENOUGH:
            path = short / folder
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    return env


@nox.session(default=False, reuse_venv=True)
def docs(session: nox.Session) -> None:
    """Build the executed site in every language into docs/_build/html/<lang>/ (see README).

    ``nox -s docs -- --no-exec`` builds without executing examples or notebooks;
    ``--languages=en,ru`` builds only those languages; ``--chapters=asynchronous``
    executes only that chapter's examples; ``--merge=PATH[,PATH]`` first copies in the
    executed outputs of other chapter builds (each PATH a shard's docs folder, or a folder
    of them), then builds executing nothing; other arguments go to sphinx-build.
    """
    install_torch(session)
    session.install("-e", ".", "--group", "docs")
    provide_dot(session)
    html = DOCS_BUILD / "html"
    _build_wheel(session, html / "wheels")

    env = docs_cache_env((DOCS_BUILD / ".cache").resolve())
    args = list(session.posargs)
    if "--no-exec" in args:
        args.remove("--no-exec")
        args += ["-D", "plot_gallery=0", "-D", "nb_execution_mode=off"]
    languages = _take_languages(session, args)
    args += _take_shard_options(session, args)
    # One sphinx-build per language, all in one process (imports paid once). Incremental:
    # Sphinx reads and writes only what changed (compperf_docs deletes the pages of
    # removed sources). Examples and notebooks run only in the first build: the others
    # find sphinx-gallery's md5 stamps in docs/auto_examples and the jupyter cache current.
    session.run(
        "python", "docs/_ext/build_languages.py", "docs", str(html),
        str(DOCS_BUILD / "doctrees"), ",".join(languages), "-W", "--keep-going", "-n", *args,
        env=env,
    )  # fmt: skip


def _build_wheel(session: nox.Session, wheels: Path) -> None:
    """The wheel that downloaded notebooks install compperf from, beside the languages.

    Built again only when the package's sources or metadata are newer than it (building
    takes seconds, most of a rebuild with nothing changed).
    """
    sources = [Path(name) for name in ("pyproject.toml", "README.md", "LICENSE")]
    sources += Path("src").rglob("*.py")
    existing = sorted(wheels.glob("compperf-*.whl"))
    if len(existing) == 1 and existing[0].name == f"compperf-{_package_version()}-py3-none-any.whl":
        newest = max(path.stat().st_mtime for path in sources)
        if existing[0].stat().st_mtime >= newest:
            return
    shutil.rmtree(wheels, ignore_errors=True)
    session.run(
        "python", "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), "."
    )


def _package_version() -> str:
    import nox.project

    return nox.project.load_toml("pyproject.toml")["project"]["version"]


def _take_languages(session: nox.Session, args: list[str]) -> list[str]:
    """Remove ``--languages=a,b`` (or ``--languages a,b``) from args; all by default."""
    chosen = ",".join(DOCS_LANGUAGES)
    for i, arg in enumerate(args):
        if arg == "--languages" and i + 1 < len(args):
            chosen = args.pop(i + 1)
            args.pop(i)
            break
        if arg.startswith("--languages="):
            chosen = args.pop(i).partition("=")[2]
            break
    languages = [code.strip() for code in chosen.split(",") if code.strip()]
    unknown = sorted(set(languages) - set(DOCS_LANGUAGES))
    if unknown or not languages:
        session.error(f"--languages={chosen}: choose among {', '.join(DOCS_LANGUAGES)}")
    return [code for code in DOCS_LANGUAGES if code in languages]


def _take_value(args: list[str], flag: str) -> str | None:
    """Remove ``flag=value`` (or ``flag value``) from args and return the value."""
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            args.pop(i)
            return args.pop(i)
        if arg.startswith(f"{flag}="):
            return args.pop(i).partition("=")[2]
    return None


def _take_shard_options(session: nox.Session, args: list[str]) -> list[str]:
    """Turn ``--chapters`` and ``--merge`` into sphinx-build options (a sharded build).

    ``--merge=PATH`` copies in the outputs now (docs/_ext/compperf_docs/shards.py) and
    returns the option that makes the build reuse them and execute nothing.
    """
    chapters, merge_from = _take_value(args, "--chapters"), _take_value(args, "--merge")
    if chapters is not None and merge_from is not None:
        session.error("--chapters executes examples, --merge executes none: choose one")
    if chapters is not None:
        if not chapters.strip(","):
            session.error("--chapters=: name at least one chapter, e.g. --chapters=compilers")
        return ["-D", f"compperf_chapters={chapters}"]
    if merge_from is None:
        return []
    shards = [
        shard
        for path in merge_from.split(",")
        if path.strip()
        for shard in _shard_folders(session, Path(path.strip()))
    ]
    session.log(f"merging the executed outputs of {', '.join(map(str, shards))}")
    session.run(
        "python", "-m", "compperf_docs.shards", "--docs", "docs", "--examples", "examples",
        *map(str, shards), env={"PYTHONPATH": "docs/_ext"},
    )  # fmt: skip
    return ["-D", "compperf_reuse_outputs=1"]


def _shard_folders(session: nox.Session, path: Path) -> list[Path]:
    """A shard's docs folder (it has auto_examples/), or the shard folders inside path."""
    if (path / "auto_examples").is_dir():
        return [path]
    found = sorted(child for child in path.glob("*") if (child / "auto_examples").is_dir())
    if not found:
        session.error(f"--merge={path}: no shard there (a docs folder with auto_examples/)")
    return found


def _drop_format_flags(path: Path) -> None:
    """Remove the ``python-format`` flags that babel guesses from a ``%`` in page text.

    Page messages are reStructuredText or Markdown, never format strings; with the flag,
    ``msgfmt --check`` rejects any faithful translation of, say, "10 % of the median".
    """
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = []
    for line in lines:
        if line.startswith("#, "):
            flags = [f.strip() for f in line[3:].split(",") if f.strip() != "python-format"]
            if not flags:
                continue
            line = "#, " + ", ".join(flags) + "\n"
        kept.append(line)
    if kept != lines:
        path.write_text("".join(kept), encoding="utf-8")


# The catalogs' POT-Creation-Date: fixed, so that extracting twice gives identical files.
CATALOG_EPOCH = "1767225600"  # 2026-01-01


@nox.session(reuse_venv=True)
def translations(session: nox.Session) -> None:
    """Refresh the catalogs from the English sources (see README).

    docs/locales/<lang>/LC_MESSAGES/*.po hold the page prose; the catalogs under
    src/compperf/locales/ hold what compperf and the examples print, draw and comment
    (compperf_docs.message_catalogs, which also compiles their .mo files).

    Extracts the messages without executing anything, then merges them into each
    language's catalogs with sphinx-intl: new messages arrive untranslated, changed ones
    fuzzy, and the tests in tests/i18n fail until a translator has dealt with them.
    """
    install_torch(session)
    session.install("-e", ".", "--group", "docs")
    env = docs_cache_env((DOCS_BUILD / ".cache").resolve())
    env["SOURCE_DATE_EPOCH"] = CATALOG_EPOCH
    templates = DOCS_BUILD / "gettext"
    shutil.rmtree(templates, ignore_errors=True)  # no template left from a removed page
    # Without executing, sphinx-gallery still writes each example's page (prose and code)
    # and leaves the outputs of already executed ones alone.
    session.run(
        "sphinx-build", "-b", "gettext", "-E", "-W", "--keep-going", "-q",
        "-D", "plot_gallery=0", "-D", "nb_execution_mode=off", *session.posargs,
        "-d", str(DOCS_BUILD / "doctrees" / "gettext"), "docs", str(templates), env=env,
    )  # fmt: skip
    languages = [flag for code in DOCS_LANGUAGES[1:] for flag in ("-l", code)]
    session.run("sphinx-intl", "update", "-p", str(templates), "-d", "docs/locales", *languages)
    for path in Path("docs/locales").rglob("*.po"):
        if path.name != "sphinx.po":  # the UI catalog holds real %(name)s formats
            _drop_format_flags(path)
    # What the examples print, draw and comment: catalogs that ship with compperf.
    session.run("python", "-m", "compperf_docs.message_catalogs", env={"PYTHONPATH": "docs/_ext"})
    # sphinx-intl never deletes: name the catalogs whose page is gone.
    pages = {path.relative_to(templates).with_suffix("") for path in templates.rglob("*.pot")}
    for code in DOCS_LANGUAGES[1:]:
        folder = Path("docs/locales", code, "LC_MESSAGES")
        for path in sorted(folder.rglob("*.po")):
            if path.relative_to(folder).with_suffix("") not in pages:
                session.warn(f"{path} belongs to no page any more: delete or rename it")


@nox.session(reuse_venv=True)
def serve(session: nox.Session) -> None:
    """Preview the site as you write: rebuild on every change and reload the browser.

    Serves one language on http://127.0.0.1:8000/ (``-- --language=ru``; English by
    default) with sphinx-autobuild, into docs/_build/serve/ (never the deployable
    docs/_build/html/). Nothing executes unless you pass ``--exec``: unchanged examples
    keep their last outputs, like ``nox -s docs -- --no-exec``. Other arguments go to
    sphinx-autobuild (e.g. ``--port 8001``, ``--open-browser``).
    """
    install_torch(session)
    session.install("-e", ".", "--group", "docs", "--group", "serve")
    provide_dot(session)
    args = list(session.posargs)
    language = _take_value(args, "--language") or DOCS_LANGUAGES[0]
    if language not in DOCS_LANGUAGES:
        session.error(f"--language={language}: choose one of {', '.join(DOCS_LANGUAGES)}")
    if "--exec" in args:
        args.remove("--exec")
    else:
        args += ["-D", "plot_gallery=0", "-D", "nb_execution_mode=off"]
    serve_root = DOCS_BUILD / "serve"
    session.run(
        "python", "-m", "pip", "wheel", "--quiet", "--no-deps",
        "--wheel-dir", str(serve_root / "wheels"), ".",
    )  # fmt: skip
    env = docs_cache_env((DOCS_BUILD / ".cache").resolve())
    # sphinx-autobuild, watching docs/, examples/ and src/compperf/, and rebuilding only for
    # a saved source file: never for what the build writes, a folder or an editor's
    # temporary file, with a polling watcher too (docs/_ext/compperf_serve.py).
    session.run(
        "python", "docs/_ext/compperf_serve.py", "-b", "html", "-D", f"language={language}",
        "-d", str(serve_root / ".doctrees" / language),
        *args, "docs", str(serve_root / language),
        env=env,
    )  # fmt: skip


# tests/site/conftest.py serves the built site here; downloaded notebooks install compperf
# from it, so the site under test must be built with COMPPERF_SITE_URL set to it.
SITE_TEST_URL = "http://127.0.0.1:8765/"


@nox.session(reuse_venv=True)
def site(session: nox.Session) -> None:
    """Check the built site as readers and learners meet it (see README); never builds it.

    Browser checks in Debian's Chromium, the link check, axe-core, and downloaded examples
    run in a fresh venv. Arguments go to pytest (e.g. ``-k links``).
    """
    if not (DOCS_BUILD / "html" / "index.html").is_file():
        session.error(
            f"no built site in {DOCS_BUILD / 'html'}: run "
            f"`COMPPERF_SITE_URL={SITE_TEST_URL} nox -s docs` first"
        )
    if shutil.which("npm") is None:
        session.error("npm is missing: tests/site installs axe-core from the npm registry")
    session.install("--upgrade", "pip>=25.1")
    session.install("--group", "site")
    env = docs_cache_env((DOCS_BUILD / ".cache").resolve())
    session.run(
        "npm", "ci", "--prefix", "tests/site", "--no-audit", "--no-fund", "--loglevel=error",
        env={"npm_config_cache": str((DOCS_BUILD / ".cache" / "npm").resolve())}, external=True,
    )  # fmt: skip
    env.update(font_config(session))
    # The learner's fresh venv gets the same torch as the other sessions.
    env["COMPPERF_TORCH"] = TORCH
    session.run("pytest", "tests/site", *session.posargs, env=env)


if __name__ == "__main__":
    nox.main()
