//! Daily notes as Obsidian's core Daily notes plugin keeps them (`.obsidian/daily-notes.json`:
//! folder, moment.js format, template), and the two tools over them: `read_daily_note` (where a
//! day's note is and what it says) and `write_daily_note` (create it from its template if it is
//! missing, and append to it; a write, so the agent proposes it and the person approves).
//!
//! The person's own `vaultchat daily` and the app's "today's note" key use the same plan,
//! applied at once (they are the person's action, as in Obsidian), under the vault's write lock
//! and through the atomic writer that never replaces a change it has not seen.

use super::templates::{Filling, fill};
use super::{Body, Change, Plan, Workspace, WriteRecord, internal, note_error, read_text, tool};
use crate::store::Actor;
use crate::time::{self, moment};
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::note_io;
use crate::vault::obsidian::{self, Settings};
use crate::vault::{Access, VaultPath, walk};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The tool that reads a day's note.
pub const READ_DAILY_NOTE: &str = "read_daily_note";

/// The tool that creates a day's note and appends to it.
pub const WRITE_DAILY_NOTE: &str = "write_daily_note";

/// At most this many characters of the note are returned by `read_daily_note`.
const MAX_READ_CHARS: usize = 20_000;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            READ_DAILY_NOTE,
            "Read a daily note",
            "The daily note of a day (default today), where the vault's Obsidian settings put it: `path`, \
             `exists`, and its `content` and `revision` when it exists.",
            Annotations::READ_ONLY,
            Body::Read(read_daily_note),
        ),
        tool(
            ws,
            WRITE_DAILY_NOTE,
            "Write to a daily note",
            "Create the daily note of a day (default today) from the vault's daily template if missing, \
             then add `append` at its end on a new line.",
            // It only ever adds: a new note, or lines at the end of one.
            Annotations::ADDITIVE,
            Body::Write(write_daily_note),
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadDailyArgs {
    /// `YYYY-MM-DD`, `today` (default), `yesterday` or `tomorrow`.
    #[serde(default)]
    date: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteDailyArgs {
    /// `YYYY-MM-DD`, `today` (default), `yesterday` or `tomorrow`.
    #[serde(default)]
    date: Option<String>,
    /// Markdown added at the end, on a new line.
    #[serde(default)]
    append: Option<String>,
}

/// The day number a tool's `date` names (UTC days; see docs/decisions.md §58).
pub fn day_of(date: Option<&str>) -> Result<i64, ToolError> {
    let today = time::day_number(time::now_ms());
    match date.map(str::trim).filter(|d| !d.is_empty()) {
        None => Ok(today),
        Some(d) if d.eq_ignore_ascii_case("today") => Ok(today),
        Some(d) if d.eq_ignore_ascii_case("yesterday") => Ok(today - 1),
        Some(d) if d.eq_ignore_ascii_case("tomorrow") => Ok(today + 1),
        Some(d) => time::parse_day(d).ok_or_else(|| {
            ToolError::Invalid(format!(
                "`date` `{}` is not a day: give `YYYY-MM-DD` (a date that exists), `today`, `yesterday` or `tomorrow`",
                crate::quote::shorten(d)
            ))
        }),
    }
}

/// A day's note: where it is and the instant its variables are filled with.
#[derive(Debug, Clone)]
pub struct DailyNote {
    pub path: VaultPath,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The day at the current time of day (Obsidian fills `{{time}}` with the time it is now).
    at_ms: i64,
    settings: Settings,
}

impl Workspace {
    /// Where the note of `day` (a day number) is, by the vault's daily-notes settings (read
    /// once here, and carried for the rest of the call).
    pub fn daily_note(&self, day: i64) -> Result<DailyNote, ToolError> {
        self.daily_note_with(day, self.obsidian_settings())
    }

    fn daily_note_with(&self, day: i64, settings: Settings) -> Result<DailyNote, ToolError> {
        let at_ms = time::day_start_ms(day).saturating_add(time::now_ms().rem_euclid(time::DAY_MS));
        let name = moment::format_ms(&settings.daily.format, at_ms);
        let name = name.trim().trim_matches('/');
        if name.is_empty() {
            return Err(ToolError::Invalid(format!(
                "the daily note format `{}` of {} gives an empty name",
                settings.daily.format,
                obsidian::DAILY_NOTES_FILE
            )));
        }
        let mut rel = match settings.daily.folder.as_str() {
            "" => name.to_string(),
            folder => format!("{folder}/{name}"),
        };
        // The format names the note: `.md` is always added (`YYYY.MM.DD` is not an extension).
        if !rel.to_ascii_lowercase().ends_with(".md") {
            rel.push_str(".md");
        }
        if walk::is_hidden_rel(&rel) {
            return Err(ToolError::Invalid(format!(
                "the daily note `{rel}` would be in a hidden (dot) folder or a dot-file; fix the folder or format in {}",
                obsidian::DAILY_NOTES_FILE
            )));
        }
        let path = self.resolve(&rel, Access::Write)?;
        Ok(DailyNote {
            path,
            date: time::format_day(time::day_start_ms(day)),
            at_ms,
            settings,
        })
    }

    /// The plan that makes the day's note exist with `append` at its end; `None` when it exists
    /// and there is nothing to append. `tool` names the writer in the revision log.
    fn plan_daily(
        &self,
        note: &DailyNote,
        append: Option<&str>,
        tool: &str,
    ) -> Result<Option<Plan>, ToolError> {
        let append = append.filter(|a| !a.trim().is_empty());
        let mut extra = Map::new();
        extra.insert("date".into(), json!(note.date));
        let (before, base) = if note.path.abs().is_file() {
            let current = read_text(&note.path)?;
            let text = current.text.clone();
            (Some(current), text)
        } else {
            let (text, template) = self.daily_template_text(note, &mut extra);
            extra.insert("template".into(), json!(template));
            (None, text)
        };
        if before.is_some() && append.is_none() {
            return Ok(None);
        }
        let after = match append {
            Some(extra_text) => append_line(&base, extra_text),
            None => base,
        };
        extra.insert("created".into(), json!(before.is_none()));
        extra.insert("appended".into(), json!(append.is_some()));
        Ok(Some(Plan {
            tool: tool.to_string(),
            change: Change::Write {
                path: note.path.clone(),
                before,
                after,
            },
            extra,
            pinned: false,
        }))
    }

    /// The new daily note's text from its template (none set: empty) and the template's path. A
    /// template that cannot be used leaves the note empty, as Obsidian does, with a warning.
    fn daily_template_text(
        &self,
        note: &DailyNote,
        extra: &mut Map<String, Value>,
    ) -> (String, Option<String>) {
        let Some(name) = &note.settings.daily.template else {
            return (String::new(), None);
        };
        let template = match self.read_daily_template(&note.settings.templates, name) {
            Ok(template) => template,
            Err(e) => {
                tracing::warn!("the daily note template: {e}");
                extra.insert(
                    "template_warning".into(),
                    json!(format!("the daily note was created empty: {e}")),
                );
                return (String::new(), None);
            }
        };
        let title = crate::vault::name::stem(note.path.rel());
        let text = fill(
            &template.text,
            &Filling {
                title,
                at_ms: note.at_ms,
                formats: &note.settings.templates,
            },
        );
        (text, Some(template.path))
    }

    /// The person's own "today's note" (`vaultchat daily`, the app's key): the note of `day`
    /// created from its template if missing, then `append` added, at once and under the write
    /// lock, recorded as the person's in the revision log. Never replaces a change made
    /// meanwhile: a note that appears after the check is not overwritten (the create links the
    /// complete file into place or fails), and an append is planned on the text read under the
    /// lock and written only over that text (its fingerprint).
    pub fn daily_for_person(
        &self,
        day: i64,
        append: Option<&str>,
    ) -> Result<DailyOutcome, ToolError> {
        let note = self.daily_note(day)?;
        let mut warnings = note.settings.warnings.clone();
        let mut outcome = DailyOutcome {
            path: note.path.rel().to_string(),
            date: note.date.clone(),
            created: false,
            appended: false,
            warnings: Vec::new(),
        };
        let written = {
            let _lock = self.lock_writes()?;
            let Some(plan) = self.plan_daily(&note, append, "daily")? else {
                outcome.warnings = warnings;
                return Ok(outcome);
            };
            if let Some(w) = plan.extra.get("template_warning").and_then(Value::as_str) {
                warnings.push(w.to_string());
            }
            outcome.created = plan.extra.get("created") == Some(&json!(true));
            outcome.appended = plan.extra.get("appended") == Some(&json!(true));
            let Change::Write {
                path,
                before,
                after,
            } = plan.change
            else {
                return Err(internal("a daily note plan is always a write"));
            };
            let fingerprint = match &before {
                None => note_io::create_note(&path, &after, false),
                Some(before) => {
                    note_io::write_note(&path, &after, &before.format, Some(&before.fingerprint))
                }
            }
            .map_err(note_error)?;
            (path, before, after, fingerprint)
        };
        let (path, before, after, fingerprint) = written;
        // The note is written; bookkeeping failures are warnings, never a failed command.
        warnings.extend(self.after_write(WriteRecord {
            tool: Some("daily"),
            actor: Some(Actor::User),
            rel: path.rel(),
            before: before.as_ref().map(|b| b.text.as_str()),
            after: Some(&after),
            before_rev: before.as_ref().map(|b| b.fingerprint.to_revision_string()),
            after_rev: Some(fingerprint.to_revision_string()),
        }));
        outcome.warnings = warnings;
        self.published(&[path.rel().to_string()]);
        Ok(outcome)
    }

    /// The vault paths a call of `tool` with `input` touches without naming them in a `note` or
    /// `path` argument, for the permission check: the daily note (a rule on `Journal/**` covers
    /// it) and the template a new note is made from (`create_note`'s `template`, the daily
    /// note's), which the call reads. The settings are read quietly: the call itself warns.
    pub fn implied_targets(&self, tool: &str, input: &Value) -> Vec<String> {
        // Every workspace call is asked this: the settings are read only by the calls that use them.
        match tool {
            READ_DAILY_NOTE | WRITE_DAILY_NOTE => {
                let settings = obsidian::read_settings(&self.vault);
                let date = input.get("date").and_then(Value::as_str);
                let Ok(note) = day_of(date).and_then(|day| self.daily_note_with(day, settings))
                else {
                    return Vec::new();
                };
                let mut targets = vec![note.path.rel().to_string()];
                // The template is read only when the note is made.
                if tool == WRITE_DAILY_NOTE
                    && !note.path.abs().is_file()
                    && let Some(name) = &note.settings.daily.template
                    && let Ok(template) = self.find_template(&note.settings.templates, name, true)
                {
                    targets.push(template.rel().to_string());
                }
                targets
            }
            "create_note" => input
                .get("template")
                .and_then(Value::as_str)
                .and_then(|name| {
                    let settings = obsidian::read_settings(&self.vault);
                    self.find_template(&settings.templates, name, false).ok()
                })
                .map(|template| vec![template.rel().to_string()])
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// What the person's daily-note command did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DailyOutcome {
    pub path: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub created: bool,
    pub appended: bool,
    /// What was wrong with the settings or the template, and what could not follow the write.
    pub warnings: Vec<String>,
}

/// `text` with `line` added on a line of its own at the end (a journal entry follows the last
/// one directly, as a list item joins its list).
pub fn append_line(text: &str, line: &str) -> String {
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(line.trim_end_matches('\n'));
    out.push('\n');
    out
}

fn read_daily_note(ws: &Workspace, args: ReadDailyArgs) -> Result<ToolOutput, ToolError> {
    let day = day_of(args.date.as_deref())?;
    let note = ws.daily_note(day)?;
    let mut out = json!({
        "path": note.path.rel(),
        "date": note.date,
        "exists": false,
        "template": note.settings.daily.template,
    });
    if !note.settings.warnings.is_empty() {
        out["settings_warnings"] = json!(note.settings.warnings);
    }
    if !note.path.abs().is_file() {
        return ToolOutput::json(out);
    }
    let read = read_text(&note.path)?;
    ws.note_read(note.path.rel(), &read.fingerprint.to_revision_string());
    let length = read.text.chars().count();
    let content: String = read.text.chars().take(MAX_READ_CHARS).collect();
    out["exists"] = json!(true);
    out["content"] = json!(content);
    out["length"] = json!(length);
    out["has_more"] = json!(length > MAX_READ_CHARS);
    out["revision"] = json!(read.fingerprint.to_revision_string());
    ToolOutput::json(out)
}

fn write_daily_note(ws: &Workspace, args: WriteDailyArgs) -> Result<Plan, ToolError> {
    let day = day_of(args.date.as_deref())?;
    let note = ws.daily_note(day)?;
    ws.plan_daily(&note, args.append.as_deref(), WRITE_DAILY_NOTE)?
        .ok_or_else(|| {
            ToolError::Invalid(format!(
                "`{}` exists already and nothing was given to `append`; nothing to write (read_daily_note reads it)",
                note.path.rel()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_appended_on_a_line_of_its_own() {
        assert_eq!(append_line("", "- x"), "- x\n");
        assert_eq!(append_line("# Day\n", "- x"), "# Day\n- x\n");
        assert_eq!(append_line("# Day", "- x\n"), "# Day\n- x\n");
        assert_eq!(append_line("- a\n", "- b\n- c"), "- a\n- b\n- c\n");
    }

    #[test]
    fn days_by_date_or_by_name() {
        let _clock = time::fix_now_ms(1_796_115_907_000); // 2026-12-01 09:05 UTC
        let today = time::parse_day("2026-12-01").unwrap_or_default();
        assert_eq!(day_of(None).ok(), Some(today));
        assert_eq!(day_of(Some(" ")).ok(), Some(today));
        assert_eq!(day_of(Some("Today")).ok(), Some(today));
        assert_eq!(day_of(Some("yesterday")).ok(), Some(today - 1));
        assert_eq!(day_of(Some("tomorrow")).ok(), Some(today + 1));
        assert_eq!(
            day_of(Some("2026-02-28")).ok(),
            time::parse_day("2026-02-28")
        );
        let err = day_of(Some("2026-02-30"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("is not a day"), "{err}");
    }
}
