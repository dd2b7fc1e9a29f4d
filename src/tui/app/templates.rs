//! Daily notes and templates in the app: the "today's note" key (the host makes the note at once,
//! from its template, and the app opens it as any note) and "insert template" (a picker of the
//! templates folder, its choice filled in and inserted at the cursor as one undo step).

use super::{App, Effect, Overlay};
use crate::host::NoteEntry;
use crate::host::{DailyOpened, FilledTemplate, Request};
use crate::tui::picker::Picker;
use crate::tui::theme::Role;

/// The picker of templates and the filled text of each, by path.
pub(super) struct TemplatePicker {
    pub picker: Picker,
    texts: Vec<(String, String)>,
}

impl TemplatePicker {
    fn new(templates: Vec<FilledTemplate>) -> Self {
        let items = templates
            .iter()
            .map(|t| NoteEntry {
                path: t.path.clone(),
                title: t.name.clone(),
                aliases: Vec::new(),
                modified_ns: 0,
            })
            .collect();
        TemplatePicker {
            picker: Picker::templates(items),
            texts: templates.into_iter().map(|t| (t.path, t.text)).collect(),
        }
    }

    /// The filled text of the template at `path`.
    pub fn text_of(&self, path: &str) -> Option<&str> {
        self.texts
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, text)| text.as_str())
    }
}

impl App {
    /// `insert_template`: ask the host for the templates, filled for the open note.
    pub(super) fn ask_templates(&mut self) {
        let Some(path) = self.editor.path() else {
            self.flash(
                "open a note first: a template is inserted at its cursor",
                Role::Notice,
            );
            return;
        };
        // `{{title}}` is the note's file name without `.md`, as Obsidian names it.
        let name = path.rsplit('/').next().unwrap_or(path);
        let title = name.strip_suffix(".md").unwrap_or(name).to_string();
        self.templates_for = Some(path.to_string());
        self.effects
            .push(Effect::Host(Request::Templates { title }));
    }

    /// The host's templates: a picker of them, or why there are none.
    pub(super) fn on_templates(&mut self, result: Result<Vec<FilledTemplate>, String>) {
        match result {
            Ok(templates) if templates.is_empty() => self.flash(
                "no templates: set the templates folder in Obsidian (Settings → Templates), which writes .obsidian/templates.json",
                Role::Notice,
            ),
            Ok(templates) => {
                let mut picker = TemplatePicker::new(templates);
                picker.picker.set_key_hints(&self.keymap);
                self.overlay = Some(Overlay::Templates(picker));
            }
            Err(message) => self.on_error(message),
        }
    }

    /// The person chose a template: its text at the cursor of the open note.
    pub(super) fn insert_template(&mut self, path: &str, text: Option<String>) {
        let Some(text) = text else {
            return;
        };
        let Some(open) = self.editor.path() else {
            self.flash(
                "open a note first: a template is inserted at its cursor",
                Role::Notice,
            );
            return;
        };
        if self.templates_for.as_deref() != Some(open) {
            // Filled with another note's title: the person moved on while it was on its way.
            self.flash(
                "the template was filled for the note open when you asked; ask again here",
                Role::Notice,
            );
            return;
        }
        self.editor.insert_text(&text);
        self.focus = super::Pane::Editor;
        self.flash(format!("inserted {path}"), Role::Notice);
    }

    /// Today's note exists (made now, or already there): open it as any note is opened.
    pub(super) fn on_daily_note(&mut self, result: Result<DailyOpened, String>) {
        match result {
            Ok(daily) => {
                for warning in &daily.warnings {
                    self.transcript.push_error(warning);
                }
                if daily.created {
                    self.on_vault_changed();
                }
                let path = daily.path.clone();
                self.open_note(daily.path);
                if daily.created && self.prompt.is_none() {
                    self.flash(format!("created {path}"), Role::Notice);
                }
            }
            Err(message) => self.on_error(message),
        }
    }
}
