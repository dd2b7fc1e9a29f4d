-- A vault plugin trust covers more than the plugins file: every file the plugins would run or load
-- from inside the vault (src/mcp/plugins/covered.rs). `file_sha256` now holds the SHA-256 of that
-- whole covered set, and `covered` lists it (a JSON object: vault-relative path to "sha256:HEX",
-- "link:TARGET" or "special"), so `vaultchat doctor` can name the file that changed. A row written
-- before this migration has an empty list and a hash of the plugins file alone, which no covered
-- set matches: those vaults are asked again.
ALTER TABLE plugin_trust ADD COLUMN covered TEXT NOT NULL DEFAULT '';
