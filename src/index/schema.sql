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
    racy      INTEGER NOT NULL        -- 1: modified too close to indexing for (mtime, size) to be trusted
);
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
