"""The command guard: deny before ask before allow, first match wins, no shell unless allowed."""

from __future__ import annotations

import shlex

import pytest

from agentctl.config import defaults
from agentctl.domain.command_rules import (
    NO_MATCH_RULE,
    SHELL_METACHARACTERS,
    GuardDecision,
    check_command,
    rule_matches,
)
from agentctl.domain.enums import ToolDecision
from agentctl.domain.spec import CommandRules

ALLOWED = ToolDecision.ALLOWED
DENIED = ToolDecision.DENIED_BY_COMMAND_GUARD
ASK = ToolDecision.REQUIRES_APPROVAL

RULES = CommandRules(
    deny=("git push *", "curl *", "rm -rf /*"),
    ask=("pip install *", "rm -rf *", "git *"),
    allow=("python *", "pytest *", "git status *", "echo *", "true", "ls *", "python3.1[0-9] *",
           "find *"),
)


def decide(
    command: str, *, allow_shell: bool = False, rules: CommandRules = RULES,
) -> GuardDecision:
    return check_command(command, rules, allow_shell=allow_shell)


@pytest.mark.parametrize(("rule", "argv", "expected"), [
    ("git push *", ["git", "push"], True),  # a trailing * matches zero further arguments
    ("git push *", ["git", "push", "origin", "main"], True),
    ("git push *", ["git"], False),
    ("git push *", ["git", "pushx"], False),
    ("true", ["true"], True),
    ("true", ["true", "x"], False),  # without a trailing * the arguments must match exactly
    ("python3.1[0-9] *", ["python3.12", "-V"], True),  # a token may be a glob
    ("python3.1[0-9] *", ["python3.1", "-V"], False),
    ("rm -rf /*", ["rm", "-rf", "/"], True),
    ("rm -rf /*", ["rm", "-rf", "build"], False),
    ("echo [*]", ["echo", "*"], True),  # `[*]` is a literal star
    ("echo [*]", ["echo", "x"], False),
    ("GIT *", ["git"], False),  # case-sensitive
    ("'unbalanced *", ["unbalanced"], False),  # a rule that does not split never matches
])
def test_rule_matching_is_by_argv_prefix_with_a_trailing_star(
    rule: str, argv: list[str], expected: bool,
) -> None:
    assert rule_matches(rule, argv) is expected


@pytest.mark.parametrize(("command", "decision", "rule"), [
    ("python -m pytest -q", ALLOWED, "allow: python *"),
    ("pytest", ALLOWED, "allow: pytest *"),
    ("git status --short", ASK, "ask: git *"),  # ask before allow, however specific the allow
    ("true", ALLOWED, "allow: true"),
    ("git push origin main", DENIED, "deny: git push *"),  # deny beats the broader ask `git *`
    ("git commit -m x", ASK, "ask: git *"),
    ("pip install requests", ASK, "ask: pip install *"),
    ("rm -rf /", DENIED, "deny: rm -rf /*"),  # deny before ask (`rm -rf *`)
    ("rm -rf build", ASK, "ask: rm -rf *"),
    ("make build", DENIED, NO_MATCH_RULE),  # no rule: denied, and the default says so
])
def test_deny_is_checked_before_ask_before_allow_and_the_first_match_names_the_rule(
    command: str, decision: ToolDecision, rule: str | None,
) -> None:
    result = decide(command)
    assert (result.decision, result.matched_rule) == (decision, rule)
    assert (result.reason is None) is (decision is ALLOWED)


def test_first_match_within_a_list_wins() -> None:
    rules = CommandRules(deny=(), ask=(), allow=("python -m *", "python *"))
    assert decide("python -m pytest", rules=rules).matched_rule == "allow: python -m *"
    assert decide("python x.py", rules=rules).matched_rule == "allow: python *"


def test_a_command_no_rule_allows_is_denied_with_a_reason_quoting_it() -> None:
    result = decide("make   build")
    assert result.decision is DENIED and result.matched_rule == NO_MATCH_RULE
    assert result.reason == "no rule allows `make build`"


@pytest.mark.parametrize("command", [
    "pytest > out.txt", "pytest 2>&1", "cat a | grep b", "true; git push", "true && git push",
    "true || git push", "pytest &", "echo $(git push)", "echo `git push`", "echo $HOME",
    'echo "$HOME"', "echo ${HOME}", "(git push)", "true\ngit push", "cat < /etc/passwd",
])
def test_shell_metacharacters_are_refused_before_any_rule(command: str) -> None:
    result = decide(command)
    assert result.decision is DENIED
    assert result.matched_rule == "shell metacharacters"
    assert "allow_shell" in (result.reason or "")


@pytest.mark.parametrize("command", [
    "echo 'a | b; c > d'",  # single quotes: sh would not act on them either
    'python -c "import sys; print(sys.argv)"',  # ; and ( ) inside double quotes are literal
    "echo a\\;b",  # escaped
    "echo 'cost: $5'",
    "echo price$",  # a `$` that expands nothing
])
def test_quoted_or_escaped_metacharacters_are_plain_arguments(command: str) -> None:
    assert decide(command).decision is ALLOWED


def test_the_metacharacter_set_names_operators_and_expansions() -> None:
    assert {"|", "||", "&", "&&", ";", ">", ">>", "<", "$", "$(", "`", "(", ")", "\n"} <= (
        SHELL_METACHARACTERS)


@pytest.mark.parametrize(("command", "rule"), [
    ("git  push", "deny: git push *"),  # extra spaces
    ("git\tpush", "deny: git push *"),
    ('git "push"', "deny: git push *"),  # quotes
    ("git 'pu'sh origin", "deny: git push *"),
    ("/usr/bin/git push", "deny: git push *"),  # path-qualified program
    ("./curl https://example.com", "deny: curl *"),
    ("env git push", "deny: git push *"),  # wrappers
    ("env -i FOO=1 git push", "deny: git push *"),
    ("timeout 5 git push", "deny: git push *"),
    ("nice -n 10 /usr/bin/curl x", "deny: curl *"),
    ("sh -c 'git push origin'", "deny: git push *"),
    ("bash -c 'true; curl x'", "deny: curl *"),
    ("git -C . push", "deny: git push *"),  # git's global options
    ("git -c user.name=x --no-pager push", "deny: git push *"),
    ("find . -exec curl x \\;", "deny: curl *"),  # an allowed program running a denied one
])
def test_evasions_of_a_deny_rule_are_still_denied_by_it(command: str, rule: str) -> None:
    result = decide(command)
    assert (result.decision, result.matched_rule) == (DENIED, rule)


@pytest.mark.parametrize("command", ["/usr/bin/python -V", "env python -V", "./pytest"])
def test_allow_rules_match_only_the_command_as_written(command: str) -> None:
    result = decide(command)
    assert result.decision is DENIED and result.matched_rule == NO_MATCH_RULE


def test_a_path_qualified_program_is_told_why_it_is_not_allowed() -> None:
    assert "path-qualified" in (decide("/usr/bin/python -V").reason or "")


@pytest.mark.parametrize("command", ['echo "unbalanced', "echo 'x", "echo \\", "", "   ", "a\0b"])
def test_an_unsplittable_or_empty_command_is_denied(command: str) -> None:
    result = decide(command)
    assert (result.decision, result.matched_rule) == (DENIED, "malformed command")


@pytest.mark.parametrize(("command", "decision", "rule"), [
    ("pytest -q 2>&1 > log.txt", ALLOWED, "allow: pytest *"),
    ("ls | python -c 'import sys'", ALLOWED, "allow: ls *; allow: python *"),
    ("true && git push", DENIED, "deny: git push *"),
    ("echo $(curl x)", DENIED, "deny: curl *"),
    ('echo "`curl x`"', DENIED, "deny: curl *"),
    ("FOO=1 git push", DENIED, "deny: git push *"),
    ("{ git push; }", DENIED, "deny: git push *"),
    ("true; pip install x", ASK, "ask: pip install *"),
    ("true | make", DENIED, NO_MATCH_RULE),
    ("if true; then echo ok; fi", ALLOWED, "allow: true; allow: echo *"),
    ('echo "unbalanced', DENIED, "malformed command"),
])
def test_with_allow_shell_every_simple_command_is_judged_and_the_strictest_wins(
    command: str, decision: ToolDecision, rule: str | None,
) -> None:
    result = decide(command, allow_shell=True)
    assert (result.decision, result.matched_rule) == (decision, rule)


@pytest.mark.parametrize(("command", "decision", "rule"), [
    ("git push origin main", DENIED, "deny: git push *"),
    ("curl https://example.com", DENIED, "deny: curl *"),
    ("pip install x", ASK, "ask: pip install *"),
    ("python -m pytest -q", ALLOWED, "allow: python *"),
    ("git status", ALLOWED, "allow: git status *"),
    ("rm -rf /", DENIED, "deny: rm -rf /*"),
])
def test_the_default_config_rules_behave_as_documented(
    command: str, decision: ToolDecision, rule: str,
) -> None:
    config = defaults()
    rules = CommandRules(deny=config.tools.commands.deny,
                         ask=config.tools.commands.ask,
                         allow=config.tools.commands.allow)
    result = decide(command, rules=rules)
    assert (result.decision, result.matched_rule) == (decision, rule)


def test_command_lines_nested_in_shells_are_unwrapped_for_deny_rules() -> None:
    command = "git push"
    for _ in range(3):
        command = shlex.join(["sh", "-c", command])
    assert decide(command).matched_rule == "deny: git push *"


def test_a_command_with_too_many_readings_is_denied() -> None:
    rules = CommandRules(deny=("git push *",), ask=(), allow=("env *",))
    result = decide("env " * 3000 + "git push", rules=rules)
    assert result.decision is DENIED and "too many readings" in (result.reason or "")


@pytest.mark.parametrize("command", [
    "git diff --no-index /etc/passwd calc.py",
    "git diff --no-index -- ../outside.txt calc.py",
    "git grep --no-index root /etc",
    "git blame --contents=/etc/passwd calc.py",
    "git log --format=%s --no-index",
])
def test_git_forms_that_read_outside_the_workspace_are_denied_unless_a_rule_names_them(
        command: str) -> None:
    defaults_and_more = defaults().tools.commands
    rules = CommandRules(deny=defaults_and_more.deny, ask=defaults_and_more.ask,
                         allow=(*defaults_and_more.allow, "git grep *", "git blame *"))
    decision = check_command(command, rules, allow_shell=False)
    assert decision.decision is DENIED, decision
    assert "reads files outside the workspace" in (decision.reason or ""), decision


def test_a_rule_that_names_no_index_itself_allows_it() -> None:
    rules = CommandRules(deny=(), ask=(), allow=("git diff --no-index *",))
    assert check_command("git diff --no-index a.txt b.txt", rules,
                         allow_shell=False).decision is ALLOWED
    assert check_command("git diff HEAD -- calc.py", defaults().tools.commands,
                         allow_shell=False).decision is ALLOWED


GIT_READERS = ("git grep *", "git diff *", "git apply *", "git hash-object *", "git fetch *",
               "git ls-remote *", "git blame *")


@pytest.mark.parametrize(("command", "named"), [
    ("git grep --open-files-in=python3 x", "--open-files-in-pager"),
    ("git grep --open-files-in python3 x", "--open-files-in-pager"),
    ("git grep -iOpython3 x", "-O"),
    ("git ls-remote --upl=touch origin", "--upload-pack"),
    ("git fetch --up touch origin", "--upload-pack"),
    ("git diff --no-i /etc/passwd calc.py", "--no-index"),
    ("git blame --cont=/etc/passwd calc.py", "--contents"),
    ("git diff --outp=../x.txt", "--output"),
])
def test_git_options_are_read_as_git_reads_them_abbreviated_joined_or_bundled(
        command: str, named: str) -> None:
    commands = defaults().tools.commands
    rules = CommandRules(deny=commands.deny, ask=commands.ask, allow=GIT_READERS)
    decision = check_command(command, rules, allow_shell=False)
    assert decision.decision is DENIED, decision
    assert f"`{named}`" in (decision.reason or ""), decision


@pytest.mark.parametrize("command", [
    "git diff ../../../../etc/passwd README.md",
    "git diff -- ../../../../etc/passwd README.md",
    "git diff HEAD /etc/passwd",
    "git apply /tmp/planted.patch",
    "git hash-object -w /etc/passwd",
    "git fetch file:///srv/other.git",
    "git ls-remote ../../other-repo",
])
def test_git_path_arguments_outside_the_workspace_are_denied_for_commands_that_read_them(
        command: str) -> None:
    rules = CommandRules(deny=(), ask=(), allow=GIT_READERS)
    decision = check_command(command, rules, allow_shell=False)
    assert decision.decision is DENIED, decision
    assert "reads files outside the workspace" in (decision.reason or ""), decision


@pytest.mark.parametrize("command", [
    "git diff HEAD -- calc.py", "git diff --cc", "git diff --stat main..feature",
    "git log --oneline -n5", "git grep -in pattern -- src", "git diff --no-ext-diff calc.py",
    "git fetch origin", "git diff docs/../calc.py",
])
def test_ordinary_git_reading_inside_the_workspace_stays_allowed(command: str) -> None:
    rules = CommandRules(deny=(), ask=(), allow=(*GIT_READERS, "git log *"))
    decision = check_command(command, rules, allow_shell=False)
    assert decision.decision is ALLOWED, decision
