-- The search index of one vault. Everything here can be rebuilt from the notes, so a schema change
-- simply rebuilds the file (see SCHEMA_VERSION in index/mod.rs).
CREATE TABLE IF NOT EXISTS notes (
    id        INTEGER PRIMARY KEY,
    path      TEXT NOT NULL UNIQUE,   -- vault-relative, '/' separators
    title     TEXT NOT NULL,
    aliases   TEXT NOT NULL,          -- JSON array of the frontmatter aliases
    mtime_ns  INTEGER NOT NULL,
    size      INTEGER NOT NULL,
    hash      INTEGER NOT NULL,       -- xxh3-64 of the file's bytes, as i64 bits
    racy      INTEGER NOT NULL,       -- 1: modified too close to indexing for (mtime, size) to be trusted
    chunked_hash INTEGER,             -- `hash` when the note's chunks were last embedded
    name_keys TEXT NOT NULL DEFAULT '', -- title, file name and aliases, lower-cased, between char(1)s
    file_key  TEXT NOT NULL DEFAULT ''  -- the file name without .md, folded (vault::links::note_file_key)
);
-- The notes a link's name can resolve to, when a sync resolves links again (index/graph.rs).
CREATE INDEX IF NOT EXISTS notes_by_file_key ON notes (file_key);
CREATE TABLE IF NOT EXISTS note_tags (
    tag     TEXT NOT NULL,            -- lower-case, without '#'
    note_id INTEGER NOT NULL,
    PRIMARY KEY (tag, note_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS note_tags_by_note ON note_tags (note_id);
-- rowid = notes.id. The body column holds the note without its frontmatter, with a zero-width
-- space between characters of scripts written without spaces (index/cjk.rs).
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(
    title, aliases, path, tags, body,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- Semantic search: each note cut at its headings, each piece embedded by the configured model.
CREATE TABLE IF NOT EXISTS chunks (
    id      INTEGER PRIMARY KEY,
    note_id INTEGER NOT NULL,
    ord     INTEGER NOT NULL,         -- position in the note
    heading TEXT,                     -- the heading the piece starts with, if any
    text    TEXT NOT NULL,
    hash    INTEGER NOT NULL,         -- xxh3 of `text`
    vector  BLOB NOT NULL             -- little-endian f32, L2-normalised
);
CREATE INDEX IF NOT EXISTS chunks_by_note ON chunks (note_id);
-- The `- [ ]` tasks of each note (vault::markdown::tasks), for `vaultchat tasks` and list_tasks:
-- kept by sync with the note's other rows, so listing them never reads the notes.
CREATE TABLE IF NOT EXISTS tasks (
    note_id INTEGER NOT NULL,
    line    INTEGER NOT NULL,         -- 1-based line of the checkbox
    status  TEXT NOT NULL,            -- open, done, in_progress, cancelled, or the raw character
    text    TEXT NOT NULL,            -- without the checkbox and the date fields
    due     TEXT,                     -- YYYY-MM-DD
    tags    TEXT NOT NULL,            -- the task line's and the note's frontmatter tags, lower-cased, each followed by ' '
    PRIMARY KEY (note_id, line)
) WITHOUT ROWID;
