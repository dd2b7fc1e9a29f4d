-- Permission rules with scope *always* (docs/permissions.md), per vault. Config rules live in the config
-- file and session rules in memory; neither is stored here.
CREATE TABLE rules (
    id         INTEGER PRIMARY KEY,
    vault_id   TEXT NOT NULL,
    tool       TEXT NOT NULL,               -- exact tool name, or '*' for every tool
    path_glob  TEXT,                        -- NULL: every call of the tool
    effect     TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
    created_ms INTEGER NOT NULL             -- unix milliseconds
);
-- One rule per (vault, tool, glob, effect). A plain UNIQUE constraint would treat two NULL globs
-- as different and let the same tool-wide rule be stored twice, so the index compares the glob
-- with NULL folded to '' (the store never writes an empty glob).
CREATE UNIQUE INDEX rules_unique ON rules (vault_id, tool, ifnull(path_glob, ''), effect);
