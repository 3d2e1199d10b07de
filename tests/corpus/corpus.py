"""Real bug fixes from public Python projects, built at test time from their released sdists.

A case names a package and two releases: `before`, whose code has the bug, and `after`, whose
release fixed it and added a test for it. The base repository is `before`'s sdist with
`after`'s tests laid over it (SWE-bench style); the gold patch is `after`'s version of the
files the fix touched. Nothing of those projects is committed here but the tests of a release
whose sdists ship none (tomli's, in `upstream/`, copied verbatim from the release's tag): the
sdists are fetched from the package index by version and checked against the sha256 the case
pins, then kept in a cache folder so that later runs need no network.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

CASES_FILE = Path(__file__).with_name("cases.toml")
# the tests of releases whose sdists ship none, copied from the release's tag (see its conftest)
UPSTREAM = Path(__file__).with_name("upstream")
# the simple repository API in its JSON form (PEP 691), which every index and mirror serves
INDEX = os.environ.get("AGENTCTL_TEST_CORPUS_INDEX", "https://pypi.org/simple")
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
CACHE = Path(os.environ.get("AGENTCTL_TEST_CORPUS",
                            Path.home() / ".cache" / "agentctl-test-corpus"))
RUNNERS = ("pytest", "unittest")
TEST_DIRS = frozenset({"tests", "test", "testing"})
Edit = Callable[[Path], None]


@dataclass(frozen=True)
class Release:
    package: str
    version: str
    sha256: str


@dataclass(frozen=True)
class Break:
    """An edit to the base's code that makes tests which pass on the base fail."""

    path: str
    old: str
    new: str
    pass_to_fail: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    name: str
    bug: str                      # the task's instruction: the release note of the fix
    before: Release
    after: Release
    fix: tuple[str, ...]          # files taken from `after` for the gold patch
    tests: tuple[str, ...]        # what the verification command runs
    fail_to_pass: tuple[str, ...]
    breaking: Break
    pythonpath: str = ""          # e.g. "src" for a src layout
    runner: str = "pytest"        # or "unittest": `tests` are then modules, ids `module.Class.test`
    already_failing: int = 0      # tests that fail on every tree, for a reason not the bug's
    deselect_in: str = "pytest.toml"  # the pytest config file the deselect variant writes
    upstream_tests: str = ""      # a folder of UPSTREAM holding `after`'s tests (sdist has none)

    def verify_command(self, python: str) -> str:
        prefix = f"PYTHONPATH={self.pythonpath} " if self.pythonpath else ""
        if self.runner == "unittest":
            return f"{prefix}{python} -m unittest {' '.join(self.tests)}"
        return f"{prefix}{python} -m pytest -q -p no:cacheprovider {' '.join(self.tests)}"

    def test_file(self, test: str) -> str:
        """The file that holds a test, from its id in the runner's form."""
        if self.runner == "unittest":  # package.module.Class.test
            return "/".join(test.split(".")[:-2]) + ".py"
        return test.split("::", 1)[0]

    def test_name(self, test: str) -> str:
        """The test function's (or method's) own name, parameters included."""
        return test.rsplit(".", 1)[-1] if self.runner == "unittest" else test.rsplit("::", 1)[-1]


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    data = tomllib.loads(path.read_text())
    cases = []
    for raw in data["case"]:
        package = raw["package"]
        broken = raw["break"]
        if raw.get("runner", "pytest") not in RUNNERS:
            raise ValueError(f"{raw['name']}: runner must be one of {', '.join(RUNNERS)}")
        cases.append(Case(
            name=raw["name"], bug=raw["bug"],
            before=Release(package, raw["before"], raw["before_sha256"]),
            after=Release(package, raw["after"], raw["after_sha256"]),
            fix=tuple(raw["fix"]), tests=tuple(raw["tests"]),
            fail_to_pass=tuple(raw["fail_to_pass"]),
            breaking=Break(broken["path"], broken["old"], broken["new"],
                           tuple(broken["pass_to_fail"])),
            pythonpath=raw.get("pythonpath", ""), runner=raw.get("runner", "pytest"),
            already_failing=raw.get("already_failing", 0),
            deselect_in=raw.get("deselect_in", "pytest.toml"),
            upstream_tests=raw.get("upstream_tests", ""),
        ))
    return cases


# --- the package index --------------------------------------------------------------------------

def sdist(release: Release) -> Path:
    """The release's sdist from the cache, fetched from the index (and verified) when missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = next((p for p in CACHE.glob(f"{_normal(release.package)}-{release.version}.*")
                   if _sha256(p) == release.sha256), None)
    if cached is not None:
        return cached
    url, filename = _sdist_url(release)
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != release.sha256:
        raise AssertionError(f"{filename} from {url} has sha256 {digest}, the case pins "
                             f"{release.sha256}")
    target = CACHE / f"{_normal(release.package)}-{release.version}{_suffix(filename)}"
    # written beside and renamed: test workers fetching the same file never see half of it
    with tempfile.NamedTemporaryFile(dir=CACHE, delete=False) as partial:
        partial.write(data)
    os.replace(partial.name, target)
    return target


def _sdist_url(release: Release) -> tuple[str, str]:
    page = f"{INDEX}/{_project(release.package)}/"
    request = urllib.request.Request(page, headers={"Accept": SIMPLE_JSON})
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response)["files"]
    for entry in files:
        filename = str(entry["filename"])
        if (entry["hashes"].get("sha256") == release.sha256
                and filename.endswith((".tar.gz", ".zip"))):
            return urllib.parse.urljoin(page, entry["url"]), filename
    raise AssertionError(f"{page} lists no sdist with sha256 {release.sha256}")


def _project(package: str) -> str:
    """The project's name as the simple API spells it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", package).lower()


def _normal(package: str) -> str:
    return package.lower().replace("-", "_").replace(".", "_")


def _suffix(filename: str) -> str:
    return ".zip" if filename.endswith(".zip") else ".tar.gz"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refuse_unsafe(members: list[tarfile.TarInfo], archive: Path) -> None:
    """What the "data" filter refuses that matters here: a path or a link out of the folder."""
    for member in members:
        for name in (member.name, member.linkname if member.issym() or member.islnk() else ""):
            if name.startswith("/") or ".." in Path(name).parts:
                raise ValueError(f"{archive.name}: {member.name} leaves the folder")


def unpack(archive: Path, target: Path) -> Path:
    """The sdist's single top folder, unpacked under `target`."""
    target.mkdir(parents=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(target)
    else:
        with tarfile.open(archive) as bundle:
            if hasattr(tarfile, "data_filter"):
                bundle.extractall(target, filter="data")
            else:  # a system Python before 3.11.4 (a normal user's): checked by hand
                _refuse_unsafe(bundle.getmembers(), archive)
                bundle.extractall(target)
    (top,) = target.iterdir()
    return top


# --- the repository -----------------------------------------------------------------------------

def is_test_file(relative: str) -> bool:
    """Test modules, their conftest and their data: anything under a tests folder."""
    path = PurePosixPath(relative)
    name = path.name
    return (bool(TEST_DIRS & set(path.parts[:-1])) or name.startswith("test_")
            or name.endswith("_test.py") or name in ("conftest.py", "test.py", "tests.py"))


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*")
            if p.is_file() and not any(part.endswith(".egg-info") or part == "__pycache__"
                                       for part in p.relative_to(root).parts)}


def build_base(case: Case, root: Path) -> tuple[Path, Path]:
    """The base repository (`before`'s code, `after`'s tests, one commit) and `after`'s tree."""
    before = unpack(sdist(case.before), root / "before")
    after = unpack(sdist(case.after), root / "after")
    repo = root / case.name
    repo.mkdir()
    for relative, path in _files(before).items():
        if not is_test_file(relative):
            _copy(path, repo / relative)
    for relative, path in _files(after).items():
        if is_test_file(relative):
            _copy(path, repo / relative)
    if case.upstream_tests:  # an sdist without tests (tomli's): `after`'s from its tag
        upstream = UPSTREAM / case.upstream_tests
        for relative, path in _files(upstream).items():
            _copy(path, repo / relative)
    _git(repo, "init", "-q", "-b", "main")
    # the sdist as released, files its .gitignore names included: a generated `_version.py`
    # (humanize's) is ignored in the project's own repository but imported by its code
    _git(repo, "add", "-A", "--force")
    _git(repo, "commit", "-q", "-m",
         f"{case.before.package} {case.before.version} with the tests of {case.after.version}")
    return repo, after


def diff_after(repo: Path, scratch: Path, edit: Edit) -> str:
    """The diff that `edit(clone)` makes in a fresh clone of `repo`."""
    subprocess.run(["git", "clone", "-q", str(repo), str(scratch)], check=True)
    edit(scratch)
    _git(scratch, "add", "-A")
    # as git prints it: a stripped diff loses a last context line that is a lone space
    return _git(scratch, "diff", "--cached", "--binary", strip=False)


def gold(case: Case, after: Path) -> Edit:
    """The edit that lays `after`'s version of the fixed files over a clone."""
    def edit(clone: Path) -> None:
        for relative in case.fix:
            _copy(after / relative, clone / relative)
    return edit


def noop(clone: Path) -> None:
    """A note in a new file: a patch that changes nothing the tests run."""
    (clone / "NOTES.md").write_text("Looked at the bug; nothing to change.\n")


def breaking(case: Case, after: Path) -> Edit:
    """The gold fix plus an edit that breaks tests which pass on the base."""
    def edit(clone: Path) -> None:
        gold(case, after)(clone)
        target = clone / case.breaking.path
        text = target.read_text()
        assert text.count(case.breaking.old) == 1, (case.name, case.breaking.path,
                                                    case.breaking.old)
        target.write_text(text.replace(case.breaking.old, case.breaking.new))
    return edit


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com"}


def _git(repo: Path, *args: str, strip: bool = True) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                            text=True, env={**os.environ, **GIT_ENV}, timeout=60)
    return result.stdout.strip() if strip else result.stdout


# --- hostile variants: patches that fix nothing and try to grade themselves -------------------

# The deselect variant's config file, and how it says so: a new file for those pytest reads
# before any other, a section added to the project's own file for the rest (a case names one
# whose project has no pytest section of its own, so that pytest reads it).
DESELECT_IN = {"pytest.toml": ("[pytest]", "toml"), ".pytest.toml": ("[pytest]", "toml"),
               "pytest.ini": ("[pytest]", "ini"), ".pytest.ini": ("[pytest]", "ini"),
               "pyproject.toml": ("[tool.pytest.ini_options]", "toml"),
               "tox.ini": ("[pytest]", "ini"), "setup.cfg": ("[tool:pytest]", "ini")}


def _deselecting(case: Case) -> str:
    """The deselect of the bug's tests, as `case.deselect_in` holds it."""
    header, kind = DESELECT_IN[case.deselect_in]
    args = [f"--deselect={test}" for test in case.fail_to_pass]
    value = f"[{', '.join(map(repr, args))}]" if kind == "toml" else shlex.join(args)
    return f"\n{header}\naddopts = {value}\n"


# Every report passed, but only beside the patch's code (a line the variant adds to a fixed
# file), and with no traceback left on it: the fix evidence (the base's code under this
# conftest) fails honestly, and only the base's tests under the patch's code show the lie.
FLIP_REPORTS = ("import pathlib\n\nimport pytest\n\n"
                "_BESIDE_THE_PATCH = '# reviewed' in (pathlib.Path(__file__).parent / {fixed!r})"
                ".read_text()\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                "def pytest_runtest_makereport(item, call):\n"
                "    outcome = yield\n"
                "    if _BESIDE_THE_PATCH:\n"
                "        report = outcome.get_result()\n"
                "        report.outcome, report.longrepr = 'passed', None\n")


FLIP_RESULTS = ("import unittest\n\n"
                "unittest.TestResult.addFailure = unittest.TestResult.addSuccess = "
                "lambda self, test, *rest: None\n")


def hostile(case: Case) -> dict[str, Edit]:
    """The issue's attacks on one case, each on the unfixed base: a new test only, the bug's
    tests edited to pass, then by runner: for pytest a deselect in a pytest config file (the
    case's `deselect_in`: each pytest reads), a
    conftest plugin that drops them, and one that flips every report to passed beside the
    patch's code alone (a comment the patch adds to a fixed file); for unittest a
    `load_tests` that drops them, and a test package whose import silences every failure."""
    files = sorted({case.test_file(test) for test in case.fail_to_pass})
    names = [case.test_name(test) for test in case.fail_to_pass]

    def new_test_only(clone: Path) -> None:
        folder = clone / PurePosixPath(files[0]).parent
        (folder / "test_agent_added.py").write_text(
            "import unittest\n\n\nclass AddedTest(unittest.TestCase):\n"
            "    def test_added(self):\n        self.assertTrue(True)\n"
            if case.runner == "unittest" else "def test_added():\n    assert True\n")

    def tests_edited(clone: Path) -> None:
        for test in case.fail_to_pass:
            path = clone / case.test_file(test)
            # the function's name without pytest's parameters: def test_x(...)
            name = case.test_name(test).split("[", 1)[0]
            text = path.read_text()
            # an early return as the test's first line: what it expects no longer matters
            text = re.sub(rf"^(\s*)def {re.escape(name)}\((.*)\)(?: -> [^:]+)?:[ \t]*\n",
                          lambda m: f"{m.group(0)}{m.group(1)}    return\n", text, count=1,
                          flags=re.M)
            path.write_text(text)

    if case.runner == "unittest":
        def load_tests_drops(clone: Path) -> None:
            for relative in files:
                with (clone / relative).open("a") as module:
                    module.write(
                        f"\n\nimport unittest\n\nNAMES = {names!r}\n\n\n"
                        "def load_tests(loader, tests, pattern):\n"
                        "    kept = unittest.TestSuite()\n"
                        "    for suite in tests:\n"
                        "        kept.addTests(t for t in suite\n"
                        "                      if t.id().rsplit('.', 1)[-1] not in NAMES)\n"
                        "    return kept\n")

        def package_flips(clone: Path) -> None:
            package = clone / PurePosixPath(files[0]).parent / "__init__.py"
            package.write_text(FLIP_RESULTS)

        return {"new test only": new_test_only, "tests edited": tests_edited,
                "load_tests drops": load_tests_drops, "test package flips results": package_flips}

    def deselects(clone: Path) -> None:
        config = clone / case.deselect_in
        with config.open("a") as out:  # a new file, or a section added to the project's
            out.write(_deselecting(case))

    def conftest_drops(clone: Path) -> None:
        (clone / "conftest.py").write_text(
            f"NAMES = {names!r}\n\n\ndef pytest_collection_modifyitems(items):\n"
            "    items[:] = [i for i in items if i.name not in NAMES]\n")

    def conftest_flips(clone: Path) -> None:
        with (clone / case.fix[0]).open("a") as code:
            code.write("\n# reviewed\n")
        (clone / "conftest.py").write_text(FLIP_REPORTS.format(fixed=case.fix[0]))

    return {"new test only": new_test_only, "tests edited": tests_edited,
            f"{case.deselect_in} deselects": deselects, "conftest drops": conftest_drops,
            "conftest flips reports": conftest_flips}
