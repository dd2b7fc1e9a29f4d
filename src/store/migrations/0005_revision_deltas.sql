-- History stored as deltas: a revision's text before the write is kept either whole (`before_text`,
-- a keyframe) or as a line delta (`before_delta`) against the text before revision `base_id` (the
-- previous revision of the same note). `chain_len` counts deltas since the last keyframe, which
-- bounds how many deltas a read applies.
ALTER TABLE revisions ADD COLUMN base_id INTEGER;
ALTER TABLE revisions ADD COLUMN before_delta TEXT;
ALTER TABLE revisions ADD COLUMN chain_len INTEGER NOT NULL DEFAULT 0;
CREATE INDEX revisions_by_id_path ON revisions (vault_id, path, id);
