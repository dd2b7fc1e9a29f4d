-- The person's answer about a vault's plugins (.vaultchat/plugins.toml), for one exact content of
-- that file: its SHA-256 over the raw bytes. Any other content has no answer, so a changed file is
-- untrusted until the person trusts it again. One row per vault: the latest answer.
CREATE TABLE plugin_trust (
    vault_id    TEXT PRIMARY KEY,
    file_sha256 TEXT NOT NULL,
    answer      TEXT NOT NULL CHECK (answer IN ('trusted', 'declined')),
    answered_ms INTEGER NOT NULL             -- unix milliseconds
);
