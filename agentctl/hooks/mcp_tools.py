"""The MCP server of `agentctl mcp serve`: agentctl's guarded tools, each forwarded to the
attempt. Its own module so that `mcp_server` (and `agentctl mcp serve --help`) loads the mcp
extra only when a server starts."""

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from agentctl.hooks.hook import HookError
from agentctl.hooks.mcp_server import Forward


def build_server(forward: Forward) -> Any:
    """The MCP server whose tools forward to the attempt (`forward(tool, arguments)`)."""
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
