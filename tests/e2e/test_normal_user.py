"""What a normal user gets: most people who run agentctl are not root, and CI is. The test makes
an unprivileged user (when it runs as root), installs agentctl for it with the system Python
into a folder it can read, and runs it as that user: `doctor` says what that user gets and
lacks, and the demo's four scenarios end as they do for root (sandbox on, no overlay views)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.test_demo import EXPECTED
from tests.machine import unavailable

ROOT = Path(__file__).resolve().parents[2]
USER = "agentctl-user"


@dataclass(frozen=True)
class NormalUser:
    agentctl: str
    home: Path
    prefix: tuple[str, ...]  # runs a command as the user

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8",
               "AGENTCTL_HOME": str(self.home / "agentctl-home")}
        return subprocess.run([*self.prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                               self.agentctl, *args], cwd=cwd, capture_output=True, text=True,
                              timeout=300, check=False)


@pytest.fixture(scope="module")
def normal_user() -> Iterator[NormalUser]:
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        unavailable("no system python3 to install agentctl for a normal user with")
    place = Path(tempfile.mkdtemp(prefix="agentctl-normal-user-"))
    place.chmod(0o755)
    try:
        if os.geteuid() == 0:
            if subprocess.run(["id", USER], capture_output=True, check=False).returncode:
                subprocess.run(["useradd", "--create-home", USER], check=True)
            home = Path(f"/home/{USER}")
            prefix: tuple[str, ...] = ("runuser", "-u", USER, "--")
        else:  # the test process is a normal user already
            home, prefix = place / "home", ()
            home.mkdir()
        venv = place / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        # a copy, not an editable install: the checkout may sit where the user cannot read
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT)], check=True,
                       capture_output=True, timeout=600)
        subprocess.run(["chmod", "-R", "a+rX", str(place)], check=True)
        yield NormalUser(agentctl=str(venv / "bin" / "agentctl"), home=home, prefix=prefix)
    finally:
        shutil.rmtree(place, ignore_errors=True)


def work_dir(user: NormalUser) -> Path:
    where = Path(tempfile.mkdtemp(prefix="agentctl-normal-user-cwd-"))
    if user.prefix:
        shutil.chown(where, USER)
    return where


def test_doctor_tells_a_normal_user_what_it_gets_and_what_it_lacks(
        normal_user: NormalUser) -> None:
    done = normal_user.run("doctor", "--json", cwd=work_dir(normal_user))
    assert "Traceback" not in done.stderr, done.stderr
    parts = {f["part"]: f for f in json.loads(done.stdout)}
    assert parts["sandbox"]["ok"] is True, parts["sandbox"]
    assert "for root" not in parts["sandbox"]["detail"]
    views = parts["views"]
    assert (views["ok"], views["required"]) == (False, False)
    assert "a normal user cannot mount overlays" in views["detail"]
    assert "full checkout" in views["detail"]


def test_doctor_tells_root_it_has_the_views(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("root's own doctor line; this machine's tests run as a normal user")
    from tests.conftest import AGENTCTL

    done = subprocess.run([AGENTCTL, "doctor", "--json"], capture_output=True, text=True,
                          env={**os.environ, "AGENTCTL_HOME": str(tmp_path / "home")},
                          cwd=tmp_path, check=False)
    views = {f["part"]: f for f in json.loads(done.stdout)}["views"]
    assert views["ok"] is True and "copy-on-write views" in views["detail"], views


def test_the_demo_ends_as_for_root_when_a_normal_user_runs_it(normal_user: NormalUser) -> None:
    done = normal_user.run("demo", cwd=work_dir(normal_user))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    for scenario, (status, eligibility) in EXPECTED.items():
        line = next(line for line in done.stdout.splitlines() if line.startswith(scenario))
        assert status in line and eligibility in line, (scenario, line)
