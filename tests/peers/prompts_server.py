"""An MCP server written with the official MCP Python SDK (PyPI `mcp` 2.3.0, where FastMCP is
now `MCPServer`) that offers two prompts and no tools, for tests/agent/mcp_prompts.rs and
tests/app/tui_mcp_prompts.rs. It speaks MCP on stdio.

- `summarize(topic, style="plain")`: one user message made from its arguments (`topic` required).
- `house_style()`: a user message with an embedded text resource, the assistant's answer, and
  the person's request: roles and the resource are what the test checks reach the model.
"""

from mcp.server import MCPServer

server = MCPServer("notes")


@server.prompt(description="Summarise what the notes say about a topic")
def summarize(topic: str, style: str = "plain") -> str:
    return f"Summarise what my notes say about {topic}, in a {style} style."


@server.prompt(description="Edit the open note to the house style")
def house_style() -> list[dict]:
    return [
        {"role": "user", "content": "Here is our house style."},
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "style://house",
                    "mimeType": "text/plain",
                    "text": "HOUSE-STYLE: short sentences, no jargon.",
                },
            },
        },
        {"role": "assistant", "content": "Understood, I will follow the house style."},
        {"role": "user", "content": "Now rewrite the open note to match it."},
    ]


if __name__ == "__main__":
    server.run()
