"""MCP round trips: vaultchat's server vs the reference @modelcontextprotocol/server-filesystem.

Run by scripts/bench (with the test venv's Python, which has the official MCP SDK). Both servers
serve the same vault over stdio to the same client (the MCP Python SDK, legacy 2025-11-25
handshake for both, since the reference server speaks only that era). Interleaved rounds:
  read_note {note}                      vs  read_text_file {path}
  search_notes {query: planted phrase}  vs  search_files {path, pattern: "**/<file name>"}
(search_files matches file names only — less work than full-text search — so the comparison
favours the reference server.)

The SDK client spends about 0.7 ms of its own on every call (pydantic models, anyio streams),
which bounds any server's lead; so the same calls are also timed with a minimal JSON-RPC client
(one JSON line out, one line back), which shows the servers' own difference.
"""
import argparse, asyncio, json, os, random, statistics, subprocess, sys, time

from mcp import Client, StdioServerParameters


def pct(values, p):
    s = sorted(values)
    return s[max(0, min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1)))))]


async def timed_calls(client, calls):
    times = []
    for name, args in calls:
        t = time.perf_counter()
        r = await client.call_tool(name, args)
        times.append(time.perf_counter() - t)
        if r.is_error:
            sys.exit("%s %s failed: %s" % (name, args, r.content))
    return times


def raw_times(cmd, calls, rounds):
    """Round trips through a minimal line-based JSON-RPC client (legacy handshake)."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, bufsize=1)

    def rpc(i, method, params):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        while True:
            msg = json.loads(p.stdout.readline())
            if msg.get("id") == i:
                return msg

    rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "0"}})
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    p.stdin.flush()
    times, n = [], 1
    for name, args in calls[:5]:  # warm-up
        rpc(n, "tools/call", {"name": name, "arguments": args})
        n += 1
    for _ in range(rounds):
        for name, args in calls:
            t = time.perf_counter()
            msg = rpc(n, "tools/call", {"name": name, "arguments": args})
            times.append(time.perf_counter() - t)
            n += 1
            if "error" in msg or msg["result"].get("isError"):
                sys.exit("%s %s failed: %s" % (name, args, msg))
    p.kill()
    p.wait()
    return times


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--fs-server", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    manifest = json.load(open(os.path.join(a.vault, ".vault-manifest.json")))
    rng = random.Random(3)
    notes = rng.sample([n["path"] for n in manifest["notes"]], 100)
    needles = manifest["needles"]
    ours_srv = StdioServerParameters(command=a.bin, args=["--vault", a.vault, "--data-dir", a.data, "mcp"], env={})
    fs_srv = StdioServerParameters(command="node", args=[a.fs_server, a.vault], env={"PATH": os.environ["PATH"]})
    ours_read = [("read_note", {"note": p}) for p in notes]
    fs_read = [("read_text_file", {"path": os.path.join(a.vault, p)}) for p in notes]
    ours_search = [("search_notes", {"query": n["phrase"], "limit": 10}) for n in needles]
    fs_search = [("search_files", {"path": a.vault, "pattern": "**/" + os.path.basename(n["path"])}) for n in needles]
    res = {"ours_read": [], "fs_read": [], "ours_search": [], "fs_search": []}
    async with Client(ours_srv, mode="legacy") as ours, Client(fs_srv, mode="legacy") as fs:
        # Warm-up: first calls pay for lazy loading on both sides.
        await timed_calls(ours, ours_read[:5] + ours_search[:2])
        await timed_calls(fs, fs_read[:5] + fs_search[:2])
        for _ in range(a.rounds):
            res["ours_read"] += await timed_calls(ours, ours_read)
            res["fs_read"] += await timed_calls(fs, fs_read)
            res["ours_search"] += await timed_calls(ours, ours_search)
            res["fs_search"] += await timed_calls(fs, fs_search)
    ours_cmd = [a.bin, "--vault", a.vault, "--data-dir", a.data, "mcp"]
    fs_cmd = ["node", a.fs_server, a.vault]
    for _ in range(a.rounds):
        res.setdefault("raw_ours_read", []).extend(raw_times(ours_cmd, ours_read, 1))
        res.setdefault("raw_fs_read", []).extend(raw_times(fs_cmd, fs_read, 1))
    out = {}
    o, f = res["raw_ours_read"], res["raw_fs_read"]
    out["read_minimal_client"] = {"calls": len(o), "ours_p50_ms": 1000 * statistics.median(o),
                                  "ours_p95_ms": 1000 * pct(o, 95),
                                  "reference_p50_ms": 1000 * statistics.median(f),
                                  "reference_p95_ms": 1000 * pct(f, 95),
                                  "speedup_p50": statistics.median(f) / statistics.median(o)}
    for kind in ("read", "search"):
        o, f = res["ours_" + kind], res["fs_" + kind]
        out[kind] = {"calls": len(o), "ours_p50_ms": 1000 * statistics.median(o), "ours_p95_ms": 1000 * pct(o, 95),
                     "reference_p50_ms": 1000 * statistics.median(f), "reference_p95_ms": 1000 * pct(f, 95),
                     "speedup_p50": statistics.median(f) / statistics.median(o), "target_speedup_min": 3}
    json.dump(out, open(a.out, "w"), indent=2)
    for kind, label in (("read", "read_note vs read_text_file"), ("search", "search_notes vs search_files"),
                        ("read_minimal_client", "read (minimal JSON-RPC client)")):
        r = out[kind]
        print("MCP %-32s ours p50 %.2f ms p95 %.2f ms   reference p50 %.2f ms p95 %.2f ms   %.1fx faster p50 (target >= 3x)"
              % (label, r["ours_p50_ms"], r["ours_p95_ms"], r["reference_p50_ms"], r["reference_p95_ms"], r["speedup_p50"]))


asyncio.run(main())
