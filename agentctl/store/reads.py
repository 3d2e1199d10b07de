"""The storage port's reads (`services.unit_of_work.Reads`): the views of the commands and a
run's every record as one `RunRecord`, the shape the use cases take (replays, the queue), and
whether any run waits for a worker.
"""

from __future__ import annotations

from agentctl.domain.enums import RunStatus
from agentctl.domain.transitions import ACTIVE_RUN
from agentctl.services.unit_of_work import RunRecord
from agentctl.store.rows import runs as run_rows
from agentctl.store.views import Views


class StoreReads(Views):
    def waiting(self) -> bool:
        """Queued runs, or runs a worker holds (they may come back to the queue)."""

        return any(self.runs(limit=1, status=status)
                   for status in (RunStatus.QUEUED, *ACTIVE_RUN))

    def record(self, run_id: str) -> RunRecord:
        """Everything stored about one run, as typed records."""
        return RunRecord(
            run=self.run(run_id), attempts=tuple(self.attempts(run_id)),
            steps=tuple(self.steps(run_id)), tool_calls=tuple(self.tool_calls(run_id)),
            artifacts=tuple(self.artifacts(run_id)), verdict=self.verdict(run_id),
            patches=tuple(self.patches(run_id)),
            verifications=tuple(self.verifications(run_id)),
            judgements=tuple(self.judgements(run_id)),
            events=tuple(run_rows.event_from_row(row) for row in self.events(run_id=run_id)),
        )
