"""Failures no rerun can change: a test module that failed to import, or that its runner could
not collect, is not flaky. It is classified from its one run; a rerun would pay a whole start-up
and discovery for the same answer (and call an import error "flaky" if anything else moved)."""

from __future__ import annotations

from agentctl.domain.verification import TestResult

# How the report plugin names a pytest collection error (a module, a class or a conftest
# that failed to load), ahead of its last line; pytest's own JUnit report says only this.
COLLECTION_ERROR = "collection error: "
_JUNIT_COLLECTION_ERROR = "collection failure"
# unittest's stand-ins for a module or name it could not load.
_UNITTEST_LOAD_FAILURES = ("unittest.loader._FailedTest", "unittest.loader.ModuleImportFailure")
_IMPORT_FAILURES = (COLLECTION_ERROR, _JUNIT_COLLECTION_ERROR, "ModuleNotFoundError",
                    "ImportError: Failed to import test")


def is_final(result: TestResult) -> bool:
    """Whether `result` is a failure to load tests rather than a test's own outcome."""
    if not result.failed:
        return False
    test_id = result.test_id
    if any(test_id == name or test_id.startswith(f"{name}.") for name in _UNITTEST_LOAD_FAILURES):
        return True
    return (result.message or "").startswith(_IMPORT_FAILURES)
