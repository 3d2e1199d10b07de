"""A task's test patch (SWE-bench's `test_patch`): read, understood by git, checked to apply.

The tests that judge a fix are best not the agent's: a task may bring its own, as a diff over
the base. It is refused at submission, before anything is stored, when it cannot be read, is
not a diff git understands, or does not apply to the base commit; a run could never use it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agentctl.domain.errors import BadInput
from agentctl.execution.git import trusted_git

MAX_TEST_PATCH_BYTES = 1 << 20  # a test patch is tests, not a vendored tree


def read_test_patch(path: Path) -> str:
    """The diff `path` holds, as text; BadInput when it cannot be read, is too large or empty."""
    try:
        size = path.stat().st_size
        if size > MAX_TEST_PATCH_BYTES:
            raise BadInput(f"test patch {path} is {size:,} bytes; at most "
                           f"{MAX_TEST_PATCH_BYTES:,}")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read test patch {path}: "
                       f"{getattr(error, 'strerror', None) or error}") from None
    if "\0" in text:
        raise BadInput(f"test patch {path} is not a diff (it holds NUL bytes)")
    return text if text.endswith("\n") else text + "\n"


def patch_paths(text: str, *, named: str = "the test patch") -> tuple[str, ...]:
    """Every path the diff touches, as git reads it; BadInput when git finds no diff in it."""
    found = trusted_git(["apply", "--numstat", "-z", "-"], what="read the test patch",
                        check=False, stdin=text.encode())
    names = [part.rsplit("\t", 1)[-1] for part in found.stdout.split("\0") if part]
    if found.returncode != 0 or not names:
        why = found.stderr.strip().splitlines()[:1]
        raise BadInput(f"{named} is not a diff git can apply" + (f": {why[0]}" if why else ""))
    return tuple(dict.fromkeys(names))


def check_applies(location: str, commit: str, text: str, *,
                  named: str = "the test patch") -> None:
    """BadInput unless the diff applies to `commit` of the local repository at `location`
    (on a scratch index of that commit: the user's work tree and index are not touched)."""
    with tempfile.TemporaryDirectory(prefix="agentctl-test-patch-") as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        trusted_git(["read-tree", commit], what="read the base commit", cwd=Path(location),
                    env=index)
        found = trusted_git(["apply", "--cached", "--check", "-"], cwd=Path(location),
                            what="check the test patch", env=index, check=False, stdin=text.encode())
    if found.returncode != 0:
        why = found.stderr.strip().splitlines()[:1]
        raise BadInput(f"{named} does not apply to the base commit {commit[:12]}"
                       + (f": {why[0]}" if why else ""))
