-- Chat sessions with their messages and the token usage of every model response. A session
-- belongs to one vault (vaults.id); it is not a foreign key so that a session can be written
-- before, or without, the vault row (`vaultchat ask` on a folder opened for the first time).
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,            -- 16 lower-case hex digits, short enough to type
    vault_id   TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    provider   TEXT,                        -- NULL: not known when the session began
    model      TEXT,
    created_ms INTEGER NOT NULL,            -- unix milliseconds
    updated_ms INTEGER NOT NULL             -- unix milliseconds of the last message
);
CREATE INDEX sessions_by_vault ON sessions (vault_id, updated_ms);
CREATE INDEX sessions_by_update ON sessions (updated_ms);

-- The conversation, in order. `content` is the JSON array of content blocks (text, tool calls,
-- tool results, images) exactly as the agent wrote it; the store does not look inside.
CREATE TABLE messages (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,            -- 1, 2, 3 … within the session
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    UNIQUE (session_id, seq)                -- also the index the cascade and the reads use
);

-- One row per model response: what it cost in tokens.
CREATE TABLE usage (
    id                 INTEGER PRIMARY KEY,
    session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    at_ms              INTEGER NOT NULL,
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL
);
CREATE INDEX usage_by_session ON usage (session_id);
CREATE INDEX usage_by_time ON usage (at_ms);

-- The plain text of each message's text blocks, for full-text search over past sessions.
-- rowid = messages.id; the trigger keeps it in step when messages go (also by the cascade).
CREATE VIRTUAL TABLE message_text USING fts5(
    text,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER message_text_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_text WHERE rowid = old.id;
END;
