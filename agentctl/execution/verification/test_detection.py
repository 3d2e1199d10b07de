"""What runs a repository's tests, guessed from the files at its top (never a walk of the tree:
a 20,000-file repository answers as fast as a small one)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

_PYTEST_MARKERS = ("pytest.ini", "conftest.py")
_PYTEST_SECTIONS = {"pyproject.toml": "[tool.pytest", "setup.cfg": "[tool:pytest",
                    "tox.ini": "[pytest"}


def detect_test_commands(root: Path) -> tuple[str, ...]:
    """The test commands the repository's build files imply: pytest or unittest, Maven,
    Gradle, npm, go, cargo (empty when none is recognised)."""
    try:
        names = {entry.name for entry in root.iterdir()}
    except OSError:
        return ()
    commands: list[str] = []
    python = _python_command(root, names)
    if python:
        commands.append(python)
    if "pom.xml" in names:
        commands.append("mvn -q test")
    if names & {"build.gradle", "build.gradle.kts"}:
        commands.append("./gradlew test" if "gradlew" in names else "gradle test")
    if "package.json" in names and _has_npm_test(root / "package.json"):
        commands.append("npm test")
    if "go.mod" in names:
        commands.append("go test ./...")
    if "Cargo.toml" in names:
        commands.append("cargo test")
    return tuple(commands)


def _python_command(root: Path, names: set[str]) -> str | None:
    if names & set(_PYTEST_MARKERS):
        return "python -m pytest"
    for name, section in _PYTEST_SECTIONS.items():
        if name in names and section in _read(root / name):
            return "python -m pytest"
    for folder in ("tests", "testing"):
        tests = root / folder
        if folder in names and tests.is_dir():
            if (tests / "conftest.py").exists() or "pytest" in _read(root / "pyproject.toml") \
                    or _pytest_style(_test_files(tests)):
                return "python -m pytest"
            return f"python -m unittest discover -s {folder}"
    if _pytest_style(root / n for n in sorted(names)):
        return "python -m pytest"
    if any(_is_test_file(n) for n in names):
        return "python -m unittest discover"
    return None


def _test_files(folder: Path) -> list[Path]:
    try:
        return sorted(entry for entry in folder.iterdir() if _is_test_file(entry.name))
    except OSError:
        return []


def _is_test_file(name: str) -> bool:
    return name.startswith("test_") and name.endswith(".py")


_PYTEST_IMPORT = re.compile(r"^(?:import pytest|from pytest import)\b", re.MULTILINE)
_BARE_TEST = re.compile(r"^def test_", re.MULTILINE)  # unittest's tests are methods, indented


def _pytest_style(paths: Iterable[Path], looked_at: int = 20) -> bool:
    """Whether the first test files (by name) are pytest's: `import pytest`, or a test that is
    a bare function rather than a TestCase's method."""
    files = [path for path in paths if _is_test_file(path.name)][:looked_at]
    return any(_PYTEST_IMPORT.search(text) or _BARE_TEST.search(text)
               for text in map(_read, files))


def _has_npm_test(package: Path) -> bool:
    try:
        scripts = json.loads(_read(package) or "{}").get("scripts") or {}
    except (ValueError, AttributeError):
        return False
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and "no test specified" not in test


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return ""
