"""Drive `vaultchat mcp` with the official MCP Python SDK (PyPI `mcp`), as a third-party client would.

Usage: sdk_client.py --bin VAULTCHAT --vault DIR --data DIR --outside DIR

The vault is prepared by tests/mcp_python_sdk.rs: a copy of docs/sample-vault plus links that point
outside it, a sibling `vault_evil` folder and an `outside` folder with planted secrets. The script
connects in both protocol eras (auto = 2026-07-28, legacy = 2025-11-25), lists the tools, calls each
one, checks refusals, and prints one JSON line with what it checked. Exit code 0 only if every
check held.
"""
import argparse, asyncio, hashlib, json, os, sys

from mcp import Client, StdioServerParameters

OUTSIDE_MARKERS = ["OUTSIDE-SECRET-42", "EVIL-SECRET-77"]
checks = []
failures = []


def check(ok, what):
    checks.append(what)
    if not ok:
        failures.append(what)


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


def tree_digest(root):
    """Paths and content hashes of every file under root (links not followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                out[os.path.relpath(p, root)] = "link:" + os.readlink(p)
            else:
                with open(p, "rb") as f:
                    out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


# The bad-input list of perf-and-safety.md §7, as vault-relative arguments.
LONG = "a/" * 2100 + "x.md"
PATH_CASES = {
    "1 dotdot": ["../secret.md", "notes/../../x.md", "./../x.md", "a/b/../../../x.md"],
    "2 absolute": ["/etc/passwd", "C:\\Windows\\x.md", "\\\\server\\share\\x.md", "file:///etc/passwd"],
    "3 sibling prefix": ["../vault_evil/x.md"],
    "4 symlink out": ["link_out/secret.md", "link_file.md"],
    "5 dangling link": ["dangling.md"],
    "6 parent is a link out": ["link_out/new.md"],
    "8 nul, empty, slash": ["a.md\u0000.png", "", "/", "Inbox/"],
    "9 encoded": ["%2e%2e%2fx.md", "%252e%252e%252fx.md", "..%2fx.md", "%c0%ae%c0%ae/x.md", "..\\..\\x.md"],
    "10 unicode": ["\uff0e\uff0e\uff0fx.md", "\u202egnp.md", "zero\u200bwidth.md"],
    "11 windows names": ["CON.md", "NUL", "file.md:stream", "trailing.md."],
    "12 hard link": ["hard.md"],
    "13 protected": [".obsidian/app.json", ".git/config", ".trash/x.md", ".vaultchat/config.toml"],
    "14 long": [LONG],
}
# Cases that name something harmless for reads (a missing note is also a refusal) are still
# expected to fail: none of these may succeed through any tool.


async def session(args, mode):
    server = StdioServerParameters(
        command=args.bin,
        args=["--vault", args.vault, "--data-dir", args.data, "mcp", "--allow-writes"],
        env={"VAULTCHAT_LOG": "vaultchat=debug"},
    )
    async with Client(server, mode=mode) as client:
        era = client.protocol_version
        check(era == ("2025-11-25" if mode == "legacy" else "2026-07-28"), f"{mode}: era {era}")
        listed = (await client.list_tools()).tools
        names = {t.name for t in listed}
        expected = {"list_notes", "read_note", "search_notes", "create_note", "update_note", "delete_note"}
        check(expected <= names, f"{mode}: tools listed {sorted(names)}")
        for t in listed:
            schema = t.input_schema
            check(schema.get("type") == "object" and schema.get("additionalProperties") is False,
                  f"{mode}: {t.name} schema is a closed object")
            a = t.annotations
            check(a is not None and a.read_only_hint is not None, f"{mode}: {t.name} has annotations")
        by_name = {t.name: t for t in listed}
        check(by_name["read_note"].annotations.read_only_hint is True, f"{mode}: read_note read-only")
        check(by_name["delete_note"].annotations.destructive_hint is True, f"{mode}: delete_note destructive")

        call = client.call_tool
        # Reads.
        r = await call("list_notes", {"folder": "Projects"})
        paths = [n["path"] for n in r.structured_content["notes"]]
        check(not r.is_error and paths == ["Projects/Garden Planner.md", "Projects/Vaultchat Launch.md"],
              f"{mode}: list_notes folder {paths}")
        r = await call("list_notes", {"limit": 3})
        check(r.structured_content["has_more"] is True and len(r.structured_content["notes"]) == 3,
              f"{mode}: list_notes paging")
        r = await call("read_note", {"note": "Garden Planner"})
        sc = r.structured_content
        check(not r.is_error and sc["path"] == "Projects/Garden Planner.md", f"{mode}: read_note by title")
        check(sc["frontmatter"]["status"] == "active" and "garden" in sc["tags"], f"{mode}: read_note frontmatter")
        check("Vaultchat Launch" in sc["links"], f"{mode}: read_note links")
        r = await call("read_note", {"note": "Projects/Garden Planner.md", "offset": 10, "max_chars": 20})
        sc = r.structured_content
        check(len(sc["content"]) == 20 and sc["has_more"] and sc["length"] > 30, f"{mode}: read_note paging")
        r = await call("read_note", {"note": "Index"})
        check(r.is_error and "no note" in text_of(r), f"{mode}: read_note missing")
        r = await call("search_notes", {"query": "\"herb spiral\""})
        check(r.structured_content["results"][0]["path"] == "Projects/Garden Planner.md", f"{mode}: search_notes")
        r = await call("search_notes", {"query": "x", "limit": 1000})
        check(r.is_error and "between 1 and 100" in text_of(r), f"{mode}: search_notes limit refused")
        # Bad arguments are tool errors that say what is wrong.
        r = await call("read_note", {"path": "Welcome.md"})
        check(r.is_error and "unknown field" in text_of(r), f"{mode}: unknown argument refused")
        r = await call("read_note", {})
        check(r.is_error and "missing field" in text_of(r), f"{mode}: missing argument refused")
        r = await call("no_such_tool", {})
        check(r.is_error, f"{mode}: unknown tool is an error")

        # Writes.
        new = f"Inbox/From {mode}.md"
        r = await call("create_note", {"path": new, "content": "# Hello\n\nwritten by the sdk\n"})
        check(not r.is_error and r.structured_content["created"] is True, f"{mode}: create_note")
        r = await call("create_note", {"path": new, "content": "clobber"})
        check(r.is_error and "exists" in text_of(r), f"{mode}: create_note never clobbers")
        r = await call("search_notes", {"query": "written sdk"})
        check(new in [x["path"] for x in r.structured_content["results"]], f"{mode}: a search right after a write sees it")
        r = await call("read_note", {"note": new})
        rev = r.structured_content["revision"]
        r = await call("update_note", {"note": new, "append": "appended line", "expected_revision": rev})
        check(not r.is_error and r.structured_content["added"] == 1, f"{mode}: update_note append")
        r = await call("update_note", {"note": new, "body": "stale", "expected_revision": rev})
        check(r.is_error and "changed since" in text_of(r), f"{mode}: stale expected_revision refused")
        with open(os.path.join(args.vault, new)) as f:
            check(f.read() == "# Hello\n\nwritten by the sdk\nappended line\n", f"{mode}: file after update")
        r = await call("update_note", {"note": new, "replace_text": {"find": "Hello", "replace": "Bye"}})
        check(not r.is_error, f"{mode}: update_note replace_text")
        r = await call("delete_note", {"note": new})
        check(not r.is_error and r.structured_content["moved_to"].startswith(".trash/"), f"{mode}: delete_note")
        check(not os.path.exists(os.path.join(args.vault, new)), f"{mode}: deleted note is gone")
        check(os.path.exists(os.path.join(args.vault, r.structured_content["moved_to"])), f"{mode}: deleted note is in .trash")

        # Every bad path through every path-taking tool.
        path_tools = {
            "read_note": lambda p: {"note": p},
            "create_note": lambda p: {"path": p, "content": "x"},
            "update_note": lambda p: {"note": p, "body": "x"},
            "delete_note": lambda p: {"note": p},
            "list_notes": lambda p: {"folder": p},
        }
        if "create_notebook" in names:
            path_tools["create_notebook"] = lambda p: {"path": p}
        refused = 0
        for case, inputs in PATH_CASES.items():
            for p in inputs:
                for tool, make in path_tools.items():
                    if tool == "list_notes" and p in ("", "Inbox/"):
                        continue  # an empty folder filter means the whole vault; `Inbox/` is a real folder
                    if tool == "create_notebook" and p == "Inbox/":
                        continue  # a folder named with a trailing slash is still that folder
                    if tool == "read_note" and case.startswith("12"):
                        # A hard link is a file of the vault that shares its inode with another
                        # name; reading it is allowed, writing through it never (checked below).
                        continue
                    r = await call(tool, make(p))
                    body = text_of(r)
                    leaked = any(m in body for m in OUTSIDE_MARKERS)
                    check(r.is_error and not leaked, f"{mode}: {tool} refuses case {case}: {p[:40]!r}")
                    refused += 1
        r = await call("list_notes", {"folder": "**/../../*"})
        check(r.is_error, f"{mode}: list_notes refuses a traversing pattern")
        return refused


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--outside", required=True)
    args = ap.parse_args()
    before_outside = tree_digest(args.outside)
    refused = 0
    for mode in ("auto", "legacy"):
        refused += await session(args, mode)
    check(tree_digest(args.outside) == before_outside, "nothing outside the vault changed")
    print(json.dumps({"checks": len(checks), "failures": failures, "path_refusals": refused}))
    sys.exit(1 if failures else 0)


asyncio.run(main())
