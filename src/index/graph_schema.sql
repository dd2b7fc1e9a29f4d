-- The link graph of one vault's index (index/graph.rs), in a file of its own beside the index
-- (`<index>.graph.db`, attached to the index's connection as `graph`): a cold build fills it on a
-- thread and connection of its own while the notes and their full-text rows are written
-- (decisions §72). Every other write goes through the index's connection, in the same
-- transaction as the notes' rows (SQLite commits the two files atomically with a super-journal).
-- Every link of every note, resolved to the note it opens.
CREATE TABLE IF NOT EXISTS links (
    note_id   INTEGER NOT NULL,       -- the linking note
    from_path TEXT NOT NULL,          -- its path (so backlinks sort and filter on an index alone)
    line      INTEGER NOT NULL,       -- 1-based
    kind      INTEGER NOT NULL,       -- 0 [[wikilink]], 1 ![[embed]], 2 [markdown](link.md), 3 [[link]] in a property
    target    TEXT NOT NULL,          -- as written, without #heading/^block/|alias (Markdown: decoded)
    name_key  TEXT NOT NULL,          -- the target's last segment folded: which links a note's name can change
    to_path   TEXT,                   -- the note it opens; NULL when unresolved or an attachment
    state     INTEGER NOT NULL,       -- 0 resolved, 1 ambiguous (to_path: Obsidian's pick), 2 unresolved, 3 attachment
    context   TEXT NOT NULL           -- the linking line
);
-- rowid: `note_id << 14` plus the link's place in the note (graph::link_rowids), so a note's
-- links are a range of rowids and need no index of their own.
-- The same list as graph::INDEXES, which a cold build drops and creates again.
CREATE INDEX IF NOT EXISTS links_to ON links (to_path, from_path, line) WHERE to_path IS NOT NULL;
-- Links to no note yet (unresolved or pending), by name: what a new note's name can resolve.
CREATE INDEX IF NOT EXISTS links_waiting ON links (name_key) WHERE to_path IS NULL AND state != 3;
CREATE INDEX IF NOT EXISTS links_unresolved ON links (from_path, line) WHERE state = 2;
-- `build`: the cold build that filled this file, the same value as the index's meta
-- `graph_build`. Another value means the two files are not of one build: the index starts again.
CREATE TABLE IF NOT EXISTS graph_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
