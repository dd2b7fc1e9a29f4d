-- Whether a usage row's token counts are vaultchat's estimate rather than the provider's: some
-- OpenAI-compatible servers (llama-cpp-python) report no usage, and the counts are then estimated
-- from the request and the reply. Rows written before this column existed were reported (0).
ALTER TABLE usage ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0 CHECK (estimated IN (0, 1));
