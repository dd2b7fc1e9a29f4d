"""An MCP server written with the official MCP Python SDK (PyPI `mcp` 2.3.0) whose prompts are the
awkward cases of a command backed by an MCP prompt, for tests/app/host_command_lane.rs and
tests/agent/mcp_prompt_prefill.rs. It speaks MCP on stdio.

- `slow()`: `prompts/get` does not answer until the test lets it. It writes the file
  `$EDGE_GATE/started` when the request arrives and answers once `$EDGE_GATE/release` exists (the
  test's gate; no fixed sleep on either side), with one user message `SLOW-PROMPT: go on.`.
- `draft(topic)`: the person's request and then the start of the assistant's answer (the spec
  allows a prompt to end with an assistant message: the model is to continue it).
- `tutor()`: opens with the assistant's words, then the person's request.
"""

import os
from pathlib import Path

import anyio
from mcp.server import MCPServer

server = MCPServer("edge")


@server.prompt(description="Answers only when the test opens its gate")
async def slow() -> str:
    gate = Path(os.environ["EDGE_GATE"])
    (gate / "started").write_text("started")
    # Bounded: a test that never opens the gate does not leave this server waiting forever.
    for _ in range(6000):
        if (gate / "release").exists():
            return "SLOW-PROMPT: go on."
        await anyio.sleep(0.01)
    return "SLOW-PROMPT: the gate never opened."


@server.prompt(description="Draft a note, starting the answer for the model")
def draft(topic: str) -> list[dict]:
    return [
        {"role": "user", "content": f"Draft a short note about {topic}."},
        {"role": "assistant", "content": "PREFILL: Here is the draft, in plain words: "},
    ]


@server.prompt(description="Opens with the assistant's words")
def tutor() -> list[dict]:
    return [
        {"role": "assistant", "content": "TUTOR: I am your gardening tutor."},
        {"role": "user", "content": "Teach me one thing about compost."},
    ]


if __name__ == "__main__":
    server.run()
