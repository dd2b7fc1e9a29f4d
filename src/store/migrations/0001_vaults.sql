-- Vaults this installation has opened. Later tables (sessions, permission rules, revisions) refer to
-- a vault by this id, which is derived from the vault's canonical path.
CREATE TABLE vaults (
    id          TEXT PRIMARY KEY,
    root        TEXT NOT NULL,
    first_seen  INTEGER NOT NULL,  -- unix seconds
    last_opened INTEGER NOT NULL   -- unix seconds
);
