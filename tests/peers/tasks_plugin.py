"""A vault plugin written with the official MCP Python SDK (PyPI `mcp` 2.3.0), declared in a test
vault's `.vaultchat/plugins.toml` by tests/agent/vault_plugins.rs. It speaks MCP on stdio.

Environment:
  TASKS_MARKERS  a folder; the process writes `started` there (one line per start) before it
                 serves, and `called` (one line per call) when its tool runs. The test checks that
                 neither appears while the vault is not trusted.
"""

import os

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("tasks")


def mark(name: str, line: str) -> None:
    folder = os.environ.get("TASKS_MARKERS")
    if folder:
        with open(os.path.join(folder, name), "a", encoding="utf-8") as f:
            f.write(line + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def open_tasks(project: str) -> list[dict]:
    """The open tasks of a project, as rows of a table."""
    mark("called", project)
    return [
        {"task": "Write the plugin docs", "owner": "ana", "due": "2026-12-04"},
        {"task": f"Ship {project}", "owner": "bo", "due": "2026-12-11"},
    ]


if __name__ == "__main__":
    mark("started", str(os.getpid()))
    server.run()
