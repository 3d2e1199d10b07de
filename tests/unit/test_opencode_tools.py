"""opencode's tool calls in agentctl's terms, and the `PROVIDER/MODEL` it is run with."""

from __future__ import annotations

import pytest

from agentctl.domain.agent import ModelApi
from agentctl.domain.native_tools import NativeAction, native_call
from agentctl.domain.provider_model import DEFAULT_MODEL, provider_model

WS = "/tmp/ws/repo"


def test_opencode_file_tools_are_judged_on_their_workspace_relative_paths() -> None:
    write = native_call("opencode", "write", {"filePath": f"{WS}/src/app.py", "content": ""}, WS)
    assert (write.tool_name, write.action, write.paths) == ("opencode.write", NativeAction.WRITE,
                                                            ("src/app.py",))
    edit = native_call("opencode", "edit", {"filePath": "/etc/passwd", "oldString": "a",
                                            "newString": "b"}, WS)
    assert (edit.action, edit.paths) == (NativeAction.WRITE, ("/etc/passwd",))
    read = native_call("opencode", "read", {"filePath": f"{WS}/.env"}, WS)
    assert (read.action, read.paths) == (NativeAction.READ, (".env",))
    grep = native_call("opencode", "grep", {"pattern": "KEY", "path": f"{WS}/cfg",
                                            "include": "*.pem"}, WS)
    assert grep.paths == ("cfg", "*.pem")
    assert native_call("opencode", "glob", {"pattern": "**/.env*"}, WS).paths == ("**/.env*",)
    assert native_call("opencode", "list", {"path": WS}, WS).paths == (".",)


def test_opencode_apply_patch_names_every_path_of_its_patch_text() -> None:
    patch = ("*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Add File: .github/x.yml\n"
             "+k\n*** End Patch\n")
    call = native_call("opencode", "apply_patch", {"patchText": patch}, WS)
    assert (call.action, call.paths) == (NativeAction.WRITE, ("a.py", ".github/x.yml"))


def test_opencode_bash_web_internal_and_unknown_tools() -> None:
    bash = native_call("opencode", "bash", {"command": "pytest -q", "workdir": WS}, WS)
    assert (bash.action, bash.command) == (NativeAction.COMMAND, "pytest -q")
    web = native_call("opencode", "webfetch", {"url": "https://x.test/a"}, WS)
    assert (web.action, web.command) == (NativeAction.NAMED, "webfetch https://x.test/a")
    for tool in ("todowrite", "task", "skill"):
        assert native_call("opencode", tool, {}, WS).action is NativeAction.INTERNAL
    # an MCP server's tool (`server_tool`) or `batch`, whose sub-calls fire no hook: denied
    for tool in ("batch", "github_create_issue"):
        assert native_call("opencode", tool, {}, WS).action is NativeAction.UNKNOWN
    # another CLI's `bash` or `edit` is not read with opencode's keys
    assert native_call("claude", "edit", {"filePath": "x"}, WS).action is NativeAction.UNKNOWN


def test_provider_model_names_the_vendor_api_the_gateway_speaks() -> None:
    assert provider_model("anthropic/claude-opus-4-1") == (ModelApi.ANTHROPIC, "claude-opus-4-1")
    assert provider_model("openai/gpt-5") == (ModelApi.OPENAI, "gpt-5")
    assert provider_model("") == provider_model(DEFAULT_MODEL)
    # a model name may hold a slash of its own
    assert provider_model("openai/ft:org/x") == (ModelApi.OPENAI, "ft:org/x")


@pytest.mark.parametrize(("text", "said"), [
    ("claude-sonnet-4-5", "not PROVIDER/MODEL"), ("anthropic/", "not PROVIDER/MODEL"),
    ("/gpt-5", "not PROVIDER/MODEL"), ("openai/gpt 5", "not PROVIDER/MODEL"),
    ("google/gemini-2.5-pro", "provider 'google'"),
])
def test_anything_else_is_one_line_naming_what_is_wrong(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        provider_model(text)
