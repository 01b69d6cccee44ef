"""The developer interface of ptnotes. `nox` alone runs what CI runs; `nox -l` lists sessions.

Every session that needs torch installs it pinned (``[tool.ptnotes] torch`` in pyproject.toml
unless the environment variable ``PTNOTES_TORCH`` names another requirement), because an
unpinned ``torch`` pulls a multi-GB CUDA build. Other tools are pinned in ``constraints.txt``.
The project's machinery (``tools/``, the ``ptnotes_dev`` package) is installed editable into
the sessions that use it. Virtual environments are reused, and a session skips its install
step when nothing it installs has changed.

The settings shared with conf.py, the tests and the benchmarks come from ``[tool.ptnotes]``;
this file reads the table with tomllib because it runs before any session has installed
``ptnotes_dev``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.error_on_external_run = True
nox.options.sessions = ["lint", "tests", "doctest", "doctest_numerics", "docs", "browser"]

ROOT = Path(__file__).resolve().parent
DOCS = ROOT / "docs"
BUILD = ROOT / "build"
TOOLS = ROOT / "tools"
CONSTRAINTS = ROOT / "constraints.txt"
SETTINGS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ptnotes"]
TORCH = os.environ.get("PTNOTES_TORCH", SETTINGS["torch"])
LANGUAGES = tuple(language["code"] for language in SETTINGS["languages"])
SPHINX_FLAGS = tuple(SETTINGS["sphinx-flags"])
DOCTEST_TARGETS = tuple(SETTINGS["doctest-targets"])


def torch_env(**extra: str) -> dict[str, str]:
    """The environment for a command that runs torch, with ``extra`` on top.

    Inductor's cache of compiled kernels is kept per ATen CPU capability: its key leaves
    ``ATEN_CPU_CAPABILITY`` out, so a kernel compiled under one setting is reused under
    another and fails to compile (``at::vec`` undeclared under ``default``). A cache folder
    set by the caller is kept.
    """
    env = dict(extra)
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        capability = env.get("ATEN_CPU_CAPABILITY", os.environ.get("ATEN_CPU_CAPABILITY", "native"))
        env["TORCHINDUCTOR_CACHE_DIR"] = str(ROOT / ".nox" / "inductor-cache" / capability)
    return env


def prune_other_environments(session: nox.Session) -> None:
    """With ``PTNOTES_PRUNE_VENVS=1`` (CI sets it), remove the other sessions' environments.

    Each session's environment holds its own torch (about 1.2 GB), and ``nox`` makes seven;
    on a small disk the fourth one's install has failed with "No space left on device". A
    run that keeps only the current session's environment needs one torch on disk at a
    time. The sessions do not share files through ``.nox`` (the site is in ``build/``), so
    removing another session's environment only costs that session a fresh install next
    time. Folders that are not environments (the inductor cache, the matrix's releases)
    are kept.
    """
    if os.environ.get("PTNOTES_PRUNE_VENVS") != "1":
        return
    current = Path(session.virtualenv.location).resolve()
    for folder in sorted(current.parent.iterdir()):
        if folder.resolve() != current and (folder / "pyvenv.cfg").is_file():
            session.log(f"PTNOTES_PRUNE_VENVS=1: removing {folder.name} to free disk space")
            shutil.rmtree(folder)
    free = shutil.disk_usage(current.parent).free / 2**30
    session.log(f"PTNOTES_PRUNE_VENVS=1: {free:.1f} GiB free on the disk of {current.parent}")


def install(session: nox.Session, *extras: str, torch: bool = True, tools: bool = True) -> None:
    """Install pinned torch, ``ptnotes[extras]`` and the machinery (editable), unless done.

    First removes the other sessions' environments when ``PTNOTES_PRUNE_VENVS=1``
    (:func:`prune_other_environments`).
    """
    prune_other_environments(session)
    spec = f".[{','.join(extras)}]" if extras else "."
    key = hashlib.sha256(
        "\n".join(
            [
                TORCH if torch else "",
                spec,
                str(tools),
                (ROOT / "pyproject.toml").read_text(),
                (TOOLS / "pyproject.toml").read_text(),
                CONSTRAINTS.read_text(),
            ]
        ).encode()
    ).hexdigest()
    stamp = Path(session.virtualenv.location) / ".ptnotes-installed"
    if stamp.exists() and stamp.read_text() == key:
        session.log("dependencies unchanged: install skipped")
        return
    if torch:
        session.install(TORCH)
    editable = ["-e", spec, *(["-e", str(TOOLS)] if tools else [])]
    session.install("-c", str(CONSTRAINTS), *editable)
    stamp.write_text(key)


def ensure_system_commands(session: nox.Session, packages: dict[str, str]) -> None:
    """Make sure each command exists, installing its Debian package when we can (root + apt).

    ``packages`` maps a command to the Debian package that provides it.
    """
    missing = {cmd: pkg for cmd, pkg in packages.items() if shutil.which(cmd) is None}
    if not missing:
        return
    names = sorted(set(missing.values()))
    if os.geteuid() == 0 and shutil.which("apt-get"):
        session.log(f"installing {', '.join(names)} with apt-get (missing: {', '.join(missing)})")
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", "-qq", external=True, env=env)
        session.run("apt-get", "install", "-y", "-qq", *names, external=True, env=env)
        return
    session.error(
        f"missing command(s) {', '.join(missing)}: install {', '.join(names)} "
        "(e.g. `sudo apt-get install " + " ".join(names) + "`) and run again"
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict, and the CI workflows (actionlint, the GitHub-workflow schema).

    ruff lints and format-checks everything, mypy checks src/ptnotes and tools/; actionlint
    (with shellcheck on the run scripts) and check-jsonschema check .github/workflows offline.
    """
    install(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
    workflows = sorted(str(path) for path in (ROOT / ".github" / "workflows").glob("*.yml"))
    session.run("actionlint", *workflows)
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)


@nox.session
def tests(session: nox.Session) -> None:
    """Unit tests of the package and the project's own checks (tests/, except tests/site)."""
    # dot: tests/test_gallery.py runs the gallery script that draws with Graphviz.
    ensure_system_commands(session, {"msgfmt": "gettext", "dot": "graphviz"})
    install(session, "test", "docs")
    session.run("pytest", "tests", "--ignore=tests/site", *session.posargs, env=torch_env())


@nox.session
def doctest(session: nox.Session) -> None:
    """Every example of the pages (docs/**/*.md) and docstrings (src/ptnotes), on CPU."""
    install(session, "test")
    session.run(
        "pytest", *DOCTEST_TARGETS, *session.posargs, env=torch_env(PTNOTES_DOCTEST_DEVICE="cpu")
    )  # fmt: skip


#: Settings that change the rounding of BLAS-heavy results on one machine as another CPU or
#: thread count does (MKL's code path, the thread count, ATen's vector ISA).
NUMERICS = {
    "mkl-compatible-1-thread": {"MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "1"},
    "mkl-avx2-default-isa": {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "default"},
}


@nox.session
@nox.parametrize("numerics", list(NUMERICS))
def doctest_numerics(session: nox.Session, numerics: str) -> None:
    """The doctests again under altered numerics, as another CPU would compute them.

    An output that prints the last bits of a float reduction fails here before it fails on
    a reader's machine. Part of `nox` (CI), one session per setting.
    """
    install(session, "test")
    env = torch_env(PTNOTES_DOCTEST_DEVICE="cpu", **NUMERICS[numerics])
    session.log(" ".join(f"{k}={v}" for k, v in NUMERICS[numerics].items()))
    session.run("pytest", *DOCTEST_TARGETS, "-q", *session.posargs, env=env)


@nox.session(venv_params=["--system-site-packages"])
def doctest_cuda(session: nox.Session) -> None:
    """Every example with CUDA as the default device, plus the CUDA-only ones.

    Uses the CUDA build of torch already on the machine (never installs torch), prints the
    versions it runs on, and fails at once when no CUDA device is usable.
    """
    # ptnotes and its machinery by path: a GPU machine often has no package index to
    # install them (or hatchling) from.
    path = os.pathsep.join([str(ROOT / "src"), str(TOOLS)])
    session.run("python", "-m", "ptnotes_dev.cuda_check", env={"PYTHONPATH": path})
    session.install("-c", str(CONSTRAINTS), "pytest", "sybil")
    session.run(
        "pytest",
        *DOCTEST_TARGETS,
        *session.posargs,
        env={"PTNOTES_DOCTEST_DEVICE": "cuda", "PYTHONPATH": path},
    )


@nox.session(default=False)
def matrix(session: nox.Session) -> None:
    """Every example on every torch minor release of the supported range (cached).

    Keeps one environment per release under .nox/matrix-releases/ (the registry's builds, ~3 GB
    each), runs only the pages whose examples have no result for a release yet, runs the unit
    tests on the lowest and newest release, and writes docs/_data/matrix.json. Arguments go
    to ``python -m ptnotes_dev.matrix run`` (e.g. ``-- --release 2.4.1``; CI's shards:
    ``-- --release 2.4.1 --output shard.json``), or to another of its commands when they
    start with its name (``-- plan --json``, ``-- merge shard-*.json``).
    """
    install(session, "test")
    args = list(session.posargs)
    if not args or args[0].startswith("-"):
        args.insert(0, "run")
    session.run("python", "-m", "ptnotes_dev.matrix", *args)


def sphinx_build(session: nox.Session, language: str, *extra: str) -> None:
    session.run(
        "sphinx-build",
        "-b",
        "html",
        *SPHINX_FLAGS,
        "-D",
        f"language={language}",
        "-d",
        str(BUILD / "doctrees" / language),
        *extra,
        str(DOCS),
        str(BUILD / "html" / language),
        env=torch_env(),  # the gallery runs torch.compile
    )


def gettext_build(session: nox.Session) -> None:
    """Extract the English messages into build/gettext/*.pot."""
    session.run(
        "sphinx-build", "-b", "gettext", "-q", "-d", str(BUILD / "doctrees" / "gettext"),
        str(DOCS), str(BUILD / "gettext"),
    )  # fmt: skip


@nox.session
def docs(session: nox.Session) -> None:
    """Build both editions into build/html/{en,zh_CN}/ plus a root page that picks one.

    English is built first: it executes the gallery scripts; the zh_CN build then finds
    sphinx-gallery's cache up to date and executes none.
    """
    # Graphviz's dot draws the autograd graphs (sphinx.ext.graphviz, the gallery).
    ensure_system_commands(session, {"dot": "graphviz"})
    install(session, "docs")
    source, *translations = LANGUAGES
    session.log(f"building the {source} edition (executes changed gallery scripts)")
    sphinx_build(session, source, *session.posargs)
    session.log("checking that the catalogs hold every message of the English source")
    gettext_build(session)
    session.run("python", "-m", "ptnotes_dev.i18n", "sync", str(BUILD / "gettext"))
    for language in translations:
        session.log(f"building the {language} edition (executes no gallery script)")
        sphinx_build(session, language, *session.posargs)
    session.run("python", "-m", "ptnotes_dev.site", str(BUILD / "html"))
    session.log(f"site ready: open {BUILD / 'html' / 'index.html'}")


#: What `nox -s offline` needs from Debian: a command each, or (fonts, language support) a
#: package whose files have no command of their own.
OFFLINE_COMMANDS = {
    "pdffonts": "poppler-utils",
    "xelatex": "texlive-xetex",
    "latexmk": "latexmk",
    "epubcheck": "epubcheck",
    "java": "default-jre-headless",
}
OFFLINE_PACKAGES = (
    "texlive-lang-chinese",
    "texlive-latex-recommended",
    "texlive-latex-extra",
    "texlive-fonts-recommended",
    "fonts-noto-cjk",
    "fonts-dejavu-core",
)


EPUBCHECK = "/usr/share/java/epubcheck.jar"


def ensure_debian_packages(session: nox.Session, packages: tuple[str, ...]) -> None:
    """Like :func:`ensure_system_commands`, for packages that install no command."""
    if not shutil.which("dpkg-query"):
        session.error(f"not a Debian system: install {', '.join(packages)} by hand")

    def installed(name: str) -> bool:
        query = ["dpkg-query", "-W", "-f=${Status}", name]
        status = subprocess.run(query, capture_output=True, text=True, check=False).stdout
        return status == "install ok installed"

    missing = [name for name in packages if not installed(name)]
    if missing:
        ensure_system_commands(session, {f"<{name}>": name for name in missing})


#: Seconds per step of the last `nox -s offline`, per edition.
OFFLINE_TIMES = BUILD / "offline-times.json"


def timer(
    session: nox.Session, record: dict[str, float], language: str
) -> Callable[[str], contextlib.AbstractContextManager[None]]:
    """``with step("zip"): ...`` records the step's wall seconds in ``record`` and logs them."""

    @contextlib.contextmanager
    def step(name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        record[name] = round(time.perf_counter() - start, 1)
        session.log(f"{language}: {name} took {record[name]:.0f} s")

    return step


def copy_whole(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` beside it first: a reader never finds half a file."""
    partial = target.with_name(f".{target.name}.partial")
    shutil.copyfile(source, partial)
    os.replace(partial, target)


@nox.session
def offline(session: nox.Session) -> None:
    """The site to take along, per edition, into build/html/<edition>/_offline/: a zip archive of
    the built edition, an EPUB (Sphinx's builder, checked by epubcheck) and a PDF (Sphinx's
    LaTeX builder through xelatex; Chinese with xeCJK and Debian's Noto CJK fonts).

    Needs `nox -s docs` first (the archive is the built edition). Installs Debian's TeX Live,
    latexmk, epubcheck and the Noto CJK fonts with apt-get when they are missing (as root),
    then checks the copies (tests/site/test_offline.py). Not part of `nox`: it adds minutes
    of LaTeX per edition to CI, which stays under its time budget without them; the docs
    workflow builds them with the site it publishes.
    """
    ensure_system_commands(session, {**OFFLINE_COMMANDS, "dot": "graphviz"})
    ensure_debian_packages(session, OFFLINE_PACKAGES)
    install(session, "docs", "test")
    times: dict[str, dict[str, float]] = {}
    for language in LANGUAGES:
        edition = BUILD / "html" / language
        if not (edition / "index.html").exists():
            session.error(f"no {language} edition in {edition}: run `nox -s docs` first")
        target = edition / "_offline"
        target.mkdir(exist_ok=True)
        step = timer(session, times.setdefault(language, {}), language)
        for builder in ("epub", "latex"):
            # From scratch: latexmk reads the logs of an earlier run and would act on them.
            shutil.rmtree(BUILD / builder / language, ignore_errors=True)
            # EPUB 3 refuses Graphviz's SVG (it declares a DTD): PNG drawings there.
            drawings = ["-D", "graphviz_output_format=png"] if builder == "epub" else []
            with step(f"sphinx_{builder}"):
                session.run(
                    "sphinx-build", "-b", builder, *SPHINX_FLAGS, *drawings,
                    "-D", f"language={language}",
                    "-d", str(BUILD / "doctrees" / f"{builder}-{language}"),
                    str(DOCS), str(BUILD / builder / language), env=torch_env(),
                )  # fmt: skip
        epub = BUILD / "epub" / language / "ptnotes.epub"
        # Debian's /usr/bin/epubcheck is a jar that needs binfmt support: run it with java.
        with step("epubcheck"):
            session.run("java", "-jar", EPUBCHECK, "--quiet", str(epub), external=True)
        latex = BUILD / "latex" / language
        with session.chdir(latex), step("xelatex"):
            session.run(
                "latexmk", "-xelatex", "-interaction=nonstopmode", "-halt-on-error", "-quiet",
                "ptnotes.tex", external=True,
            )  # fmt: skip
        copy_whole(epub, target / f"ptnotes-{language}.epub")
        copy_whole(latex / "ptnotes.pdf", target / f"ptnotes-{language}.pdf")
        # The edition, its EPUB and PDF included (ptnotes_dev.sphinx.offline.write_archive).
        with step("zip"):
            session.run("python", "-m", "ptnotes_dev.sphinx.offline", str(edition), language)
        session.log(f"{language}: {', '.join(sorted(p.name for p in target.iterdir()))}")
    # What each copy costs to build, read by `nox -s bench` (benchmarks/build_cost.py).
    OFFLINE_TIMES.parent.mkdir(parents=True, exist_ok=True)
    OFFLINE_TIMES.write_text(json.dumps(times, indent=2) + "\n", encoding="utf-8")
    session.run("pytest", "tests/site/test_offline.py", *session.posargs)


@nox.session
def browser(session: nox.Session) -> None:
    """The built site in a real Chromium (both editions), link check, HTML validation, and an
    accessibility audit (axe-core, installed with npm into build/axe).

    Needs `nox -s docs` first. Uses Debian's Chromium (installed with apt-get when missing and
    run as root); Playwright drives it, without downloading a browser of its own.
    """
    ensure_system_commands(
        session, {"chromium": "chromium", "java": "default-jre-headless", "npm": "npm"}
    )
    install(session, "test", "site")
    if not (BUILD / "html" / "en" / "index.html").exists():
        session.error("no site in build/html: run `nox -s docs` first")
    install_axe(session)
    # The offline copies' tests run in `nox -s offline`, which builds them.
    session.run("pytest", "tests/site", "--ignore=tests/site/test_offline.py", *session.posargs)


#: The accessibility audit's engine (tests/site/test_a11y.py), installed with npm into
#: build/axe rather than vendored.
AXE_CORE = "axe-core@4.14.1"


def install_axe(session: nox.Session) -> None:
    """``npm install`` the pinned axe-core into build/axe, unless it is there already."""
    prefix = BUILD / "axe"
    package = prefix / "node_modules" / "axe-core" / "package.json"
    version = AXE_CORE.rsplit("@", 1)[1]
    if package.exists() and f'"version": "{version}"' in package.read_text(encoding="utf-8"):
        return
    session.run(
        "npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent",
        AXE_CORE, external=True,
    )  # fmt: skip


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Measure the site's performance claims and the build's own cost (not part of `nox`).

    Writes build/bench/results.json and figures; copy the JSON to docs/_data/bench.json to
    publish a run on the "Measured numbers" page.
    """
    install(session, "test", "docs")
    out = BUILD / "bench"
    session.run(
        "python", "-m", "benchmarks.run", "--out", str(out), *session.posargs, env=torch_env()
    )
    session.run("python", "-m", "benchmarks.build_cost", "--results", str(out / "results.json"))
    session.log(f"results: {out / 'results.json'}")


@nox.session
def serve(session: nox.Session) -> None:
    """Live preview of one edition on http://127.0.0.1:8000/ (``nox -s serve -- zh_CN``)."""
    install(session, "docs", "serve")
    language = session.posargs[0] if session.posargs else "en"
    if language not in LANGUAGES:
        session.error(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
    session.run(
        "sphinx-autobuild",
        "--host",
        "127.0.0.1",
        "--port",
        "8000",
        "--watch",
        str(ROOT / "src"),
        "--watch",
        str(ROOT / "gallery"),
        "-D",
        f"language={language}",
        "-d",
        str(BUILD / "doctrees" / f"serve-{language}"),
        str(DOCS),
        str(BUILD / "serve" / language),
    )


@nox.session
def i18n(session: nox.Session) -> None:
    """Refresh the catalogs from the English source (gettext -> sphinx-intl update).

    ``nox -s i18n -- docs/autograd/inplace.md`` refreshes only the catalogs of the pages
    named, leaving every other catalog as it is (for work on several pages at once).
    """
    install(session, "docs")
    if session.posargs:
        session.run("python", "-m", "ptnotes_dev.i18n", "update", *session.posargs)
        return
    gettext_build(session)
    languages = [arg for code in LANGUAGES[1:] for arg in ("-l", code)]
    session.run(
        "sphinx-intl", "update", "-p", str(BUILD / "gettext"), "-d", str(DOCS / "locales"),
        *languages, "-w", "0",
    )  # fmt: skip


@nox.session
def inventories(session: nox.Session) -> None:
    """Refresh the committed intersphinx inventories (download when online, else generate)."""
    install(session)
    session.run("python", "-m", "ptnotes_dev.inventory", *session.posargs)
