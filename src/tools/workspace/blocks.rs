//! The blocks family: list_blocks_in_note, get_block_settings, get_block_history.
//!
//! A block is a fenced code block whose info string carries attributes (```` ```http id=login
//! env=dev ````). These tools describe blocks (their settings and how they changed) but never return
//! a block's body and never run it: a body may hold a request with credentials, and running it is
//! the person's decision, not the model's.

use super::config_files::{self, REDACTED};
use super::{Body, Workspace, internal, read_text, tool};
use crate::store::Revision;
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::Access;
use crate::vault::markdown::{self, CodeBlock};
use crate::vault::note_io;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// How many revisions get_block_history looks at.
const HISTORY_LIMIT: usize = 50;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            "list_blocks_in_note",
            "List code blocks",
            "List the fenced code blocks of one note with their settings: for each, its `index` (0-based, in \
             document order), `id`, language, attributes from the info string (```` ```http id=login env=dev ````), \
             start and end line and the number of body lines. Block bodies are never returned and never run; \
             secret-looking attribute values are redacted.",
            Annotations::READ_ONLY,
            Body::Read(list_blocks_in_note),
        ),
        tool(
            ws,
            "get_block_settings",
            "Get a block's settings",
            "The settings of one fenced code block, chosen by `id` (the block's `id=` attribute) or by `index` \
             (0-based, as list_blocks_in_note numbers them): its attributes, plus, when it has an `env` attribute, \
             which environment file (`envs/NAME.toml`) that is and whether it exists, and when it has a \
             `connection` attribute, whether that connection exists in `connections.toml`. Never the body, never \
             secret values.",
            Annotations::READ_ONLY,
            Body::Read(get_block_settings),
        ),
        tool(
            ws,
            "get_block_history",
            "Get a block's history",
            "The revision history of the note holding the block with this `id` (newest first, up to 50): when, \
             who (agent, user or another program), which tool, lines added and removed, and for each revision \
             whether this block (its info string or body) changed in it. Never the body.",
            Annotations::READ_ONLY,
            Body::Read(get_block_history),
        ),
    ]
}

/// A block's attributes in order, with secret-looking values hidden; the keys hidden go to
/// `redacted`.
fn attributes(block: &CodeBlock, redacted: &mut Vec<String>) -> Vec<Value> {
    block
        .attrs
        .iter()
        .map(|(key, value)| {
            if config_files::is_secret_key(key) && !value.is_empty() {
                redacted.push(key.clone());
                json!({ "key": key, "value": REDACTED })
            } else {
                json!({ "key": key, "value": value })
            }
        })
        .collect()
}

/// How many lines the body has (without its fences).
fn body_lines(text: &str, block: &CodeBlock) -> usize {
    text.get(block.body_span.clone())
        .map_or(0, |body| body.lines().count())
}

/// A block's description: everything but its body.
fn describe(text: &str, index: usize, block: &CodeBlock, redacted: &mut Vec<String>) -> Value {
    json!({
        "index": index,
        "id": block.id,
        "lang": block.lang,
        "attributes": attributes(block, redacted),
        "start_line": block.start_line,
        "end_line": block.end_line,
        "body_lines": body_lines(text, block),
    })
}

// ---------------------------------------------------------------------------------------------
// list_blocks_in_note

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListBlocksArgs {
    /// Vault-relative path, or a title, alias or file name when unambiguous.
    note: String,
}

fn list_blocks_in_note(ws: &Workspace, args: ListBlocksArgs) -> Result<ToolOutput, ToolError> {
    let path = ws.resolve_note(&args.note, Access::Read)?;
    let note = read_text(&path)?;
    let parsed = markdown::parse(&note.text);
    let mut redacted = Vec::new();
    let blocks: Vec<Value> = parsed
        .code_blocks
        .iter()
        .enumerate()
        .map(|(i, b)| describe(&note.text, i, b, &mut redacted))
        .collect();
    redacted.sort_unstable();
    redacted.dedup();
    ToolOutput::json(json!({
        "path": path.rel(),
        "blocks": blocks,
        "total": blocks.len(),
        "redacted": redacted,
        "revision": note.fingerprint.to_revision_string(),
    }))
}

// ---------------------------------------------------------------------------------------------
// get_block_settings

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetBlockSettingsArgs {
    /// Vault-relative path, or a title, alias or file name when unambiguous.
    note: String,
    /// The block's `id` attribute (give this or `index`).
    #[serde(default)]
    id: Option<String>,
    /// The block's 0-based position among the note's code blocks (give this or `id`).
    #[serde(default)]
    index: Option<u32>,
}

/// The block of `blocks` with this id (the first, if several share it).
fn find_by_id<'b>(blocks: &'b [CodeBlock], id: &str) -> Option<(usize, &'b CodeBlock)> {
    blocks
        .iter()
        .enumerate()
        .find(|(_, b)| b.id.as_deref() == Some(id))
}

fn no_such_id(rel: &str, id: &str, blocks: &[CodeBlock]) -> ToolError {
    let ids: Vec<&str> = blocks.iter().filter_map(|b| b.id.as_deref()).collect();
    ToolError::Invalid(format!(
        "`{rel}` has no code block with id `{id}`; its block ids: {}",
        if ids.is_empty() {
            "none (use list_blocks_in_note and pass `index`)".to_string()
        } else {
            ids.join(", ")
        }
    ))
}

fn get_block_settings(ws: &Workspace, args: GetBlockSettingsArgs) -> Result<ToolOutput, ToolError> {
    let path = ws.resolve_note(&args.note, Access::Read)?;
    let note = read_text(&path)?;
    let parsed = markdown::parse(&note.text);
    let blocks = &parsed.code_blocks;
    let (index, block) = match (&args.id, args.index) {
        (Some(id), None) => {
            find_by_id(blocks, id).ok_or_else(|| no_such_id(path.rel(), id, blocks))?
        }
        (None, Some(index)) => {
            let i = index as usize;
            let block = blocks.get(i).ok_or_else(|| {
                ToolError::Invalid(format!(
                    "`{}` has {} code block(s), so there is no block at index {index} (indexes start at 0)",
                    path.rel(),
                    blocks.len()
                ))
            })?;
            (i, block)
        }
        _ => {
            return Err(ToolError::Invalid(
                "give exactly one of `id` or `index` to choose the block".into(),
            ));
        }
    };
    let mut redacted = Vec::new();
    let mut out = describe(&note.text, index, block, &mut redacted);
    let attr = |key: &str| {
        block
            .attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    if let Some(env) = attr("env") {
        out["environment"] = match config_files::environment_exists(ws, env) {
            Ok((file, exists)) => json!({ "name": env, "file": file, "exists": exists }),
            // A bad name is a fact about the block, not a mistake in this call.
            Err(e) => json!({ "name": env, "exists": false, "error": e.to_string() }),
        };
    }
    if let Some(connection) = attr("connection") {
        out["connection"] = match config_files::connection_exists(ws, connection) {
            Ok(exists) => json!({
                "name": connection,
                "file": config_files::CONNECTIONS_FILE,
                "exists": exists,
            }),
            Err(e) => json!({
                "name": connection,
                "file": config_files::CONNECTIONS_FILE,
                "exists": Value::Null,
                "error": e.to_string(),
            }),
        };
    }
    let duplicates = block.id.as_deref().map_or(0, |id| {
        blocks
            .iter()
            .filter(|b| b.id.as_deref() == Some(id))
            .count()
    });
    if duplicates > 1 {
        out["warning"] = json!(format!(
            "{duplicates} blocks share this id; this is the first of them"
        ));
    }
    out["path"] = json!(path.rel());
    out["redacted"] = json!(redacted);
    ToolOutput::json(out)
}

// ---------------------------------------------------------------------------------------------
// get_block_history

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetBlockHistoryArgs {
    /// Vault-relative path, or a title, alias or file name when unambiguous.
    note: String,
    /// The block's `id` attribute.
    id: String,
}

/// A hash of what makes a block this block: its info string and its body. `None` when the text
/// (or the note) has no block with this id.
fn block_hash(text: Option<&str>, id: &str) -> Option<u64> {
    let text = text?;
    let parsed = markdown::parse(text);
    let (_, block) = find_by_id(&parsed.code_blocks, id)?;
    let body = text.get(block.body_span.clone()).unwrap_or("");
    let mut bytes = Vec::with_capacity(block.info.len() + body.len() + 1);
    bytes.extend_from_slice(block.info.as_bytes());
    // A separator byte that cannot occur in an info string, so `a` + `bc` differs from `ab` + `c`.
    bytes.push(b'\n');
    bytes.extend_from_slice(body.as_bytes());
    Some(note_io::content_hash(&bytes))
}

#[derive(Serialize)]
struct BlockRevision {
    id: i64,
    at: String,
    at_unix_ms: i64,
    actor: crate::store::Actor,
    tool: Option<String>,
    added: u64,
    removed: u64,
    /// Whether this block's info string or body differs before and after the revision.
    changed: bool,
    /// `added`, `removed`, `modified` or `unchanged`, for this block.
    change: &'static str,
}

fn get_block_history(ws: &Workspace, args: GetBlockHistoryArgs) -> Result<ToolOutput, ToolError> {
    let path = ws.resolve_note(&args.note, Access::Read)?;
    let rel = path.rel().to_string();
    let current = read_text(&path)?;
    let parsed = markdown::parse(&current.text);
    let revisions: Vec<Revision> = ws
        .store()
        .revisions_of(ws.vault_id(), &rel, HISTORY_LIMIT)
        .map_err(internal)?;
    // Texts before each revision, newest first; the text after revision i is the text before
    // revision i - 1, or the file as it is now for the newest.
    let mut befores = Vec::with_capacity(revisions.len());
    for rev in &revisions {
        befores.push(ws.store().revision_text(rev.id).map_err(internal)?);
    }
    let current_hash = block_hash(Some(&current.text), &args.id);
    let ever_existed = current_hash.is_some()
        || befores
            .iter()
            .any(|b| block_hash(b.as_deref(), &args.id).is_some());
    if !ever_existed {
        return Err(no_such_id(&rel, &args.id, &parsed.code_blocks));
    }

    let mut history = Vec::with_capacity(revisions.len());
    for (i, rev) in revisions.iter().enumerate() {
        let before = block_hash(befores[i].as_deref(), &args.id);
        let after = if i == 0 {
            // A deleting revision leaves nothing after it, whatever was created at the path since.
            if rev.after_rev.is_none() {
                None
            } else {
                current_hash
            }
        } else {
            block_hash(befores[i - 1].as_deref(), &args.id)
        };
        let change = match (before, after) {
            _ if before == after => "unchanged",
            (None, Some(_)) => "added",
            (Some(_), None) => "removed",
            _ => "modified",
        };
        history.push(BlockRevision {
            id: rev.id,
            at: crate::time::format_rfc3339_ms(rev.at_unix_ms),
            at_unix_ms: rev.at_unix_ms,
            actor: rev.actor,
            tool: rev.tool.clone(),
            added: rev.added,
            removed: rev.removed,
            changed: before != after,
            change,
        });
    }
    let current_rev = current.fingerprint.to_revision_string();
    let unrecorded = revisions
        .first()
        .is_some_and(|r| r.after_rev.as_deref() != Some(current_rev.as_str()));
    let mut block = Value::Null;
    if let Some((index, b)) = find_by_id(&parsed.code_blocks, &args.id) {
        let mut redacted = Vec::new();
        block = describe(&current.text, index, b, &mut redacted);
    }
    let changed_in = history.iter().filter(|h| h.changed).count();
    let mut out = json!({
        "path": rel,
        "id": args.id,
        "block": block,
        "exists_now": current_hash.is_some(),
        "revisions": history,
        "changed_in": changed_in,
        "has_more": revisions.len() == HISTORY_LIMIT,
    });
    if unrecorded {
        out["note"] = json!(
            "the note was changed after its newest recorded revision without vaultchat seeing it; that change is counted in the newest revision"
        );
    }
    ToolOutput::json(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn block_hash_sees_info_and_body_only() {
        let a = "# T\n\n```http id=x env=dev\nGET /\n```\n\ntext\n";
        let b = "# T changed\n\nmore\n\n```http id=x env=dev\nGET /\n```\n";
        let c = "# T\n\n```http id=x env=prod\nGET /\n```\n";
        let d = "# T\n\n```http id=x env=dev\nGET /x\n```\n";
        assert_eq!(block_hash(Some(a), "x"), block_hash(Some(b), "x"));
        assert_ne!(block_hash(Some(a), "x"), block_hash(Some(c), "x"));
        assert_ne!(block_hash(Some(a), "x"), block_hash(Some(d), "x"));
        assert_eq!(block_hash(Some(a), "y"), None);
        assert_eq!(block_hash(None, "x"), None);
    }
}
