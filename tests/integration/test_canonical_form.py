"""A home written before the one canonical JSON (tests/fixtures/home-1e5ccd9: its event payloads
escape non-ASCII text, its specs' digests were taken over the escaped form) still verifies, and
keeps verifying once today's code appends events and records in the one form after them."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentctl.domain.serialize import from_json
from agentctl.domain.spec import ExecutionSpec

FIXTURE = Path(__file__).parent.parent / "fixtures" / "home-1e5ccd9"
OLD_RUN = "run_01M935A4"  # an instruction, a patch and verdict reasons in non-ASCII text


def old_home(tmp_path: Path) -> Path:
    target = tmp_path / "home"
    shutil.copytree(FIXTURE, target)
    return target


def test_the_fixture_holds_what_the_old_forms_wrote(tmp_path: Path) -> None:
    """Escaped payloads and a record digest over non-ASCII text: otherwise the tests below
    would prove nothing."""
    with sqlite3.connect(old_home(tmp_path) / "agentctl.db") as db:
        escaped = db.execute("SELECT count(*) FROM event WHERE instr(payload, '\\u00') > 0")
        assert escaped.fetchone()[0] > 0
        reasons = db.execute("SELECT reasons FROM verdict WHERE reasons LIKE '%Cancelado —%'")
        assert reasons.fetchone() is not None


def test_a_home_written_with_the_old_forms_verifies(
        tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    home = old_home(tmp_path)
    run_cli("db", "upgrade", home=home, cwd=tmp_path)  # a read never migrates
    report = run_cli("audit", "verify", "--json", home=home, cwd=tmp_path).json()
    assert report["ok"] is True, report
    assert (report["events"], report["checkpoint"]["state"]) == (81, "verified")


def test_new_events_in_the_one_form_after_old_ones_verify(
        tmp_path: Path, repo: Path, run_cli: Callable[..., Any]) -> None:
    home = old_home(tmp_path)
    run = run_cli("task", "submit", "--repo", str(repo), "--type", "docs", "--instruction",
                  "Documenta — ✓", "--run", "--detach", "--agent", "noop", "--json",
                  "--no-input", home=home, cwd=tmp_path).json()
    run_cli("run", "cancel", run["runId"], "--reason", "¡ya no — ✓!", "--by", "José",
            home=home, cwd=tmp_path)
    with sqlite3.connect(home / "agentctl.db") as db:
        (payload,) = db.execute("SELECT payload FROM event WHERE type = 'RunCancelled' "
                                "ORDER BY seq DESC LIMIT 1").fetchone()
    assert "¡ya no — ✓!" in payload  # stored as UTF-8 text now, not \\u escapes
    report = run_cli("audit", "verify", "--json", home=home, cwd=tmp_path).json()
    assert report["ok"] is True, report
    assert report["events"] > 81


def test_an_old_runs_spec_digest_stays_the_one_stamped_on_it(
        tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    """Taken over the escaped form, so the one form gives a non-ASCII spec another digest: the
    run keeps (and shows) the digest it was created with, never a recomputed one."""
    home = old_home(tmp_path)
    with sqlite3.connect(home / "agentctl.db") as db:
        stored, text = db.execute("SELECT spec_digest, execution_spec FROM run "
                                  "WHERE run_id LIKE ?", (OLD_RUN + "%",)).fetchone()
    escaped = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    assert stored == "sha256:" + hashlib.sha256(escaped.encode()).hexdigest()
    assert from_json(ExecutionSpec, json.loads(text)).digest() != stored
    run_cli("db", "upgrade", home=home, cwd=tmp_path)  # a read never migrates
    shown = run_cli("run", "show", OLD_RUN, "--json", home=home, cwd=tmp_path).json()
    assert shown["specDigest"] == stored
