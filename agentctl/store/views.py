"""The reads of the commands that show a run whole: `run_views.RunViews` and the rows of
`run show --tree`, typed by the storage port (`services.unit_of_work`), which only they load.
"""

from __future__ import annotations

from agentctl.services.unit_of_work import CallRow, StepRow
from agentctl.store.run_views import RunViews


class Views(RunViews):
    def step_tree_rows(self, run_id: str) -> list[StepRow]:
        """The columns of `run show --tree` of each step of a run, in attempt and step order."""
        return [StepRow._make(row) for row in self._tuples("step_tree", run_id=run_id)]

    def call_tree_rows(self, run_id: str) -> list[CallRow]:
        """The columns of `run show --tree` of each tool call of a run."""
        return [CallRow._make(row) for row in self._tuples("call_tree", run_id=run_id)]
