//! The note revision log.

use super::{Store, StoreError};
use rusqlite::{OptionalExtension, params};

pub use crate::protocol::Actor;

impl Actor {
    fn as_str(self) -> &'static str {
        match self {
            Actor::User => "user",
            Actor::Agent => "agent",
            Actor::External => "external",
        }
    }

    fn parse(text: &str) -> Actor {
        match text {
            "user" => Actor::User,
            "agent" => Actor::Agent,
            _ => Actor::External,
        }
    }
}

/// A revision to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRevision<'a> {
    pub vault_id: &'a str,
    pub path: &'a str,
    pub at_unix_ms: i64,
    pub actor: Actor,
    pub tool: Option<&'a str>,
    pub added: u64,
    pub removed: u64,
    pub before_rev: Option<&'a str>,
    pub after_rev: Option<&'a str>,
    pub before_text: Option<&'a str>,
}

pub use crate::protocol::Revision;

/// Deltas since the last whole copy before a revision is stored whole again: bounds the work of
/// reading an old revision (at most this many deltas applied).
const MAX_CHAIN: i64 = 32;

/// How much history is kept (`[history]` in config.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Revisions older than this many days are dropped.
    pub keep_days: u32,
    /// When the stored history of a vault is larger than this, its oldest revisions are dropped.
    pub max_bytes: u64,
}

/// What the history of a vault takes (for `vaultchat doctor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct HistorySize {
    pub revisions: u64,
    /// Bytes of stored text (whole copies and deltas).
    pub bytes: u64,
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    pub revisions: u64,
}

/// How long a run of the person's saves of one note counts as one revision (five minutes, the
/// interval of Obsidian's file recovery snapshots).
pub const USER_SESSION_MS: i64 = 5 * 60 * 1000;

impl Store {
    /// Record a revision. The text before the write is stored as a line delta against the previous
    /// revision of the same note where that is smaller, and whole every [`MAX_CHAIN`] revisions.
    pub fn record_revision(&self, rev: &NewRevision<'_>) -> Result<i64, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let (base_id, delta, chain_len) = match rev.before_text {
            Some(text) => self.delta_base(rev.vault_id, rev.path, text)?,
            None => (None, None, 0),
        };
        let whole = if delta.is_some() {
            None
        } else {
            rev.before_text
        };
        tx.execute(
            // The sequence is computed inside the INSERT: one statement holds the write lock from
            // reading the vault's highest number to writing the next, so two processes never
            // take the same one and the order is the order of the writes, whatever the clocks say.
            "INSERT INTO revisions (vault_id, path, at_unix_ms, actor, tool, added, removed, before_rev, after_rev, before_text, base_id, before_delta, chain_len, seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                     (SELECT COALESCE(MAX(seq), 0) + 1 FROM revisions WHERE vault_id = ?1))",
            params![
                rev.vault_id,
                rev.path,
                rev.at_unix_ms,
                rev.actor.as_str(),
                rev.tool,
                i64::try_from(rev.added).unwrap_or(i64::MAX),
                i64::try_from(rev.removed).unwrap_or(i64::MAX),
                rev.before_rev,
                rev.after_rev,
                whole,
                base_id,
                delta,
                chain_len,
            ],
        )?;
        let id = self.conn.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// The revision to store `text` against, the delta and the new chain length; no base when the
    /// whole text is the better choice.
    fn delta_base(
        &self,
        vault_id: &str,
        path: &str,
        text: &str,
    ) -> Result<(Option<i64>, Option<String>, i64), StoreError> {
        let previous: Option<(i64, i64)> = self
            .conn
            .prepare_cached(
                "SELECT id, chain_len FROM revisions WHERE vault_id = ?1 AND path = ?2
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![vault_id, path], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((base_id, chain)) = previous else {
            return Ok((None, None, 0));
        };
        if chain + 1 >= MAX_CHAIN {
            return Ok((None, None, 0));
        }
        let Some(base_text) = self.revision_text(base_id)? else {
            return Ok((None, None, 0));
        };
        let delta = delta::encode(&base_text, text);
        // A delta about as large as the text buys nothing and costs a read.
        if delta.len() * 2 > text.len() {
            return Ok((None, None, 0));
        }
        Ok((Some(base_id), Some(delta), chain + 1))
    }

    /// Record a save from the person's editor. Saves follow one another a second apart while
    /// they type (autosave), so a save that continues the newest revision of the note — also the
    /// person's, ending at this save's starting point, less than [`USER_SESSION_MS`] ago — extends
    /// it instead of adding a row with another full copy of the note: that row keeps the text
    /// before the whole run of saves (what /rewind restores), and its line counts add up.
    pub fn record_user_revision(&self, rev: &NewRevision<'_>) -> Result<i64, StoreError> {
        let newest: Option<(i64, String, Option<String>, i64)> = self
            .conn
            .query_row(
                "SELECT id, actor, after_rev, at_unix_ms FROM revisions
                 WHERE vault_id = ?1 AND path = ?2 ORDER BY seq DESC LIMIT 1",
                params![rev.vault_id, rev.path],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                other => Err(other),
            })?;
        if let Some((id, actor, after_rev, at)) = newest
            && actor == Actor::User.as_str()
            && rev.actor == Actor::User
            && after_rev.as_deref() == rev.before_rev
            && rev.before_rev.is_some()
            && rev.at_unix_ms.saturating_sub(at) < USER_SESSION_MS
        {
            self.conn.execute(
                "UPDATE revisions SET at_unix_ms = ?2, after_rev = ?3,
                 added = added + ?4, removed = removed + ?5 WHERE id = ?1",
                params![
                    id,
                    rev.at_unix_ms,
                    rev.after_rev,
                    i64::try_from(rev.added).unwrap_or(i64::MAX),
                    i64::try_from(rev.removed).unwrap_or(i64::MAX),
                ],
            )?;
            return Ok(id);
        }
        self.record_revision(rev)
    }

    /// The revisions of one note, newest first: in the order they were written (the vault's
    /// sequence), not by their timestamps, which two processes' clocks may disagree on.
    pub fn revisions_of(
        &self,
        vault_id: &str,
        path: &str,
        limit: usize,
    ) -> Result<Vec<Revision>, StoreError> {
        self.query_rows(
            "SELECT id, path, at_unix_ms, actor, tool, added, removed, before_rev, after_rev
             FROM revisions WHERE vault_id = ?1 AND path = ?2
             ORDER BY seq DESC LIMIT ?3",
            params![vault_id, path, i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| {
                Ok(Revision {
                    id: r.get(0)?,
                    path: r.get(1)?,
                    at_unix_ms: r.get(2)?,
                    actor: Actor::parse(&r.get::<_, String>(3)?),
                    tool: r.get(4)?,
                    added: r.get::<_, i64>(5)?.unsigned_abs(),
                    removed: r.get::<_, i64>(6)?.unsigned_abs(),
                    before_rev: r.get(7)?,
                    after_rev: r.get(8)?,
                })
            },
        )
    }

    /// The note's text before revision `id` (None when the note did not exist before it): the
    /// whole copy, or the nearest whole copy with the deltas after it applied.
    pub fn revision_text(&self, id: i64) -> Result<Option<String>, StoreError> {
        let mut deltas: Vec<String> = Vec::new();
        let mut next = id;
        loop {
            let (whole, base, delta): (Option<String>, Option<i64>, Option<String>) = self
                .conn
                .prepare_cached(
                    "SELECT before_text, base_id, before_delta FROM revisions WHERE id = ?1",
                )?
                .query_row([next], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            match (whole, base, delta) {
                (Some(text), _, _) => {
                    let mut text = text;
                    for delta in deltas.iter().rev() {
                        text = delta::apply(&text, delta).map_err(|reason| {
                            StoreError::InvalidValue {
                                what: "revision delta",
                                value: format!("revision {id}: {reason}"),
                                allowed: "a delta written by this version of vaultchat",
                            }
                        })?;
                    }
                    return Ok(Some(text));
                }
                (None, Some(base), Some(delta)) => {
                    deltas.push(delta);
                    next = base;
                }
                // Only the first revision may say "did not exist"; a chain never ends in one.
                (None, _, _) if deltas.is_empty() => return Ok(None),
                (None, _, _) => {
                    return Err(StoreError::InvalidValue {
                        what: "revision chain",
                        value: format!(
                            "revision {id} builds on revision {next}, which has no text"
                        ),
                        allowed: "a chain that ends in a whole copy",
                    });
                }
            }
        }
    }

    /// How much history `vault_id` holds.
    pub fn history_size(&self, vault_id: &str) -> Result<HistorySize, StoreError> {
        let (revisions, bytes): (i64, i64) = self.conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(COALESCE(length(CAST(before_text AS BLOB)), 0) + COALESCE(length(CAST(before_delta AS BLOB)), 0)), 0)
             FROM revisions WHERE vault_id = ?1",
            [vault_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(HistorySize {
            revisions: revisions.unsigned_abs(),
            bytes: bytes.unsigned_abs(),
        })
    }

    /// Drops the history of `vault_id` that `retention` does not keep: revisions older than
    /// `keep_days` (counted back from `now_ms`), then the oldest until the rest fit in `max_bytes`.
    /// A kept revision stored as a delta against a dropped one is first stored whole.
    pub fn prune_history(
        &self,
        vault_id: &str,
        retention: Retention,
        now_ms: i64,
    ) -> Result<Pruned, StoreError> {
        let cutoff_ms = now_ms.saturating_sub(i64::from(retention.keep_days) * crate::time::DAY_MS);
        let by_age: Option<i64> = self.conn.query_row(
            "SELECT MAX(id) FROM revisions WHERE vault_id = ?1 AND at_unix_ms < ?2",
            params![vault_id, cutoff_ms],
            |r| r.get(0),
        )?;
        let mut pruned = Pruned::default();
        if let Some(cut) = by_age {
            pruned.revisions += self.drop_through(vault_id, cut)?;
        }
        let size = self.history_size(vault_id)?;
        if size.bytes > retention.max_bytes {
            // The oldest revisions whose text adds up to the excess (and a tenth more, so that a
            // vault at its limit is not pruned on every write).
            let excess = size.bytes - retention.max_bytes + retention.max_bytes / 10;
            let mut stmt = self.conn.prepare(
                "SELECT id, COALESCE(length(CAST(before_text AS BLOB)), 0) + COALESCE(length(CAST(before_delta AS BLOB)), 0)
                 FROM revisions WHERE vault_id = ?1 ORDER BY id",
            )?;
            let mut rows = stmt.query([vault_id])?;
            let mut freed = 0u64;
            let mut cut = None;
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                let bytes: i64 = row.get(1)?;
                freed += bytes.unsigned_abs();
                cut = Some(id);
                if freed >= excess {
                    break;
                }
            }
            drop(rows);
            drop(stmt);
            if let Some(cut) = cut {
                pruned.revisions += self.drop_through(vault_id, cut)?;
            }
        }
        Ok(pruned)
    }

    /// Deletes the revisions of `vault_id` with ids up to `cut`, first storing whole every kept
    /// revision whose delta chain runs through a deleted one.
    fn drop_through(&self, vault_id: &str, cut: i64) -> Result<u64, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let orphans: Vec<i64> = {
            let mut stmt = self.conn.prepare(
                "SELECT id FROM revisions WHERE vault_id = ?1 AND id > ?2 AND base_id IS NOT NULL AND base_id <= ?2 ORDER BY id",
            )?;
            stmt.query_map(params![vault_id, cut], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        for id in orphans {
            let text = self.revision_text(id)?;
            self.conn.execute(
                "UPDATE revisions SET before_text = ?2, before_delta = NULL, base_id = NULL, chain_len = 0 WHERE id = ?1",
                params![id, text],
            )?;
        }
        let deleted = self.conn.execute(
            "DELETE FROM revisions WHERE vault_id = ?1 AND id <= ?2",
            params![vault_id, cut],
        )?;
        tx.commit()?;
        Ok(deleted as u64)
    }
}

/// Line deltas: how to make one text from another, as a JSON array of steps: a positive number
/// copies that many lines of the base, a negative one skips that many, a string is inserted as is.
mod delta {
    use serde_json::Value;

    pub fn encode(base: &str, target: &str) -> String {
        // Lines cut exactly as `apply` cuts them (similar's own line splitter also breaks at a
        // lone `\r`, which `apply` would not reproduce).
        let old: Vec<&str> = base.split_inclusive('\n').collect();
        let new: Vec<&str> = target.split_inclusive('\n').collect();
        let diff = similar::TextDiff::configure()
            .timeout(std::time::Duration::from_millis(200))
            .diff_slices(&old, &new);
        let mut steps: Vec<Value> = Vec::new();
        for op in diff.ops() {
            match *op {
                similar::DiffOp::Equal { len, .. } => steps.push(Value::from(len)),
                similar::DiffOp::Delete { old_len, .. } => {
                    steps.push(Value::from(-(old_len as i64)));
                }
                similar::DiffOp::Insert {
                    new_index, new_len, ..
                } => steps.push(Value::from(lines(&diff, new_index, new_len))),
                similar::DiffOp::Replace {
                    old_len,
                    new_index,
                    new_len,
                    ..
                } => {
                    steps.push(Value::from(-(old_len as i64)));
                    steps.push(Value::from(lines(&diff, new_index, new_len)));
                }
            }
        }
        Value::Array(steps).to_string()
    }

    fn lines(diff: &similar::TextDiff<'_, '_, str>, start: usize, len: usize) -> String {
        (start..start + len)
            .filter_map(|index| diff.new_slice(index))
            .collect()
    }

    pub fn apply(base: &str, delta: &str) -> Result<String, String> {
        let steps: Vec<Value> =
            serde_json::from_str(delta).map_err(|e| format!("unreadable delta: {e}"))?;
        let mut lines = base.split_inclusive('\n');
        let mut out = String::with_capacity(base.len());
        for step in steps {
            match step {
                Value::Number(n) => {
                    let n = n.as_i64().ok_or("a step is not a whole number")?;
                    for _ in 0..n.unsigned_abs() {
                        let line = lines.next().ok_or("the delta runs past the base text")?;
                        if n > 0 {
                            out.push_str(line);
                        }
                    }
                }
                Value::String(text) => out.push_str(&text),
                _ => return Err("a step is neither a number nor text".into()),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_user_saves_is_one_revision_with_the_text_before_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let save =
            |at, before: &'static str, after: &'static str, text: &'static str| NewRevision {
                vault_id: "v",
                path: "a.md",
                at_unix_ms: at,
                actor: Actor::User,
                tool: None,
                added: 1,
                removed: 0,
                before_rev: Some(before),
                after_rev: Some(after),
                before_text: Some(text),
            };
        let first = store
            .record_user_revision(&save(1_000, "r0", "r1", "v0\n"))
            .unwrap();
        let joined = store
            .record_user_revision(&save(2_000, "r1", "r2", "v1\n"))
            .unwrap();
        assert_eq!(first, joined);
        let revs = store.revisions_of("v", "a.md", 10).unwrap();
        assert_eq!(revs.len(), 1);
        assert_eq!(revs[0].after_rev.as_deref(), Some("r2"));
        assert_eq!(revs[0].added, 2);
        assert_eq!(store.revision_text(first).unwrap().as_deref(), Some("v0\n"));
        // After a pause longer than a session, or when the chain breaks (another writer), a new row.
        let later = store
            .record_user_revision(&save(2_000 + USER_SESSION_MS, "r2", "r3", "v2\n"))
            .unwrap();
        assert_ne!(later, first);
        let broken = store
            .record_user_revision(&save(2_001 + USER_SESSION_MS, "rX", "r4", "v3\n"))
            .unwrap();
        assert_ne!(broken, later);
        // An agent revision in between is never extended.
        let mut agent = save(2_002 + USER_SESSION_MS, "r4", "r5", "v4\n");
        agent.actor = Actor::Agent;
        let agent_id = store.record_revision(&agent).unwrap();
        let after_agent = store
            .record_user_revision(&save(2_003 + USER_SESSION_MS, "r5", "r6", "v5\n"))
            .unwrap();
        assert_ne!(after_agent, agent_id);
        assert_eq!(store.revisions_of("v", "a.md", 10).unwrap().len(), 5);
    }

    #[test]
    fn revisions_round_trip_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let mut rev = NewRevision {
            vault_id: "v",
            path: "a.md",
            at_unix_ms: 1,
            actor: Actor::Agent,
            tool: Some("update_note"),
            added: 2,
            removed: 1,
            before_rev: None,
            after_rev: Some("r1"),
            before_text: None,
        };
        let first = store.record_revision(&rev).unwrap();
        rev.at_unix_ms = 2;
        rev.actor = Actor::External;
        rev.tool = None;
        rev.before_rev = Some("r1");
        rev.before_text = Some("old\n");
        let second = store.record_revision(&rev).unwrap();
        let revs = store.revisions_of("v", "a.md", 10).unwrap();
        assert_eq!(
            revs.iter().map(|r| r.id).collect::<Vec<_>>(),
            [second, first]
        );
        assert_eq!(revs[0].actor, Actor::External);
        assert_eq!(revs[1].tool.as_deref(), Some("update_note"));
        assert_eq!(
            store.revision_text(second).unwrap().as_deref(),
            Some("old\n")
        );
        assert_eq!(store.revision_text(first).unwrap(), None);
        assert!(store.revisions_of("other", "a.md", 10).unwrap().is_empty());
    }

    #[test]
    fn revision_order_is_write_order_whatever_the_clocks_say() {
        // Two connections to one database, as the app and `vaultchat mcp` hold: the second
        // writer's clock is an hour behind the first's.
        let dir = tempfile::tempdir().unwrap();
        let app = Store::open(&dir.path().join("db")).unwrap();
        let mcp = Store::open(&dir.path().join("db")).unwrap();
        let hour = 3_600_000;
        let first = record(&app, "a.md", 10 * hour, Some("one\n"));
        let second = record(&mcp, "a.md", 9 * hour, Some("two\n"));
        let third = record(&app, "a.md", 10 * hour + 1, Some("three\n"));
        let fourth = record(&mcp, "a.md", 9 * hour + 1, Some("four\n"));
        // Another vault's revisions do not take this vault's numbers.
        let mut other = NewRevision {
            vault_id: "w",
            path: "a.md",
            at_unix_ms: 0,
            actor: Actor::Agent,
            tool: None,
            added: 0,
            removed: 0,
            before_rev: None,
            after_rev: None,
            before_text: None,
        };
        mcp.record_revision(&other).unwrap();
        other.at_unix_ms = 1;
        app.record_revision(&other).unwrap();
        for store in [&app, &mcp] {
            let order: Vec<i64> = store
                .revisions_of("v", "a.md", 10)
                .unwrap()
                .iter()
                .map(|r| r.id)
                .collect();
            assert_eq!(order, [fourth, third, second, first]);
        }
        let seqs: Vec<(String, i64)> = {
            let mut stmt = app
                .connection()
                .prepare("SELECT vault_id, seq FROM revisions ORDER BY id")
                .unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let seqs: Vec<(&str, i64)> = seqs.iter().map(|(v, s)| (v.as_str(), *s)).collect();
        assert_eq!(
            seqs,
            [("v", 1), ("v", 2), ("v", 3), ("v", 4), ("w", 1), ("w", 2)]
        );
        // A save from the person whose clock is behind still extends the newest revision only
        // when that one is theirs: the newest is the last written, not the latest stamped.
        let save = |at, before: &'static str, after: &'static str| NewRevision {
            vault_id: "v",
            path: "b.md",
            at_unix_ms: at,
            actor: Actor::User,
            tool: None,
            added: 1,
            removed: 0,
            before_rev: Some(before),
            after_rev: Some(after),
            before_text: Some("b\n"),
        };
        let user = app
            .record_user_revision(&save(10 * hour, "r0", "r1"))
            .unwrap();
        let mut agent = save(9 * hour, "r1", "r2");
        agent.actor = Actor::Agent;
        let agent = mcp.record_revision(&agent).unwrap();
        let next = app
            .record_user_revision(&save(10 * hour + 1, "r2", "r3"))
            .unwrap();
        assert_ne!(
            next, user,
            "a save after the agent's write extended the older run"
        );
        let order: Vec<i64> = app
            .revisions_of("v", "b.md", 10)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(order, [next, agent, user]);
    }

    #[test]
    fn the_sequence_migration_keeps_the_order_shown_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        {
            let mut conn =
                crate::store::open_connection(&path, crate::store::Journal::Wal).unwrap();
            crate::store::apply_migrations(&mut conn, &crate::store::MIGRATIONS[..11]).unwrap();
            for (vault, at) in [("v", 30), ("v", 10), ("w", 5), ("v", 20), ("v", 10)] {
                conn.execute(
                    "INSERT INTO revisions (vault_id, path, at_unix_ms, actor, added, removed)
                     VALUES (?1, 'a.md', ?2, 'agent', 0, 0)",
                    params![vault, at],
                )
                .unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        let order: Vec<(i64, i64)> = store
            .revisions_of("v", "a.md", 10)
            .unwrap()
            .iter()
            .map(|r| (r.at_unix_ms, r.id))
            .collect();
        // Newest first as before: by time, then by id.
        assert_eq!(order, [(30, 1), (20, 4), (10, 5), (10, 2)]);
        // A new revision follows them all, even with an older stamp.
        let new = record(&store, "a.md", 0, None);
        assert_eq!(store.revisions_of("v", "a.md", 1).unwrap()[0].id, new);
    }

    /// A small deterministic generator for edit sequences.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, below: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) as usize) % below.max(1)
        }
    }

    /// A random edit of `text`: replace, insert or delete a line, sometimes without a final
    /// newline, with CR and CRLF lines mixed in.
    fn edit(text: &str, rng: &mut Lcg, step: usize) -> String {
        let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
        let at = rng.next(lines.len() + 1);
        match rng.next(4) {
            0 if !lines.is_empty() => {
                let at = at.min(lines.len() - 1);
                lines[at] = format!("changed {step}\r\n");
            }
            1 if !lines.is_empty() => {
                lines.remove(at.min(lines.len() - 1));
            }
            2 => lines.insert(at, format!("lone\rcr {step}\n")),
            _ => lines.insert(at, format!("line {step}\n")),
        }
        let mut out = lines.concat();
        if step.is_multiple_of(7) {
            out = out.trim_end_matches('\n').to_string();
        }
        out
    }

    fn record(store: &Store, path: &str, at: i64, before: Option<&str>) -> i64 {
        store
            .record_revision(&NewRevision {
                vault_id: "v",
                path,
                at_unix_ms: at,
                actor: Actor::Agent,
                tool: Some("update_note"),
                added: 1,
                removed: 1,
                before_rev: None,
                after_rev: None,
                before_text: before,
            })
            .unwrap()
    }

    #[test]
    fn deltas_give_back_every_text_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let mut rng = Lcg(7);
        let mut text: String = (0..200)
            .map(|i| format!("paragraph {i} of the note\n"))
            .collect();
        let mut recorded = Vec::new();
        recorded.push((record(&store, "a.md", 0, None), None));
        for step in 0..150 {
            recorded.push((
                record(&store, "a.md", step as i64 + 1, Some(&text)),
                Some(text.clone()),
            ));
            text = edit(&text, &mut rng, step);
            // Another note's revisions interleave without joining this chain.
            record(&store, "b.md", step as i64, Some("other\n"));
        }
        for (id, want) in &recorded {
            assert_eq!(store.revision_text(*id).unwrap(), *want, "revision {id}");
        }
        let deltas: i64 = store
            .connection()
            .query_row(
                "SELECT COUNT(*) FROM revisions WHERE path = 'a.md' AND before_delta IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let longest: i64 = store
            .connection()
            .query_row("SELECT MAX(chain_len) FROM revisions", [], |r| r.get(0))
            .unwrap();
        assert!(deltas > 100, "only {deltas} of 150 stored as deltas");
        assert!(longest < MAX_CHAIN, "chain of {longest}");
    }

    #[test]
    fn pruning_keeps_what_is_left_readable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let day = 86_400_000;
        let mut text = String::from("start\n");
        let mut ids = Vec::new();
        for step in 0..40 {
            // Twenty revisions 100 days old, twenty from today.
            let at = if step < 20 { 0 } else { 100 * day };
            ids.push((record(&store, "a.md", at, Some(&text)), text.clone()));
            text.push_str(&format!("line {step}\n"));
        }
        let retention = Retention {
            keep_days: 90,
            max_bytes: 1 << 30,
        };
        let pruned = store.prune_history("v", retention, 100 * day).unwrap();
        assert_eq!(pruned.revisions, 20);
        for (id, want) in &ids[20..] {
            assert_eq!(
                store.revision_text(*id).unwrap().as_deref(),
                Some(want.as_str())
            );
        }
        assert_eq!(store.revisions_of("v", "a.md", 100).unwrap().len(), 20);
        // A size cap drops the oldest until the rest fit, and the rest stay readable.
        let before = store.history_size("v").unwrap();
        let tight = Retention {
            keep_days: 90,
            max_bytes: before.bytes / 2,
        };
        let pruned = store.prune_history("v", tight, 100 * day).unwrap();
        assert!(pruned.revisions > 0);
        let after = store.history_size("v").unwrap();
        assert!(after.bytes <= tight.max_bytes, "{after:?} > {tight:?}");
        let kept = store.revisions_of("v", "a.md", 100).unwrap();
        assert!(!kept.is_empty(), "the cap dropped everything");
        for rev in &kept {
            let want = &ids.iter().find(|(id, _)| *id == rev.id).unwrap().1;
            assert_eq!(
                store.revision_text(rev.id).unwrap().as_deref(),
                Some(want.as_str())
            );
        }
    }
}
