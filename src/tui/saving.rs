//! Keeping the open note on disk: when to save it (autosave about a second after the last change,
//! at once before leaving it), one save at a time, and what waits for a save — opening another
//! note, following a link, quitting, suspending, and the agent's answer for an approved edit.
//!
//! Design (decided here):
//! * A save is an [`Effect::SaveNote`] carrying the text and the note as it was read; the runner
//!   writes it on the blocking pool through the same path as Ctrl+S (atomic write, refused when
//!   the file changed on disk meanwhile) and answers with `App::on_save_finished`. The UI never
//!   waits for the disk.
//! * "Saved" means "the buffer equals what was last written": the editor compares its text with
//!   the text of the save that finished, so keys typed while a save was in flight stay unsaved
//!   and are saved by the next one.
//! * At most one save is in flight; a save asked for meanwhile runs when it finishes.
//! * Leaving the note ([`Leave`]) is a small state machine: with autosave the note is saved and
//!   then left; without it, unsaved changes open the [`UnsavedPrompt`] (save / discard / cancel).
//!   Either way the app also waits for an approved agent edit of the open note that has not
//!   arrived yet, so that approving and quitting at once keeps the edit.

use super::app::Effect;
use super::editor::EditorPane;
use super::keymap::{Action, KeyContext, Keymap};
use super::theme::{Role, Theme};
use crate::agent::{EditorEditResult, Op};
use crate::protocol::NoteText;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget, Wrap};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The default pause after the last change before the note is written.
pub const DEFAULT_AUTOSAVE_DELAY: Duration = Duration::from_millis(1000);

/// `[editor]` settings that decide when the note is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutosaveSettings {
    pub enabled: bool,
    pub delay: Duration,
}

impl Default for AutosaveSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            delay: DEFAULT_AUTOSAVE_DELAY,
        }
    }
}

/// Proof that an `Effect::OpenNote` / `OpenLink` comes from [`Leave`]: only this module can make
/// one, so no path opens a note over unsaved changes (use `App::open_note`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleared(());

/// Where the person is going once the open note is safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leave {
    /// Open another note (the picker, and every other way of opening a note by name).
    Open(String),
    /// Follow a `[[wikilink]]`.
    Link(String),
    /// Suspend to the shell (Ctrl+Z).
    Suspend,
    /// Edit the note in `$EDITOR`.
    External(String),
    Quit,
}

impl Leave {
    /// The effect that carries it out.
    pub fn effect(&self) -> Effect {
        match self {
            Leave::Open(name) => Effect::OpenNote(name.clone(), Cleared(())),
            Leave::Link(target) => Effect::OpenLink(target.clone(), Cleared(())),
            Leave::Suspend => Effect::Suspend,
            Leave::External(path) => Effect::OpenExternal(path.clone()),
            Leave::Quit => Effect::Quit,
        }
    }

    /// "quitting", "opening Seeds", for the prompt.
    fn doing(&self) -> String {
        match self {
            Leave::Open(name) => format!("opening {name}"),
            Leave::Link(target) => format!("following [[{target}]]"),
            Leave::Suspend => "suspending".into(),
            Leave::External(_) => "opening it in $EDITOR".into(),
            Leave::Quit => "quitting".into(),
        }
    }
}

/// How a pending [`Leave`] treats unsaved changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Treat {
    /// Save them first (autosave, or the person chose Save).
    Save,
    /// Drop them (the person chose Discard).
    Discard,
    /// Go only if there are none left once the saves in flight are done; ask otherwise.
    Ask,
}

impl Treat {
    /// Save when `save`, else drop.
    fn saving_if(save: bool) -> Treat {
        if save { Treat::Save } else { Treat::Discard }
    }
}

/// A save the runner is carrying out.
#[derive(Debug)]
struct InFlight {
    path: String,
    /// Agent edits whose text this save writes, answered when it finishes.
    replies: Vec<(u64, String)>,
}

/// What a finished save tells the app to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveReport {
    /// Written; the flash says so only for a save the person asked for.
    Saved { path: String, asked: bool },
    /// Not written: the note changed on disk (the runner reloads it into the conflict state).
    Changed { path: String },
    /// Not written, with why.
    Failed { path: String, error: String },
    /// The answer was for a note that is no longer open.
    Stale,
}

/// The open note's saving state.
#[derive(Debug)]
pub struct Saver {
    pub settings: AutosaveSettings,
    in_flight: Option<InFlight>,
    /// A save was asked for while one was in flight.
    again: bool,
    /// The person asked for the save in flight (Ctrl+S): its success is worth a flash.
    asked: bool,
    /// When the autosave is due.
    deadline: Option<Instant>,
    /// The editor revision the deadline was last set for.
    seen_revision: u64,
    /// Where the person is going once the note is safe.
    pending: Option<(Leave, Treat)>,
    /// Applied agent edits that wait for the next save to be answered.
    replies: Vec<(u64, String)>,
    /// Approved edits of the open note the agent has not delivered yet (by request id).
    awaiting: BTreeSet<u64>,
}

impl Saver {
    pub fn new(settings: AutosaveSettings) -> Self {
        Self {
            settings,
            in_flight: None,
            again: false,
            asked: false,
            deadline: None,
            seen_revision: 0,
            pending: None,
            replies: Vec::new(),
            awaiting: BTreeSet::new(),
        }
    }

    pub fn autosave(&self) -> bool {
        self.settings.enabled
    }

    /// Whether a save is being written now.
    pub fn in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Whether a leave waits for saves or for an agent edit.
    pub fn leaving(&self) -> bool {
        self.pending.is_some()
    }

    /// A new note was opened: nothing of the old one's timing carries over.
    pub fn on_opened(&mut self, editor: &EditorPane) {
        self.deadline = None;
        self.seen_revision = editor.revision();
        self.awaiting.clear();
    }

    /// When the next autosave is due (`None`: nothing to save, or autosave is off). A change of
    /// the text since the last call moves it to `delay` from `now`.
    pub fn deadline(&mut self, editor: &EditorPane, now: Instant) -> Option<Instant> {
        if editor.revision() != self.seen_revision {
            self.seen_revision = editor.revision();
            self.deadline =
                (self.settings.enabled && editor.is_dirty()).then(|| now + self.settings.delay);
        }
        self.deadline
    }

    /// The autosave deadline passed: save if there is something to save.
    pub fn on_due(&mut self, editor: &EditorPane, effects: &mut Vec<Effect>) {
        self.deadline = None;
        if self.settings.enabled && editor.is_dirty() {
            self.save(editor, effects);
        }
    }

    /// Save now if the buffer has unsaved changes and autosave is on (focus lost, a signal).
    pub fn save_now_if_auto(&mut self, editor: &EditorPane, effects: &mut Vec<Effect>) {
        if self.settings.enabled && editor.is_dirty() {
            self.save(editor, effects);
        }
    }

    /// Ctrl+S: save even a clean buffer (the person sees "saved").
    pub fn save_asked(&mut self, editor: &EditorPane, effects: &mut Vec<Effect>) -> bool {
        let started = self.save(editor, effects);
        if started {
            self.asked = true;
        }
        started
    }

    /// Queue a save of the buffer (or remember to save again after the one in flight). `false`
    /// when it cannot be saved: no note, or the note is in the conflict state.
    pub fn save(&mut self, editor: &EditorPane, effects: &mut Vec<Effect>) -> bool {
        let (Some(path), Some(read)) = (editor.path(), editor.note()) else {
            return false;
        };
        if editor.conflict() {
            return false;
        }
        self.deadline = None;
        if self.in_flight.is_some() {
            self.again = true;
            return true;
        }
        effects.push(Effect::SaveNote {
            path: path.to_string(),
            text: editor.text(),
            read: read.clone(),
            agent_edit: !self.replies.is_empty(),
        });
        self.in_flight = Some(InFlight {
            path: path.to_string(),
            replies: std::mem::take(&mut self.replies),
        });
        true
    }

    /// The runner finished a save of `path`: `Ok` with the note as written, or `Err` with
    /// whether the file had changed on disk and the message.
    pub fn on_saved(
        &mut self,
        path: &str,
        result: Result<NoteText, (bool, String)>,
        editor: &mut EditorPane,
        effects: &mut Vec<Effect>,
    ) -> (SaveReport, Option<UnsavedPrompt>) {
        let Some(flight) = self.in_flight.take() else {
            return (SaveReport::Stale, None);
        };
        let asked = std::mem::take(&mut self.asked);
        let again = std::mem::take(&mut self.again);
        let saved = match &result {
            Ok(_) => Ok(()),
            Err((true, _)) => Err(format!(
                "{path} changed on disk before it could be saved; the person must settle the conflict in the editor"
            )),
            Err((false, error)) => Err(format!("{path} could not be saved: {error}")),
        };
        for (id, text) in flight.replies {
            effects.push(Effect::Agent(Op::EditorApplied {
                id,
                result: EditorEditResult::Applied {
                    text,
                    saved: saved.clone(),
                },
            }));
        }
        if editor.path() != Some(flight.path.as_str()) || flight.path != path {
            return (SaveReport::Stale, None);
        }
        match result {
            Ok(note) => {
                editor.mark_saved(note);
                // Typing (or an edit) while the save was written: write that too.
                if (again || !self.replies.is_empty()) && editor.is_dirty() {
                    self.save(editor, effects);
                } else if !editor.is_dirty() {
                    // Edits applied meanwhile that this save already holds.
                    for (id, text) in std::mem::take(&mut self.replies) {
                        effects.push(Effect::Agent(Op::EditorApplied {
                            id,
                            result: EditorEditResult::Applied {
                                text,
                                saved: Ok(()),
                            },
                        }));
                    }
                }
                let report = SaveReport::Saved {
                    path: path.to_string(),
                    asked,
                };
                (report, None)
            }
            Err((changed, error)) => {
                // Replies that waited for the next save will not get one soon: answer them.
                self.answer_unsaved(&saved.err().unwrap_or_default(), effects);
                // A leave that waited for this save stops; the prompt says why and offers the
                // way out (nothing is dropped without the person choosing it).
                let prompt = match self.pending.take() {
                    Some((leave, Treat::Save)) => Some(UnsavedPrompt::new(
                        leave,
                        path.to_string(),
                        Some(if changed {
                            "it changed on disk while you edited it: settle the conflict first (Cancel), or discard your changes".to_string()
                        } else {
                            error.clone()
                        }),
                        !changed,
                    )),
                    other => {
                        self.pending = other;
                        None
                    }
                };
                let report = if changed {
                    SaveReport::Changed {
                        path: path.to_string(),
                    }
                } else {
                    SaveReport::Failed {
                        path: path.to_string(),
                        error,
                    }
                };
                (report, prompt)
            }
        }
    }

    /// Answer every waiting agent edit: applied, not saved, because `why`.
    fn answer_unsaved(&mut self, why: &str, effects: &mut Vec<Effect>) {
        for (id, text) in std::mem::take(&mut self.replies) {
            effects.push(Effect::Agent(Op::EditorApplied {
                id,
                result: EditorEditResult::Applied {
                    text,
                    saved: Err(why.to_string()),
                },
            }));
        }
    }

    /// The person approved request `id`, an edit of the open note: leaving waits for it.
    pub fn expect_edit(&mut self, id: u64) {
        self.awaiting.insert(id);
    }

    /// The turn ended: no approved edit is still on its way.
    pub fn on_turn_done(&mut self) {
        self.awaiting.clear();
    }

    /// An agent edit `id` was applied to the buffer (its text now `text`): save it whatever
    /// the autosave setting, and answer the agent once it is on disk.
    pub fn on_edit_applied(
        &mut self,
        id: u64,
        text: String,
        editor: &EditorPane,
        effects: &mut Vec<Effect>,
    ) {
        self.awaiting.remove(&id);
        self.replies.push((id, text));
        if editor.conflict() {
            self.answer_unsaved(
                "the note changed on disk while it had unsaved changes; the person must settle the conflict in the editor before it is saved",
                effects,
            );
            return;
        }
        self.save(editor, effects);
    }

    /// An agent edit `id` that was not applied.
    pub fn on_edit_refused(&mut self, id: u64, why: String, effects: &mut Vec<Effect>) {
        self.awaiting.remove(&id);
        effects.push(Effect::Agent(Op::EditorApplied {
            id,
            result: EditorEditResult::Refused(why),
        }));
    }

    /// The person wants to leave the note. With nothing unsaved and nothing in flight it
    /// happens at once; with autosave the note is saved first; without autosave, unsaved
    /// changes make `Some(prompt)` to show.
    pub fn leave(
        &mut self,
        leave: Leave,
        editor: &EditorPane,
        effects: &mut Vec<Effect>,
    ) -> Option<UnsavedPrompt> {
        let treat = if self.settings.enabled {
            Treat::Save
        } else {
            Treat::Ask
        };
        if let Some((pending, _)) = &self.pending
            && *pending == leave
        {
            // Asked twice (a second Ctrl+Q): it is already on its way; nothing is dropped.
            return None;
        }
        self.pending = Some((leave, treat));
        self.settle(editor, effects)
    }

    /// Quit without anyone to ask (a signal, the terminal gone): save first with autosave, drop
    /// unsaved changes without it; either way after the saves and agent edits on their way.
    /// `Some` only when the note cannot be saved (a conflict): the caller quits anyway.
    pub fn terminate(
        &mut self,
        editor: &EditorPane,
        effects: &mut Vec<Effect>,
    ) -> Option<UnsavedPrompt> {
        let treat = Treat::saving_if(self.settings.enabled);
        self.pending = Some((Leave::Quit, treat));
        self.settle(editor, effects)
    }

    /// The person answered the prompt.
    pub fn answer(
        &mut self,
        leave: Leave,
        choice: Choice,
        editor: &EditorPane,
        effects: &mut Vec<Effect>,
    ) -> Option<UnsavedPrompt> {
        match choice {
            Choice::Cancel => {
                self.pending = None;
                None
            }
            Choice::Save | Choice::Discard => {
                self.pending = Some((leave, Treat::saving_if(choice == Choice::Save)));
                self.settle(editor, effects)
            }
        }
    }

    /// Carry out a pending leave once nothing is in flight: save first, ask, or go.
    pub fn settle(
        &mut self,
        editor: &EditorPane,
        effects: &mut Vec<Effect>,
    ) -> Option<UnsavedPrompt> {
        let (leave, treat) = self.pending.clone()?;
        if self.in_flight.is_some() {
            return None;
        }
        if !self.awaiting.is_empty() {
            // Leaving waits for the approved edit, but what is typed meanwhile goes to disk now:
            // a signal that stops waiting must not find it only in memory.
            if editor.is_dirty() && treat == Treat::Save && !editor.conflict() {
                self.save(editor, effects);
            }
            return None;
        }
        let path = editor.path().unwrap_or_default().to_string();
        if editor.is_dirty() && treat != Treat::Discard {
            if editor.conflict() {
                self.pending = None;
                return Some(UnsavedPrompt::new(
                    leave,
                    path,
                    Some("it changed on disk while you edited it: settle the conflict first (Cancel), or discard your changes".into()),
                    false,
                ));
            }
            return match treat {
                Treat::Save => {
                    self.save(editor, effects);
                    None
                }
                Treat::Ask | Treat::Discard => {
                    self.pending = None;
                    Some(UnsavedPrompt::new(leave, path, None, true))
                }
            };
        }
        self.pending = None;
        self.deadline = None;
        effects.push(leave.effect());
        None
    }
}

/// A choice of the unsaved-changes prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Save,
    Discard,
    Cancel,
}

/// "The note has unsaved changes": Save / Discard / Cancel before leaving it (autosave off, a
/// failed save, or a conflict). Keys: the `[unsaved]` context, arrows or Tab and Enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsavedPrompt {
    pub leave: Leave,
    path: String,
    /// Why the note could not simply be saved (a failed write, a conflict).
    problem: Option<String>,
    /// Whether Save is offered (not while the note conflicts with the disk).
    can_save: bool,
    focus: Choice,
}

impl UnsavedPrompt {
    pub fn new(leave: Leave, path: String, problem: Option<String>, can_save: bool) -> Self {
        Self {
            leave,
            path,
            problem,
            can_save,
            focus: if can_save {
                Choice::Save
            } else {
                Choice::Cancel
            },
        }
    }

    /// Whether Save is offered (it is not while the note conflicts with the disk).
    pub fn can_save(&self) -> bool {
        self.can_save
    }

    fn choices(&self) -> Vec<Choice> {
        let mut choices = Vec::new();
        if self.can_save {
            choices.push(Choice::Save);
        }
        choices.extend([Choice::Discard, Choice::Cancel]);
        choices
    }

    /// A key (resolved in [`KeyContext::Unsaved`]); `Some` once the person chose.
    pub fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<Choice> {
        let choices = self.choices();
        let at = choices.iter().position(|c| *c == self.focus).unwrap_or(0);
        match action {
            Some(Action::Save) if self.can_save => return Some(Choice::Save),
            Some(Action::Discard) => return Some(Choice::Discard),
            Some(Action::Cancel) => return Some(Choice::Cancel),
            Some(Action::Confirm) => return Some(self.focus),
            _ => {}
        }
        match key.code {
            KeyCode::Left | KeyCode::Up | KeyCode::BackTab => {
                self.focus = choices[(at + choices.len() - 1) % choices.len()];
            }
            KeyCode::Right | KeyCode::Down | KeyCode::Tab => {
                self.focus = choices[(at + 1) % choices.len()];
            }
            _ => {}
        }
        None
    }

    /// Draw the prompt centred in `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, keymap: &Keymap) {
        let width = area.width.saturating_sub(4).min(64);
        if width < 12 || area.height < 5 {
            return;
        }
        let text_width = usize::from(width.saturating_sub(4));
        let mut message = format!(
            "{} has unsaved changes. Save them before {}?",
            self.path,
            self.leave.doing()
        );
        if let Some(problem) = &self.problem {
            message = format!(
                "{} was not saved: {problem}.",
                if self.path.is_empty() {
                    "The note"
                } else {
                    &self.path
                }
            );
        }
        let lines = wrapped_rows(&message, text_width);
        let height = (lines + 4).min(area.height);
        let inner = prompt_box(area, (width, height), " Unsaved changes ", buf, theme);
        Paragraph::new(Line::styled(message, theme.style(Role::Text)))
            .wrap(Wrap { trim: true })
            .render(Rect::new(inner.x, inner.y, inner.width, lines), buf);
        let mut buttons = Vec::new();
        for choice in self.choices() {
            let (action, label) = match choice {
                Choice::Save => (Action::Save, "Save"),
                Choice::Discard => (Action::Discard, "Discard"),
                Choice::Cancel => (Action::Cancel, "Cancel"),
            };
            buttons.extend(button(
                keymap,
                Some(action),
                label,
                choice == self.focus,
                theme,
            ));
        }
        let row = inner.y + lines + 1;
        if row < inner.y + inner.height {
            Paragraph::new(Line::from(buttons))
                .render(Rect::new(inner.x, row, inner.width, 1), buf);
        }
    }
}

/// Clear a rounded box of `width` × `height` centred in `area`, titled `title`, and return its
/// inside less a column of padding each side. The unsaved-changes and the trust prompts both
/// stop the person with a question, so they share one frame.
/// One button of a prompt, `[key] Label`, focused or not, with the gap after it; the key is the
/// first one `action` has in the prompts' key-map context.
pub(crate) fn button(
    keymap: &Keymap,
    action: Option<Action>,
    label: &str,
    focused: bool,
    theme: &Theme,
) -> [Span<'static>; 2] {
    let key = action
        .and_then(|a| keymap.keys_for(KeyContext::Unsaved, a).first().cloned())
        .unwrap_or_default();
    let role = if focused {
        Role::ButtonFocused
    } else {
        Role::Button
    };
    [
        Span::styled(format!(" [{key}] {label} "), theme.style(role)),
        Span::raw("  "),
    ]
}

/// Whether `key` moves the focus between a prompt's buttons (arrows, Tab, Shift+Tab).
pub(crate) fn moves_focus(key: &KeyEvent) -> bool {
    matches!(
        key.code,
        KeyCode::Left
            | KeyCode::Right
            | KeyCode::Up
            | KeyCode::Down
            | KeyCode::Tab
            | KeyCode::BackTab
    )
}

pub(crate) fn prompt_box(
    area: Rect,
    (width, height): (u16, u16),
    title: &'static str,
    buf: &mut Buffer,
    theme: &Theme,
) -> Rect {
    let x = area.x + (area.width - width) / 2;
    let y = area.y + area.height.saturating_sub(height) / 2;
    let rect = Rect::new(x, y, width, height);
    Clear.render(rect, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Role::BannerBorder))
        .title(Span::styled(title, theme.style(Role::BannerTitle)));
    let inner = block.inner(rect);
    block.render(rect, buf);
    Rect::new(
        inner.x + 1,
        inner.y,
        inner.width.saturating_sub(2),
        inner.height,
    )
}

/// Rows `text` takes when word-wrapped at `width` (an estimate that matches ratatui's wrapping
/// for ordinary prose; at least 1).
pub(crate) fn wrapped_rows(text: &str, width: usize) -> u16 {
    if width == 0 {
        return 1;
    }
    let mut rows = 1u16;
    let mut used = 0usize;
    for word in text.split(' ') {
        let len = Span::raw(word).width();
        if used == 0 {
            used = len;
        } else if used + 1 + len <= width {
            used += 1 + len;
        } else {
            rows += 1;
            used = len;
        }
        while used > width {
            rows += 1;
            used -= width;
        }
    }
    rows
}
