//! The tags family: list_tags, manage_tags.
//!
//! Tags live in two places: the frontmatter `tags` list and inline `#tags` in the body. Obsidian
//! treats tags case-insensitively, so both tools group and match them that way.

use super::{Body, Change, Plan, Workspace, internal, read_text, tool};
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::markdown::{self, FrontmatterValue};
use crate::vault::walk;
use crate::vault::{Access, VaultPath};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            "list_tags",
            "List tags",
            "List the tags used in the vault, from frontmatter `tags` and inline `#tags` alike, each with the \
             number of notes that use it (`notes`, and how many of those use it in frontmatter or inline), \
             most used first. Tags are grouped case-insensitively and shown in their most common spelling; \
             other spellings are listed in `variants`. Filter with `prefix` (e.g. `project/` for nested tags).",
            Annotations::READ_ONLY,
            Body::Read(list_tags),
        ),
        tool(
            ws,
            "manage_tags",
            "Add or remove tags",
            "Add tags to and remove tags from one note's frontmatter `tags` list (frontmatter is created when \
             missing; every other frontmatter key and the body stay as they are). Removing a tag also removes \
             its inline `#tag` occurrences from the body, and the result says how many. Tags may be given with \
             or without `#`; nested tags use `/` (`project/alpha`). Pass `expected_revision` from read_note to \
             fail instead of overwriting a change you have not seen.",
            Annotations::DESTRUCTIVE,
            Body::Write(manage_tags),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// list_tags

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListTagsArgs {
    /// Only tags starting with this (case-insensitive, `#` optional), e.g. `project/`.
    #[serde(default)]
    prefix: Option<String>,
    /// At most this many tags, 1 to 2000 (default 500).
    #[serde(default)]
    limit: Option<u32>,
}

/// One tag, grouped case-insensitively.
#[derive(Default)]
struct TagCount {
    /// Occurrences of each spelling across the vault.
    spellings: BTreeMap<String, usize>,
    notes: usize,
    frontmatter_notes: usize,
    inline_notes: usize,
}

#[derive(Serialize)]
struct ListedTag {
    tag: String,
    notes: usize,
    frontmatter_notes: usize,
    inline_notes: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    variants: Vec<String>,
}

fn list_tags(ws: &Workspace, args: ListTagsArgs) -> Result<ToolOutput, ToolError> {
    let limit = args.limit.unwrap_or(500);
    if !(1..=2000).contains(&limit) {
        return Err(ToolError::Invalid(format!(
            "`limit` must be between 1 and 2000, not {limit}"
        )));
    }
    let prefix = args
        .prefix
        .as_deref()
        .map(|p| p.trim().trim_start_matches('#').to_lowercase())
        .unwrap_or_default();
    // Notes are read directly rather than from the index: the index keeps one lower-cased spelling
    // per note, and the counts per spelling and per place (frontmatter or inline) need the text.
    let listing = walk::walk(ws.vault.root(), &Default::default());
    let mut tags: HashMap<String, TagCount> = HashMap::new();
    let mut skipped = Vec::new();
    for note in &listing.notes {
        let text = match ws
            .resolve(&note.rel, Access::Read)
            .and_then(|p| read_text(&p))
        {
            Ok(t) => t.text,
            Err(e) => {
                skipped.push(format!("{}: {e}", note.rel));
                continue;
            }
        };
        count_note_tags(&text, &prefix, &mut tags);
    }
    let mut listed = ranked(tags);
    let total = listed.len();
    listed.truncate(limit as usize);
    let mut out = json!({
        "tags": listed,
        "total": total,
        "truncated": total > limit as usize,
    });
    if !prefix.is_empty() {
        out["prefix"] = json!(prefix);
    }
    if !skipped.is_empty() {
        out["skipped"] = json!(skipped);
    }
    ToolOutput::json(out)
}

/// Adds one note's tags (frontmatter and inline, those under `prefix`) to `tags`: each spelling
/// once per occurrence, the note once per tag and per place.
fn count_note_tags(text: &str, prefix: &str, tags: &mut HashMap<String, TagCount>) {
    let parsed = markdown::parse(text);
    // (in frontmatter, inline) per lower-cased tag of this note.
    let mut here: HashMap<String, (bool, bool)> = HashMap::new();
    let fm_tags = parsed
        .frontmatter
        .as_ref()
        .map(|f| f.tags.as_slice())
        .unwrap_or_default();
    let occurrences = fm_tags
        .iter()
        .map(|t| (t.as_str(), true))
        .chain(parsed.inline_tags.iter().map(|t| (t.name.as_str(), false)));
    for (tag, in_frontmatter) in occurrences {
        let key = tag.to_lowercase();
        if !key.starts_with(prefix) {
            continue;
        }
        let seen = here.entry(key.clone()).or_default();
        if in_frontmatter {
            seen.0 = true;
        } else {
            seen.1 = true;
        }
        *tags
            .entry(key)
            .or_default()
            .spellings
            .entry(tag.to_string())
            .or_default() += 1;
    }
    for (key, (fm, inline)) in here {
        let count = tags.entry(key).or_default();
        count.notes += 1;
        count.frontmatter_notes += usize::from(fm);
        count.inline_notes += usize::from(inline);
    }
}

/// The tags, most used first, each under its most common spelling.
fn ranked(tags: HashMap<String, TagCount>) -> Vec<ListedTag> {
    let mut listed: Vec<ListedTag> = tags
        .into_values()
        .map(|count| {
            let mut spellings: Vec<(String, usize)> = count.spellings.into_iter().collect();
            // Most common spelling first; ties go to the alphabetically first for a stable answer.
            spellings.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let mut names = spellings.into_iter().map(|(s, _)| s);
            ListedTag {
                tag: names.next().unwrap_or_default(),
                variants: names.collect(),
                notes: count.notes,
                frontmatter_notes: count.frontmatter_notes,
                inline_notes: count.inline_notes,
            }
        })
        .collect();
    listed.sort_by(|a, b| {
        b.notes
            .cmp(&a.notes)
            .then_with(|| a.tag.to_lowercase().cmp(&b.tag.to_lowercase()))
            .then_with(|| a.tag.cmp(&b.tag))
    });
    listed
}

// ---------------------------------------------------------------------------------------------
// manage_tags

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ManageTagsArgs {
    /// Vault-relative path, or a title, alias or file name when unambiguous.
    note: String,
    /// Tags to add to the frontmatter `tags` list (with or without `#`).
    #[serde(default)]
    add: Vec<String>,
    /// Tags to remove: from the frontmatter list and every inline `#tag` in the body.
    #[serde(default)]
    remove: Vec<String>,
    /// The `revision` read_note returned; the change fails if the note changed since.
    #[serde(default)]
    expected_revision: Option<String>,
}

/// A tag as the caller gave it, without `#`, checked to be one tag as Obsidian reads tags.
fn normalize_tag(input: &str) -> Result<String, ToolError> {
    let trimmed = input.trim();
    let tag = trimmed.strip_prefix('#').unwrap_or(trimmed);
    if tag.is_empty() {
        return Err(ToolError::Invalid(format!(
            "`{input}` is an empty tag; give a tag name like `project` or `project/alpha`"
        )));
    }
    if tag.chars().any(char::is_whitespace) {
        return Err(ToolError::Invalid(format!(
            "`{input}` contains whitespace, which a tag cannot hold; use `-` or `_` instead (`{}`)",
            tag.split_whitespace().collect::<Vec<_>>().join("-")
        )));
    }
    // The same reader that finds tags in notes decides what a tag is, so a tag added here is one
    // that list_tags and search will find again.
    let probe = format!("#{tag}\n");
    let parsed = markdown::parse(&probe);
    let is_one_tag = parsed.inline_tags.len() == 1 && parsed.inline_tags[0].name == tag;
    if !is_one_tag {
        return Err(ToolError::Invalid(format!(
            "`{input}` is not a valid tag: tags hold letters, digits, `_`, `-` and `/` (for nesting), and not only digits"
        )));
    }
    Ok(tag.to_string())
}

fn contains_ci(list: &[String], tag: &str) -> bool {
    let lower = tag.to_lowercase();
    list.iter().any(|t| t.to_lowercase() == lower)
}

fn manage_tags(ws: &Workspace, args: ManageTagsArgs) -> Result<Plan, ToolError> {
    let (add, remove) = requested_tags(&args)?;
    let path = ws.resolve_note(&args.note, Access::Write)?;
    let current = read_text(&path)?;
    super::check_expected_revision(&path, &current, args.expected_revision.as_deref())?;
    let pinned = args.expected_revision.is_some();
    let parsed = markdown::parse(&current.text);
    check_tags_field(&parsed, &path)?;
    let old_list: Vec<String> = parsed
        .frontmatter
        .as_ref()
        .map(|f| f.tags.clone())
        .unwrap_or_default();
    let list = new_tag_list(&old_list, &add, &remove);
    let mut text = current.text.clone();
    let removed_inline = remove_inline_tags(&mut text, &parsed, &remove);
    let not_found: Vec<&String> = remove
        .iter()
        .filter(|r| !contains_ci(&old_list, r) && !removed_inline.contains_key(*r))
        .collect();
    // Only touch the frontmatter when its list changes, so a removal that was inline only leaves
    // the frontmatter byte-identical (even a `tags: a, b` string stays a string).
    if list.tags != old_list {
        text = markdown::set_frontmatter_list(&text, "tags", &list.tags);
    }
    let extra = tag_report(path.rel(), &list, &removed_inline, &not_found)?;
    Ok(Plan {
        tool: "manage_tags".into(),
        change: Change::Write {
            path,
            before: Some(current),
            after: text,
        },
        extra,
        pinned,
    })
}

/// The tags to add and to remove, normalised; at least one, and none in both.
fn requested_tags(args: &ManageTagsArgs) -> Result<(Vec<String>, Vec<String>), ToolError> {
    let normalised = |tags: &[String]| {
        tags.iter()
            .map(|t| normalize_tag(t))
            .collect::<Result<Vec<_>, _>>()
    };
    let add = normalised(&args.add)?;
    let remove = normalised(&args.remove)?;
    if add.is_empty() && remove.is_empty() {
        return Err(ToolError::Invalid(
            "give tags to `add` or `remove` (or both)".into(),
        ));
    }
    if let Some(both) = add.iter().find(|t| contains_ci(&remove, t)) {
        return Err(ToolError::Invalid(format!(
            "`{both}` is both in `add` and in `remove`; give it in only one"
        )));
    }
    Ok((add, remove))
}

/// A frontmatter `tags` (or singular `tag`, as the Markdown reader looks them up) that is neither a
/// list nor a string is left alone.
fn check_tags_field(parsed: &markdown::ParsedNote, path: &VaultPath) -> Result<(), ToolError> {
    if let Some(field) = parsed
        .frontmatter
        .as_ref()
        .and_then(|f| f.get("tags").or_else(|| f.get("tag")))
        && matches!(field.value, FrontmatterValue::Other)
    {
        return Err(ToolError::Invalid(format!(
            "the frontmatter `{}` of `{}` is neither a list nor a string, so it is left alone; edit it with update_note",
            field.key,
            path.rel()
        )));
    }
    Ok(())
}

/// The frontmatter list after the change, and what the change did to it.
struct TagList {
    tags: Vec<String>,
    added: Vec<String>,
    already_present: Vec<String>,
    removed: Vec<String>,
}

/// Removals first, then additions that are not there yet.
fn new_tag_list(old: &[String], add: &[String], remove: &[String]) -> TagList {
    let mut tags: Vec<String> = old
        .iter()
        .filter(|t| !contains_ci(remove, t))
        .cloned()
        .collect();
    let removed = old
        .iter()
        .filter(|t| contains_ci(remove, t))
        .cloned()
        .collect();
    let mut added = Vec::new();
    let mut already_present = Vec::new();
    for tag in add {
        if contains_ci(&tags, tag) {
            already_present.push(tag.clone());
        } else {
            tags.push(tag.clone());
            added.push(tag.clone());
        }
    }
    TagList {
        tags,
        added,
        already_present,
        removed,
    }
}

/// Cuts the inline occurrences of removed tags from `text`, from the end so earlier spans stay
/// valid, and counts them per tag. Nested tags are other tags: removing `project` keeps
/// `#project/alpha`.
fn remove_inline_tags(
    text: &mut String,
    parsed: &markdown::ParsedNote,
    remove: &[String],
) -> BTreeMap<String, usize> {
    let mut removed_inline: BTreeMap<String, usize> = BTreeMap::new();
    for tag in parsed.inline_tags.iter().rev() {
        let Some(asked) = remove
            .iter()
            .find(|r| r.to_lowercase() == tag.name.to_lowercase())
        else {
            continue;
        };
        // Inside a sentence ("merge #todo and #to-do") the word is part of the prose: keep it and
        // drop only the `#`. Elsewhere (a line of tags, the end of a line) the tag goes entirely.
        let before = text[..tag.span.start].trim_end_matches(' ');
        let after = text[tag.span.end..].trim_start_matches(' ');
        let in_prose = before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, ',' | ';' | ':'))
            && after.chars().next().is_some_and(char::is_alphanumeric);
        if in_prose {
            text.replace_range(tag.span.start..tag.span.start + 1, "");
        } else {
            let span = widen_over_space(text, tag.span.clone());
            text.replace_range(span, "");
        }
        *removed_inline.entry(asked.clone()).or_default() += 1;
    }
    removed_inline
}

/// The tool result's report of a tag change.
fn tag_report(
    rel: &str,
    list: &TagList,
    removed_inline: &BTreeMap<String, usize>,
    not_found: &[&String],
) -> Result<Map<String, Value>, ToolError> {
    let mut out = json!({
        "path": rel,
        "tags": list.tags,
        "added": list.added,
        "removed_from_frontmatter": list.removed,
        "removed_inline": removed_inline,
    });
    if !list.already_present.is_empty() {
        out["already_present"] = json!(list.already_present);
    }
    if !not_found.is_empty() {
        out["not_found"] = json!(not_found);
    }
    if !removed_inline.is_empty() {
        let total: usize = removed_inline.values().sum();
        out["note"] = json!(format!(
            "removed {total} inline #tag occurrence(s) from the body as well"
        ));
    }
    let Value::Object(extra) = out else {
        return Err(internal("the tag report is not an object"));
    };
    Ok(extra)
}

/// The span of an inline tag plus one neighbouring space or tab, so removing `#b` from `a #b c`
/// leaves `a c` rather than `a  c`, and from `done. #b` leaves `done.` without a trailing space.
fn widen_over_space(text: &str, span: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let bytes = text.as_bytes();
    let is_blank = |b: u8| b == b' ' || b == b'\t';
    if bytes.get(span.end).copied().is_some_and(is_blank) {
        return span.start..span.end + 1;
    }
    if span.start > 0 && is_blank(bytes[span.start - 1]) {
        return span.start - 1..span.end;
    }
    span
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn tags_are_normalized_and_checked() {
        assert_eq!(normalize_tag("#project").unwrap(), "project");
        assert_eq!(normalize_tag(" project/alpha ").unwrap(), "project/alpha");
        assert_eq!(normalize_tag("日本語").unwrap(), "日本語");
        for bad in [
            "",
            "#",
            "  ",
            "two words",
            "a\tb",
            "2024",
            "a,b",
            "a#b",
            "x.y",
        ] {
            assert!(normalize_tag(bad).is_err(), "{bad:?}");
        }
        let err = normalize_tag("two words").unwrap_err().to_string();
        assert!(
            err.contains("whitespace") && err.contains("two-words"),
            "{err}"
        );
    }

    #[test]
    fn removing_a_tag_takes_one_space_with_it() {
        let cut = |text: &str, from: usize, to: usize| {
            let mut t = text.to_string();
            t.replace_range(widen_over_space(text, from..to), "");
            t
        };
        assert_eq!(cut("a #b c", 2, 4), "a c");
        assert_eq!(cut("done. #b\n", 6, 8), "done.\n");
        assert_eq!(cut("#b #c", 0, 2), "#c");
        assert_eq!(cut("#b\n", 0, 2), "\n");
    }

    #[test]
    fn contains_is_case_insensitive() {
        let list = vec!["Project".to_string()];
        assert!(contains_ci(&list, "project"));
        assert!(!contains_ci(&list, "project/alpha"));
    }
}
