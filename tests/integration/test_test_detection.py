"""Test-command detection from the files at a repository's top (the dialog and `init` use it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.execution.verification.test_detection import detect_test_commands

CASES = [
    ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, ("python -m pytest",)),
    ({"tests/conftest.py": ""}, ("python -m pytest",)),
    ({"tests/test_a.py": "import unittest\n"}, ("python -m unittest discover -s tests",)),
    ({"test_a.py": ""}, ("python -m unittest discover",)),
    ({"test_a.py": "import unittest\nclass T(unittest.TestCase):\n    def test_x(self): ...\n"},
     ("python -m unittest discover",)),
    ({"test_a.py": "def test_x():\n    assert 1\n"}, ("python -m pytest",)),
    ({"testing/test_a.py": "import pytest\n"}, ("python -m pytest",)),
    ({"testing/test_a.py": "def test_x():\n    pass\n"}, ("python -m pytest",)),
    ({"testing/test_a.py": "import unittest\n"}, ("python -m unittest discover -s testing",)),
    ({"tests/test_a.py": "from pytest import raises\n"}, ("python -m pytest",)),
    ({"pom.xml": "<project/>"}, ("mvn -q test",)),
    ({"build.gradle": "", "gradlew": ""}, ("./gradlew test",)),
    ({"build.gradle.kts": ""}, ("gradle test",)),
    ({"package.json": '{"scripts": {"test": "jest"}}'}, ("npm test",)),
    ({"package.json": '{"scripts": {"test": "echo \\"Error: no test specified\\""}}'}, ()),
    ({"package.json": "not json"}, ()),
    ({"go.mod": "module x\n"}, ("go test ./...",)),
    ({"Cargo.toml": "[package]\n"}, ("cargo test",)),
    ({"README.md": "# nothing to run\n"}, ()),
    ({"pytest.ini": "", "pom.xml": ""}, ("python -m pytest", "mvn -q test")),
]


@pytest.mark.parametrize(("files", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_the_build_files_name_the_test_command(tmp_path: Path, files: dict[str, str],
                                               expected: tuple[str, ...]) -> None:
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    assert detect_test_commands(tmp_path) == expected


def test_a_missing_folder_detects_nothing(tmp_path: Path) -> None:
    assert detect_test_commands(tmp_path / "absent") == ()
