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
  --file`, `git commit -F /path`), are refused, and so are path arguments outside the workspace
  (absolute, climbing out, `file:` URLs) of the commands that read them (`git diff
  ../../etc/passwd x` switches to --no-index on its own; `git apply`, `git hash-object`,
  `git fetch`, ...)

Options are read as git's option parser reads them: a long option may be cut to any unambiguous
prefix (`--upl` is `--upload-pack`), so any prefix of a listed name counts as that name (one that
is ambiguous git refuses anyway); `--name=value` is the name; short options may be bundled
(`-iO`), so each letter of a bundle counts

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
# Options of git's own commands that are whole names, not abbreviations of a listed one (git
# takes an exact name first): `git format-patch --to=ADDRESS`.
_EXACT_NAMES = frozenset({"--to"})
# Subcommands that read (or fetch from) a path given as an argument, outside the workspace too.
READS_PATH_ARGUMENTS = frozenset({
    "diff", "apply", "am", "hash-object", "mailinfo", "mailsplit", "merge-file", "bundle",
    "fetch", "pull", "clone", "ls-remote", "index-pack", "verify-pack", "remote", "blame",
    "annotate", "check-ignore", "check-attr", "archive", "format-patch", "init", "worktree",
    "fetch-pack", "send-pack", "rev-parse",
})
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
    options = True
    for position in range(index + 1, len(argv)):
        arg = argv[position]
        if options and arg in ("--", "--end-of-options"):
            options = False
        elif options and arg.startswith("--"):
            risks += _long_option_risks(position, arg, subcommand)
        elif options and arg.startswith("-") and len(arg) > 1:
            risks += _short_option_risks(position, arg, subcommand)
        elif subcommand in READS_PATH_ARGUMENTS and _outside(arg):
            risks.append(Risk(position, f"`git {subcommand}` reads files outside the workspace "
                                        f"(`{arg}`)"))
    return risks


def _long_option_risks(position: int, arg: str, subcommand: str) -> list[Risk]:
    given = arg.partition("=")[0]
    risky = _expanded(given, _RISKY_OPTIONS)
    if risky is not None:
        return [Risk(position, f"`{risky}` writes files or runs a program"
                               + (f" (`{given}` abbreviates it)" if risky != given else ""))]
    reads = _expanded(given, _READS_ANYWHERE)
    if reads is not None:
        return [Risk(position, f"`{reads}` of `git {subcommand}` reads files outside the "
                               "workspace" + (f" (`{given}` abbreviates it)"
                                              if reads != given else ""))]
    return []


def _short_option_risks(position: int, arg: str, subcommand: str) -> list[Risk]:
    for letter in arg[1:]:
        option = f"-{letter}"
        if (subcommand, option) in _RISKY_SHORT:
            return [Risk(position, f"`{option}` of `git {subcommand}` writes files or runs a "
                                   "program")]
        if (subcommand, option) in _READS_SHORT:
            return [Risk(position, f"`{option}` of `git {subcommand}` reads files outside the "
                                   "workspace")]
    return []


def _expanded(given: str, names: Sequence[str]) -> str | None:
    """The listed option `given` names in full or as git's parser accepts it cut short."""
    if len(given) <= 2 or given in _EXACT_NAMES:
        return None
    return next((name for name in names if name.startswith(given)), None)


def named_by(rule_tokens: Sequence[str], risk: Risk) -> bool:
    """Whether a rule (its tokens, aligned with the argv it matched) names the risky argument
    itself, with literal text rather than only a wildcard."""
    return risk.index < len(rule_tokens) and rule_tokens[risk.index][:1] not in ("*", "?", "[")


def _outside(path: str) -> bool:
    if path.startswith(("/", "~")) or path.lower().startswith("file:"):
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
