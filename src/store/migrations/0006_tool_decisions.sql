-- How each tool call of a session was let through or stopped (allowed, approved once/for the
-- session/always, denied, refused), so that a resumed session shows what really happened. The
-- call's id is the model's tool_use id, unique within a session. Sessions stored before this
-- table existed have no rows: their calls show no decision.
CREATE TABLE tool_decisions (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id    TEXT NOT NULL,
    decision   TEXT NOT NULL,
    PRIMARY KEY (session_id, call_id)
);
