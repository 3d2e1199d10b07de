"""Which step edited which file, for agents that are not native CLIs: each fs.* call, each
command, each patch and an external agent's one `agent.exec` carry the files they changed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from agentctl.domain.enums import StepType
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.services.ports import RunRecord
from tests.pipeline.conftest import Harness


def changed(record: RunRecord) -> list[tuple[str, list[object]]]:
    calls = {call.step_id: call for call in record.tool_calls}
    return [(calls[step.step_id].tool_name, [change.to_json() for change in step.changed_files])
            for step in record.steps if step.type is StepType.TOOL_CALL]


def test_each_script_step_carries_the_files_it_changed(harness: Harness) -> None:
    record = harness.run(harness.plan(
        {"tool": "fs.read", "path": "calc/__init__.py"},
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "return a + b",
         "new": "return b + a"},
        {"tool": "fs.write", "path": "calc/sub.py", "content": "def sub(a, b):\n    return a - b\n"},
        {"tool": "shell.run", "command": "python3 -c \"open('notes.txt','w').write('x\\\\ny\\\\n')\""},
        {"tool": "fs.rename", "path": "notes.txt", "to": "docs/notes.txt"},
        {"tool": "shell.run", "command": "true"},
    ))
    assert changed(record) == [
        ("fs.read", []),
        ("fs.replace", [{"path": "calc/__init__.py", "changeType": "MODIFIED", "additions": 1,
                         "deletions": 1}]),
        ("fs.write", [{"path": "calc/sub.py", "changeType": "ADDED", "additions": 2,
                       "deletions": 0}]),
        ("shell.run", [{"path": "notes.txt", "changeType": "ADDED", "additions": 2,
                        "deletions": 0}]),
        ("fs.rename", [{"path": "docs/notes.txt", "changeType": "RENAMED", "additions": 0,
                        "deletions": 0, "oldPath": "notes.txt"}]),
        ("shell.run", []),
    ]


def test_an_external_agent_is_credited_with_what_it_changed(harness: Harness) -> None:
    agent = parse_agent_spec("command:python3 -c \"open('calc/__init__.py','a').write('# ok\\n')\"",
                             harness.root)
    record = harness.run(agent)
    assert changed(record) == [("agent.exec", [{"path": "calc/__init__.py",
                                                "changeType": "MODIFIED", "additions": 1,
                                                "deletions": 0}])]


def touched_files(harness: Harness, record: RunRecord) -> dict[str, object]:
    import json

    (artifact,) = [a for a in record.artifacts if a.name == "touched-files.json"]
    if harness.store is not None:
        return json.loads(harness.store.blobs.path_for(artifact.uri).read_bytes())
    return json.loads(harness.storage.blobs.read(artifact.uri))  # type: ignore[attr-defined]


def credited(record: RunRecord) -> set[str]:
    return {str(change["path"]) for _tool, changes in changed(record)
            for change in changes if isinstance(change, dict)}


def test_a_background_job_of_a_shell_call_is_never_credited_to_a_later_call(
        harness: Harness) -> None:
    """`sleep 1; echo x > late.txt &`: a job left running in the call's own process group."""
    background = ("python3 -c \"import subprocess; "
                  "subprocess.Popen('sleep 1; echo x > late.txt', shell=True)\"")
    record = harness.run(harness.plan(
        {"tool": "shell.run", "command": background},
        {"tool": "shell.run", "command": "python3 -c \"import time; time.sleep(2)\""},
        {"tool": "fs.write", "path": "calc/sub.py", "content": "def sub(a, b):\n    return a - b\n"},
    ))

    assert [c.decision.value for c in record.tool_calls] == ["ALLOWED"] * 3
    assert "late.txt" not in credited(record)
    (patch,) = record.patches
    if "late.txt" in [change.path for change in patch.file_changes]:  # it outlived its call
        assert touched_files(harness, record)["unattributed"] == ["late.txt"]
    else:  # it ended with its call
        assert touched_files(harness, record)["unattributed"] == []


def test_a_detached_writer_a_script_call_started_ends_with_the_call(
        harness: Harness, tmp_path: Path) -> None:
    """Unsandboxed, a process in a session of its own escapes its call's process group: it is
    ended with the call all the same, so it never writes during the next call (which would be
    credited with its file) nor after the last one."""
    harness.configure('[sandbox]\nmode = "off"\n')
    writer = tmp_path / "late.py"
    writer.write_text(textwrap.dedent("""
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c",
                          "import time; time.sleep(1); open('late.txt', 'w').write('x\\\\n')"],
                         start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        """))
    record = harness.run(harness.plan(
        {"tool": "shell.run", "command": f"python3 {writer}"},
        {"tool": "shell.run", "command": "python3 -c \"import time; time.sleep(2)\""},
        {"tool": "fs.write", "path": "calc/sub.py", "content": "def sub(a, b):\n    return a - b\n"},
    ))

    assert [c.decision.value for c in record.tool_calls] == ["ALLOWED"] * 3
    assert credited(record) == {"calc/sub.py"}
    (patch,) = record.patches
    assert [change.path for change in patch.file_changes] == ["calc/sub.py"]
    assert touched_files(harness, record)["unattributed"] == []
    assert record.verdict is not None
    assert "attribution" not in [link.check for link in record.verdict.chain]
