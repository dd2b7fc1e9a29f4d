//! The notebooks family: list_notebooks, create_notebook. A notebook is a folder of the vault;
//! dot-folders (`.git`, `.obsidian`, `.trash`, ...) are not notebooks.

use super::{Body, Change, Plan, Workspace, internal, path_error, tool};
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::contained::{ContainedError, Entry};
use crate::vault::walk;
use crate::vault::{Access, VaultPath};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, json};
use std::collections::HashMap;
use std::sync::Arc;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            "list_notebooks",
            "List notebooks",
            "List the vault's notebooks (folders, sorted by path; dot-folders such as `.obsidian` are not \
             notebooks), each with `notes` (notes directly in it) and `notes_total` (including its \
             subfolders). Pass `parent` (vault-relative folder, e.g. `Projects`) to list only the folders \
             below it. Use list_notes with `folder` to see the notes of one notebook.",
            Annotations::READ_ONLY,
            Body::Read(list_notebooks),
        ),
        tool(
            ws,
            "create_notebook",
            "Create a notebook",
            "Create a notebook (a folder) at a vault-relative `path` such as `Projects/Alpha`, with any \
             missing parent folders. Succeeds with `created: false` if the folder already exists. To create \
             a note use create_note instead: a path ending in `.md` is refused here.",
            Annotations::ADDITIVE,
            Body::Write(create_notebook),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// list_notebooks

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListNotebooksArgs {
    /// Only folders below this vault-relative folder (e.g. `Projects`); all folders when absent.
    #[serde(default)]
    parent: Option<String>,
}

#[derive(Serialize)]
struct Notebook {
    path: String,
    name: String,
    /// Notes directly in this folder.
    notes: usize,
    /// Notes in this folder and all its subfolders.
    notes_total: usize,
}

fn list_notebooks(ws: &Workspace, args: ListNotebooksArgs) -> Result<ToolOutput, ToolError> {
    // `/` must be refused as absolute, not trimmed into "the whole vault".
    if let Some(raw) = args.parent.as_deref().filter(|p| p.trim().starts_with('/')) {
        ws.vault.check_pattern(raw.trim()).map_err(path_error)?;
    }
    let parent = match args
        .parent
        .as_deref()
        .map(|p| p.trim().trim_end_matches('/'))
        .filter(|p| !p.is_empty())
    {
        Some(folder) => {
            ws.vault.check_pattern(folder).map_err(path_error)?;
            let path = ws.resolve(folder, Access::Read)?;
            if walk::is_hidden_rel(path.rel()) {
                return Err(ToolError::Invalid(format!(
                    "`{folder}` is a dot-folder, which is not a notebook; name a folder like `Projects`"
                )));
            }
            if !path.abs().is_dir() {
                return Err(ToolError::Invalid(format!(
                    "`{folder}` is not a folder of the vault; call list_notebooks without `parent` to see them all"
                )));
            }
            Some(path.rel().to_string())
        }
        None => None,
    };
    let listing = walk::walk(ws.vault.root(), &Default::default());
    // (direct, total) per folder; every note counts towards each of its ancestors' totals.
    let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut root_notes = 0;
    for note in &listing.notes {
        let Some((dir, _)) = note.rel.rsplit_once('/') else {
            root_notes += 1;
            continue;
        };
        counts.entry(dir).or_default().0 += 1;
        let mut ancestor = dir;
        loop {
            counts.entry(ancestor).or_default().1 += 1;
            match ancestor.rsplit_once('/') {
                Some((up, _)) => ancestor = up,
                None => break,
            }
        }
    }
    let mut notebooks: Vec<Notebook> = listing
        .folders
        .iter()
        .filter(|f| match &parent {
            Some(p) if !p.is_empty() => f
                .strip_prefix(p.as_str())
                .is_some_and(|rest| rest.starts_with('/')),
            _ => true,
        })
        .map(|f| {
            let (notes, notes_total) = counts.get(f.as_str()).copied().unwrap_or((0, 0));
            Notebook {
                name: f.rsplit('/').next().unwrap_or(f).to_string(),
                path: f.clone(),
                notes,
                notes_total,
            }
        })
        .collect();
    notebooks.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let problems: Vec<String> = listing
        .problems
        .iter()
        .map(|p| format!("{}: {}", p.rel, p.message))
        .collect();
    let mut out = json!({
        "notebooks": notebooks,
        "total": notebooks.len(),
    });
    match &parent {
        Some(p) if !p.is_empty() => {
            out["parent"] = json!(p);
        }
        _ => {
            out["notes_at_root"] = json!(root_notes);
            out["notes_in_vault"] = json!(listing.notes.len());
        }
    }
    if !problems.is_empty() {
        out["unreadable"] = json!(problems);
    }
    ToolOutput::json(out)
}

// ---------------------------------------------------------------------------------------------
// create_notebook

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateNotebookArgs {
    /// Vault-relative folder path, e.g. `Projects/Alpha` (missing parent folders are created too).
    path: String,
}

fn create_notebook(ws: &Workspace, args: CreateNotebookArgs) -> Result<Plan, ToolError> {
    // A trailing `/` is a natural way to write a folder; the guard refuses it for writes, so it is
    // dropped here (only one, so `//` still reads as absolute).
    let input = args.path.trim();
    let input = input.strip_suffix('/').unwrap_or(input);
    if input.is_empty() {
        return Err(ToolError::Invalid(
            "`path` is empty: give a vault-relative folder path like `Projects/Alpha`".into(),
        ));
    }
    let path = ws.resolve(input, Access::Write)?;
    let rel = path.rel().to_string();
    let last = rel.rsplit('/').next().unwrap_or(&rel);
    if last.to_ascii_lowercase().ends_with(".md") {
        return Err(ToolError::Invalid(format!(
            "`{input}` looks like a note, not a notebook: use create_note to create notes, or drop the `.md` to create a folder"
        )));
    }
    if walk::is_hidden_rel(&rel) {
        return Err(ToolError::Invalid(format!(
            "`{input}` is or lies in a dot-folder, which vaultchat does not list as a notebook; choose a name that does not start with `.`"
        )));
    }
    Ok(Plan {
        tool: "create_notebook".into(),
        change: Change::Folder { path },
        extra: Map::new(),
        pinned: false,
    })
}

/// Create the folder `path` and its missing parents; returns the folders created.
pub(super) fn create_folders(path: &VaultPath) -> Result<Vec<String>, ToolError> {
    let rel = path.rel().to_string();
    // One level at a time from the vault root's handle, never through a link: a link or file that
    // appeared after the guard looked is found instead of followed.
    let mut folder = path
        .root_folder()
        .map_err(|e| internal(format!("cannot open the vault folder: {e}")))?;
    let mut created = Vec::new();
    let mut so_far = String::new();
    for name in rel.split('/') {
        if !so_far.is_empty() {
            so_far.push('/');
        }
        so_far.push_str(name);
        match folder.entry(name) {
            Ok(Entry::Folder) => {}
            Ok(Entry::Symlink) => {
                return Err(ToolError::Invalid(format!(
                    "`{so_far}` became a symbolic link while the notebook was being created; nothing more was created"
                )));
            }
            Ok(Entry::File { .. } | Entry::Other) => {
                return Err(ToolError::Invalid(format!(
                    "`{so_far}` is a file, so no folder can be created there; choose another path"
                )));
            }
            Ok(Entry::Missing) => {
                if folder
                    .make_folder(name)
                    .map_err(|e| internal(format!("cannot create `{so_far}`: {e}")))?
                {
                    created.push(so_far.clone());
                }
            }
            Err(e) => return Err(internal(format!("cannot inspect `{so_far}`: {e}"))),
        }
        folder = folder.open_folder(name, &so_far).map_err(|e| match e {
            ContainedError::LinkAppeared { .. } => ToolError::Invalid(format!(
                "`{so_far}` changed while the notebook was being created and is not a folder; nothing more was created"
            )),
            other => internal(format!("cannot open `{so_far}`: {other}")),
        })?;
    }
    Ok(created)
}
