"""The external judge's output folder lives in the attempt's own scratch directory, so a worker
killed mid-judgement leaves nothing outside the directory the sweep removes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from agentctl.execution.verification.external_judge import run_external_judge


def test_the_judges_output_folder_is_made_inside_the_attempts_scratch_directory(
        tmp_path: Path) -> None:
    scratch, cwd = tmp_path / "scratch", tmp_path / "judge"
    scratch.mkdir()
    cwd.mkdir()
    seen: list[list[str]] = []
    report = ('{"status": "PASSED", "confidence": 0.9, "summary": "fine", "findings": []}')

    def judge() -> None:
        run_external_judge(f"sleep 1; echo '{report}'", {}, cwd=cwd,
                           env={"PATH": os.environ["PATH"]}, timeout=30, scratch=scratch)

    worker = threading.Thread(target=judge)
    worker.start()
    while worker.is_alive():
        seen.append(sorted(path.name for path in scratch.iterdir()))
        worker.join(0.05)

    assert any(names and names[0].startswith("agentctl-judge-") for names in seen), seen
    assert list(scratch.iterdir()) == []
