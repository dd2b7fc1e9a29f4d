//! `vaultchat sessions [list|show ID|rm ID] [--json]`: the stored conversations.

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
}

pub fn run(ctx: &Context, args: &SessionsArgs) -> Result<ExitCode, Failure> {
    let store = Store::open(&ctx.paths.database_file())?;
    let action = args.action.as_ref().unwrap_or(&SessionsAction::List {
        all: false,
        limit: 50,
    });
    match action {
        SessionsAction::List { all, limit } => list(ctx, &store, *all, *limit, args.json)?,
        SessionsAction::Show { id } => show(&store, id, args.json)?,
        SessionsAction::Rm { id } => {
            let full = resolve(&store, id)?;
            store.delete_session(&full)?;
            if args.json {
                println!("{}", json!({ "deleted": full }));
            } else {
                println!("deleted session {full}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn resolve(store: &Store, id: &str) -> Result<String, Failure> {
    store.resolve_session_id(id)?.ok_or_else(|| {
        Failure(format!(
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
        println!("{}", json!({ "sessions": sessions }));
    } else if sessions.is_empty() {
        println!("no sessions yet; `vaultchat ask \"…\"` starts one");
    } else {
        for s in &sessions {
            let tokens = s.usage.input_tokens
                + s.usage.output_tokens
                + s.usage.cache_read_tokens
                + s.usage.cache_write_tokens;
            println!(
                "{}  {}  {:>3} messages  {:>8} tokens  {}",
                s.id,
                super::usage_cmd::day_of(s.updated_ms),
                s.messages,
                // `~`: some of the counts are estimates (the provider reported none).
                format!("{}{tokens}", if s.usage.is_estimated() { "~" } else { "" }),
                if s.title.is_empty() {
                    "(untitled)"
                } else {
                    &s.title
                }
            );
        }
    }
    Ok(())
}

fn show(store: &Store, id: &str, as_json: bool) -> Result<(), Failure> {
    let full = resolve(store, id)?;
    let summary = store.session(&full)?;
    let messages = store.session_messages(&full)?;
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
        println!("{}", json!({ "session": summary, "messages": messages }));
        return Ok(());
    }
    if let Some(s) = &summary {
        println!("{}  {}", s.id, s.title);
    }
    for m in &messages {
        match serde_json::from_str::<Vec<Block>>(&m.content_json) {
            Ok(blocks) => blocks.iter().for_each(|block| print_block(&m.role, block)),
            Err(e) => println!("{}: [message {} could not be read: {e}]", m.role, m.seq),
        }
    }
    Ok(())
}

fn print_block(role: &str, block: &Block) {
    match block {
        Block::Text { text } => println!("{role}: {text}"),
        Block::Image { media_type, .. } => println!("{role}: [image {media_type}]"),
        Block::ToolUse { name, input, .. } => println!("{role}: → {name} {input}"),
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
            println!("{role}: {mark} {short}");
        }
    }
}
