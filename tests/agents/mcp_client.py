"""Run by a Claude Code Bash call inside a run: agentctl's MCP server through the real MCP
Python client. It reads the server's command from the agent's private MCP config, calls an
allowed and a forbidden write, and prints what came back as JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    config = json.loads((Path(os.environ["HOME"]) / ".agentctl" / "mcp.json").read_text())
    server = config["mcpServers"]["agentctl"]
    parameters = StdioServerParameters(command=server["command"], args=server["args"])
    answers = {}
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        answers["tools"] = sorted(tool.name for tool in tools.tools)
        for name, arguments in (
                ("allowed", {"path": "payments/mcp-note.txt", "content": "via mcp\n"}),
                ("forbidden", {"path": ".github/workflows/mcp.yml", "content": "x: 1\n"})):
            result = await session.call_tool("fs_write", arguments)
            answers[name] = {"isError": result.is_error,
                             "structured": result.structured_content,
                             "text": [c.text for c in result.content if hasattr(c, "text")]}
    print("MCP-ANSWERS " + json.dumps(answers))


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
