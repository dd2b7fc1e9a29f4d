"""Many MCP clients writing to one note at once, through `vaultchat mcp --allow-writes`.

Used by tests/engine/write_safety.rs. Each client is a real protocol peer: over Streamable HTTP (one
session per client, `--http URL TOKEN`) or over stdio (one `vaultchat mcp` process per client,
`--stdio BIN VAULT DATA`). Modes:

  append  every client appends `--appends` unique markers (`MARK-<client>-<n>.`) with update_note;
  pinned  in each of `--rounds` rounds every client reads the note's revision, then all update it
          with that `expected_revision` at once: at most one may succeed per round.

Prints one JSON object: the markers whose write was acknowledged (`changed: true`) and those that
were refused (a tool error), plus protocol errors. The test checks them against the file.
"""
import argparse, json, subprocess, sys, threading, urllib.request


class Http:
    def __init__(self, url, token):
        self.url, self.token, self.session, self.next_id = url, token, None, 1

    def post(self, message):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "Authorization": "Bearer " + self.token}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        request = urllib.request.Request(self.url, json.dumps(message).encode(), headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            self.session = response.headers.get("mcp-session-id") or self.session
            body = response.read().decode()
        if "id" not in message:
            return None
        for line in body.splitlines():
            if line.startswith("data:") and line[5:].strip():
                reply = json.loads(line[5:])
                if reply.get("id") == message["id"]:
                    return reply
        if body.strip().startswith("{"):
            return json.loads(body)
        raise RuntimeError("no reply to %s in %r" % (message.get("method"), body[:200]))

    def close(self):
        pass


class Stdio:
    def __init__(self, binary, vault, data):
        self.proc = subprocess.Popen(
            [binary, "--data-dir", data, "--vault", vault, "mcp", "--allow-writes"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def post(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        if "id" not in message:
            return None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Client:
    def __init__(self, transport):
        self.t, self.n = transport, 0
        self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "concurrent-writers", "version": "0"}})
        self.t.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def rpc(self, method, params):
        self.n += 1
        return self.t.post({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})

    def call(self, name, arguments):
        """(ok, structured result or error text)."""
        reply = self.rpc("tools/call", {"name": name, "arguments": arguments})
        if "error" in reply:
            return None, reply["error"]
        result = reply["result"]
        if result.get("isError"):
            return False, " ".join(c.get("text", "") for c in result.get("content", []))
        return True, result.get("structuredContent") or json.loads(result["content"][0]["text"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", nargs=2, metavar=("URL", "TOKEN"))
    ap.add_argument("--stdio", nargs=3, metavar=("BIN", "VAULT", "DATA"))
    ap.add_argument("--note", required=True)
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--appends", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--mode", choices=["append", "pinned"], default="append")
    a = ap.parse_args()

    def transport():
        return Http(*a.http) if a.http else Stdio(*a.stdio)

    acknowledged, refused, protocol_errors, unchanged = [], [], [], []
    lock = threading.Lock()
    clients = [Client(transport()) for _ in range(a.clients)]

    def record(ok, marker, detail):
        with lock:
            if ok is None:
                protocol_errors.append([marker, detail])
            elif ok and detail.get("changed") is True:
                acknowledged.append(marker)
            elif ok:
                unchanged.append(marker)
            else:
                refused.append([marker, detail])

    def appender(index, client):
        for n in range(a.appends):
            marker = "MARK-%d-%d." % (index, n)
            ok, detail = client.call("update_note", {"note": a.note, "append": marker})
            record(ok, marker, detail)

    if a.mode == "append":
        threads = [threading.Thread(target=appender, args=(i, c)) for i, c in enumerate(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for round_ in range(a.rounds):
            ok, note = clients[0].call("read_note", {"note": a.note})
            if not ok:
                sys.exit("read_note failed: %s" % note)
            revision = note["revision"]
            barrier = threading.Barrier(len(clients))

            def pinned(index, client):
                marker = "PIN-%d-%d." % (round_, index)
                barrier.wait()
                ok, detail = client.call("update_note", {"note": a.note, "append": marker,
                                                         "expected_revision": revision})
                record(ok, marker, detail)

            threads = [threading.Thread(target=pinned, args=(i, c)) for i, c in enumerate(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    for c in clients:
        c.t.close()
    print(json.dumps({"acknowledged": acknowledged, "refused": refused,
                      "unchanged": unchanged, "protocol_errors": protocol_errors}))


if __name__ == "__main__":
    main()
