-- One row per write to a note made through vaultchat (and per external change the watcher saw),
-- for get_block_history, /rewind and the audit trail.
CREATE TABLE revisions (
    id          INTEGER PRIMARY KEY,
    vault_id    TEXT NOT NULL,
    path        TEXT NOT NULL,              -- vault-relative, '/' separators
    at_unix_ms  INTEGER NOT NULL,
    actor       TEXT NOT NULL CHECK (actor IN ('user', 'agent', 'external')),
    tool        TEXT,                       -- the tool that wrote, if any
    added       INTEGER NOT NULL,           -- lines added
    removed     INTEGER NOT NULL,           -- lines removed
    before_rev  TEXT,                       -- revision token before the write; NULL: did not exist
    after_rev   TEXT,                       -- revision token after the write; NULL: deleted
    before_text TEXT                        -- the whole note before the write, to restore it
);
CREATE INDEX revisions_by_path ON revisions (vault_id, path, at_unix_ms);
