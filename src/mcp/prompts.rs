//! MCP prompts over the vault, which clients offer as commands: summarise a note, review the
//! notes changed lately, find the notes related to one. Each returns messages that carry the
//! notes themselves (embedded resources, `text/markdown`) and what to do with them, so the
//! client's model needs no tool call to start.

use super::note_uri::note_uri;
use super::resources::{MARKDOWN, NoteCatalog, tool_error};
use crate::tools::Registry;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompletionInfo, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::{Value, json};
use std::sync::Arc;

pub const SUMMARIZE_NOTE: &str = "summarize_note";
pub const DAILY_REVIEW: &str = "daily_review";
pub const FIND_RELATED: &str = "find_related";

/// `daily_review` embeds at most this many notes, newest first, and lists the rest by path.
const REVIEW_MAX_NOTES: usize = 20;
/// …and at most this many bytes of their text, so a busy day does not flood the context. Each
/// note gets what is left of it (a note longer than that is cut with a marker).
const REVIEW_MAX_BYTES: usize = 200_000;
/// A note with less than this left of the review's budget is listed, not cut to a stub.
const REVIEW_MIN_BYTES: usize = 4_096;
/// The most of one note `summarize_note` and `find_related` embed; a longer note is cut with a
/// marker saying how to read the rest.
pub const PROMPT_NOTE_MAX_BYTES: usize = 200_000;
const MAX_DAYS: u64 = 30;

/// The prompts, as `prompts/list` gives them.
pub fn prompts() -> Vec<Prompt> {
    let note = || {
        PromptArgument::new("note")
            .with_title("Note")
            .with_description("The note: its vault path (Projects/Plan.md), title or alias")
            .with_required(true)
    };
    vec![
        Prompt::new(
            SUMMARIZE_NOTE,
            Some("Summarise one note of the vault: its point, its decisions and open questions"),
            Some(vec![note()]),
        )
        .with_title("Summarise a note"),
        Prompt::new(
            DAILY_REVIEW,
            Some("Review the notes changed recently: what moved, what is unfinished, what to do next"),
            Some(vec![
                PromptArgument::new("days")
                    .with_title("Days")
                    .with_description("How many days back to look (1 to 30; default 1)")
                    .with_required(false),
            ]),
        )
        .with_title("Daily review"),
        Prompt::new(
            FIND_RELATED,
            Some("Find the notes of the vault related to one note, and say how they relate"),
            Some(vec![note()]),
        )
        .with_title("Find related notes"),
    ]
}

/// `prompts/get`: the messages of prompt `name`. Notes are read on the blocking pool.
pub async fn get(
    catalog: Arc<NoteCatalog>,
    registry: &Registry,
    name: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, McpError> {
    let argument = |key: &str| {
        arguments
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let required_note = || {
        argument("note").ok_or_else(|| {
            McpError::invalid_params(
                format!("prompt `{name}` needs the argument `note` (a vault path or title)"),
                None,
            )
        })
    };
    match name {
        SUMMARIZE_NOTE => {
            let note = required_note()?;
            blocking(move || summarize(&catalog, &note)).await
        }
        FIND_RELATED => {
            let note = required_note()?;
            let (rel, text, title) = blocking(move || note_and_title(&catalog, &note)).await?;
            let linked = graph_neighbours(registry, &rel).await;
            let candidates = search_candidates(registry, &title, &rel).await;
            Ok(find_related(&rel, text, &linked, &candidates))
        }
        DAILY_REVIEW => {
            let days = parse_days(argument("days").as_deref())?;
            blocking(move || daily_review(&catalog, days)).await
        }
        other => Err(McpError::invalid_params(
            format!(
                "no prompt is named `{other}`; prompts/list gives {SUMMARIZE_NOTE}, {DAILY_REVIEW} and {FIND_RELATED}"
            ),
            None,
        )),
    }
}

/// Runs note I/O on tokio's blocking pool.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, McpError> + Send + 'static,
) -> Result<T, McpError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| McpError::internal_error(format!("note reader failed: {e}"), None))?
}

fn parse_days(value: Option<&str>) -> Result<u64, McpError> {
    let Some(value) = value else {
        return Ok(1);
    };
    match value.parse::<u64>() {
        Ok(days) if (1..=MAX_DAYS).contains(&days) => Ok(days),
        _ => Err(McpError::invalid_params(
            format!("`days` must be a whole number from 1 to {MAX_DAYS}, not `{value}`"),
            None,
        )),
    }
}

fn embedded(rel: &str, text: String) -> PromptMessage {
    PromptMessage::new_resource(
        Role::User,
        note_uri(rel),
        Some(MARKDOWN.to_string()),
        Some(text),
        None,
        None,
        None,
    )
}

fn result(description: String, messages: Vec<PromptMessage>) -> GetPromptResult {
    let mut result = GetPromptResult::new(messages);
    result.description = Some(description);
    result
}

fn summarize(catalog: &NoteCatalog, note: &str) -> Result<GetPromptResult, McpError> {
    let (rel, text) = catalog.note_text(note, PROMPT_NOTE_MAX_BYTES)?;
    let instructions = format!(
        "Summarise the note `{rel}` (above) for me. Start with one sentence on what it is about, \
         then a few bullet points: the main points, any decisions, and open questions or tasks \
         (keep `- [ ]` items as they are). Keep [[wikilinks]] and #tags that matter. Be brief, \
         and add nothing the note does not say."
    );
    Ok(result(
        format!("Summary of {rel}"),
        vec![
            embedded(&rel, text),
            PromptMessage::new_text(Role::User, instructions),
        ],
    ))
}

/// The note's path, text and title (frontmatter `title`, else its first heading, else the file
/// name).
fn note_and_title(catalog: &NoteCatalog, note: &str) -> Result<(String, String, String), McpError> {
    let (rel, text) = catalog.note_text(note, PROMPT_NOTE_MAX_BYTES)?;
    let title = crate::vault::markdown::parse(&text)
        .title
        .unwrap_or_else(|| stem(&rel).to_string());
    Ok((rel, text, title))
}

fn find_related(rel: &str, text: String, linked: &str, candidates: &str) -> GetPromptResult {
    let instructions = format!(
        "Find the notes of this vault related to `{rel}` (above). The notes it links to and the \
         notes that link to it (the vault's link graph) come first, then candidates from a keyword \
         search on its title; read the promising ones (read_note), follow their links \
         (get_backlinks, get_outgoing_links) and search further (search_notes) on its key ideas if \
         the tools are available. Answer with a short list of [[wikilinks]] to the related notes \
         that are not linked yet, each with one sentence on how it relates, strongest first, then \
         say which linked notes matter most; say so if nothing is related.\n\nLinked:\n{linked}\n\nCandidates:\n{candidates}"
    );
    result(
        format!("Notes related to {rel}"),
        vec![
            embedded(rel, text),
            PromptMessage::new_text(Role::User, instructions),
        ],
    )
}

/// The notes `rel` links to and the notes linking to it, from the link graph through the server's
/// own tools (at most 20 of each), one line each.
async fn graph_neighbours(registry: &Registry, rel: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    if let Ok(out) = registry
        .call("get_outgoing_links", json!({ "note": rel, "limit": 200 }))
        .await
    {
        let mut seen = std::collections::BTreeSet::new();
        for link in out.structured["links"].as_array().into_iter().flatten() {
            if let Some(path) = link["path"].as_str()
                && path != rel
                && seen.len() < 20
                && seen.insert(path.to_string())
            {
                lines.push(format!("- links to {path}"));
            }
        }
    }
    if let Ok(out) = registry
        .call("get_backlinks", json!({ "note": rel, "limit": 100 }))
        .await
    {
        let mut seen = std::collections::BTreeSet::new();
        for link in out.structured["backlinks"].as_array().into_iter().flatten() {
            if let Some(path) = link["path"].as_str()
                && seen.len() < 20
                && seen.insert(path.to_string())
            {
                let context = link["context"].as_str().unwrap_or_default();
                lines.push(format!("- linked from {path}: {context}"));
            }
        }
    }
    if lines.is_empty() {
        "(no links in or out)".into()
    } else {
        lines.join("\n")
    }
}

/// A keyword search for notes sharing the title's words, through the server's own search tool
/// (the same index `search_notes` answers from). The note itself is left out.
async fn search_candidates(registry: &Registry, title: &str, rel: &str) -> String {
    let words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .take(8)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        return "(the title has no words to search for)".into();
    }
    let query = words.join(" OR ");
    let call = registry.call("search_notes", json!({ "query": query, "limit": 11 }));
    match call.await {
        Ok(output) => {
            let lines: Vec<String> = output.structured["results"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|hit| hit["path"].as_str() != Some(rel))
                .take(10)
                .map(|hit| {
                    format!(
                        "- {} ({})",
                        hit["path"].as_str().unwrap_or_default(),
                        hit["title"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            if lines.is_empty() {
                "(none found)".into()
            } else {
                lines.join("\n")
            }
        }
        Err(e) => format!("(search unavailable: {e})"),
    }
}

fn daily_review(catalog: &NoteCatalog, days: u64) -> Result<GetPromptResult, McpError> {
    let days = i64::try_from(days).unwrap_or(i64::MAX);
    let since_ns = crate::time::now_ns().saturating_sub(days.saturating_mul(crate::time::DAY_NS));
    let mut recent: Vec<_> = catalog
        .notes()
        .into_iter()
        .filter(|n| n.mtime_ns >= since_ns)
        .collect();
    recent.sort_by(|a, b| b.mtime_ns.cmp(&a.mtime_ns).then_with(|| a.rel.cmp(&b.rel)));
    let span = if days == 1 {
        "the last day".to_string()
    } else {
        format!("the last {days} days")
    };
    let mut messages = Vec::new();
    let mut listed_only = Vec::new();
    let mut bytes = 0usize;
    for note in &recent {
        let budget = REVIEW_MAX_BYTES.saturating_sub(bytes);
        if messages.len() >= REVIEW_MAX_NOTES
            || budget < REVIEW_MIN_BYTES.min(usize::try_from(note.size).unwrap_or(usize::MAX))
        {
            listed_only.push(note);
            continue;
        }
        // A note that cannot be read as text (not UTF-8, gone since the walk) stays in the list
        // below without its text.
        match catalog.note_text(&note.rel, budget) {
            Ok((rel, text)) => {
                bytes += text.len();
                messages.push(embedded(&rel, text));
            }
            Err(e) => {
                tracing::debug!(note = %note.rel, error = %e.message, "not attached to the review");
                listed_only.push(note);
            }
        }
    }
    let changed: Vec<String> = recent
        .iter()
        .map(|n| {
            format!(
                "- {} (changed {})",
                n.rel,
                crate::time::format_rfc3339_ns(n.mtime_ns)
            )
        })
        .collect();
    let instructions = if recent.is_empty() {
        format!(
            "No note of the vault changed in {span}. Say so, and suggest one note worth revisiting \
             (search_notes or list_notes can find one if the tools are available)."
        )
    } else {
        let more = if listed_only.is_empty() {
            String::new()
        } else {
            format!(
                "\n\n{} of them are attached; read the others with read_note if needed.",
                messages.len()
            )
        };
        format!(
            "Review my notes changed in {span} ({} notes, newest first):\n{}{more}\n\n\
             Give me a short review: what moved forward, decisions made, open tasks and \
             questions (quote `- [ ]` items with their note as a [[wikilink]]), and what to do \
             next. Group by topic, not by note.",
            recent.len(),
            changed.join("\n")
        )
    };
    messages.push(PromptMessage::new_text(Role::User, instructions));
    Ok(result(
        format!("Review of the notes changed in {span}"),
        messages,
    ))
}

use crate::vault::name::stem;

/// `completion/complete` for a prompt argument: note paths containing what was typed (case
/// folded) for `note`, the usual spans for `days`.
pub fn complete(
    catalog: &NoteCatalog,
    argument: &str,
    typed: &str,
) -> Result<CompletionInfo, McpError> {
    let values: Vec<String> = match argument {
        "note" | "path" => {
            let typed = typed.to_lowercase();
            catalog
                .workspace()
                .note_names()
                .map_err(tool_error)?
                .into_iter()
                .filter(|n| {
                    n.path.to_lowercase().contains(&typed)
                        || n.title
                            .as_ref()
                            .is_some_and(|t| t.to_lowercase().contains(&typed))
                })
                .map(|n| n.path)
                .collect()
        }
        "days" => ["1", "7", "30"]
            .into_iter()
            .filter(|d| d.starts_with(typed))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    let total = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let has_more = values.len() > CompletionInfo::MAX_VALUES;
    let shown = values
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .collect();
    CompletionInfo::with_pagination(shown, Some(total), has_more)
        .map_err(|e| McpError::internal_error(e, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_default_to_one_and_stay_in_range() {
        assert_eq!(parse_days(None).unwrap(), 1);
        assert_eq!(parse_days(Some("7")).unwrap(), 7);
        for bad in ["0", "31", "-1", "x", "1.5"] {
            let error = parse_days(Some(bad)).unwrap_err();
            assert!(error.message.contains("from 1 to 30"), "{bad}");
        }
    }

    #[test]
    fn three_prompts_with_their_arguments() {
        let listed = serde_json::to_value(prompts()).unwrap();
        let names: Vec<&str> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, [SUMMARIZE_NOTE, DAILY_REVIEW, FIND_RELATED]);
        assert_eq!(listed[0]["arguments"][0]["name"], "note");
        assert_eq!(listed[0]["arguments"][0]["required"], true);
        assert_eq!(listed[1]["arguments"][0]["required"], false);
    }
}
