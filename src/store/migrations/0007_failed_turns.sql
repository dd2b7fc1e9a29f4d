-- Turns that ended with a provider error. Their messages (from first_seq to last_seq of the
-- session's messages) stay in the transcript but are no longer sent upstream: a request the
-- server refused (or that broke it) is not sent again by every later turn. `error` is the
-- sentence the person saw.
CREATE TABLE failed_turns (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    first_seq  INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL,
    error      TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    PRIMARY KEY (session_id, first_seq)
);
