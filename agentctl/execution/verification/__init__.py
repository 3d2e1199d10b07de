"""Verification: the checks run on the verified tree, the test-runner plugins and hooks that
report each test, and the reports read back."""
