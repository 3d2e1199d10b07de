"""Agent-chosen text as data: which characters are spelled out where, and what GitHub would act
on in a PR body's text."""

from __future__ import annotations

import pytest

from agentctl.domain.agent_text import control_character, md_text, spelled_out, visible

J = "\u2060"  # the word joiner md_text adds


@pytest.mark.parametrize(("text", "spelled"), [
    ("a\nb", "\\n"), ("a\x1bb", "\\x1b"), ("a\x7fb", "\\x7f"), ("a\x85b", "\\x85"),
    ("a\x9bb", "\\x9b"), ("a\u2028b", "\\u2028"), ("a\u2029b", "\\u2029"),
    ("a\u202eb", "\\u202e"), ("a\u202ab", "\\u202a"), ("a\u2066b", "\\u2066"),
    ("a\u2069b", "\\u2069"),
])
def test_controls_separators_and_bidi_controls_are_spelled_out(text: str, spelled: str) -> None:
    assert control_character(text) == spelled
    assert visible(text) == f"a{spelled}b"


@pytest.mark.parametrize("text", ["plain.py", "é ü 中文 עברית.md", "a\u00a0b", "emoji 🙂"])
def test_letters_of_any_script_are_no_control(text: str) -> None:
    assert control_character(text) is None and visible(text) == text


def test_a_whole_document_keeps_its_own_tabs_and_lines_and_spells_the_rest() -> None:
    assert spelled_out("\tx = 1\r\n+y\u202e\x85\x1b\n") == "\tx = 1\r\n+y\\u202e\\x85\\x1b\n"


@pytest.mark.parametrize(("text", "inert"), [
    ("@alice please merge", f"@{J}alice please merge"),
    ("cc @octo/owners", f"cc @{J}octo/owners"),
    ("Fixes #12", f"F{J}ixes #{J}12"),
    ("closes octo/calc#3", f"c{J}loses octo/calc#{J}3"),
    ("RESOLVED: https://github.com/o/r/issues/4", f"R{J}ESOLVED: https://github.com/o/r/issues/4"),
    ("Close #1, fixed GH-2", f"C{J}lose #{J}1, f{J}ixed GH-{J}2"),
    ("Fixes: octo/calc#5", f"F{J}ixes: octo/calc#{J}5"),
    ("prefix, fixture, closet, resolver", "prefix, fixture, closet, resolver"),
    ("fix the caller, it closes nothing", "fix the caller, it closes nothing"),
])
def test_github_acts_on_no_mention_keyword_or_reference_in_md_text(text: str,
                                                                   inert: str) -> None:
    assert md_text(text) == inert
    assert md_text(text).replace(J, "") == text  # the joiner is all that was added
