//! `vaultchat sessions [list|show ID|rm ID|export ID] [--json]`: the stored conversations.

use super::outln;
use super::{Context, Failure};
use crate::llm::{Block, ResultPart};
use crate::store::Store;
use clap::{Args, Subcommand};
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// The sessions of this vault, most recent first.
    List {
        /// Every vault's sessions.
        #[arg(long)]
        all: bool,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// One session's messages.
    Show { id: String },
    /// Delete a session with its messages and usage.
    Rm { id: String },
    /// Write a session as a Markdown note in the vault (frontmatter, the turns, [[links]] to the
    /// notes the agent read or changed); never over an existing note.
    Export {
        id: String,
        /// The note's vault path (default `Chats/DATE TITLE.md`); `-` prints it instead.
        #[arg(long, value_name = "PATH")]
        to: Option<String>,
        /// Only the last question and its reply.
        #[arg(long)]
        last: bool,
    },
}

pub fn run(ctx: &Context, args: &SessionsArgs) -> Result<ExitCode, Failure> {
    let store = Store::open(&ctx.paths.database_file())?;
    let action = args.action.as_ref().unwrap_or(&SessionsAction::List {
        all: false,
        limit: 50,
    });
    match action {
        SessionsAction::List { all, limit } => list(ctx, &store, *all, *limit, args.json)?,
        SessionsAction::Show { id } => show(ctx, &store, id, args.json)?,
        SessionsAction::Export { id, to, last } => {
            super::sessions_export::run(ctx, &store, id, to.as_deref(), *last, args.json)?
        }
        SessionsAction::Rm { id } => {
            let full = resolve(ctx, &store, id)?;
            store.delete_session(&full)?;
            if args.json {
                outln!("{}", json!({ "deleted": full }));
            } else {
                outln!("deleted session {full}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The full id of this vault's session `id` (or id prefix). A session of another vault that
/// shares the data folder is refused: it is not this vault's to show, export or delete.
pub(super) fn resolve(ctx: &Context, store: &Store, id: &str) -> Result<String, Failure> {
    let vault_id = crate::index::vault_id(&ctx.vault()?);
    store
        .resolve_vault_session_id(&vault_id, id)?
        .ok_or_else(|| {
            Failure::new(format!(
                "there is no session `{id}`; `vaultchat sessions list` shows them"
            ))
        })
}

fn list(
    ctx: &Context,
    store: &Store,
    all: bool,
    limit: usize,
    as_json: bool,
) -> Result<(), Failure> {
    let vault_id = if all {
        None
    } else {
        Some(crate::index::vault_id(&ctx.vault()?))
    };
    let sessions = store.list_sessions(vault_id.as_deref(), limit)?;
    if as_json {
        outln!("{}", json!({ "sessions": sessions }));
    } else if sessions.is_empty() {
        outln!("no sessions yet; `vaultchat ask \"…\"` starts one");
    } else {
        for s in &sessions {
            let tokens = s.usage.input_tokens
                + s.usage.output_tokens
                + s.usage.cache_read_tokens
                + s.usage.cache_write_tokens;
            let continues = s
                .parent_id
                .as_deref()
                .map(|p| format!("  (continues {p})"))
                .unwrap_or_default();
            outln!(
                "{}  {}  {:>3} messages  {:>8} tokens  {}{continues}",
                s.id,
                crate::time::format_day(s.updated_ms),
                s.messages,
                // `~`: some of the counts are estimates (the provider reported none).
                format!("{}{tokens}", if s.usage.is_estimated() { "~" } else { "" }),
                if s.title.is_empty() {
                    "(untitled)".into()
                } else {
                    crate::quote::terminal(&s.title)
                }
            );
        }
    }
    Ok(())
}

fn show(ctx: &Context, store: &Store, id: &str, as_json: bool) -> Result<(), Failure> {
    let full = resolve(ctx, store, id)?;
    let summary = store.session(&full)?;
    let messages = store.session_messages(&full)?;
    let failed = store.failed_turns(&full)?;
    let compactions = store.compactions(&full)?;
    if as_json {
        let messages: Vec<serde_json::Value> = messages
            .iter()
            .map(|m| {
                json!({
                    "seq": m.seq,
                    "role": m.role,
                    "at_ms": m.at_ms,
                    "content": serde_json::from_str::<serde_json::Value>(&m.content_json)
                        .unwrap_or(serde_json::Value::Null),
                })
            })
            .collect();
        let failed: Vec<serde_json::Value> = failed
            .iter()
            .map(|t| json!({"first_seq": t.first_seq, "last_seq": t.last_seq, "error": t.error}))
            .collect();
        outln!(
            "{}",
            json!({ "session": summary, "messages": messages, "failed_turns": failed, "compactions": compactions })
        );
        return Ok(());
    }
    if let Some(s) = &summary {
        outln!("{}  {}", s.id, crate::quote::terminal(&s.title));
        if let Some(parent) = &s.parent_id {
            outln!("continues session {parent}");
        }
    }
    // A summary made when a new session began stands before its first message.
    print_summaries(&compactions, 0)?;
    // Compactions count the messages that are sent upstream: those outside failed turns.
    let mut sent: u64 = 0;
    for m in &messages {
        match serde_json::from_str::<Vec<Block>>(&m.content_json) {
            Ok(blocks) => {
                for block in &blocks {
                    print_block(&m.role, block)?;
                }
            }
            Err(e) => outln!(
                "{}: [message {} could not be read: {}]",
                m.role,
                m.seq,
                crate::quote::terminal(&e.to_string())
            ),
        }
        // A failed turn is kept but no longer sent to the model (docs/decisions.md §36).
        for turn in failed.iter().filter(|t| t.last_seq == m.seq) {
            outln!(
                "[failed, not sent to the model again: {}]",
                crate::quote::terminal_text(&turn.error)
            );
        }
        if !failed
            .iter()
            .any(|t| (t.first_seq..=t.last_seq).contains(&m.seq))
        {
            sent += 1;
        }
        print_summaries(&compactions, sent)?;
    }
    Ok(())
}

/// The summaries made after message `seq` (the messages up to it are what they replace upstream).
fn print_summaries(
    compactions: &[crate::store::StoredCompaction],
    seq: u64,
) -> Result<(), Failure> {
    let mut last: Option<&str> = None;
    for c in compactions {
        if let Some(summary) = c.summary.as_deref()
            && c.summarised == seq
            && last != Some(summary)
        {
            outln!(
                "── compacted ({}): messages 1–{seq} are sent as this summary ──",
                c.reason
            );
            outln!("{}", crate::quote::terminal_text(summary));
            last = Some(summary);
        }
    }
    Ok(())
}

fn print_block(role: &str, block: &Block) -> Result<(), Failure> {
    match block {
        // Everything a session holds came from a model, a tool or a note: escaped.
        Block::Text { text } => outln!("{role}: {}", crate::quote::terminal_text(text)),
        Block::Image { media_type, .. } => {
            outln!("{role}: [image {}]", crate::quote::terminal(media_type))
        }
        Block::ToolUse { name, input, .. } => {
            outln!(
                "{role}: → {} {}",
                crate::quote::terminal(name),
                crate::quote::terminal(&input.to_string())
            )
        }
        Block::Thinking { text, .. } => {
            outln!("{role}: [thinking] {}", crate::quote::terminal_text(text))
        }
        Block::RedactedThinking { .. } => outln!("{role}: [thinking, redacted]"),
        Block::ToolResult {
            content, is_error, ..
        } => {
            let text: String = content
                .iter()
                .map(|p| match p {
                    ResultPart::Text { text } => text.as_str(),
                    ResultPart::Image { .. } => "[image]",
                })
                .collect();
            let short: String = text.chars().take(160).collect();
            let mark = if *is_error { "✗" } else { "←" };
            outln!("{role}: {mark} {}", crate::quote::terminal(&short));
        }
    }
    Ok(())
}
