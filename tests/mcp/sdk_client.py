"""Drive `vaultchat mcp` with the official MCP Python SDK (PyPI `mcp`), as a third-party client would.

Usage: sdk_client.py --bin VAULTCHAT --vault DIR --data DIR --outside DIR --secrets S1,S2,...

The vault is prepared by tests/peers/mcp_python_sdk.rs: a copy of docs/sample-vault plus links that point
outside it, a sibling `vault_evil` folder, an `outside` folder, config files (`connections.toml`,
`envs/*.toml`) with planted secrets and a runbook whose blocks refer to them. `--secrets` lists the
planted secret values. The script connects in both protocol eras (auto = 2026-07-28, legacy =
2025-11-25), lists the tools and, in each era:

- calls EVERY listed tool successfully at least once and checks its structured result (a listed
  tool that no check calls successfully is a failure, so a new tool cannot slip through untested);
- calls every listed tool with an unknown extra argument, a wrong-typed value for each of its
  arguments and without each required argument: all must be tool errors (`isError`), never
  protocol errors, and none may have acted;
- refuses every bad path of docs/safety.md §1 through every path-taking tool;
- probes config files through the note tools and breaks config files on purpose.

Every result of every call (text and structured content, serialized) and every protocol error is
kept; at the end none may contain a planted secret or a marker from outside the vault, and no block
tool's result may contain a line of a block body. Prints one JSON line with what it checked; exit
code 0 only if every check held.
"""
import argparse, asyncio, hashlib, json, os, shutil, sys, traceback

from mcp import Client, StdioServerParameters

OUTSIDE_MARKERS = ["OUTSIDE-SECRET-42", "EVIL-SECRET-77"]
# Lines of block bodies (the fixture runbooks'), which the block tools must never return.
BODY_MARKERS = ["BLOCK-BODY-LINE-PROD", "BLOCK-BODY-LINE-GHOST", "BLOCK-BODY-LINE-PLAIN",
                "Authorization: Bearer", "schema_migrations", "/auth/login", "#not-a-tag"]
BLOCK_TOOLS = {"list_blocks_in_note", "get_block_settings", "get_block_history"}
# What `vaultchat mcp --allow-writes` lists today. A tool missing from the listing is a failure; a
# tool listed beyond these fails the session until a check calls it (see `succeeded`).
EXPECTED_TOOLS = {
    "list_notes", "read_note", "search_notes", "create_note", "update_note", "delete_note",
    "list_notebooks", "create_notebook", "list_tags", "manage_tags",
    "list_connections", "get_connection", "list_environments", "get_environment_variables",
    "list_blocks_in_note", "get_block_settings", "get_block_history", "semantic_search_notes",
    "move_note", "list_tasks", "toggle_task", "read_daily_note", "write_daily_note",
    "get_backlinks", "get_outgoing_links", "list_unresolved_links", "list_orphan_notes",
}
# Secrets this script plants itself while it runs (in config files it breaks on purpose).
SCRIPT_SECRETS = ["PLANTED-CONNBROKEN-24", "PLANTED-BARE-25", "PLANTED-DUPKEY-26"]
REDACTED = "[redacted]"

checks = []
failures = []
secrets = []       # --secrets plus SCRIPT_SECRETS
outputs = []       # (mode, tool, label, serialized result or error) of every call
succeeded = {}     # (mode, tool) -> successful calls
bad_args = {}      # (mode, tool) -> bad-argument calls that were refused as they should be
no_wrong_type = set()  # tools without arguments (no wrong-typed argument can be given)


def check(ok, what):
    checks.append(what)
    if not ok:
        failures.append(what)


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


def sc(result):
    return result.structured_content or {}


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


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


class Raised:
    """Stands in for a result when the call raised (a protocol error or a broken connection)."""

    is_error = True
    structured_content = None
    content = []

    def __init__(self, error):
        self.error = error


# The bad-input list of docs/safety.md §1, as vault-relative arguments.
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

# Tools that read a note named by `note`: a hard link is a file of the vault that shares its inode
# with another name; reading it is allowed, writing through it never.
NOTE_READERS = {"read_note", "list_blocks_in_note", "get_block_settings", "get_block_history"}


class Ctx:
    def __init__(self, args, mode, client, names):
        self.args, self.mode, self.client, self.names = args, mode, client, names

    def abs(self, rel):
        return os.path.join(self.args.vault, rel)

    async def call(self, name, arguments=None):
        mode = self.mode
        label = f"{mode}: {name} {json.dumps(arguments, ensure_ascii=False)[:100]}"
        try:
            r = await self.client.call_tool(name, arguments)
        except Exception as e:  # a protocol error, a result the SDK refused, a dead server
            outputs.append((mode, name, label, f"{type(e).__name__}: {e}"))
            check(False, f"{label} raised {type(e).__name__} (a protocol error, not a tool result)")
            return Raised(e)
        outputs.append((mode, name, label, r.model_dump_json(by_alias=True)))
        if not r.is_error:
            succeeded[(mode, name)] = succeeded.get((mode, name), 0) + 1
        return r


# ---------------------------------------------------------------------------------------------
# Notes (the original checks)

async def notes_checks(c, by_name):
    mode, call, args = c.mode, c.call, c.args
    check(by_name["read_note"].annotations.read_only_hint is True, f"{mode}: read_note read-only")
    check(by_name["delete_note"].annotations.destructive_hint is True, f"{mode}: delete_note destructive")
    # Reads.
    r = await call("list_notes", {"folder": "Projects"})
    paths = [n["path"] for n in sc(r).get("notes", [])]
    check(not r.is_error and paths == ["Projects/Garden Planner.md", "Projects/Vaultchat Launch.md"],
          f"{mode}: list_notes folder {paths}")
    r = await call("list_notes", {"limit": 3})
    check(sc(r).get("has_more") is True and len(sc(r).get("notes", [])) == 3, f"{mode}: list_notes paging")
    r = await call("read_note", {"note": "Garden Planner"})
    s = sc(r)
    check(not r.is_error and s.get("path") == "Projects/Garden Planner.md", f"{mode}: read_note by title")
    check(s.get("frontmatter", {}).get("status") == "active" and "garden" in s.get("tags", []),
          f"{mode}: read_note frontmatter")
    check("Vaultchat Launch" in s.get("links", []), f"{mode}: read_note links")
    r = await call("read_note", {"note": "Projects/Garden Planner.md", "offset": 10, "max_chars": 20})
    s = sc(r)
    check(len(s.get("content", "")) == 20 and s.get("has_more") and s.get("length", 0) > 30,
          f"{mode}: read_note paging")
    r = await call("read_note", {"note": "Index"})
    check(r.is_error and "no note" in text_of(r), f"{mode}: read_note missing")
    # No [embeddings] endpoint in this fixture: semantic search says it answered by keywords.
    r = await call("semantic_search_notes", {"query": "herb spiral", "limit": 3})
    check(not r.is_error and sc(r).get("mode") == "keyword"
          and sc(r)["results"][0]["path"] == "Projects/Garden Planner.md", f"{mode}: semantic_search_notes keyword fallback")
    r = await call("search_notes", {"query": "\"herb spiral\""})
    res = sc(r).get("results", [])
    check(res and res[0]["path"] == "Projects/Garden Planner.md", f"{mode}: search_notes")
    r = await call("search_notes", {"query": "x", "limit": 1000})
    check(r.is_error and "between 1 and 100" in text_of(r), f"{mode}: search_notes limit refused")
    # The config files are not indexed: searching for a planted value finds nothing.
    r = await call("search_notes", {"query": "\"PLANTED-PW-1\""})
    check(not r.is_error and sc(r).get("results") == [], f"{mode}: search_notes does not index config files")
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
    check(not r.is_error and sc(r).get("created") is True, f"{mode}: create_note")
    r = await call("create_note", {"path": new, "content": "clobber"})
    check(r.is_error and "exists" in text_of(r), f"{mode}: create_note never clobbers")
    r = await call("search_notes", {"query": "written sdk"})
    check(new in [x["path"] for x in sc(r).get("results", [])], f"{mode}: a search right after a write sees it")
    r = await call("read_note", {"note": new})
    rev = sc(r).get("revision")
    r = await call("update_note", {"note": new, "append": "appended line", "expected_revision": rev})
    check(not r.is_error and sc(r).get("added") == 2, f"{mode}: update_note append (a blank line and the text)")
    r = await call("update_note", {"note": new, "body": "stale", "expected_revision": rev})
    check(r.is_error and "changed since" in text_of(r), f"{mode}: stale expected_revision refused")
    check(read_bytes(c.abs(new)) == b"# Hello\n\nwritten by the sdk\n\nappended line\n", f"{mode}: file after update")
    r = await call("update_note", {"note": new, "replace_text": {"find": "Hello", "replace": "Bye"}})
    check(not r.is_error and read_bytes(c.abs(new)).startswith(b"# Bye\n"), f"{mode}: update_note replace_text")
    r = await call("delete_note", {"note": new})
    moved = sc(r).get("moved_to", "")
    check(not r.is_error and moved.startswith(".trash/"), f"{mode}: delete_note")
    check(not os.path.exists(c.abs(new)), f"{mode}: deleted note is gone")
    check(moved != "" and os.path.exists(c.abs(moved)), f"{mode}: deleted note is in .trash")


# ---------------------------------------------------------------------------------------------
# Notebooks

async def notebook_checks(c):
    mode, call = c.mode, c.call
    r = await call("list_notebooks", {})
    s = sc(r)
    books = {b["path"]: b for b in s.get("notebooks", [])}
    check(not r.is_error and s.get("total") == len(books), f"{mode}: list_notebooks total")
    want = {"Areas": (0, 1), "Areas/Health": (1, 1), "Projects": (2, 2), "Journal": (1, 1),
            "Reading": (1, 1), "Runbooks": (2, 2), "envs": (0, 0)}
    for path, (direct, total) in want.items():
        b = books.get(path, {})
        check(b.get("notes") == direct and b.get("notes_total") == total and b.get("name") == path.split("/")[-1],
              f"{mode}: list_notebooks counts {path}: {b}")
    check(list(books) == sorted(books), f"{mode}: list_notebooks sorted by path")
    check(not any(p.startswith(".") or "/." in p or p.startswith("link_out") for p in books),
          f"{mode}: list_notebooks lists no dot-folder and no link out: {sorted(books)}")
    check(s.get("notes_at_root") == 2, f"{mode}: list_notebooks notes_at_root {s.get('notes_at_root')}")
    direct_sum = s.get("notes_at_root", 0) + sum(b["notes"] for b in books.values())
    check(direct_sum == s.get("notes_in_vault"), f"{mode}: list_notebooks counts add up to notes_in_vault")
    r = await call("list_notes", {"limit": 500})
    check(sc(r).get("total") == s.get("notes_in_vault"), f"{mode}: list_notebooks agrees with list_notes total")

    base = f"Projects/SDK {mode}"
    r = await call("create_notebook", {"path": f"{base}/Sub"})
    s = sc(r)
    check(not r.is_error and s.get("created") is True and s.get("path") == f"{base}/Sub"
          and s.get("created_folders") == [base, f"{base}/Sub"], f"{mode}: create_notebook {s}")
    check(os.path.isdir(c.abs(f"{base}/Sub")) and not os.path.islink(c.abs(base)),
          f"{mode}: create_notebook made the folders on disk")
    r = await call("create_notebook", {"path": f"{base}/Sub/"})
    check(not r.is_error and sc(r).get("created") is False and sc(r).get("created_folders") == [],
          f"{mode}: create_notebook on an existing folder is created: false")
    r = await call("list_notebooks", {"parent": "Projects"})
    s = sc(r)
    books = {b["path"]: b for b in s.get("notebooks", [])}
    check(not r.is_error and s.get("parent") == "Projects" and set(books) >= {base, f"{base}/Sub"}
          and all(p.startswith("Projects/") for p in books), f"{mode}: list_notebooks parent {sorted(books)}")
    check(books.get(f"{base}/Sub", {}).get("notes") == 0 and books.get(base, {}).get("name") == f"SDK {mode}",
          f"{mode}: list_notebooks shows the new empty notebook")
    for bad, says in [("Projects/Plan.md", "create_note"), (".hidden/x", "dot-folder"), ("Welcome.md/x", "file")]:
        r = await call("create_notebook", {"path": bad})
        check(r.is_error and says in text_of(r), f"{mode}: create_notebook refuses {bad!r}")
    check(not os.path.exists(c.abs(".hidden")), f"{mode}: no dot-folder was created")
    for bad, says in [("Welcome.md", "not a folder"), (".obsidian", "dot-folder"), ("Nowhere", "not a folder")]:
        r = await call("list_notebooks", {"parent": bad})
        check(r.is_error and says in text_of(r), f"{mode}: list_notebooks refuses parent {bad!r}")


# ---------------------------------------------------------------------------------------------
# Tags

def tag_note_text(mode):
    return (
        "---\n"
        f"title: \"Tag note: {mode}\"\n"
        "# a comment that must survive\n"
        f"aliases: [tag-note-{mode}]\n"
        "tags: [alpha, Beta]\n"
        "created: 2026-01-02\n"
        "nested:\n"
        "  key: value   # trailing comment\n"
        "  list:\n"
        "    - one\n"
        "quoted: 'single # not a comment'\n"
        "---\n"
        "# Tag note\n"
        "\n"
        f"Body with #inline-only-{mode} and #alpha and #beta inline.\n"
    )


async def task_checks(c):
    mode, call = c.mode, c.call
    # The sample vault's tasks (Projects/Garden Planner.md): two open, one done.
    r = await call("list_tasks", {"folder": "Projects"})
    got = [(t["path"], t["line"], t["status"], t["text"]) for t in sc(r).get("tasks", [])]
    check(("Projects/Garden Planner.md", 25, "open", "Build the compost bin") in got
          and not any(t[2] == "done" for t in got), f"{mode}: list_tasks lists the open tasks ({got})")
    r = await call("list_tasks", {"state": "done", "tag": "todo"})
    got = [(t["line"], t["text"]) for t in sc(r).get("tasks", [])]
    check(got == [(24, "Order seeds #todo")], f"{mode}: list_tasks filters by state and tag ({got})")
    # Toggling is anchored by line and text: a wrong text writes nothing, the right one checks it off.
    note = f"Inbox/Tasks {mode}.md"
    r = await call("create_note", {"path": note, "content": "# Tasks\n\n- [ ] Try the toggle\n"})
    check(not r.is_error, f"{mode}: tasks note created")
    r = await call("toggle_task", {"note": note, "line": 3, "text": "Another task"})
    check(r.is_error and "list the tasks again" in text_of(r), f"{mode}: toggle_task refuses a stale anchor")
    r = await call("toggle_task", {"note": note, "line": 3, "text": "Try the toggle"})
    check(not r.is_error and read_bytes(c.abs(note)) == b"# Tasks\n\n- [x] Try the toggle\n",
          f"{mode}: toggle_task checks the task off")
    r = await call("delete_note", {"note": note})
    check(not r.is_error, f"{mode}: tasks note deleted")
async def graph_checks(c):
    mode, call = c.mode, c.call
    # The sample vault's link graph: backlinks with their lines and context, outgoing links
    # resolved, the one dangling link, orphans.
    r = await call("get_backlinks", {"note": "Garden Planner"})
    s = sc(r)
    back = {(b["path"], b["line"]): b["context"] for b in s.get("backlinks", [])}
    check(not r.is_error and back.get(("Welcome.md", 13)) == "- A plain link: [[Garden Planner]]"
          and ("Journal/2026-11-30.md", 5) in back and s.get("total") == len(back),
          f"{mode}: get_backlinks lists each linking line {back}")
    r = await call("get_outgoing_links", {"note": "Garden Planner"})
    links = [(l["target"], l["path"], l["state"]) for l in sc(r).get("links", [])]
    check(not r.is_error and ("Vaultchat Launch", "Projects/Vaultchat Launch.md", "resolved") in links,
          f"{mode}: get_outgoing_links resolves {links}")
    r = await call("list_unresolved_links", {})
    dangling = [(l["from"], l["target"]) for l in sc(r).get("links", [])]
    check(not r.is_error and ("Welcome.md", "Someday Maybe") in dangling,
          f"{mode}: list_unresolved_links finds the dangling link {dangling}")
    r = await call("list_orphan_notes", {})
    orphans = [n["path"] for n in sc(r).get("notes", [])]
    check(not r.is_error and "Welcome.md" in orphans and "Projects/Garden Planner.md" not in orphans,
          f"{mode}: list_orphan_notes {orphans}")


async def tag_checks(c):
    mode, call = c.mode, c.call
    # Tags of the fixture vault: frontmatter, inline and both, with counts.
    r = await call("list_tags", {})
    s = sc(r)
    tags = {t["tag"]: t for t in s.get("tags", [])}
    want = {  # tag: (notes, frontmatter_notes, inline_notes)
        "project": (2, 2, 0), "runbook": (2, 2, 0), "work": (2, 2, 0), "garden": (1, 1, 0),
        "journal": (1, 0, 1), "meeting": (1, 0, 1), "risk": (1, 0, 1), "oncall": (1, 0, 1),
        "start": (1, 1, 1), "日本語": (1, 1, 0), "ops": (1, 1, 0),
    }
    for tag, (n, fm, inl) in want.items():
        t = tags.get(tag, {})
        check((t.get("notes"), t.get("frontmatter_notes"), t.get("inline_notes")) == (n, fm, inl),
              f"{mode}: list_tags {tag} counts {t}")
    counts = [t["notes"] for t in s.get("tags", [])]
    check(not r.is_error and counts == sorted(counts, reverse=True) and s.get("total") == len(tags)
          and s.get("truncated") is False, f"{mode}: list_tags most used first, total")
    check("not-a-tag" not in tags and "meta/howto" in tags, f"{mode}: list_tags skips code, keeps nested tags")
    r = await call("list_tags", {"prefix": "#RUN"})
    check([t["tag"] for t in sc(r).get("tags", [])] == ["runbook"], f"{mode}: list_tags prefix is case-insensitive")
    r = await call("list_tags", {"limit": 2})
    check(len(sc(r).get("tags", [])) == 2 and sc(r).get("truncated") is True, f"{mode}: list_tags limit")
    r = await call("list_tags", {"limit": 0})
    check(r.is_error and "between 1 and 2000" in text_of(r), f"{mode}: list_tags limit 0 refused")

    # manage_tags on a note with a rich frontmatter: only the `tags` line may change.
    path = f"Inbox/Tags {mode}.md"
    original = tag_note_text(mode)
    r = await call("create_note", {"path": path, "content": original})
    check(not r.is_error and read_bytes(c.abs(path)) == original.encode(), f"{mode}: tag note created")
    r = await call("list_tags", {"prefix": f"inline-only-{mode}"})
    t = (sc(r).get("tags") or [{}])[0]
    check((t.get("tag"), t.get("notes"), t.get("frontmatter_notes"), t.get("inline_notes"))
          == (f"inline-only-{mode}", 1, 0, 1), f"{mode}: list_tags sees an inline tag of a new note {t}")
    r = await call("list_tags", {"prefix": "beta"})
    t = (sc(r).get("tags") or [{}])[0]
    check(t.get("tag") == "Beta" and t.get("variants") == ["beta"] and t.get("notes") == 1
          and t.get("frontmatter_notes") == 1 and t.get("inline_notes") == 1,
          f"{mode}: list_tags groups spellings case-insensitively {t}")
    r = await call("read_note", {"note": path})
    rev = sc(r).get("revision")
    r = await call("manage_tags", {"note": path, "add": ["sdk-added", "#nested/tag", "ALPHA"], "expected_revision": rev})
    s = sc(r)
    check(not r.is_error and s.get("added") == ["sdk-added", "nested/tag"] and s.get("already_present") == ["ALPHA"]
          and s.get("tags") == ["alpha", "Beta", "sdk-added", "nested/tag"] and s.get("changed") is True,
          f"{mode}: manage_tags add {s}")
    step1 = original.replace("tags: [alpha, Beta]\n", "tags: [alpha, Beta, sdk-added, nested/tag]\n")
    check(read_bytes(c.abs(path)) == step1.encode(), f"{mode}: manage_tags add left every other byte as it was")
    r = await call("list_tags", {"prefix": "nested/"})
    t = (sc(r).get("tags") or [{}])[0]
    check((t.get("tag"), t.get("notes"), t.get("frontmatter_notes")) == ("nested/tag", 1, 1),
          f"{mode}: list_tags sees the added tag {t}")
    r = await call("manage_tags", {"note": path, "remove": [f"#inline-only-{mode}"]})
    s = sc(r)
    check(not r.is_error and s.get("removed_inline") == {f"inline-only-{mode}": 1}
          and s.get("removed_from_frontmatter") == [] and s.get("changed") is True, f"{mode}: manage_tags remove inline {s}")
    step2 = step1.replace(f"#inline-only-{mode} ", f"inline-only-{mode} ")  # in prose the word stays
    check(read_bytes(c.abs(path)) == step2.encode(), f"{mode}: removing an inline tag left the frontmatter byte-identical")
    r = await call("manage_tags", {"note": path, "remove": ["sdk-added", "missing-tag"]})
    s = sc(r)
    check(not r.is_error and s.get("removed_from_frontmatter") == ["sdk-added"] and s.get("not_found") == ["missing-tag"]
          and s.get("tags") == ["alpha", "Beta", "nested/tag"], f"{mode}: manage_tags remove {s}")
    step3 = step2.replace("tags: [alpha, Beta, sdk-added, nested/tag]\n", "tags: [alpha, Beta, nested/tag]\n")
    check(read_bytes(c.abs(path)) == step3.encode(), f"{mode}: manage_tags remove left every other byte as it was")
    r = await call("manage_tags", {"note": path, "add": ["alpha"]})
    check(not r.is_error and sc(r).get("changed") is False and read_bytes(c.abs(path)) == step3.encode(),
          f"{mode}: adding a present tag changes nothing")
    r = await call("manage_tags", {"note": path, "add": ["x"], "expected_revision": rev})
    check(r.is_error and "changed since" in text_of(r), f"{mode}: manage_tags stale expected_revision refused")
    for bad, says in [({"add": ["two words"]}, "whitespace"), ({"add": ["2024"]}, "not a valid tag"),
                      ({"add": ["a"], "remove": ["A"]}, "both"), ({}, "give tags")]:
        r = await call("manage_tags", {"note": path, **bad})
        check(r.is_error and says in text_of(r), f"{mode}: manage_tags refuses {bad}")
    check(read_bytes(c.abs(path)) == step3.encode(), f"{mode}: refused manage_tags calls changed nothing")

    # A CRLF note with a block list: the list grows in its own style and line endings are kept.
    crlf = f"Inbox/Crlf {mode}.md"
    before = b"---\r\ntitle: CRLF\r\ntags:\r\n  - one\r\nother: 'x'  # c\r\n---\r\nbody #one\r\n"
    write_bytes(c.abs(crlf), before)
    r = await call("manage_tags", {"note": crlf, "add": ["two"]})
    after = before.replace(b"  - one\r\n", b"  - one\r\n  - two\r\n")
    got = read_bytes(c.abs(crlf))
    check(not r.is_error and got == after, f"{mode}: manage_tags on a CRLF block list: {got!r}")
    for p in (path, crlf):
        r = await call("delete_note", {"note": p})
        check(not r.is_error, f"{mode}: tag test note {p} deleted")


# ---------------------------------------------------------------------------------------------
# Connections and environments

async def connection_checks(c):
    mode, call = c.mode, c.call
    r = await call("list_connections", {})
    s = sc(r)
    conns = {x["name"]: x for x in s.get("connections", [])}
    check(not r.is_error and s.get("exists") is True and sorted(conns) == ["db", "notes-api", "notes-db"],
          f"{mode}: list_connections names {sorted(conns)}")
    check(conns.get("notes-db", {}).get("kind") == "postgres" and conns.get("notes-api", {}).get("kind") == "http"
          and conns.get("notes-db", {}).get("settings") == ["database", "host", "kind", "password", "port", "user"],
          f"{mode}: list_connections kinds and settings (the sample's keys are kept)")
    check(set(conns.get("db", {}).get("settings", [])) >= {"host", "port", "url", "auth", "options.sslmode",
                                                           "options.sslpassword", "replicas", "tokens", "apiKey"},
          f"{mode}: list_connections settings of db {conns.get('db')}")
    want_redacted = {
        "connections.notes-db.password", "connections.notes-api.api_key", "connections.db.apiKey",
        "connections.db.auth", "connections.db.health", "connections.db.options.sslpassword",
        "connections.db.replicas[0].password", "connections.db.tokens", "connections.db.url",
    }
    check(set(s.get("redacted", [])) == want_redacted, f"{mode}: list_connections redacted {s.get('redacted')}")

    r = await call("get_connection", {"name": "db"})
    s = sc(r)
    st = s.get("settings", {})
    check(not r.is_error and s.get("name") == "db" and st.get("host") == "db.internal" and st.get("port") == 6543
          and st.get("kind") == "postgres", f"{mode}: get_connection plain settings")
    check(st.get("url") == f"postgres://u:{REDACTED}@h/db", f"{mode}: get_connection cuts the password out of a URL")
    check(st.get("health") == f"https://h/health?sslmode=off&token={REDACTED}", f"{mode}: get_connection secret query parameter")
    check(st.get("apiKey") == REDACTED and st.get("tokens") == REDACTED and st.get("auth") == REDACTED,
          f"{mode}: get_connection hides apiKey, an array of tokens and a nested auth table whole")
    check(st.get("options") == {"sslmode": "require", "sslpassword": REDACTED}, f"{mode}: get_connection nested table")
    check(st.get("replicas") == [{"host": "replica-1", "password": REDACTED}], f"{mode}: get_connection array of tables")
    check(set(s.get("redacted", [])) == {k for k in want_redacted if k.startswith("connections.db.")},
          f"{mode}: get_connection redacted {s.get('redacted')}")
    r = await call("get_connection", {"name": "NOTES-DB"})
    s = sc(r)
    check(not r.is_error and s.get("name") == "notes-db" and s.get("settings", {}).get("user") == "notes_app"
          and s.get("settings", {}).get("password") == REDACTED and s.get("redacted") == ["connections.notes-db.password"],
          f"{mode}: get_connection case-insensitive, password redacted")
    r = await call("get_connection", {"name": "nope"})
    check(r.is_error and "db, notes-api, notes-db" in text_of(r), f"{mode}: get_connection unknown name lists the known ones")
    r = await call("get_connection", {"name": "secrets"})
    check(r.is_error, f"{mode}: the top-level [secrets] table is not a connection")

    r = await call("list_environments", {})
    s = sc(r)
    envs = {e["name"]: e for e in s.get("environments", [])}
    check(not r.is_error and sorted(envs) == ["broken", "dev", "prod"], f"{mode}: list_environments names {sorted(envs)}")
    dev_redacted = ["secrets.backup_codes", "secrets.deeper.signing", "secrets.password", "secrets.token", "token"]
    prod_redacted = ["apiKey", "api_key", "database_url", "service.client_secret"]
    check(envs.get("dev", {}).get("variables") == sorted(["base_url", "user"] + dev_redacted)
          and envs.get("dev", {}).get("redacted") == dev_redacted and envs.get("dev", {}).get("file") == "envs/dev.toml",
          f"{mode}: list_environments dev {envs.get('dev')}")
    check(envs.get("prod", {}).get("redacted") == prod_redacted
          and set(envs.get("prod", {}).get("variables", [])) == set(prod_redacted) | {"base_url", "user", "timeout", "service.client_id"},
          f"{mode}: list_environments prod {envs.get('prod')}")
    err = envs.get("broken", {}).get("error", "")
    check("envs/broken.toml" in err and "line 2" in err and "variables" not in envs.get("broken", {}),
          f"{mode}: list_environments reports the broken file by line: {err}")
    check(set(s.get("redacted", [])) == {f"envs/dev.toml:{k}" for k in dev_redacted} | {f"envs/prod.toml:{k}" for k in prod_redacted},
          f"{mode}: list_environments redacted")

    r = await call("get_environment_variables", {"name": "dev"})
    s = sc(r)
    v = s.get("variables", {})
    check(not r.is_error and s.get("name") == "dev" and s.get("file") == "envs/dev.toml"
          and v.get("base_url") == "http://localhost:8080" and v.get("user") == "demo", f"{mode}: get_environment_variables dev values")
    check(v.get("token") == REDACTED and v.get("secrets") == {"password": REDACTED, "token": REDACTED,
                                                               "backup_codes": REDACTED, "deeper": {"signing": REDACTED}},
          f"{mode}: get_environment_variables dev secrets redacted, structure kept")
    check(sorted(s.get("redacted", [])) == dev_redacted, f"{mode}: get_environment_variables dev redacted {s.get('redacted')}")
    r = await call("get_environment_variables", {"name": "envs/prod.toml"})
    s = sc(r)
    v = s.get("variables", {})
    check(not r.is_error and s.get("name") == "prod" and v.get("timeout") == 30 and v.get("user") == "deployer"
          and v.get("database_url") == f"postgres://deployer:{REDACTED}@db.example.com:5432/notes"
          and v.get("api_key") == REDACTED and v.get("apiKey") == REDACTED
          and v.get("service") == {"client_id": "vaultchat", "client_secret": REDACTED}
          and sorted(s.get("redacted", [])) == prod_redacted, f"{mode}: get_environment_variables prod {s}")
    r = await call("get_environment_variables", {"name": "broken"})
    check(r.is_error and "envs/broken.toml" in text_of(r) and "line 2" in text_of(r),
          f"{mode}: get_environment_variables on a syntax error names file and line")
    r = await call("get_environment_variables", {"name": "staging"})
    check(r.is_error and "broken, dev, prod" in text_of(r), f"{mode}: unknown environment lists the known ones")
    for bad in ["../connections", "envs/../connections", ".hidden", ""]:
        r = await call("get_environment_variables", {"name": bad})
        check(r.is_error, f"{mode}: get_environment_variables refuses {bad!r}")

    # Config files broken on purpose, with the secret on the broken line: errors name files and
    # lines, never values. Restored afterwards.
    conn = c.abs("connections.toml")
    saved = read_bytes(conn)
    try:
        write_bytes(conn, b'[connections.db]\nhost = "h"\npassword = "PLANTED-CONNBROKEN-24\n')
        r = await call("list_connections", {})
        check(r.is_error and "connections.toml" in text_of(r) and "line 3" in text_of(r),
              f"{mode}: list_connections on a broken file names the line")
        r = await call("get_connection", {"name": "db"})
        check(r.is_error and "line 3" in text_of(r), f"{mode}: get_connection on a broken file names the line")
        r = await call("get_block_settings", {"note": "Runbooks/Prod Ops.md", "id": "prod-check"})
        cn = sc(r).get("connection", {})
        check(not r.is_error and cn.get("exists") is None and "line 3" in cn.get("error", ""),
              f"{mode}: get_block_settings reports a broken connections file {cn}")
        write_bytes(conn, b'[connections.db]\nhost = "h"\npassword = "x"\npassword = "PLANTED-DUPKEY-26"\n')
        r = await call("get_connection", {"name": "db"})
        check(r.is_error and "line 4" in text_of(r), f"{mode}: get_connection on a duplicate key names the line")
        os.remove(conn)
        r = await call("list_connections", {})
        check(not r.is_error and sc(r).get("exists") is False and sc(r).get("connections") == [],
              f"{mode}: list_connections without connections.toml")
        r = await call("get_connection", {"name": "db"})
        check(r.is_error and "no `connections.toml`" in text_of(r), f"{mode}: get_connection without connections.toml")
    finally:
        write_bytes(conn, saved)
    bare = c.abs("envs/bare.toml")
    try:
        write_bytes(bare, b'user = "x"\napi_key = PLANTED-BARE-25\n')
        r = await call("get_environment_variables", {"name": "bare"})
        check(r.is_error and "line 2" in text_of(r), f"{mode}: an unquoted secret value is a syntax error naming the line")
        r = await call("list_environments", {})
        envs = {e["name"]: e for e in sc(r).get("environments", [])}
        check(not r.is_error and "error" in envs.get("bare", {}) and "variables" in envs.get("dev", {}),
              f"{mode}: one broken environment does not hide the others")
    finally:
        os.remove(bare)


# ---------------------------------------------------------------------------------------------
# Blocks

async def block_checks(c):
    mode, call = c.mode, c.call
    ops = "Runbooks/Prod Ops.md"
    r = await call("list_blocks_in_note", {"note": "Prod Ops"})
    s = sc(r)
    blocks = s.get("blocks", [])
    check(not r.is_error and s.get("path") == ops and s.get("total") == 3 and len(blocks) == 3
          and s.get("redacted") == ["token"], f"{mode}: list_blocks_in_note Prod Ops")
    b0 = blocks[0] if blocks else {}
    attrs0 = {a["key"]: a["value"] for a in b0.get("attributes", [])}
    check(b0.get("id") == "prod-check" and b0.get("lang") == "sql" and b0.get("index") == 0
          and attrs0 == {"id": "prod-check", "env": "prod", "connection": "db", "timeout": "10", "token": REDACTED}
          and b0.get("body_lines") == 1 and b0.get("start_line", 0) < b0.get("end_line", 0),
          f"{mode}: list_blocks_in_note block 0 {b0}")
    check([b.get("id") for b in blocks] == ["prod-check", "ghost", None]
          and [b.get("lang") for b in blocks] == ["sql", "http", None], f"{mode}: list_blocks_in_note ids and langs")
    r = await call("list_blocks_in_note", {"note": "Deploy API"})
    s = sc(r)
    check(not r.is_error and [b.get("id") for b in s.get("blocks", [])] == ["login", "deploy", "check-migrations"]
          and [b.get("body_lines") for b in s.get("blocks", [])] == [4, 2, 1], f"{mode}: list_blocks_in_note Deploy API")
    r = await call("list_blocks_in_note", {"note": "Garden Planner"})
    check(not r.is_error and sc(r).get("blocks") == [] and sc(r).get("total") == 0, f"{mode}: a note without blocks")
    r = await call("list_blocks_in_note", {"note": "Welcome"})
    b = (sc(r).get("blocks") or [{}])[0]
    check(not r.is_error and sc(r).get("total") == 1 and b.get("lang") == "bash" and b.get("id") is None
          and b.get("attributes") == [], f"{mode}: a block without attributes {b}")

    r = await call("get_block_settings", {"note": ops, "id": "prod-check"})
    s = sc(r)
    check(not r.is_error and s.get("environment") == {"name": "prod", "file": "envs/prod.toml", "exists": True}
          and s.get("connection") == {"name": "db", "file": "connections.toml", "exists": True}
          and s.get("redacted") == ["token"] and s.get("path") == ops and s.get("index") == 0,
          f"{mode}: get_block_settings env=prod connection=db {s}")
    r = await call("get_block_settings", {"note": ops, "index": 1})
    s = sc(r)
    check(not r.is_error and s.get("id") == "ghost" and s.get("environment", {}).get("exists") is False
          and s.get("environment", {}).get("file") == "envs/staging.toml" and s.get("connection", {}).get("exists") is False,
          f"{mode}: get_block_settings by index, missing env and connection {s}")
    r = await call("get_block_settings", {"note": ops, "index": 2})
    s = sc(r)
    check(not r.is_error and s.get("id") is None and "environment" not in s and "connection" not in s
          and s.get("attributes") == [], f"{mode}: get_block_settings of a block without attributes")
    r = await call("get_block_settings", {"note": "Deploy API", "id": "check-migrations"})
    check(sc(r).get("connection", {}).get("exists") is True, f"{mode}: the sample's notes-db connection still exists")
    for bad, says in [({"id": "nope"}, "prod-check, ghost"), ({"index": 9}, "3 code block"),
                      ({"id": "ghost", "index": 1}, "exactly one"), ({}, "exactly one")]:
        r = await call("get_block_settings", {"note": ops, **bad})
        check(r.is_error and says in text_of(r), f"{mode}: get_block_settings refuses {bad}")

    r = await call("get_block_history", {"note": ops, "id": "prod-check"})
    h0 = sc(r)
    n0 = len(h0.get("revisions", []))
    check(not r.is_error and h0.get("exists_now") is True and h0.get("block", {}).get("id") == "prod-check"
          and h0.get("has_more") is False, f"{mode}: get_block_history before any change")
    # A change elsewhere in the note, then one to the block's body.
    r = await call("update_note", {"note": ops, "append": f"Checked by the sdk ({mode})."})
    check(not r.is_error, f"{mode}: runbook appended")
    r = await call("get_block_history", {"note": ops, "id": "prod-check"})
    h1 = sc(r)
    revs = h1.get("revisions", [])
    newest = revs[0] if revs else {}
    check(not r.is_error and len(revs) == n0 + 1 and newest.get("tool") == "update_note" and newest.get("actor") == "agent"
          and newest.get("change") == "unchanged" and newest.get("changed") is False and newest.get("added") == 2
          and h1.get("changed_in") == h0.get("changed_in"), f"{mode}: get_block_history after a change elsewhere {newest}")
    r = await call("update_note", {"note": ops, "replace_text": {"find": "AS marker", "replace": "AS marker_x"}})
    check(not r.is_error, f"{mode}: runbook block body changed")
    r = await call("get_block_history", {"note": ops, "id": "prod-check"})
    h2 = sc(r)
    revs = h2.get("revisions", [])
    newest = revs[0] if revs else {}
    check(not r.is_error and len(revs) == n0 + 2 and newest.get("change") == "modified" and newest.get("changed") is True
          and h2.get("changed_in") == h0.get("changed_in", 0) + 1 and newest.get("at", "").endswith("Z")
          and isinstance(newest.get("at_unix_ms"), int), f"{mode}: get_block_history sees the body change {newest}")
    r = await call("get_block_history", {"note": ops, "id": "ghost"})
    check(not r.is_error and sc(r).get("changed_in") == 0 and len(sc(r).get("revisions", [])) == n0 + 2,
          f"{mode}: get_block_history of an untouched block")
    r = await call("get_block_history", {"note": ops, "id": "never"})
    check(r.is_error and "prod-check" in text_of(r), f"{mode}: get_block_history of an unknown id")


# ---------------------------------------------------------------------------------------------
# Config files are not notes: the note tools must neither show nor change them.

async def config_file_probes(c):
    mode, call = c.mode, c.call
    probes = {
        "read_note": lambda p: {"note": p},
        "list_blocks_in_note": lambda p: {"note": p},
        "get_block_settings": lambda p: {"note": p, "index": 0},
        "get_block_history": lambda p: {"note": p, "id": "x"},
        "manage_tags": lambda p: {"note": p, "add": ["sdk-probe"]},
        "update_note": lambda p: {"note": p, "append": "# appended by the sdk"},
        "delete_note": lambda p: {"note": p},
    }
    for rel in ["connections.toml", "envs/dev.toml", "envs/prod.toml", "envs/broken.toml"]:
        saved = read_bytes(c.abs(rel))
        for tool, make in probes.items():
            r = await call(tool, make(rel))
            body = text_of(r) + json.dumps(r.structured_content)
            leaked = [i for i, s in enumerate(secrets) if s in body]
            check(not leaked, f"{mode}: {tool} on config file {rel} shows no secret (leaked #{leaked})")
            unchanged = read_bytes(c.abs(rel)) == saved
            if tool in ("manage_tags", "update_note", "delete_note"):
                check(r.is_error and unchanged, f"{mode}: {tool} refuses config file {rel} and leaves it as it was")
            if not unchanged:
                write_bytes(c.abs(rel), saved)


# ---------------------------------------------------------------------------------------------
# Bad arguments for every tool

def json_type(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def declared_types(prop):
    types = prop.get("type")
    if isinstance(types, str):
        return {types}
    if isinstance(types, list):
        return set(types)
    out = set()
    for alt in prop.get("anyOf", []) + prop.get("oneOf", []):
        out |= declared_types(alt) if "type" in alt else {"object"}
    return out


def wrong_value(prop):
    allowed = declared_types(prop)
    for v in [12345, "not-a-number", True, ["a"], {"k": "v"}]:
        t = json_type(v)
        if t not in allowed and not (t == "integer" and "number" in allowed):
            return v
    return None


async def bad_argument_checks(c, listed):
    mode, call = c.mode, c.call
    scratch = f"Inbox/Scratch {mode}.md"
    scratch_text = "# Scratch\n\n#keep\n"
    r = await call("create_note", {"path": scratch, "content": scratch_text})
    check(not r.is_error, f"{mode}: scratch note created")
    ops = "Runbooks/Prod Ops.md"
    # Arguments that would succeed (or act) if the server ignored what is wrong with them.
    valid = {
        "list_notes": {"folder": "Projects", "limit": 5, "offset": 0},
        "read_note": {"note": "Welcome", "offset": 0, "max_chars": 50},
        "search_notes": {"query": "garden", "limit": 3},
        "create_note": {"path": f"Inbox/Never {mode}.md", "content": "never", "overwrite": False},
        "update_note": {"note": scratch, "append": "never", "expected_revision": None},
        "delete_note": {"note": scratch},
        "move_note": {"note": scratch, "to": f"Inbox/Moved {mode}.md"},
        "list_notebooks": {"parent": "Projects"},
        "create_notebook": {"path": f"Never {mode}"},
        "list_tags": {"prefix": "pro", "limit": 5},
        "manage_tags": {"note": scratch, "add": ["never"], "remove": ["keep"], "expected_revision": None},
        "list_connections": {},
        "get_connection": {"name": "db"},
        "list_environments": {},
        "get_environment_variables": {"name": "dev"},
        "list_blocks_in_note": {"note": ops},
        "get_block_settings": {"note": ops, "id": "prod-check"},
        "get_block_history": {"note": ops, "id": "prod-check"},
        "semantic_search_notes": {"query": "garden", "limit": 3, "relevance": "broad"},
        "list_tasks": {"state": "all", "due_before": "2026-12-31", "folder": "Projects", "tag": "todo",
                       "limit": 5, "offset": 0},
        "toggle_task": {"note": scratch, "line": 3, "text": "never", "status": "done"},
        "read_daily_note": {"date": "2026-12-01"},
        "write_daily_note": {"date": "2026-12-01", "append": f"- {mode}"},
        "get_backlinks": {"note": "Garden Planner", "offset": 0, "limit": 5, "unlinked_mentions": False},
        "get_outgoing_links": {"note": "Garden Planner", "offset": 0, "limit": 5},
        "list_unresolved_links": {"folder": "Projects", "offset": 0, "limit": 5},
        "list_orphan_notes": {"folder": "Projects", "offset": 0, "limit": 5},
    }
    for t in listed:
        name, schema = t.name, t.input_schema
        base = valid.get(name)
        check(base is not None, f"{mode}: the script knows valid arguments for {name} (add them to `valid`)")
        if base is None:
            continue
        props = schema.get("properties", {})
        check(set(base) <= set(props), f"{mode}: {name} valid arguments are in its schema")
        refused = 0
        r = await call(name, {**base, "unexpected_extra": "x"})
        ok = r.is_error and "unknown field" in text_of(r)
        check(ok, f"{mode}: {name} refuses an unknown extra argument")
        refused += ok
        r = await call(name, {**base, "Unexpected-Extra": [1, 2]})
        ok = r.is_error and "unknown field" in text_of(r)
        check(ok, f"{mode}: {name} refuses another unknown argument")
        refused += ok
        if not props:
            no_wrong_type.add(name)
        for key, prop in props.items():
            bad = wrong_value(prop)
            check(bad is not None, f"{mode}: {name}.{key} has a type a wrong value can be found for")
            r = await call(name, {**base, key: bad})
            ok = r.is_error and "invalid" in text_of(r)
            check(ok, f"{mode}: {name} refuses a wrong-typed {key} ({json_type(bad)})")
            refused += ok
            if "integer" in declared_types(prop):
                r = await call(name, {**base, key: -1})
                ok = r.is_error and "invalid" in text_of(r)
                check(ok, f"{mode}: {name} refuses a negative {key}")
                refused += ok
        for key in schema.get("required", []):
            r = await call(name, {k: v for k, v in base.items() if k != key})
            ok = r.is_error and "missing field" in text_of(r)
            check(ok, f"{mode}: {name} refuses a call without {key}")
            refused += ok
        bad_args[(mode, name)] = refused
    # None of those calls acted.
    check(read_bytes(c.abs(scratch)) == scratch_text.encode(), f"{mode}: no refused call changed the scratch note")
    check(not os.path.exists(c.abs(f"Inbox/Never {mode}.md")), f"{mode}: no refused call created a note")
    check(not os.path.exists(c.abs(f"Never {mode}")), f"{mode}: no refused call created a notebook")
    check(not os.path.exists(c.abs(f"Inbox/Moved {mode}.md")), f"{mode}: no refused call moved a note")
    check(not os.path.exists(c.abs("2026-12-01.md")), f"{mode}: no refused call wrote a daily note")
    # Only now do the destructive valid arguments run, to show they were valid.
    r = await call("update_note", valid["update_note"])
    check(not r.is_error, f"{mode}: update_note's valid arguments are valid")
    r = await call("manage_tags", valid["manage_tags"])
    check(not r.is_error and sc(r).get("removed_inline") == {"keep": 1}, f"{mode}: manage_tags's valid arguments are valid")
    moved = valid["move_note"]["to"]
    r = await call("move_note", valid["move_note"])
    check(not r.is_error and sc(r).get("files_changed", [None])[0] == moved
          and os.path.exists(c.abs(moved)) and not os.path.exists(c.abs(scratch)),
          f"{mode}: move_note's valid arguments are valid")
    r = await call("move_note", {"note": moved, "to": scratch})
    check(not r.is_error and os.path.exists(c.abs(scratch)), f"{mode}: the note moved back")
    r = await call("delete_note", valid["delete_note"])
    check(not r.is_error, f"{mode}: delete_note's valid arguments are valid")
    r = await call("create_notebook", valid["create_notebook"])
    check(not r.is_error and os.path.isdir(c.abs(f"Never {mode}")), f"{mode}: create_notebook's valid arguments are valid")
    r = await call("create_note", valid["create_note"])
    check(not r.is_error, f"{mode}: create_note's valid arguments are valid")
    r = await call("delete_note", {"note": valid["create_note"]["path"]})
    check(not r.is_error, f"{mode}: the note from create_note's valid arguments deleted")
    # The daily note of the fixture (no .obsidian settings: the vault root, YYYY-MM-DD).
    r = await call("read_daily_note", valid["read_daily_note"])
    check(not r.is_error and sc(r).get("path") == "2026-12-01.md" and sc(r).get("exists") is False,
          f"{mode}: read_daily_note's valid arguments are valid")
    r = await call("write_daily_note", valid["write_daily_note"])
    check(not r.is_error and sc(r).get("created") is True
          and read_bytes(c.abs("2026-12-01.md")) == f"- {mode}\n".encode(),
          f"{mode}: write_daily_note's valid arguments are valid")
    r = await call("delete_note", {"note": "2026-12-01.md"})
    check(not r.is_error, f"{mode}: the daily note deleted")


# ---------------------------------------------------------------------------------------------
# Bad paths through every path-taking tool

async def path_checks(c):
    mode, call = c.mode, c.call
    path_tools = {
        "read_note": lambda p: {"note": p},
        "create_note": lambda p: {"path": p, "content": "x"},
        "update_note": lambda p: {"note": p, "body": "x"},
        "delete_note": lambda p: {"note": p},
        "list_notes": lambda p: {"folder": p},
        "create_notebook": lambda p: {"path": p},
        "list_notebooks": lambda p: {"parent": p},
        "manage_tags": lambda p: {"note": p, "add": ["x"]},
        "list_blocks_in_note": lambda p: {"note": p},
        "get_block_settings": lambda p: {"note": p, "index": 0},
        "get_block_history": lambda p: {"note": p, "id": "x"},
    }
    refused = 0
    for case, inputs in PATH_CASES.items():
        for p in inputs:
            for tool, make in path_tools.items():
                if tool not in c.names:
                    continue
                if tool == "list_notes" and p in ("", "Inbox/"):
                    continue  # an empty folder filter means the whole vault; `Inbox/` is a real folder
                if tool == "list_notebooks" and p in ("", "/", "Inbox/"):
                    continue  # an empty parent (or `/`) means the whole vault; `Inbox/` is a real folder
                if tool == "create_notebook" and p == "Inbox/":
                    continue  # a folder named with a trailing slash is still that folder
                if tool in NOTE_READERS and case.startswith("12"):
                    # A hard link is a file of the vault that shares its inode with another
                    # name; reading it is allowed, writing through it never (checked here).
                    continue
                r = await call(tool, make(p))
                body = text_of(r)
                leaked = any(m in body for m in OUTSIDE_MARKERS)
                check(r.is_error and not leaked, f"{mode}: {tool} refuses case {case}: {p[:40]!r}")
                refused += 1
    r = await call("list_notes", {"folder": "**/../../*"})
    check(r.is_error, f"{mode}: list_notes refuses a traversing pattern")
    r = await call("list_notebooks", {"parent": "**/../../*"})
    check(r.is_error, f"{mode}: list_notebooks refuses a traversing pattern")
    return refused


# ---------------------------------------------------------------------------------------------

async def session(args, mode):
    server = StdioServerParameters(
        command=args.bin,
        args=["--vault", args.vault, "--data-dir", args.data, "mcp", "--allow-writes"],
        env={"VAULTCHAT_LOG": "vaultchat=debug"},
    )
    async with Client(server, mode=mode) as client:
        era = client.protocol_version
        check(era == ("2025-11-25" if mode == "legacy" else "2026-07-28"), f"{mode}: era {era}")
        listing = await client.list_tools()
        outputs.append((mode, "tools/list", f"{mode}: tools/list", listing.model_dump_json(by_alias=True)))
        listed = listing.tools
        names = {t.name for t in listed}
        check(EXPECTED_TOOLS <= names, f"{mode}: every expected tool is listed (missing {sorted(EXPECTED_TOOLS - names)})")
        for t in listed:
            schema = t.input_schema
            check(schema.get("type") == "object" and schema.get("additionalProperties") is False,
                  f"{mode}: {t.name} schema is a closed object")
            a = t.annotations
            check(a is not None and a.read_only_hint is not None, f"{mode}: {t.name} has annotations")
            writes = t.name in {"create_note", "update_note", "delete_note", "create_notebook", "manage_tags",
                                "move_note", "toggle_task", "write_daily_note"}
            check(a is not None and a.read_only_hint is (not writes), f"{mode}: {t.name} readOnlyHint is {not writes}")
        by_name = {t.name: t for t in listed}
        c = Ctx(args, mode, client, names)
        refused = 0
        for part in (lambda: notes_checks(c, by_name), lambda: notebook_checks(c), lambda: tag_checks(c),
                     lambda: task_checks(c), lambda: graph_checks(c),
                     lambda: connection_checks(c), lambda: block_checks(c), lambda: config_file_probes(c),
                     lambda: bad_argument_checks(c, listed), lambda: path_checks(c)):
            try:
                got = await part()
                refused += got or 0
            except Exception:
                check(False, f"{mode}: a check section crashed: {traceback.format_exc(limit=3)[-600:]}")
        # Every listed tool was called successfully at least once, and refused bad arguments.
        never = sorted(n for n in names if not succeeded.get((mode, n)))
        check(not never, f"{mode}: every listed tool was called successfully (never: {never})")
        untested = sorted(n for n in names if not bad_args.get((mode, n)))
        check(not untested, f"{mode}: every listed tool refused bad arguments (not: {untested})")
        return refused


def scan_outputs():
    """No output of any call may hold a secret; no block tool's output a line of a block body."""
    scanned = 0
    for mode, tool, label, text in outputs:
        # Named by index (secrets[i], then the outside markers), so this report repeats no secret.
        leaked = [i for i, s in enumerate(secrets + OUTSIDE_MARKERS) if s in text]
        check(not leaked, f"no secret in the output of {label} (found secrets #{leaked})")
        if tool in BLOCK_TOOLS:
            body = [m for m in BODY_MARKERS if m in text]
            check(not body, f"no block body in the output of {label} (found {body})")
        scanned += 1
    return scanned


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--outside", required=True)
    ap.add_argument("--secrets", required=True, help="the planted secret values, comma-separated")
    args = ap.parse_args()
    secrets.extend(s for s in args.secrets.split(",") if s)
    secrets.extend(SCRIPT_SECRETS)
    check(len(secrets) > len(SCRIPT_SECRETS), "planted secrets were given")
    before_outside = tree_digest(args.outside)
    refused = 0
    for mode in ("auto", "legacy"):
        try:
            refused += await session(args, mode)
        except Exception:
            check(False, f"{mode}: session crashed: {traceback.format_exc(limit=4)[-800:]}")
    check(tree_digest(args.outside) == before_outside, "nothing outside the vault changed")
    scanned = scan_outputs()
    print(json.dumps({
        "checks": len(checks),
        "failures": failures,
        "path_refusals": refused,
        "outputs_scanned": scanned,
        "secrets": len(secrets),
        "tools_called": sorted({t for (_, t) in succeeded}),
        "bad_argument_refusals": sum(bad_args.values()),
        "tools_without_arguments": sorted(no_wrong_type),
    }))
    sys.exit(1 if failures else 0)


asyncio.run(main())
