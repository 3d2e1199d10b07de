"""Rows of the evidence a run is judged by and of what is decided on it: patches, verification
and judge reports, verdicts, approvals and pull requests."""

from __future__ import annotations

from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.store.rows import RowMapping

PATCHES = RowMapping(Patch, "patch", "patch_id", "patch")
VERIFICATIONS = RowMapping(VerificationReport, "verification_report",
                           "verification_report_id", "verification")
JUDGEMENTS = RowMapping(JudgeReport, "judge_report", "judge_report_id", "judge")
VERDICTS = RowMapping(Verdict, "verdict", "verdict_id", "verdict")
APPROVALS = RowMapping(Approval, "approval", "approval_id", "approval")
PULL_REQUESTS = RowMapping(PullRequest, "pull_request", "pr_id", "pr")

# The lean reads (store/views.py) decode by these names.
patch_from_row = PATCHES.from_row
verification_report_from_row = VERIFICATIONS.from_row
judge_report_from_row = JUDGEMENTS.from_row
verdict_from_row = VERDICTS.from_row
approval_from_row = APPROVALS.from_row
pull_request_from_row = PULL_REQUESTS.from_row
