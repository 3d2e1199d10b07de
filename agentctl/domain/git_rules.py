"""What a `git` command line may not do, whatever rule allows `git ...`.

An allow rule such as `git log *` vouches for reading history, not for the options git has that
write files or run programs: `git log --output=/anywhere`, `git -c alias.p=push p` (a push past
the `git push *` deny rule), `git -c core.pager='curl ...' log`, `git diff --ext-diff`. So, for
every git command line, before the allow rules count:

- global options that change what git is or reads are refused: `-c`, `--config-env`,
  `--exec-path=DIR`, `--git-dir`, `--work-tree`, and `-C DIR` outside the workspace;
- the subcommand must be one of git's own: anything else may be an alias for a denied one;
- subcommand options that write where they are told or run programs (`--output`, `-o`,
  `--upload-pack`, `--receive-pack`, `--exec`, `--ext-diff`, `--open-files-in-pager`,
  `--template`, ...) and subcommands that run arbitrary programs (`difftool`, `mergetool`,
  `bisect`, `submodule`, `filter-branch`, `hook`, ...) are refused;
- options that read files wherever they are told, outside the workspace too (`git diff
  --no-index /etc/passwd x`, `git blame --contents`, `git archive --add-file`, `git config
  --file`, `git commit -F /path`), are refused

unless the allow rule that matched names them itself (`git log --output=log.txt *`): a person
wrote that, knowing what it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

GLOBAL_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                               "--config-env", "--super-prefix", "--exec-path", "--list-cmds",
                               "--attr-source"})
_RISKY_GLOBALS = {
    "-c": "sets configuration (aliases, pagers, hooks, fsmonitor)",
    "--config-env": "sets configuration from the environment",
    "--exec-path": "runs git's programs from another directory",
    "--git-dir": "points git at another repository",
    "--work-tree": "points git at another work tree",
}
# `git --list-cmds=builtins` (git 2.39), plus the porcelain users type that is not builtin.
BUILTINS = frozenset("""
add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean
clone column commit commit-graph commit-tree config count-objects credential describe diagnose
diff diff-files diff-index diff-tree difftool fast-export fast-import fetch fetch-pack
fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep
hash-object help hook index-pack init init-db interpret-trailers log ls-files ls-remote ls-tree
mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-tree mktag mktree
multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id prune
prune-packed pull push range-diff read-tree rebase receive-pack reflog remote repack replace
rerere reset restore rev-list rev-parse revert rm send-pack shortlog show show-branch show-index
show-ref sparse-checkout stage stash status stripspace switch symbolic-ref tag unpack-file
unpack-objects update-index update-ref update-server-info upload-archive upload-pack var
verify-commit verify-pack verify-tag version whatchanged worktree write-tree
mergetool submodule filter-branch request-pull instaweb send-email gitk citool gui
""".split())
RUNS_PROGRAMS = frozenset({"difftool", "mergetool", "bisect", "submodule", "filter-branch",
                           "hook", "credential", "instaweb", "send-email", "gui", "citool",
                           "gitk", "for-each-repo", "maintenance", "upload-pack",
                           "receive-pack", "upload-archive"})
# Option names (as `--name` or `--name=value`) that write where told or run a program.
_RISKY_OPTIONS = ("--output", "--output-directory", "--upload-pack", "--receive-pack", "--exec",
                  "--ext-diff", "--open-files-in-pager", "--template", "--separate-git-dir",
                  "--extcmd", "--tool", "--to-command", "--remote", "--config", "--run")
# Option names that read a file from wherever they are told: the workspace is no bound.
_READS_ANYWHERE = ("--no-index", "--contents", "--add-file", "--file", "--blob")
# Short options that do the same for some subcommands: (subcommand, option).
_READS_SHORT = {("commit", "-F"), ("tag", "-F"), ("notes", "-F"), ("config", "-f"),
                ("merge", "-F")}
# Short options that write or run for some subcommands: (subcommand, option).
_RISKY_SHORT = {("format-patch", "-o"), ("archive", "-o"), ("grep", "-O"), ("rebase", "-x"),
                ("difftool", "-x"), ("clone", "-c"), ("clone", "-u"), ("fetch", "-u"),
                ("pull", "-u")}


@dataclass(frozen=True, slots=True)
class Risk:
    index: int  # the argument it stems from, so a rule can be seen to name it
    reason: str


def git_risks(argv: Sequence[str]) -> list[Risk]:
    """Why this git command line can do more than its subcommand says; empty when it cannot.
    `argv[0]` is git (as written or by basename)."""
    risks: list[Risk] = []
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        option, equals, inline = argv[index].partition("=")
        takes_value = option in GLOBAL_WITH_VALUE and not equals
        value = inline if equals else (argv[index + 1] if takes_value and index + 1 < len(argv)
                                       else "")
        if option in _RISKY_GLOBALS and (option != "--exec-path" or equals):
            risks.append(Risk(index, f"`{option}` {_RISKY_GLOBALS[option]}"))
        if option == "-C" and _outside(value):
            risks.append(Risk(index, f"`-C {value}` runs git outside the workspace"))
        index += 2 if takes_value else 1
    if index >= len(argv):
        return risks
    subcommand = argv[index]
    if subcommand not in BUILTINS:
        return [*risks, Risk(index, f"`{subcommand}` is not one of git's commands (an alias "
                                    "can stand for any other)")]
    if subcommand in RUNS_PROGRAMS:
        risks.append(Risk(index, f"`git {subcommand}` runs programs it is configured or told to"))
    for position in range(index + 1, len(argv)):
        arg = argv[position]
        if arg == "--":
            break
        if arg.partition("=")[0] in _RISKY_OPTIONS:
            risks.append(Risk(position, f"`{arg.partition('=')[0]}` writes files or runs a "
                                        "program"))
        elif arg.partition("=")[0] in _READS_ANYWHERE or (
                not arg.startswith("--") and (subcommand, arg[:2]) in _READS_SHORT):
            name = arg.partition("=")[0] if arg.startswith("--") else arg[:2]
            risks.append(Risk(position, f"`{name}` of `git {subcommand}` reads files outside "
                                        "the workspace"))
        elif not arg.startswith("--") and (subcommand, arg[:2]) in _RISKY_SHORT:
            risks.append(Risk(position, f"`{arg[:2]}` of `git {subcommand}` writes files or "
                                        "runs a program"))
    return risks


def named_by(rule_tokens: Sequence[str], risk: Risk) -> bool:
    """Whether a rule (its tokens, aligned with the argv it matched) names the risky argument
    itself, with literal text rather than only a wildcard."""
    return risk.index < len(rule_tokens) and rule_tokens[risk.index][:1] not in ("*", "?", "[")


def _outside(path: str) -> bool:
    if path.startswith(("/", "~")):
        return True
    depth = 0
    for part in path.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False
