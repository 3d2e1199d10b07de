"""Which step edited which file, for agents that are not native CLIs: each fs.* call, each
command, each patch and an external agent's one `agent.exec` carry the files they changed."""

from __future__ import annotations

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
