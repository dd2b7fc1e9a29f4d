"""Drive `vaultchat mcp` with the official MCP Python SDK and report what a vault's plugins look
like from outside: the tools listed, and (when `--call` names one) the text of calling it.

Usage: plugin_client.py --bin VAULTCHAT --vault DIR --data DIR [--call TOOL --args JSON]

Prints one JSON line per protocol era: {"mode", "tools": [names], "result": text or null,
"is_error": bool or null}.
"""
import argparse, asyncio, json

from mcp import Client, StdioServerParameters


async def session(args, mode):
    server = StdioServerParameters(
        command=args.bin,
        args=["--vault", args.vault, "--data-dir", args.data, "mcp"],
    )
    async with Client(server, mode=mode) as client:
        listing = await client.list_tools()
        out = {"mode": mode, "tools": sorted(t.name for t in listing.tools), "result": None,
               "is_error": None}
        if args.call:
            result = await client.call_tool(args.call, json.loads(args.args))
            out["result"] = "\n".join(getattr(c, "text", "") for c in result.content)
            out["is_error"] = bool(result.is_error)
        print(json.dumps(out), flush=True)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--call")
    ap.add_argument("--args", default="{}")
    args = ap.parse_args()
    for mode in ("auto", "legacy"):
        await session(args, mode)


asyncio.run(main())
