"""A small MCP server written with the official Python SDK (PyPI `mcp` 2.3.0), a real peer for
vaultchat's MCP client (tests/agent/mcp_client.rs). It speaks MCP on stdio.

Environment:
  ECHO_CALL_LOG  a file each tool call is appended to, one JSON line per call
  ECHO_PID_FILE  a file the process id is written to at start-up
"""

import asyncio
import json
import os
import sys

from mcp.server import MCPServer
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations

# A 1×1 PNG.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

server = MCPServer("echo")


def log_call(tool: str, args: dict) -> None:
    path = os.environ.get("ECHO_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def echo(message: str) -> str:
    """Echo the message back."""
    log_call("echo", {"message": message})
    return f"echo: {message}"


@server.tool()
def picture() -> CallToolResult:
    """Return a tiny PNG with a caption."""
    log_call("picture", {})
    return CallToolResult(
        content=[
            TextContent(type="text", text="a red dot"),
            ImageContent(type="image", data=PNG, mime_type="image/png"),
        ]
    )


@server.tool()
def fail(reason: str) -> CallToolResult:
    """Always fail, with the reason as the error."""
    log_call("fail", {"reason": reason})
    return CallToolResult(
        content=[TextContent(type="text", text=f"it failed: {reason}")], is_error=True
    )


@server.tool()
def weather() -> CallToolResult:
    """Structured content only, no text."""
    log_call("weather", {})
    return CallToolResult(content=[], structured_content={"temperature": 33, "unit": "C"})


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    log_call("slow", {"seconds": seconds})
    await asyncio.sleep(seconds)
    return "slept"


@server.tool(name="dotted.name")
def dotted() -> str:
    """A name with a dot, which vaultchat must sanitise."""
    return "dotted"


@server.tool()
def crash() -> str:
    """Exit the process in the middle of the call."""
    log_call("crash", {})
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    pid_file = os.environ.get("ECHO_PID_FILE")
    if pid_file:
        with open(pid_file, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    server.run()
