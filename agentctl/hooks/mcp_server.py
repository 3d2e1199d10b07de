"""`agentctl mcp serve` (`python -I -m agentctl.hooks.mcp_server`): agentctl's guarded tools as
an MCP server on stdio, for any MCP-capable agent inside a run.

Each call is forwarded over the attempt's socket to the attempt's own process, where it runs
through the same tool runtime as a script plan: guarded, executed if allowed, recorded as a
ToolCall. A denial comes back as `isError` with `structuredContent` {decision, matchedRule,
toolCallId}. MCP tool names cannot hold dots for the model APIs, so `fs.read` is `fs_read`.
"""


import sys
from collections.abc import Callable
from typing import Any

from agentctl.hooks.hook import HookError, _arguments, ask

Forward = Callable[[str, dict[str, object]], dict[str, object]]
TOOLS = ("fs.read", "fs.write", "fs.replace", "fs.delete", "fs.rename", "patch.apply",
         "shell.run")


def mcp_name(tool: str) -> str:
    return tool.replace(".", "_")


def build_server(forward: Forward) -> Any:
    """The MCP server whose tools forward to the attempt (`forward(tool, arguments)`)."""
    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult, TextContent

    server = MCPServer(name="agentctl", instructions=(
        "agentctl's guarded workspace tools: every call is checked by the run's policy and "
        "recorded. Paths are relative to the workspace."))

    def answer(tool: str, arguments: dict[str, object]) -> CallToolResult:
        try:
            reply = forward(tool, {k: v for k, v in arguments.items() if v is not None})
        except HookError as error:
            return CallToolResult(content=[TextContent(type="text", text=str(error))],
                                  structured_content={"decision": "DENIED_BY_POLICY",
                                                     "matchedRule": "agentctl: no run",
                                                     "toolCallId": None}, is_error=True)
        if reply.get("ok") is not True:
            reason = str(reply.get("reason") or "refused")
            return CallToolResult(content=[TextContent(type="text", text=reason)],
                                  structured_content={"decision": "DENIED_BY_POLICY",
                                                     "matchedRule": "agentctl: refused",
                                                     "toolCallId": None}, is_error=True)
        result = reply.get("result")
        result = result if isinstance(result, dict) else {}
        decision = str(result.get("decision") or "ALLOWED")
        structured = {"decision": decision, "matchedRule": reply.get("matchedRule"),
                      "toolCallId": reply.get("toolCallId"), "outcome": result.get("outcome"),
                      "exitCode": result.get("exitCode")}
        rule = f" (rule: {reply.get('matchedRule')})" if reply.get("matchedRule") else ""
        text = f"{result.get('error') or 'denied'}{rule}" if decision != "ALLOWED" else (
            str(result.get("output") or "") + (f"\n{result['error']}" if result.get("error")
                                               else ""))
        failed = decision != "ALLOWED" or result.get("outcome") != "ok"
        return CallToolResult(content=[TextContent(type="text", text=text or "done")],
                              structured_content=structured, is_error=failed)

    @server.tool(name="fs_read", description="Read a workspace file.")
    def fs_read(path: str) -> CallToolResult:
        return answer("fs.read", {"path": path})

    @server.tool(name="fs_write", description="Write a workspace file (created if missing).")
    def fs_write(path: str, content: str) -> CallToolResult:
        return answer("fs.write", {"path": path, "content": content})

    @server.tool(name="fs_replace", description="Replace text in a workspace file; `old` must "
                 "occur once unless `count` says how often.")
    def fs_replace(path: str, old: str, new: str, count: int | None = None) -> CallToolResult:
        return answer("fs.replace", {"path": path, "old": old, "new": new, "count": count})

    @server.tool(name="fs_delete", description="Delete a workspace file.")
    def fs_delete(path: str) -> CallToolResult:
        return answer("fs.delete", {"path": path})

    @server.tool(name="fs_rename", description="Rename a workspace file.")
    def fs_rename(path: str, to: str) -> CallToolResult:
        return answer("fs.rename", {"path": path, "to": to})

    @server.tool(name="patch_apply", description="Apply a unified diff (git apply -p1).")
    def patch_apply(diff: str) -> CallToolResult:
        return answer("patch.apply", {"diff": diff})

    @server.tool(name="shell_run", description="Run a command in the workspace (argv, no "
                 "shell unless the policy allows one).")
    def shell_run(command: str, timeout: float | None = None) -> CallToolResult:
        return answer("shell.run", {"command": command, "timeout": timeout})

    return server


def socket_forward(path: str, attempt: str, key: str) -> Forward:
    """Requests with the MCP server's own key (in its argv; the hooks hold another)."""
    def forward(tool: str, arguments: dict[str, object]) -> dict[str, object]:
        return ask(path, {"attempt": attempt, "key": key, "event": "tool", "tool": tool,
                          "arguments": arguments})

    return forward


def main(argv: list[str] | None = None) -> int:
    try:
        _agent, options = _arguments(["claude", *(sys.argv[1:] if argv is None else argv)])
    except HookError as error:
        sys.stderr.write(f"agentctl mcp serve: {error}\n")
        return 2
    server = build_server(socket_forward(options["--socket"], options["--attempt"],
                                         options["--key"]))
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
