-- Revisions are ordered by a per-vault sequence, not by their timestamps: two processes writing to
-- one vault (the app and `vaultchat mcp`) stamp revisions with clocks that need not agree, and a
-- clock set back would put a new revision behind older ones in /rewind and the history. `seq` is
-- one more than the vault's highest, assigned inside the INSERT itself (one statement under
-- SQLite's write lock), so it is the order in which revisions were written.
ALTER TABLE revisions ADD COLUMN seq INTEGER;
-- Existing rows keep the order they were shown in until now: time, then id.
UPDATE revisions SET seq = (
    SELECT COUNT(*) FROM revisions AS earlier
    WHERE earlier.vault_id = revisions.vault_id
      AND (earlier.at_unix_ms < revisions.at_unix_ms
           OR (earlier.at_unix_ms = revisions.at_unix_ms AND earlier.id <= revisions.id))
);
CREATE UNIQUE INDEX revisions_by_seq ON revisions (vault_id, seq);
CREATE INDEX revisions_by_path_seq ON revisions (vault_id, path, seq);
