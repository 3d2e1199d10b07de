"""Which change broke the patch boundary: the rule a step's edit is marked with."""

from __future__ import annotations

from agentctl.domain.enums import ChangeType
from agentctl.domain.patch import check_boundary, classify
from agentctl.domain.spec import PatchBoundary

BOUNDARY = PatchBoundary(allowed_paths=(), forbidden_paths=(".github/**", "secrets/*"),
                         lockfile_patterns=(), generated_patterns=())


def test_a_forbidden_path_or_a_rename_out_of_one_gives_its_rule_and_an_allowed_one_none() -> None:
    changes = [classify(".github/workflows/x.yml", ChangeType.ADDED, 1, 0, binary=False,
                        boundary=BOUNDARY),
               classify("keys.txt", ChangeType.RENAMED, 0, 0, binary=False, boundary=BOUNDARY,
                        old_path="secrets/keys.txt"),
               classify("calc.py", ChangeType.MODIFIED, 1, 0, binary=False, boundary=BOUNDARY)]
    check = check_boundary(changes, BOUNDARY)
    assert check.forbidden_rule(".github/workflows/x.yml") == "forbidden: .github/**"
    assert check.forbidden_rule("keys.txt", "secrets/keys.txt") == "forbidden: secrets/*"
    assert check.forbidden_rule("calc.py") is None
    assert check.forbidden_rule() is None
