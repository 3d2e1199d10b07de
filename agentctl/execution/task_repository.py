"""Resolving what a task names: a local git work tree or a URL, a base ref and its commit.

Uses GitPython's object model, except for the repository and the base commit a run starts from:
`rev-parse` through `trusted_git` (the user's repository, as they run git), which every run
makes and which should not pay for importing GitPython (~0.1 s); one call finds the work tree,
its branch and that branch's commit where a branch with a commit is checked out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.errors import BadInput, InfrastructureFailure
from agentctl.execution.git import FULL_COMMIT_ID, trusted_git
from agentctl.execution.work_tree import is_url


@dataclass(frozen=True, slots=True)
class ResolvedRepository:
    location: str  # absolute work-tree path, or the URL as given
    is_url: bool
    # the branch checked out there and its commit, read with the top (None: not known then)
    head: tuple[str, str] | None = None


def resolve_repository(text: str, aliases: Mapping[str, str], cwd: Path) -> ResolvedRepository:
    """An alias from config, a URL, or a path to (anywhere inside) a git work tree."""
    spec = aliases.get(text, text).strip()
    if not spec:
        raise BadInput("empty repository; expected a path to a git work tree or a git URL")
    if is_url(spec) and not spec.startswith("file://"):
        return ResolvedRepository(spec, is_url=True)
    path = Path(spec.removeprefix("file://")).expanduser()
    path = (cwd / path).resolve() if not path.is_absolute() else path.resolve()
    if not path.exists():
        raise BadInput(f"repository {text!r} does not exist ({path}); expected a path to a git "
                       "work tree or a git URL")
    top, head = _top_and_head(path if path.is_dir() else path.parent)
    if top is None:
        raise BadInput(f"repository {text!r} is not a git repository ({path})")
    if top == "":
        raise BadInput(f"repository {text!r} is a bare repository; expected a work tree")
    return ResolvedRepository(str(Path(top).resolve()), is_url=False, head=head)


def _top_and_head(folder: Path) -> tuple[str | None, tuple[str, str] | None]:
    """`_work_tree_top`, and the branch checked out there with its commit, in one git process
    where there is one (a branch with a commit; `--abbrev-ref` names it as `symbolic-ref
    --short` does). Anything else (a detached or unborn HEAD, a bare repository, a folder in
    `.git`, no repository) is found the way `_work_tree_top` finds it, the head not known."""
    found = trusted_git(["rev-parse", "--is-bare-repository", "--show-toplevel", "HEAD^{commit}",
                         "--abbrev-ref", "HEAD"], cwd=folder, what="find the repository",
                        check=False)
    answer = found.stdout.split("\n")
    if (found.returncode == 0 and len(answer) > 3 and answer[0] == "false" and answer[1]
            and FULL_COMMIT_ID.fullmatch(answer[2]) and answer[3] not in ("", "HEAD")):
        return answer[1], (answer[3], answer[2])
    return _work_tree_top(folder), None



def _work_tree_top(folder: Path) -> str | None:
    """The top of the work tree `folder` is in (or in whose `.git` it is); "" for a bare
    repository, None outside any. One git process (GitPython costs more to import)."""
    found = trusted_git(["rev-parse", "--is-bare-repository", "--show-toplevel"], cwd=folder,
                        what="find the repository", check=False)
    answer = found.stdout.split("\n")
    if found.returncode == 0 and len(answer) > 1 and answer[1]:
        return answer[1]
    if answer[0] == "true":
        return ""
    if answer[0] != "false":
        return None
    git_dir = trusted_git(["rev-parse", "--absolute-git-dir"], cwd=folder, check=False,
                          what="find the repository")  # inside a work tree's .git
    if git_dir.returncode != 0 or Path(git_dir.stdout.strip()).parent == folder:
        return None
    return _work_tree_top(Path(git_dir.stdout.strip()).parent)


def default_base_ref(repository: ResolvedRepository) -> str:
    """The repository's current branch; for a URL, its HEAD."""
    if repository.is_url:
        return "HEAD"
    branch = trusted_git(["symbolic-ref", "--quiet", "--short", "HEAD"],
                         cwd=Path(repository.location), what="read the current branch",
                         check=False)
    if branch.returncode != 0 or not branch.stdout.strip():
        raise BadInput(f"{repository.location} is on a detached HEAD; pass --base REF")
    return branch.stdout.strip()


def default_base(repository: ResolvedRepository) -> tuple[str, str | None]:
    """`default_base_ref` and the commit `check_base_ref` gives it: read when the repository
    was found, where it could be."""
    if repository.head is not None:
        return repository.head
    ref = default_base_ref(repository)
    return ref, check_base_ref(repository, ref)


def check_base_ref(repository: ResolvedRepository, ref: str) -> str | None:
    """The commit `ref` names now (BadInput if none); None for a URL, resolved when a run
    starts."""
    if repository.is_url:
        return None
    return commit_of(repository.location, ref)


def commit_of(location: str, ref: str) -> str:
    """The commit sha `ref` names in a local repository, or BadInput."""
    if not ref.strip() or ref.startswith("-"):
        raise BadInput(f"invalid base ref {ref!r}")
    # git's own parser, so every revision syntax works (reflogs, `:/message`, ...), insisting
    # the object is (or peels to) a commit: in one step where `^{commit}` can follow the ref
    # (a branch, a tag, a reflog entry, a sha: one git on every submit), else in two (after a
    # `:` it would be part of a path or a message searched for)
    one_step = ":" not in ref
    found = trusted_git(["rev-parse", "--verify", "--quiet", "--end-of-options",
                         f"{ref}^{{commit}}" if one_step else ref],
                        what="resolve the base ref", cwd=Path(location), check=False)
    if found.returncode == 0 and not one_step:
        found = trusted_git(["rev-parse", "--verify", "--quiet", f"{found.stdout.strip()}^{{commit}}"],
                            what="resolve the base ref", cwd=Path(location), check=False)
    if found.returncode != 0:
        raise BadInput(f"base ref {ref!r} does not exist in {location} (or is not a commit)")
    return found.stdout.strip()


def remote_commit_of(url: str, ref: str) -> str:
    """The commit a remote ref points at (`git ls-remote`), for URL tasks at run time."""
    import git

    try:
        output = str(git.cmd.Git().ls_remote(url, ref))
    except git.GitCommandError as error:
        raise InfrastructureFailure(f"cannot reach {url}: {error.stderr.strip()}") from None
    for line in output.splitlines():
        sha, _, name = line.partition("\t")
        if name in (ref, f"refs/heads/{ref}", f"refs/tags/{ref}", "HEAD"):
            return sha
    raise BadInput(f"base ref {ref!r} does not exist in {url}")
