//! `vaultchat search QUERY [--limit N] [--json]`.

use super::{Context, Failure};
use crate::index::Index;
use clap::Args;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Words, "a phrase", a OR b, -exclude, prefix*, tag:x, folder:a/b
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// How many results to show (1 to 10000).
    #[arg(long, short = 'n', default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub limit: u32,
    /// Print one JSON object: {"results": [{"path", "title", "snippet", "highlights", "score"}], "total"}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &SearchArgs) -> Result<ExitCode, Failure> {
    let vault = ctx.vault()?;
    let mut index = Index::open(&ctx.paths.index_dir, &vault, &ctx.config.index)?;
    if !index.has_synced()? {
        // Never indexed: build it once now (a later search reuses it).
        let report = super::index_cmd::sync_with_progress(&mut index)?;
        eprintln!("{}", super::index_cmd::summary(&report, index.db_path()));
    }
    let query = args.query.join(" ");
    let results = index.search_fresh(&query, args.limit as usize)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &results)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let bold = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    for hit in &results.results {
        // Note names, titles and snippets are the vault's text: escaped before any styling.
        writeln!(
            out,
            "{}  {}",
            crate::quote::terminal(&hit.path),
            dim(&crate::quote::terminal(&hit.title), bold)
        )?;
        if !hit.snippet.is_empty() {
            writeln!(
                out,
                "    {}",
                emphasise(&hit.snippet, &hit.highlights, bold)
            )?;
        }
    }
    if results.total == 0 {
        writeln!(out, "no notes match {}", crate::quote::quoted(&query))?;
    } else {
        writeln!(
            out,
            "{} of {} matching notes",
            results.results.len(),
            results.total
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn dim(text: &str, styled: bool) -> String {
    if styled {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// Matches become bold on a terminal; elsewhere they are marked `⟦like this⟧`, which a note's
/// own Markdown (`**bold**`, `[links]`) cannot be mistaken for.
fn emphasise(snippet: &str, highlights: &[[usize; 2]], styled: bool) -> String {
    let (open, close) = if styled {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("⟦", "⟧")
    };
    let mut out = String::with_capacity(snippet.len() + 16);
    let mut marks = highlights.iter().peekable();
    for (index, c) in snippet.chars().enumerate() {
        if let Some([start, _]) = marks.peek()
            && *start == index
        {
            out.push_str(open);
        }
        // One character at a time, so the highlight offsets (in characters) still hold.
        out.push_str(&crate::quote::terminal(c.encode_utf8(&mut [0; 4])));
        if let Some([_, end]) = marks.peek()
            && *end == index + 1
        {
            out.push_str(close);
            marks.next();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_cannot_write_escapes() {
        assert_eq!(
            emphasise("a\u{1b}[2Kb\r", &[[5, 6]], false),
            "a\\u{1b}[2K⟦b⟧\\u{d}"
        );
    }

    #[test]
    fn matches_are_marked_apart_from_markdown() {
        assert_eq!(
            emphasise("Select **Canvas** now", &[[9, 15]], false),
            "Select **⟦Canvas⟧** now"
        );
        assert_eq!(
            emphasise("ab", &[[0, 1], [1, 2]], true),
            "\x1b[1ma\x1b[0m\x1b[1mb\x1b[0m"
        );
    }
}
