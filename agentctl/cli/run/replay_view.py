"""A replay's report as `run replay` and `run show` of an ended replay print it; apart from
`run replay`'s module, so that `run show` loads no replay machinery for a run that is none."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agentctl.cli.artifact import artifact_content
from agentctl.cli.context import State
from agentctl.cli.output import out
from agentctl.domain.artifact import Artifact

if TYPE_CHECKING:
    from agentctl.services.actions.replay import ReplayReport


def artifact_reader(current: State) -> Callable[[Artifact], bytes]:
    """An artifact's verified content, for a replay's cassette and its report."""
    root = current.home.artifacts
    return lambda artifact: b"".join(artifact_content(root, artifact))


def replay_keys(report: ReplayReport) -> dict[str, object]:
    """What `run replay --json` (and `run show --json` of an ended replay) add to the run."""
    return {"replayOf": report.replay_of, "identical": report.identical,
            "differences": list(report.differences),
            "requestsRecorded": report.requests_recorded,
            "requestsReplayed": report.requests_replayed,
            "decisionChanges": [{"step": c.step, "tool": c.tool, "before": c.before,
                                 "after": c.after, "rule": c.rule}
                                for c in report.decision_changes]}


def print_replay(report: ReplayReport) -> None:
    console = out()
    console.print(f"{report.run.run_id} replays {report.replay_of}: "
                  f"{report.requests_replayed}/{report.requests_recorded} model requests "
                  f"answered from the record; "
                  + ("identical" if report.identical else "DIFFERENT"), markup=False,
                  highlight=False)
    for change in report.decision_changes:
        console.print(f"  call {change.step} {change.tool}: {change.before} -> "
                      f"{change.after} ({change.rule})", markup=False, highlight=False)
    for difference in report.differences:
        console.print(f"  {difference}", markup=False, highlight=False)
