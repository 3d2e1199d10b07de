"""The `calc` sample project the run tests work on, and the script plans they give its agent:
once here for the in-process pipeline tests and the end-to-end ones."""

from __future__ import annotations

import json
from collections.abc import Mapping

# A small Python project whose tests are stdlib unittest, so the verifier needs no pytest.
CALC: dict[str, str] = {
    "README.md": "# calc\n",
    "calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "calc/config/__init__.py": "",
    "calc/config/settings.py": "TIMEOUT_SECONDS = 30\n",
    "test_calc.py": (
        "import unittest\n\nfrom calc import add\n\n\n"
        "class AddTest(unittest.TestCase):\n"
        "    def test_adds_two_numbers(self):\n"
        "        self.assertEqual(add(2, 3), 5)\n"
    ),
    ".github/workflows/deploy.yml": "name: deploy\non: push\n",
}
# The same with a second test, which passes with and without any fix (the end-to-end tests
# count a test that passes on both sides).
CALC_FILES: dict[str, str] = {
    **CALC,
    "test_calc.py": CALC["test_calc.py"] + (
        "\n    def test_adding_zero_changes_nothing(self):\n"
        "        self.assertEqual(add(7, 0), 7)\n"
    ),
}
UNITTEST = "python3 -m unittest -v"


def toml_plan(*steps: Mapping[str, object]) -> str:
    """A script plan: each mapping becomes one `[[step]]` table (JSON strings are TOML strings)."""
    return "\n\n".join("[[step]]\n" + "\n".join(f"{key} = {json.dumps(value)}"
                                               for key, value in step.items())
                       for step in steps) + "\n"
