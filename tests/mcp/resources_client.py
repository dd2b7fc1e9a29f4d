"""Drive `vaultchat mcp`'s resources and prompts with the official MCP Python SDK (PyPI `mcp`).

Usage: resources_client.py --bin VAULTCHAT --vault DIR --data DIR --expect-notes N [--url URL]

With `--url` (a `vaultchat mcp --http --no-auth` endpoint) the sessions go over Streamable HTTP
instead of stdio.

The vault is prepared by tests/peers/mcp_resources.rs: more notes than one `resources/list` page,
with names that need escaping, a CRLF note, a note with a byte-order mark, a note that is not
UTF-8, notes in dot-folders, a link out of the vault and config files with secrets (none of which
may be listed or read). In each protocol era (auto = 2026-07-28, legacy = 2025-11-25) the script:

- lists every note by following `nextCursor` (pages of at most 100), and compares the listing with
  the notes on disk (every `.md` file outside dot-folders, links not followed);
- reads every listed note back and compares it with the file, byte for byte;
- checks reads the guard refuses (dot-folders, config files, links out, `..`);
- subscribes to a note (`resources/subscribe` in 2025, `subscriptions/listen` in 2026), edits it
  from outside, and measures how long the `notifications/resources/updated` takes to arrive;
- creates a note from outside and waits for `notifications/resources/list_changed`, then deletes
  it and waits again;
- lists the prompts, gets each with a note, and completes the `note` argument.

Prints one JSON line with what it checked and the latencies measured; exit code 0 only if every
check held.
"""
import argparse, asyncio, base64, json, os, sys, time, traceback

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import PromptReference, ResourceTemplateReference

checks = []
failures = []
latencies = {}   # mode -> seconds from the outside edit to the notification
list_changed = {}  # mode -> seconds from the outside create to list_changed

WAIT = 10.0  # generous: the check is that it arrives; the latency is reported, not asserted


def check(ok, what):
    checks.append(what)
    if not ok:
        failures.append(what)


def notes_on_disk(vault):
    """What `list_notes` lists: `.md` files outside dot-folders, links not followed."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(vault, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if name.startswith(".") or not name.lower().endswith(".md") or len(name) <= 3:
                continue
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            found[os.path.relpath(path, vault).replace(os.sep, "/")] = path
    return found


def content_bytes(contents):
    if getattr(contents, "text", None) is not None:
        return contents.text.encode("utf-8")
    return base64.b64decode(contents.blob)


async def list_all(client, mode):
    pages, resources, cursor = 0, [], None
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        pages += 1
        check(len(page.resources) <= 100, f"{mode}: page {pages} holds at most 100 notes ({len(page.resources)})")
        resources.extend(page.resources)
        cursor = page.next_cursor
        if not cursor:
            return pages, resources
        check(pages < 1000, f"{mode}: paging ends")


async def listing_checks(client, mode, args):
    pages, resources = await list_all(client, mode)
    on_disk = notes_on_disk(args.vault)
    names = [r.name for r in resources]
    check(len(names) == len(set(names)), f"{mode}: no note listed twice")
    check(set(names) == set(on_disk), f"{mode}: the listing is the notes on disk "
          f"(missing {sorted(set(on_disk) - set(names))[:5]}, extra {sorted(set(names) - set(on_disk))[:5]})")
    check(len(names) == args.expect_notes, f"{mode}: {args.expect_notes} notes listed ({len(names)})")
    check(pages >= 3, f"{mode}: listed over several pages ({pages})")
    check(names == sorted(names, key=lambda n: n.encode()), f"{mode}: listed in path order")
    titles = {r.name: r.title for r in resources}
    for name, title in {"Projects/Garden Planner.md": "Garden Planner", "Journal/2026-11-30.md": "Monday 30 November 2026",
                        "Generated/Batch 0/Note 007.md": "Note 7", "Names/Empty.md": "Empty"}.items():
        check(titles.get(name) == title, f"{mode}: {name} is titled {title!r} ({titles.get(name)!r})")
    for r in resources:
        check(r.mime_type == "text/markdown", f"{mode}: {r.name} is text/markdown")
        check(r.uri.startswith("vault://note/"), f"{mode}: {r.name} has a vault://note/ URI")
    # Every note read back byte for byte.
    identical = 0
    for r in resources:
        result = await client.read_resource(r.uri, cache_mode="bypass")
        check(len(result.contents) == 1, f"{mode}: one content for {r.name}")
        got = content_bytes(result.contents[0])
        with open(on_disk[r.name], "rb") as f:
            want = f.read()
        same = got == want
        check(same, f"{mode}: {r.name} reads back byte-identical ({len(got)} vs {len(want)} bytes)")
        check(result.contents[0].mime_type == "text/markdown", f"{mode}: {r.name} read as text/markdown")
        check(result.contents[0].uri == r.uri, f"{mode}: {r.name} read under its URI")
        identical += same
    templates = await client.list_resource_templates(cache_mode="bypass")
    check([t.uri_template for t in templates.resource_templates] == ["vault://note/{+path}"],
          f"{mode}: the note template is listed")
    return resources, identical, pages


REFUSED = [
    "vault://note/.obsidian/hidden.md", "vault://note/connections.toml", "vault://note/envs/dev.toml",
    "vault://note/link_out/secret.md", "vault://note/%2E%2E/outside/secret.md", "vault://note/missing.md",
    "file:///etc/passwd", "vault://note/",
]


async def refusal_checks(client, mode):
    for uri in REFUSED:
        try:
            result = await client.read_resource(uri, cache_mode="bypass")
            text = json.dumps(result.model_dump(by_alias=True))
            check(False, f"{mode}: reading {uri} is refused (it returned {text[:120]})")
        except Exception as e:  # MCPError: the protocol error the read must be
            check("SECRET" not in str(e), f"{mode}: the refusal of {uri} holds no secret")
            check(True, f"{mode}: reading {uri} is refused")


async def edit_and_wait(path, got, uri_or_none, marker):
    """Append to the note from outside and wait for the matching event; returns the latency."""
    start = time.monotonic()
    with open(path, "ab") as f:
        f.write(f"\nEdited from outside: {marker}\n".encode())
    with anyio.move_on_after(WAIT):
        while True:
            event = await got.receive()
            if uri_or_none is None or event == uri_or_none:
                return time.monotonic() - start
    return None


async def legacy_subscription_checks(client, mode, args, resources, events):
    target = next(r for r in resources if r.name == "Projects/Subscribed note.md")
    await client.subscribe_resource(target.uri)
    latency = await edit_and_wait(os.path.join(args.vault, target.name), events["updated"], target.uri, mode)
    check(latency is not None, f"{mode}: resources/updated arrived after an outside edit")
    latencies[mode] = latency
    await client.unsubscribe_resource(target.uri)
    await list_change_checks(client, mode, args, events["list_changed"])


async def list_change_checks(client, mode, args, got):
    name = f"Inbox/New from outside {mode}{' http' if args.url else ''}.md"
    start = time.monotonic()
    with open(os.path.join(args.vault, name), "wb") as f:
        f.write(b"# New\n\nWritten by another program.\n")
    seen = None
    with anyio.move_on_after(WAIT):
        await got.receive()
        seen = time.monotonic() - start
    check(seen is not None, f"{mode}: resources/list_changed arrived after a note was created outside")
    list_changed[mode] = seen
    _, resources = await list_all(client, mode)
    check(name in {r.name for r in resources}, f"{mode}: the new note is listed after list_changed")
    # And when it goes (after dropping anything the creation still had queued).
    await anyio.sleep(0.5)
    while True:
        try:
            got.receive_nowait()
        except anyio.WouldBlock:
            break
    os.remove(os.path.join(args.vault, name))
    gone = False
    with anyio.move_on_after(WAIT):
        await got.receive()
        gone = True
    check(gone, f"{mode}: resources/list_changed arrived after a note was deleted outside")
    _, resources = await list_all(client, mode)
    check(name not in {r.name for r in resources}, f"{mode}: the deleted note is gone from the listing")


async def listen_checks(client, mode, args, resources):
    target = next(r for r in resources if r.name == "Projects/Subscribed note.md")
    updated_tx, updated_rx = anyio.create_memory_object_stream(100)
    changed_tx, changed_rx = anyio.create_memory_object_stream(100)
    async with client.listen(resources_list_changed=True, resource_subscriptions=[target.uri]) as sub:
        honored = sub.honored
        check(honored is not None and list(honored.resource_subscriptions or []) == [target.uri],
              f"{mode}: the subscription to the note is honoured")

        async def pump():
            async for event in sub:
                kind = type(event).__name__
                if kind == "ResourceUpdated":
                    await updated_tx.send(event.uri)
                elif kind == "ResourcesListChanged":
                    await changed_tx.send(True)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            latency = await edit_and_wait(os.path.join(args.vault, target.name), updated_rx, target.uri, mode)
            check(latency is not None, f"{mode}: resources/updated arrived through subscriptions/listen")
            latencies[mode] = latency
            await list_change_checks(client, mode, args, changed_rx)
            tg.cancel_scope.cancel()


async def prompt_checks(client, mode, args):
    listed = await client.list_prompts(cache_mode="bypass")
    names = [p.name for p in listed.prompts]
    check({"summarize_note", "daily_review", "find_related"} <= set(names), f"{mode}: the three prompts are listed ({names})")
    for p in listed.prompts:
        if p.name in ("summarize_note", "find_related"):
            check([(a.name, a.required) for a in p.arguments] == [("note", True)], f"{mode}: {p.name} takes a note")
    plan = "Projects/Garden Planner.md"
    with open(os.path.join(args.vault, plan), encoding="utf-8") as f:
        plan_text = f.read()
    for name in ("summarize_note", "find_related"):
        got = await client.get_prompt(name, {"note": plan})
        embedded = [m.content for m in got.messages if m.content.type == "resource"]
        texts = [m.content.text for m in got.messages if m.content.type == "text"]
        check(len(embedded) == 1 and embedded[0].resource.text == plan_text,
              f"{mode}: {name} embeds the note's text")
        check(embedded and embedded[0].resource.uri == "vault://note/Projects/Garden%20Planner.md",
              f"{mode}: {name} embeds the note under its URI")
        check(texts and plan in texts[-1], f"{mode}: {name} says what to do with the note")
    # By title, as tools take notes.
    got = await client.get_prompt("summarize_note", {"note": "Garden Planner"})
    check(any(m.content.type == "resource" for m in got.messages), f"{mode}: summarize_note takes a title")
    related = await client.get_prompt("find_related", {"note": plan})
    check("Candidates:" in related.messages[-1].content.text, f"{mode}: find_related lists candidates")
    # The notes edited a moment ago are in today's review.
    review = await client.get_prompt("daily_review", {"days": "1"})
    embedded = [m.content.resource.uri for m in review.messages if m.content.type == "resource"]
    check("vault://note/Projects/Subscribed%20note.md" in embedded, f"{mode}: daily_review embeds the note edited today")
    check("Projects/Subscribed note.md" in review.messages[-1].content.text, f"{mode}: daily_review lists it")
    review = await client.get_prompt("daily_review", {})
    check(review.messages, f"{mode}: daily_review works without days")
    for bad in ({"name": "summarize_note", "arguments": {}}, {"name": "summarize_note", "arguments": {"note": "No such note"}},
                {"name": "daily_review", "arguments": {"days": "400"}}, {"name": "nope", "arguments": {}}):
        try:
            await client.get_prompt(bad["name"], bad["arguments"])
            check(False, f"{mode}: prompts/get {bad} is refused")
        except Exception:
            check(True, f"{mode}: prompts/get {bad} is refused")
    done = await client.complete(PromptReference(name="summarize_note"), {"name": "note", "value": "garden"})
    check(plan in done.completion.values, f"{mode}: the note argument completes ({done.completion.values[:5]})")
    done = await client.complete(ResourceTemplateReference(uri="vault://note/{+path}"), {"name": "path", "value": "garden"})
    check(plan in done.completion.values, f"{mode}: the template's path completes ({done.completion.values[:5]})")
    done = await client.complete(PromptReference(name="daily_review"), {"name": "days", "value": "3"})
    check(done.completion.values == ["30"], f"{mode}: days completes ({done.completion.values})")
    return len(names)


async def session(args, mode):
    events = {}
    updated_tx, updated_rx = anyio.create_memory_object_stream(1000)
    changed_tx, changed_rx = anyio.create_memory_object_stream(1000)
    events["updated"], events["list_changed"] = updated_rx, changed_rx

    async def on_message(message):
        method = getattr(message, "method", None)
        if method == "notifications/resources/updated":
            await updated_tx.send(message.params.uri)
        elif method == "notifications/resources/list_changed":
            await changed_tx.send(True)

    server = args.url or StdioServerParameters(
        command=args.bin,
        args=["--vault", args.vault, "--data-dir", args.data, "mcp"],
        env={"VAULTCHAT_LOG": "vaultchat=debug"},
    )
    async with Client(server, mode=mode, message_handler=on_message) as client:
        era = client.protocol_version
        check(era == ("2025-11-25" if mode == "legacy" else "2026-07-28"), f"{mode}: era {era}")
        caps = client.server_capabilities
        check(caps.resources is not None and caps.resources.subscribe and caps.resources.list_changed,
              f"{mode}: resources advertised with subscribe and listChanged")
        check(caps.prompts is not None, f"{mode}: prompts advertised")
        resources, identical, pages = await listing_checks(client, mode, args)
        await refusal_checks(client, mode)
        if mode == "legacy":
            await legacy_subscription_checks(client, mode, args, resources, events)
        else:
            await listen_checks(client, mode, args, resources)
        prompts = await prompt_checks(client, mode, args)
        return {"listed": len(resources), "identical": identical, "pages": pages, "prompts": prompts}


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--expect-notes", type=int, required=True)
    ap.add_argument("--url")
    args = ap.parse_args()
    per_mode = {}
    for mode in ("auto", "legacy"):
        try:
            per_mode[mode] = await session(args, mode)
        except Exception:
            check(False, f"{mode}: session crashed: {traceback.format_exc(limit=6)[-1500:]}")
    print(json.dumps({
        "checks": len(checks),
        "failures": failures,
        "modes": per_mode,
        "update_latency_s": latencies,
        "list_changed_latency_s": list_changed,
    }))
    sys.exit(1 if failures else 0)


asyncio.run(main())
