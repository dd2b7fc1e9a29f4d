//! Templates as Obsidian's core Templates plugin fills them: notes in the templates folder
//! (`.obsidian/templates.json`), with `{{title}}`, `{{date}}`, `{{time}}`, `{{date:FORMAT}}` and
//! `{{time:FORMAT}}` filled in (moment.js formats, [`crate::time::moment`]). A `{{…}}` that is none
//! of these is left as written, as Obsidian leaves it.
//!
//! Used by `create_note`'s `template`, by daily notes (their template) and by the app's "insert
//! template" command.

use super::{Workspace, internal, path_error};
use crate::time::moment;
use crate::tools::ToolError;
use crate::vault::obsidian::{self, Settings, Templates};
use crate::vault::{Access, VaultPath, walk};

/// A template is a note someone wrote to be copied; a bigger one is a mistake.
pub const MAX_TEMPLATE_BYTES: usize = 1024 * 1024;

/// The most templates listed; a templates folder is a handful of notes, and past this many the
/// rest of it is not walked.
pub const MAX_TEMPLATES: usize = 500;

/// What the variables of a template stand for.
#[derive(Debug, Clone, Copy)]
pub struct Filling<'a> {
    /// `{{title}}`: the name of the note the template goes into (its file name without `.md`).
    pub title: &'a str,
    /// The instant `{{date}}` and `{{time}}` show (UTC, Unix milliseconds).
    pub at_ms: i64,
    /// The formats of `{{date}}` and `{{time}}`.
    pub formats: &'a Templates,
}

/// `template` with its variables filled in.
pub fn fill(template: &str, filling: &Filling<'_>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        // A variable is short: `}}` is looked for only that far, so a template (vault text, up
        // to 1 MiB) of many `{{` far from any `}}` costs linear time, not quadratic. `}}` is
        // ASCII, so where it is found is a char boundary.
        let window = &after.as_bytes()[..after.len().min(MAX_VARIABLE + 2)];
        let filled = window
            .windows(2)
            .position(|pair| pair == b"}}")
            .and_then(|end| Some((variable(&after[..end], filling)?, end)));
        match filled {
            Some((value, end)) => {
                out.push_str(&value);
                rest = &after[end + 2..];
            }
            // Not a variable: one brace is copied and the search goes on from the next, so
            // `{{{title}}}` is `{` and the variable, as Obsidian's patterns find it.
            None => {
                out.push('{');
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The longest `{{…}}` taken for a variable (a name and a moment.js format).
const MAX_VARIABLE: usize = 256;

/// The value of one `{{inner}}`, or `None` when it is no variable of the Templates plugin.
fn variable(inner: &str, filling: &Filling<'_>) -> Option<String> {
    let inner = inner.trim();
    let (name, format) = match inner.split_once(':') {
        Some((name, format)) => (name.trim(), Some(format.trim())),
        None => (inner, None),
    };
    let name = name.to_ascii_lowercase();
    match (name.as_str(), format) {
        ("title", None) => Some(filling.title.to_string()),
        ("date", None) => Some(moment::format_ms(
            &filling.formats.date_format,
            filling.at_ms,
        )),
        ("time", None) => Some(moment::format_ms(
            &filling.formats.time_format,
            filling.at_ms,
        )),
        ("date" | "time", Some(format)) if !format.is_empty() => {
            Some(moment::format_ms(format, filling.at_ms))
        }
        _ => None,
    }
}

/// A template note read and checked: its vault-relative path and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateNote {
    pub path: String,
    pub text: String,
}

impl Workspace {
    /// The vault's Obsidian settings (`.obsidian/daily-notes.json` and `templates.json`, or
    /// Obsidian's defaults), read once for the operation that asks: what is wrong with them is
    /// logged here, once, and carried in [`Settings::warnings`].
    pub fn obsidian_settings(&self) -> Settings {
        let settings = obsidian::read_settings(&self.vault);
        for warning in &settings.warnings {
            tracing::warn!("{warning}");
        }
        settings
    }

    /// The vault's Templates settings (`.obsidian/templates.json`, or Obsidian's defaults).
    pub fn template_settings(&self) -> Templates {
        self.obsidian_settings().templates
    }

    /// The templates of the templates folder, by vault-relative path, sorted; empty when no folder
    /// is set or it holds none.
    pub fn list_templates(&self) -> Result<Vec<String>, ToolError> {
        self.list_templates_in(&self.template_settings())
    }

    /// [`Workspace::list_templates`] with settings already read: only the templates folder is
    /// walked, and at most [`MAX_TEMPLATES`] of its notes are listed.
    pub fn list_templates_in(&self, templates: &Templates) -> Result<Vec<String>, ToolError> {
        let Some(folder) = &templates.folder else {
            return Ok(Vec::new());
        };
        let path = self.resolve(folder, Access::Read)?;
        if walk::is_hidden_rel(path.rel()) || !path.abs().is_dir() {
            return Ok(Vec::new());
        }
        let mut found: Vec<String> = walk::walk_under(
            self.vault.root(),
            path.rel(),
            &Default::default(),
            MAX_TEMPLATES,
        )
        .notes
        .into_iter()
        .map(|n| n.rel)
        .collect();
        found.sort_unstable();
        Ok(found)
    }

    /// The template called `name`, a note of the templates folder (`Meeting`, `Meeting.md`,
    /// `Work/Meeting`, or with the folder written out, `Templates/Meeting`), with settings already
    /// read. Nothing outside that folder is a template here: the call names the note it reads in
    /// no `path`, so a vault path (`Private/Secret`) would be a read the permission check never
    /// sees (docs/decisions.md §70). An unknown name is the caller's mistake and lists the
    /// templates there are.
    pub fn read_template_in(
        &self,
        templates: &Templates,
        name: &str,
    ) -> Result<TemplateNote, ToolError> {
        self.read_template_note(templates, name, false)
    }

    /// The daily note's template as `.obsidian/daily-notes.json` names it: a note of the
    /// templates folder, else a vault path (Obsidian lets that setting name any note). The
    /// agent's `write_daily_note` names it to the permission check ([`Self::implied_targets`]).
    pub(super) fn read_daily_template(
        &self,
        templates: &Templates,
        name: &str,
    ) -> Result<TemplateNote, ToolError> {
        self.read_template_note(templates, name, true)
    }

    fn read_template_note(
        &self,
        templates: &Templates,
        name: &str,
        anywhere: bool,
    ) -> Result<TemplateNote, ToolError> {
        let path = self.find_template(templates, name, anywhere)?;
        Ok(TemplateNote {
            path: path.rel().to_string(),
            text: self.read_bounded_text(path.rel())?,
        })
    }

    /// The vault path of template `name` (see [`Self::read_template_in`]; `anywhere`: a vault path
    /// outside the templates folder too), not read.
    pub(super) fn find_template(
        &self,
        templates: &Templates,
        name: &str,
        anywhere: bool,
    ) -> Result<VaultPath, ToolError> {
        let name = name.trim().trim_matches('/');
        if name.is_empty() {
            return Err(ToolError::Invalid(
                "`template` is empty; give a template's name".into(),
            ));
        }
        let file = if name.to_ascii_lowercase().ends_with(".md") {
            name.to_string()
        } else {
            format!("{name}.md")
        };
        // The folder as the guard resolves it, so a note is inside it by its canonical path.
        let folder = match &templates.folder {
            Some(folder) => Some(self.resolve(folder, Access::Read)?.rel().to_string()),
            None => None,
        };
        let inside = |rel: &str| {
            folder
                .as_deref()
                .is_some_and(|f| rel.strip_prefix(f).is_some_and(|r| r.starts_with('/')))
        };
        let mut candidates = Vec::new();
        if let Some(folder) = &folder {
            candidates.push(format!("{folder}/{file}"));
        }
        if anywhere || inside(&file) {
            candidates.push(file.clone());
        }
        for candidate in &candidates {
            let path = self
                .vault
                .resolve(candidate, Access::Read)
                .map_err(path_error)?;
            if walk::is_hidden_rel(path.rel()) {
                return Err(ToolError::Invalid(format!(
                    "`{name}` is in a hidden (dot) folder; templates are notes of the vault"
                )));
            }
            // A link in the folder that leads elsewhere in the vault is not the folder's note.
            if !path.abs().is_file() || !(anywhere || inside(path.rel())) {
                continue;
            }
            return Ok(path);
        }
        let known = self.list_templates_in(templates)?;
        let listed = if known.is_empty() {
            match &templates.folder {
                Some(folder) => format!("the templates folder `{folder}` holds none"),
                None => "no templates folder is set in .obsidian/templates.json".to_string(),
            }
        } else {
            let folder = folder.as_deref().unwrap_or_default();
            let names: Vec<&str> = known
                .iter()
                .map(|p| {
                    let p = p.strip_prefix(folder).unwrap_or(p).trim_start_matches('/');
                    p.strip_suffix(".md").unwrap_or(p)
                })
                .collect();
            format!("the templates are: {}", names.join(", "))
        };
        let outside = if anywhere {
            ""
        } else {
            " (a template is a note of the templates folder)"
        };
        Err(ToolError::Invalid(format!(
            "no template `{name}`{outside}: {listed}"
        )))
    }

    /// The text of the note at `rel`, read through the root handle and at most
    /// [`MAX_TEMPLATE_BYTES`] (BOM dropped, CRLF as LF, as notes are read).
    fn read_bounded_text(&self, rel: &str) -> Result<String, ToolError> {
        let (bytes, size) = self
            .vault
            .handle()
            .read_span(rel, 0, MAX_TEMPLATE_BYTES + 1)
            .map_err(|e| internal(format!("cannot read `{rel}`: {e}")))?;
        if size > MAX_TEMPLATE_BYTES as u64 || bytes.len() > MAX_TEMPLATE_BYTES {
            return Err(ToolError::Invalid(format!(
                "the template `{rel}` is {size} bytes, more than the {MAX_TEMPLATE_BYTES} a template may have"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            ToolError::Invalid(format!(
                "the template `{rel}` is not UTF-8 text (first invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        Ok(text.replace("\r\n", "\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(template: &str) -> String {
        let formats = Templates::default();
        // 2026-12-01 09:05:07 UTC, a Tuesday.
        let at_ms = 1_796_115_907_000;
        fill(
            template,
            &Filling {
                title: "Plan",
                at_ms,
                formats: &formats,
            },
        )
    }

    #[test]
    fn the_variables_of_obsidians_templates() {
        assert_eq!(
            filled("# {{title}}\n{{date}} {{time}}\n"),
            "# Plan\n2026-12-01 09:05\n"
        );
        assert_eq!(filled("{{date:dddd, MMMM Do}}"), "Tuesday, December 1st");
        assert_eq!(filled("{{time:h:mm A}}"), "9:05 AM");
        assert_eq!(filled("{{ DATE : YYYY }} {{Title}}"), "2026 Plan");
        assert_eq!(filled("[[{{date:YYYY-MM-DD}}]]"), "[[2026-12-01]]");
    }

    #[test]
    fn braces_far_from_any_closing_ones_are_text() {
        // Many `{{` and one `}}` at the end: all of it is text, and the variables after the
        // run are still filled.
        let run = "{{".repeat(50_000);
        let text = format!("{run} x}} {{{{title}}}}");
        assert_eq!(filled(&text), format!("{run} x}} Plan"));
        let far = format!("{{{{{}}}}}", "y".repeat(MAX_VARIABLE + 10));
        assert_eq!(filled(&far), far);
    }

    #[test]
    fn what_is_no_variable_is_left_as_written() {
        for text in [
            "{{unknown}}",
            "{{date:}}",
            "{{ title",
            "}} {{",
            "{{{title}}}",
            "",
            "plain",
        ] {
            let want = match text {
                "{{{title}}}" => "{Plan}".to_string(),
                "{{ title" => "{{ title".to_string(),
                other => other.to_string(),
            };
            assert_eq!(filled(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_formats_of_templates_json() {
        let formats = Templates {
            folder: None,
            date_format: "DD.MM.YYYY".into(),
            time_format: "HH:mm:ss".into(),
        };
        let out = fill(
            "{{date}} {{time}}",
            &Filling {
                title: "x",
                at_ms: 1_796_115_907_000,
                formats: &formats,
            },
        );
        assert_eq!(out, "01.12.2026 09:05:07");
    }
}
