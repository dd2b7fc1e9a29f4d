//! `vaultchat links NOTE [--json]`, `vaultchat links --unresolved [--json]`,
//! `vaultchat links --orphans [--json]`: the link graph from the index.

use super::outln;
use super::{Context, Failure};
use crate::index::Index;
use crate::index::graph::{LinkState, Orphan, Unresolved};
use crate::quote::terminal;
use crate::vault::links::{LinkResolution, resolve_title_or_path};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct LinksArgs {
    /// The note: a vault-relative path, or a file name, title or alias when unambiguous.
    #[arg(
        value_name = "NOTE",
        required_unless_present_any = ["unresolved", "orphans"],
        conflicts_with_all = ["unresolved", "orphans"]
    )]
    pub note: Option<String>,
    /// List every link that resolves to no note: [{"from", "target", "line"}].
    #[arg(long, conflicts_with = "orphans")]
    pub unresolved: bool,
    /// List the notes no other note links to: [{"path", "outgoing"}].
    #[arg(long)]
    pub orphans: bool,
    /// With --unresolved or --orphans: only notes in this folder.
    #[arg(long, value_name = "FOLDER", default_value = "")]
    pub folder: String,
    /// Print JSON: {"note", "outgoing": [{"target", "path", "line"}], "backlinks": [{"path", "line", "context"}]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct NoteLinks {
    note: String,
    outgoing: Vec<OutgoingJson>,
    backlinks: Vec<crate::index::graph::Backlink>,
}

#[derive(Serialize)]
struct OutgoingJson {
    target: String,
    /// The note the link opens; null when unresolved or an attachment.
    path: Option<String>,
    line: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    ambiguous: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    attachment: bool,
}

/// Every linking note at once: a page as large as any vault's backlinks of one note.
const ALL: usize = usize::MAX >> 1;

pub fn run(ctx: &Context, args: &LinksArgs) -> Result<ExitCode, Failure> {
    let vault = ctx.vault()?;
    // Read-only: answering a question about the graph writes nothing, and opening for writing
    // (journal mode, schema check) is start-up work a one-shot command does not need.
    let mut index = match Index::open_read_only(&ctx.paths.index_dir, &vault, &ctx.config.index)? {
        Some(index) => index,
        None => {
            // Never indexed (or by another version): build it once now (later commands reuse it).
            let mut index = Index::open(&ctx.paths.index_dir, &vault, &ctx.config.index)?;
            let report = super::index_cmd::sync_with_progress(&mut index)?;
            eprintln!("{}", super::index_cmd::summary(&report, index.db_path()));
            index
        }
    };
    if args.unresolved {
        let page = index.unresolved_links(&args.folder, 0, ALL)?;
        return print_unresolved(&page.items, args.json);
    }
    if args.orphans {
        let page = index.orphans(&args.folder, 0, ALL)?;
        return print_orphans(&page.items, args.json);
    }
    let Some(name) = args.note.as_deref() else {
        return Err(Failure::new(
            "name a note, or pass --unresolved or --orphans",
        ));
    };
    // Read through SQLite's page cache, not a memory map: the backlinks of a much-linked note
    // are rows on nearly every page of `links`, and mapping them (faults, then the unmap at
    // exit) took longer than reading them (27,489 backlinks: 52 -> 31 ms for the query alone).
    index.without_memory_map()?;
    let path = resolve_note(&index, name)?;
    let (mut links, fresh) = note_links(&index, &path)?;
    // The notes involved changed since they were indexed (no watcher running): read them again.
    if !fresh {
        let involved: Vec<String> = std::iter::once(path.clone())
            .chain(links.backlinks.iter().map(|b| b.path.clone()))
            .collect();
        index = Index::open(&ctx.paths.index_dir, &vault, &ctx.config.index)?;
        index.sync_paths(&involved)?;
        (links, _) = note_links(&index, &path)?;
    }
    // Buffered: the backlinks of a much-linked note are thousands of lines.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        serde_json::to_writer(&mut out, &links)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "{}", terminal(&links.note))?;
    writeln!(out, "links from it ({}):", links.outgoing.len())?;
    for link in &links.outgoing {
        let to = match (&link.path, link.attachment) {
            (_, true) => "attachment".to_string(),
            (Some(path), false) if link.ambiguous => {
                format!("{} (ambiguous)", terminal(path))
            }
            (Some(path), false) => terminal(path).into_owned(),
            (None, false) => "unresolved".to_string(),
        };
        writeln!(
            out,
            "  {:>5}  {} → {}",
            link.line,
            terminal(&link.target),
            to
        )?;
    }
    writeln!(out, "links to it ({}):", links.backlinks.len())?;
    for link in &links.backlinks {
        writeln!(
            out,
            "  {}:{}  {}",
            terminal(&link.path),
            link.line,
            terminal(&link.context)
        )?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The note's links, and whether the note and every linking note are as the index recorded them.
fn note_links(index: &Index, path: &str) -> Result<(NoteLinks, bool), Failure> {
    let outgoing = index
        .outgoing_links(path)?
        .ok_or_else(|| Failure::new(format!("{} is not indexed", crate::quote::quoted(path))))?;
    let (backlinks, linking_fresh) = index.all_backlinks_checked(path)?;
    let fresh = linking_fresh && index.is_fresh(&[path])?;
    let links = NoteLinks {
        note: path.to_string(),
        outgoing: outgoing
            .into_iter()
            .map(|o| OutgoingJson {
                target: o.target,
                path: o.path,
                line: o.line,
                ambiguous: o.state == LinkState::Ambiguous,
                attachment: o.state == LinkState::Attachment,
            })
            .collect(),
        backlinks,
    };
    Ok((links, fresh))
}

/// The path of the note `name` means, or a failure that says why there is none.
fn resolve_note(index: &Index, name: &str) -> Result<String, Failure> {
    // The common case first, without listing every note's names: `name` is the path of a note,
    // with or without `.md`, and not also the other spelling's (`a.md` and `a.md.md` both
    // exist), which is exactly when `resolve_title_or_path` answers with that path.
    let as_path = name.trim().trim_start_matches('/');
    let with_md = format!("{as_path}.md");
    match (index.has_note(as_path)?, index.has_note(&with_md)?) {
        (true, false) => return Ok(as_path.to_string()),
        (false, true) => return Ok(with_md),
        _ => {}
    }
    let names = index.note_names()?;
    match resolve_title_or_path(name, &names) {
        LinkResolution::Unique(path) => Ok(path.to_string()),
        LinkResolution::Ambiguous(paths) => Err(Failure::new(format!(
            "{} names several notes: {}; pass one path",
            crate::quote::quoted(name),
            paths.join(", ")
        ))),
        LinkResolution::Missing => Err(Failure::new(format!(
            "no note is named {}",
            crate::quote::quoted(name)
        ))),
    }
}

/// `value` as one line of JSON on stdout.
fn print_json(value: &(impl serde::Serialize + ?Sized)) -> Result<ExitCode, Failure> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    outln!();
    Ok(ExitCode::SUCCESS)
}

fn print_unresolved(items: &[Unresolved], json: bool) -> Result<ExitCode, Failure> {
    if json {
        return print_json(items);
    }
    for item in items {
        outln!(
            "{}:{}  {}",
            terminal(&item.from),
            item.line,
            terminal(&item.target)
        );
    }
    outln!("{} unresolved links", items.len());
    Ok(ExitCode::SUCCESS)
}

fn print_orphans(items: &[Orphan], json: bool) -> Result<ExitCode, Failure> {
    if json {
        return print_json(items);
    }
    for item in items {
        outln!("{}", terminal(&item.path));
    }
    outln!("{} notes no other note links to", items.len());
    Ok(ExitCode::SUCCESS)
}
