-- Long sessions: what the agent sends upstream in place of the older part of a conversation.
-- Each row is the whole state after one compaction (the latest row is the one in force), so a
-- resumed session reads one row: messages 1..=summarised are replaced by `summary`, and the tool
-- results of messages 1..=shortened are sent shortened. The messages themselves stay stored in
-- full (the transcript and search keep them).
CREATE TABLE compactions (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    at_ms       INTEGER NOT NULL,
    reason      TEXT NOT NULL,            -- threshold, overflow, command, continue_new
    summarised  INTEGER NOT NULL,         -- messages 1..=summarised are replaced by the summary
    shortened   INTEGER NOT NULL,         -- tool results of messages 1..=shortened are shortened
    summary     TEXT                      -- NULL: nothing summarised (yet)
);
CREATE INDEX compactions_by_session ON compactions (session_id, id);

-- A session started with `/continue-new` or `ask --continue-new` names the session it continues.
ALTER TABLE sessions ADD COLUMN parent_id TEXT;
