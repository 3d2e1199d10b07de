"""`agentctl mcp serve` (`python -I -m agentctl.hooks.mcp_server`): agentctl's guarded tools as
an MCP server on stdio, for any MCP-capable agent inside a run.

Each call is forwarded over the attempt's socket to the attempt's own process, where it runs
through the same tool runtime as a script plan: guarded, executed if allowed, recorded as a
ToolCall. A denial comes back as `isError` with `structuredContent` {decision, matchedRule,
toolCallId}. MCP tool names cannot hold dots for the model APIs, so `fs.read` is `fs_read`.
"""


import sys
from collections.abc import Callable

from agentctl.hooks.hook import HookError, _arguments, ask

Forward = Callable[[str, dict[str, object]], dict[str, object]]
TOOLS = ("fs.read", "fs.write", "fs.replace", "fs.delete", "fs.rename", "patch.apply",
         "shell.run")


def mcp_name(tool: str) -> str:
    return tool.replace(".", "_")


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
    from agentctl.hooks.mcp_tools import build_server  # the mcp extra, for a run's MCP agent

    server = build_server(socket_forward(options["--socket"], options["--attempt"],
                                         options["--key"]))
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
