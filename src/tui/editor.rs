//! The note editor pane: a Markdown note being edited, with undo, selection, wikilink following and
//! the reload-or-conflict dance when the file changes on disk.
//!
//! Design (decided here):
//! * `ratatui_textarea::TextArea` keeps the editing state (lines, cursor, selection) and does the
//!   editing operations, but this pane **draws the text itself**: the textarea can only style a
//!   whole line, and Markdown needs per-span styles (`editor_highlight`), soft wrapping at word
//!   boundaries and a gutter that lines up with wrapped rows.
//! * **Undo is the pane's own**, a stack of whole-text snapshots, one per *step*: a run of typed
//!   characters (a word and the spaces after it), a run of deletions, one paste, one newline, one
//!   agent edit, one reload from disk. The textarea's history records each character and cannot
//!   make a select-all-and-insert one entry (it records a delete and an insert), so its history is
//!   switched off (`set_max_histories(0)`). Snapshots cost a copy of the note per step, bounded by
//!   [`MAX_UNDO_STEPS`]; on a 5,000-line note that is a few hundred kilobytes per step.
//! * Keys reach the pane already resolved by the key map: bound keys arrive as actions (`Undo`,
//!   `Redo`, …) and only unbound keys reach [`EditorPane::handle_key`], which maps them to
//!   conventional editing (arrows, shift to select, ctrl for words, Home/End, PageUp/PageDown).
//!   The textarea's emacs shortcuts are not used, so no key edits behind the undo stack's back.

use std::cell::Cell;
use std::ops::Range;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};
use ratatui_textarea::{CursorMove, DataCursor, TextArea};

use crate::protocol::{EditorState, NoteText};
use crate::tui::editor_highlight::{self, BlockState};
use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::theme::{Role, Theme};
use crate::tui::width::{EDITOR, TAB_WIDTH, char_width};

mod draw;
mod layout;
mod text;
use layout::*;
use text::*;

/// How many undo steps are kept (each is a copy of the note).
pub const MAX_UNDO_STEPS: usize = 200;

/// Rows kept visible above and below the cursor when scrolling, like vim's `scrolloff`.
const SCROLL_OFF: usize = 3;

/// A keystroke in the editor less than this long ago means the person is typing (or moving) in
/// the note: an approved edit elsewhere in it then leaves the view where it is instead of
/// scrolling away from their cursor (docs/decisions.md §61).
pub const TYPING_PAUSE: std::time::Duration = std::time::Duration::from_secs(5);

/// The editing keys the pane handles itself (keys the key map leaves unbound), for the help
/// overlay: (keys, what they do).
pub const EDITING_KEYS: &[(&str, &str)] = &[
    (
        "arrows, home, end",
        "Move the cursor (up/down by screen rows)",
    ),
    ("shift + movement", "Select"),
    ("ctrl-left, ctrl-right", "Move by words"),
    ("ctrl-up, ctrl-down", "Move by paragraphs"),
    ("ctrl-home, ctrl-end", "Go to the start or end of the note"),
    ("pageup, pagedown", "Move by a page"),
    ("ctrl-a", "Select everything"),
    ("esc", "Clear the selection"),
    ("ctrl-backspace, ctrl-delete", "Delete a word"),
    (
        "enter",
        "New line, continuing a list or quote (twice ends the list)",
    ),
    ("tab, shift-tab", "Indent or outdent a list item"),
];

/// The user's answer to "the note changed on disk while you were editing it".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictChoice {
    /// Keep the buffer; the disk text becomes the base, so saving overwrites it knowingly.
    KeepMine,
    /// Load the disk text (the buffer's text stays one undo step away).
    TakeTheirs,
    /// Three-way merge of the last saved text, the buffer and the disk text.
    Merge,
}

/// The note editor pane.
pub struct EditorPane {
    path: Option<String>,
    textarea: TextArea<'static>,
    /// Whether the text ends with a newline; the textarea holds the lines without it.
    trailing_newline: bool,
    /// The note as last read or saved: the text that "clean" means, its fingerprint and format.
    base: Option<NoteText>,
    /// The note on disk while it conflicts with unsaved edits.
    disk: Option<NoteText>,
    /// Why the last merge failed, shown under the conflict banner.
    merge_error: Option<String>,
    history: History,
    /// `is_dirty` cached until the next change (it compares the whole text).
    dirty: Cell<Option<bool>>,
    /// Counts changes of the text (autosave waits for it to stand still).
    revision: u64,
    view: View,
    hints: KeyHints,
    /// When a key last reached the pane (typing, moving, pasting): see [`TYPING_PAUSE`].
    last_keystroke: Option<std::time::Instant>,
    /// The notes `[[links]]` can name, from the host's last listing; until it comes every
    /// link is drawn as a link (never called unresolved on a guess).
    link_targets: Option<std::sync::Arc<crate::host::LinkTargets>>,
}

/// One undo step: the text and cursor before it.
#[derive(Debug, Clone)]
struct Snapshot {
    lines: Vec<String>,
    trailing_newline: bool,
    cursor: (usize, usize),
}

/// What kind of typing the open undo step collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Typing {
    Word,
    Space,
    Delete,
}

#[derive(Debug, Default)]
struct History {
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    /// The typing step still open, with the cursor after its last edit: the next edit of a
    /// compatible kind at that same cursor joins it instead of starting a new step.
    open: Option<(Typing, (usize, usize))>,
}

impl History {
    fn push(&mut self, snapshot: Snapshot) {
        if self.undo.len() == MAX_UNDO_STEPS {
            self.undo.remove(0);
        }
        self.undo.push(snapshot);
        self.redo.clear();
    }
}

/// What the last frame laid out, for scrolling, clicks and moving by screen rows.
#[derive(Debug, Clone, Default)]
struct View {
    /// The first visible row: (line, wrapped segment of that line).
    top: (usize, usize),
    /// Keep the cursor in view (off while the mouse wheel scrolls).
    follow_cursor: bool,
    /// Width and height of the text area in the last frame (0 before the first).
    text_width: usize,
    text_height: usize,
    /// Where the text starts on screen.
    text_x: u16,
    rows: Vec<ScreenRow>,
    cursor_screen: Option<(u16, u16)>,
    /// The screen column Up/Down aim for, kept across consecutive vertical moves.
    desired_x: Option<usize>,
    /// Lines (first, last) the next frame brings into view instead of following the cursor:
    /// what an approved edit changed.
    reveal: Option<(usize, usize)>,
}

#[derive(Debug, Clone)]
struct ScreenRow {
    y: u16,
    line: usize,
    chars: Range<usize>,
}

/// Key names shown on screen, from the active key map.
#[derive(Debug, Clone)]
struct KeyHints {
    open_picker: String,
    keep_mine: String,
    take_theirs: String,
    merge: String,
}

impl KeyHints {
    fn from_keymap(keymap: &Keymap) -> Self {
        let first = |context, action| {
            keymap
                .keys_for(context, action)
                .into_iter()
                .next()
                .unwrap_or_else(|| "?".to_string())
        };
        KeyHints {
            open_picker: first(KeyContext::Global, Action::OpenPicker),
            keep_mine: first(KeyContext::Conflict, Action::KeepMine),
            take_theirs: first(KeyContext::Conflict, Action::TakeTheirs),
            merge: first(KeyContext::Conflict, Action::Merge),
        }
    }
}

impl Default for EditorPane {
    fn default() -> Self {
        Self::new()
    }
}

impl EditorPane {
    /// An empty pane with no note open.
    pub fn new() -> Self {
        EditorPane {
            path: None,
            textarea: new_textarea(vec![String::new()]),
            trailing_newline: false,
            base: None,
            disk: None,
            merge_error: None,
            history: History::default(),
            dirty: Cell::new(None),
            revision: 0,
            view: View {
                follow_cursor: true,
                ..View::default()
            },
            hints: KeyHints::from_keymap(&Keymap::default_map()),
            last_keystroke: None,
            link_targets: None,
        }
    }

    /// The notes links can name (the host's, after each listing): a `[[link]]` to none of them
    /// is drawn in the unresolved role.
    pub fn set_link_targets(&mut self, targets: std::sync::Arc<crate::host::LinkTargets>) {
        self.link_targets = Some(targets);
    }

    /// Show the keys of `keymap` in hints (the empty pane, the conflict banner).
    pub fn set_key_hints(&mut self, keymap: &Keymap) {
        self.hints = KeyHints::from_keymap(keymap);
    }

    /// Show a note (a [`NoteText`] as the vault read it: text is LF, format kept by the App for
    /// saving). The cursor starts at the top and the undo history is empty.
    pub fn open(&mut self, path: &str, note: NoteText) {
        let (lines, trailing) = split_text(&note.text);
        self.path = Some(path.to_string());
        self.base = Some(note);
        self.disk = None;
        self.merge_error = None;
        self.history = History::default();
        self.view = View {
            follow_cursor: true,
            ..View::default()
        };
        self.set_lines(lines, trailing, (0, 0));
    }

    /// Close the note (the App saves or asks first).
    pub fn close(&mut self) {
        let hints = self.hints.clone();
        *self = EditorPane::new();
        self.hints = hints;
    }

    /// The vault-relative path of the open note.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The buffer's text: lines joined with `\n`, ending in a newline when the note did.
    pub fn text(&self) -> String {
        join_lines(self.textarea.lines(), self.trailing_newline)
    }

    /// Whether the text differs from the note as last opened or saved.
    pub fn is_dirty(&self) -> bool {
        let Some(base) = &self.base else {
            return false;
        };
        if let Some(dirty) = self.dirty.get() {
            return dirty;
        }
        let dirty = !same_text(self.textarea.lines(), self.trailing_newline, &base.text);
        self.dirty.set(Some(dirty));
        dirty
    }

    /// A number that changes whenever the text changes (typing, undo, an agent edit, a reload).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The note as last read or saved (its fingerprint for the freshness check, its format for
    /// writing it back).
    pub fn note(&self) -> Option<&NoteText> {
        self.base.as_ref()
    }

    /// The App wrote the buffer to disk as `note`: that is now the clean state.
    pub fn mark_saved(&mut self, note: NoteText) {
        self.base = Some(note);
        self.disk = None;
        self.merge_error = None;
        self.dirty.set(None);
    }

    /// An unbound key: typing and movement (shift extends the selection).
    pub fn handle_key(&mut self, key: &KeyEvent) {
        if key.kind == KeyEventKind::Release || self.path.is_none() {
            return;
        }
        self.last_keystroke = Some(std::time::Instant::now());
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let word = ctrl || alt;
        let vertical = matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown
        ) && !word;
        if !vertical {
            self.view.desired_x = None;
        }
        self.view.follow_cursor = true;
        match key.code {
            // Ctrl+Alt+char is AltGr on some terminals: a typed character, not a shortcut.
            KeyCode::Char(c) if ctrl == alt => self.type_char(c),
            KeyCode::Char('a') if ctrl && !alt => {
                self.textarea.select_all();
                self.history.open = None;
            }
            KeyCode::Enter if !ctrl && !alt => self.newline(),
            KeyCode::Tab if !ctrl && !alt => self.tab(),
            KeyCode::BackTab => self.outdent(),
            KeyCode::Backspace if word => {
                self.edit(None, |t| t.delete_word());
            }
            KeyCode::Backspace => {
                self.edit(Some(Typing::Delete), |t| t.delete_char());
            }
            KeyCode::Delete if word => {
                self.edit(None, |t| t.delete_next_word());
            }
            KeyCode::Delete => {
                self.edit(Some(Typing::Delete), |t| t.delete_next_char());
            }
            KeyCode::Left if word => self.move_cursor(CursorMove::WordBack, shift),
            KeyCode::Right if word => self.move_cursor(CursorMove::WordForward, shift),
            KeyCode::Left => self.move_cursor(CursorMove::Back, shift),
            KeyCode::Right => self.move_cursor(CursorMove::Forward, shift),
            KeyCode::Up if word => self.move_cursor(CursorMove::ParagraphBack, shift),
            KeyCode::Down if word => self.move_cursor(CursorMove::ParagraphForward, shift),
            KeyCode::Up => self.move_vertically(-1, shift),
            KeyCode::Down => self.move_vertically(1, shift),
            KeyCode::PageUp => self.move_vertically(-(self.page_rows() as isize), shift),
            KeyCode::PageDown => self.move_vertically(self.page_rows() as isize, shift),
            KeyCode::Home if ctrl => {
                self.move_cursor(CursorMove::Top, shift);
                self.textarea.move_cursor(CursorMove::Head);
            }
            KeyCode::End if ctrl => {
                self.move_cursor(CursorMove::Bottom, shift);
                self.textarea.move_cursor(CursorMove::End);
            }
            KeyCode::Home => self.move_cursor(CursorMove::Head, shift),
            KeyCode::End => self.move_cursor(CursorMove::End, shift),
            KeyCode::Esc => {
                self.textarea.cancel_selection();
                self.history.open = None;
            }
            _ => {}
        }
    }

    /// An action from the key map. Undo and Redo are the pane's; the rest are the App's (`false`).
    pub fn handle(&mut self, action: Action) -> bool {
        match action {
            Action::Undo => {
                self.undo();
                true
            }
            Action::Redo => {
                self.redo();
                true
            }
            _ => false,
        }
    }

    /// Insert `text` at the cursor, replacing the selection, as one undo step (a paste).
    pub fn insert_text(&mut self, text: &str) {
        if self.path.is_none() {
            return;
        }
        self.last_keystroke = Some(std::time::Instant::now());
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.edit(None, |t| t.insert_str(&text));
        self.view.follow_cursor = true;
    }

    /// The text of line `row` (empty past the end).
    pub fn line(&self, row: usize) -> String {
        self.textarea.lines().get(row).cloned().unwrap_or_default()
    }

    /// Replace the `typed` characters before the cursor with `text` as ONE undo step (a `[[`
    /// completion). When `text` ends with `]]` and `]]` already follows the cursor, the cursor
    /// steps over those instead of doubling them.
    pub fn replace_before_cursor(&mut self, typed: usize, text: &str) {
        if self.path.is_none() {
            return;
        }
        let (row, col) = self.cursor();
        let rest: String = self.line(row).chars().skip(col).take(2).collect();
        let (text, step_over) = match text.strip_suffix("]]") {
            Some(inner) if rest == "]]" => (inner.to_string(), 2),
            _ => (text.to_string(), 0),
        };
        self.textarea.cancel_selection();
        self.edit(None, |t| {
            for _ in 0..typed {
                t.delete_char();
            }
            t.insert_str(&text);
            for _ in 0..step_over {
                t.move_cursor(CursorMove::Forward);
            }
            true
        });
        self.history.open = None;
        self.view.follow_cursor = true;
    }

    /// Undo one step; `false` when there is nothing to undo.
    pub fn undo(&mut self) -> bool {
        let Some(snapshot) = self.history.undo.pop() else {
            return false;
        };
        let current = self.snapshot();
        self.history.redo.push(current);
        self.history.open = None;
        self.restore(snapshot);
        true
    }

    /// Redo one undone step; `false` when there is nothing to redo.
    pub fn redo(&mut self) -> bool {
        let Some(snapshot) = self.history.redo.pop() else {
            return false;
        };
        let current = self.snapshot();
        self.history.undo.push(current);
        self.history.open = None;
        self.restore(snapshot);
        true
    }

    /// Char offsets (Unicode scalar values) of the selection, start < end, for the agent.
    pub fn selection_chars(&self) -> Option<Range<usize>> {
        let (start, end) = self.textarea.selection_range()?;
        if start == end {
            return None;
        }
        let lines = self.textarea.lines();
        Some(char_offset(lines, start)..char_offset(lines, end))
    }

    /// The cursor as a char offset into [`EditorPane::text`].
    pub fn cursor_char(&self) -> usize {
        char_offset(self.textarea.lines(), self.cursor())
    }

    /// The cursor as (line, column), both 0-based, the column in chars.
    pub fn cursor_line_col(&self) -> (usize, usize) {
        self.cursor()
    }

    /// The selected text, if any.
    pub fn selected_text(&self) -> Option<String> {
        let (start, end) = self.textarea.selection_range()?;
        if start == end {
            return None;
        }
        let lines = self.textarea.lines();
        let mut out = String::new();
        let last = end.0.min(lines.len().saturating_sub(1));
        for (row, line) in lines.iter().enumerate().take(last + 1).skip(start.0) {
            let from = if row == start.0 { start.1 } else { 0 };
            let to = if row == end.0 {
                end.1
            } else {
                line.chars().count()
            };
            out.extend(line.chars().skip(from).take(to.saturating_sub(from)));
            if row != end.0 {
                out.push('\n');
            }
        }
        Some(out)
    }

    /// Select `range` (char offsets into [`EditorPane::text`]), cursor at its end; an empty range
    /// only moves the cursor. For showing what an agent edit changed.
    pub fn select_chars(&mut self, range: Range<usize>) {
        let start = position_of(self.textarea.lines(), range.start);
        let end = position_of(self.textarea.lines(), range.end);
        self.textarea.cancel_selection();
        jump(&mut self.textarea, start);
        if start != end {
            self.textarea.start_selection();
            jump(&mut self.textarea, end);
        }
        self.history.open = None;
        self.view.follow_cursor = true;
    }

    /// The note, selection and cursor as the session tools see them.
    pub fn editor_state(&self) -> EditorState {
        EditorState {
            text: self.text(),
            selection: self.selection_chars(),
            cursor: self.cursor_char(),
        }
    }

    /// Replace the whole text with `new_text` as ONE undo step, keeping the cursor near where it
    /// was (an agent edit): before the change it stays, after it it shifts with the text, inside it
    /// it goes to the end of the new text. Unless the person is typing in the note (a keystroke
    /// within [`TYPING_PAUSE`]), the next frame scrolls so the changed lines are visible; the
    /// cursor stays, and the next key brings the view back to it, as after the mouse wheel.
    pub fn apply_edit(&mut self, new_text: &str) {
        let old = self.text();
        if old == new_text {
            return;
        }
        let cursor = map_offset(&old, new_text, self.cursor_char());
        let snapshot = self.snapshot();
        self.history.push(snapshot);
        self.history.open = None;
        let (lines, trailing) = split_text(new_text);
        let changed = changed_lines(self.textarea.lines(), &lines);
        let position = position_of(&lines, cursor);
        self.set_lines(lines, trailing, position);
        if !self.typing() {
            self.view.reveal = Some(changed);
        }
    }

    /// Whether a key reached the pane within [`TYPING_PAUSE`].
    pub fn typing(&self) -> bool {
        self.last_keystroke
            .is_some_and(|at| at.elapsed() < TYPING_PAUSE)
    }

    /// The first and last lines of the text on screen in the last frame.
    pub fn visible_lines(&self) -> Option<(usize, usize)> {
        let first = self.view.rows.first()?.line;
        let last = self.view.rows.last()?.line;
        Some((first, last))
    }

    /// The `[[wikilink]]` target under the cursor (`Note#Heading` → "Note"; the alias is dropped).
    pub fn link_under_cursor(&self) -> Option<String> {
        let (row, col) = self.cursor();
        let line = self.textarea.lines().get(row)?;
        let cursor_byte = line
            .char_indices()
            .nth(col)
            .map_or(line.len(), |(byte, _)| byte);
        let link = editor_highlight::wikilinks(line)
            .into_iter()
            .find(|range| range.contains(&cursor_byte))?;
        let inner = line[link].trim_start_matches('!');
        let inner = inner.strip_prefix("[[")?.strip_suffix("]]")?;
        let target = inner.split('|').next()?.split('#').next()?.trim();
        (!target.is_empty()).then(|| target.to_string())
    }

    /// The note changed on disk. Same text as the base: only its fingerprint is taken. Clean
    /// buffer: reload, keeping the cursor line (undo brings the old text back). Dirty buffer:
    /// enter the conflict state (a later change replaces the pending disk version).
    pub fn on_disk_change(&mut self, note: NoteText) {
        let Some(base) = &self.base else {
            return;
        };
        if note.text == base.text {
            // A touch, a sync tool rewriting the same bytes, our own save, or the disk going back
            // to what we started from: nothing to reconcile.
            self.base = Some(note);
            self.disk = None;
            self.merge_error = None;
            self.dirty.set(None);
            return;
        }
        if same_text(self.textarea.lines(), self.trailing_newline, &note.text) {
            self.base = Some(note);
            self.disk = None;
            self.merge_error = None;
            self.dirty.set(None);
            return;
        }
        if self.disk.is_none() && !self.is_dirty() {
            let text = note.text.clone();
            self.base = Some(note);
            self.replace_keeping_line(&text);
            self.dirty.set(None);
            return;
        }
        self.disk = Some(note);
        self.merge_error = None;
    }

    /// Whether the pane waits for a [`ConflictChoice`].
    pub fn conflict(&self) -> bool {
        self.disk.is_some()
    }

    /// Settle a conflict. KeepMine: stay dirty, the disk text becomes the new base (a save
    /// overwrites it knowingly). TakeTheirs: load the disk text (one undo step). Merge:
    /// `merge3(base = last saved, ours = buffer, theirs = disk)`; on success the buffer is the merged
    /// text (dirty), on failure the conflict stays and the message says which lines clash.
    /// Without a conflict this does nothing.
    pub fn resolve_conflict(&mut self, choice: ConflictChoice) -> Result<(), String> {
        let Some(disk) = self.disk.take() else {
            return Ok(());
        };
        match choice {
            ConflictChoice::KeepMine => {}
            ConflictChoice::TakeTheirs => self.replace_keeping_line(&disk.text),
            ConflictChoice::Merge => {
                let base = self.base.as_ref().map_or("", |b| b.text.as_str());
                match crate::text::diff::merge3(base, &self.text(), &disk.text) {
                    Ok(merged) => self.replace_keeping_line(&merged),
                    Err(clash) => {
                        let message = if clash.base_end > clash.base_start + 1 {
                            format!(
                                "Cannot merge: both versions changed lines {}–{}",
                                clash.base_start + 1,
                                clash.base_end
                            )
                        } else {
                            format!(
                                "Cannot merge: both versions changed line {}",
                                clash.base_start + 1
                            )
                        };
                        self.disk = Some(disk);
                        self.merge_error = Some(message.clone());
                        return Err(message);
                    }
                }
            }
        }
        self.base = Some(disk);
        self.merge_error = None;
        self.dirty.set(None);
        Ok(())
    }

    /// Where the cursor was drawn in the last frame (when focused), for the terminal cursor.
    pub fn cursor_position(&self) -> Option<(u16, u16)> {
        self.view.cursor_screen
    }

    /// Scroll the view by `rows` screen rows (the mouse wheel); the cursor stays where it is until
    /// the next key.
    pub fn scroll_view(&mut self, rows: isize) {
        let width = self.wrap_width();
        let lines = self.textarea.lines();
        let mut top = self.view.top;
        for _ in 0..rows.unsigned_abs() {
            let next = if rows < 0 {
                step_back(lines, width, top)
            } else {
                step_forward(lines, width, top)
            };
            match next {
                Some(position) => top = position,
                None => break,
            }
        }
        self.view.top = top;
        self.view.follow_cursor = false;
    }

    /// A mouse click at screen (`column`, `row`): put the cursor there. `false` when the click was
    /// not on the text.
    pub fn click(&mut self, column: u16, row: u16) -> bool {
        let Some(position) = self.position_at(column, row) else {
            return false;
        };
        self.textarea.cancel_selection();
        jump(&mut self.textarea, position);
        self.history.open = None;
        self.view.follow_cursor = true;
        self.view.desired_x = None;
        true
    }

    /// The mouse moved to screen (`column`, `row`) with the button held since a click: select
    /// from where the click put the cursor to there (Ctrl+C copies it).
    pub fn drag_to(&mut self, column: u16, row: u16) {
        let Some(position) = self.position_at(column, row) else {
            return;
        };
        if self.textarea.selection_range().is_none() {
            self.textarea.start_selection();
        }
        jump(&mut self.textarea, position);
        self.history.open = None;
        self.view.desired_x = None;
    }

    /// The text position (line, char column) shown at screen (`column`, `row`) in the last frame.
    fn position_at(&self, column: u16, row: u16) -> Option<(usize, usize)> {
        let screen_row = self.view.rows.iter().find(|r| r.y == row)?;
        let line = self.textarea.lines().get(screen_row.line)?;
        let layout = LineLayout::new(line, self.wrap_width());
        let x = usize::from(column.saturating_sub(self.view.text_x));
        let segment = layout
            .segments
            .iter()
            .position(|s| *s == screen_row.chars)
            .unwrap_or(0);
        Some((screen_row.line, layout.col_at_x(segment, x)))
    }

    /// Draw the pane: a bordered box titled with the note path (`●` when dirty), the conflict
    /// banner, a line-number gutter, the Markdown-styled text with the cursor line, the selection
    /// and the cursor, a scroll bar on the right border, and the cursor position at the bottom.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        self.view.rows.clear();
        self.view.cursor_screen = None;
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let block = self.block(area, theme, focused);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let mut body = inner;
        if self.disk.is_some() {
            let used = self.render_conflict(body, buf, theme);
            body.y += used;
            body.height -= used;
        }
        if body.is_empty() {
            return;
        }
        if self.path.is_none() {
            self.render_empty(body, buf, theme);
            return;
        }
        self.render_text(body, buf, theme, focused);
        if area.width >= 2 && area.height >= 3 {
            self.render_scrollbar(area, buf, theme);
        }
    }

    // ---- editing -------------------------------------------------------------------------

    /// The cursor as (row, col).
    fn cursor(&self) -> (usize, usize) {
        let DataCursor(row, col) = self.textarea.cursor();
        (row, col)
    }

    /// Run one editing operation on the textarea as part of the open undo step (when `typing`
    /// continues it) or as a new step. Returns whether the text changed.
    fn edit(
        &mut self,
        typing: Option<Typing>,
        op: impl FnOnce(&mut TextArea<'static>) -> bool,
    ) -> bool {
        let selecting = self.selection_chars().is_some();
        if !selecting {
            // An empty selection (shift+arrow there and back) must not turn the edit into a
            // replacement of the range between its anchor and a cursor the edit moves.
            self.textarea.cancel_selection();
        }
        let cursor = self.cursor();
        let continues = match (typing, self.history.open) {
            (Some(kind), Some((open, at))) => {
                at == cursor
                    && !selecting
                    && (open == kind || (open == Typing::Word && kind == Typing::Space))
            }
            _ => false,
        };
        let before = (!continues).then(|| self.snapshot());
        let modified = op(&mut self.textarea);
        if modified {
            if let Some(snapshot) = before {
                self.history.push(snapshot);
            }
            self.history.open = typing.map(|kind| (kind, self.cursor()));
            self.dirty.set(None);
            self.revision += 1;
        }
        // An edit that did nothing (backspace at the very start) leaves no step behind.
        modified
    }

    fn type_char(&mut self, c: char) {
        let kind = if c.is_whitespace() {
            Typing::Space
        } else {
            Typing::Word
        };
        self.edit(Some(kind), |t| {
            t.insert_char(c);
            true
        });
    }

    /// Enter: a new line that continues the list item or quote (an empty item ends the list) and
    /// keeps the indentation.
    fn newline(&mut self) {
        let (row, col) = self.cursor();
        let lines = self.textarea.lines();
        let line = lines.get(row).cloned().unwrap_or_default();
        let in_code = matches!(
            editor_highlight::state_at(lines, row),
            BlockState::Fence { .. } | BlockState::Frontmatter
        );
        let prefix = if self.selection_chars().is_some() {
            None
        } else if in_code {
            Some(Continuation::indent_only(&line))
        } else {
            Some(Continuation::of(&line))
        };
        let Some(prefix) = prefix else {
            self.edit(None, |t| t.insert_str("\n"));
            return;
        };
        if prefix.marker_chars > 0 && col >= prefix.marker_chars && prefix.empty_item {
            // Enter on an empty item ends the list: the marker goes, the line stays.
            let marker_end = prefix.marker_chars;
            self.edit(None, |t| {
                t.move_cursor(CursorMove::Head);
                t.start_selection();
                t.move_cursor(CursorMove::Jump(
                    u16::try_from(row).unwrap_or(u16::MAX),
                    u16::try_from(marker_end).unwrap_or(u16::MAX),
                ));
                t.cut()
            });
            self.textarea.cancel_selection();
            return;
        }
        let continuation = if col >= prefix.marker_chars {
            prefix.next
        } else {
            String::new()
        };
        self.edit(None, |t| t.insert_str(format!("\n{continuation}")));
    }

    /// Tab: indent a list item (the whole line), otherwise insert spaces to the next tab stop.
    fn tab(&mut self) {
        let (row, col) = self.cursor();
        let line = self.textarea.lines().get(row).cloned().unwrap_or_default();
        if self.selection_chars().is_none() && Continuation::of(&line).marker_chars > 0 {
            let indent = " ".repeat(TAB_WIDTH);
            self.edit(None, |t| {
                t.move_cursor(CursorMove::Head);
                t.insert_str(&indent)
            });
            jump(&mut self.textarea, (row, col + TAB_WIDTH));
        } else {
            self.edit(None, |t| t.insert_tab());
        }
    }

    /// Shift+Tab: take one indentation level (a tab or up to four spaces) off the line.
    fn outdent(&mut self) {
        let (row, col) = self.cursor();
        let line = self.textarea.lines().get(row).cloned().unwrap_or_default();
        let remove = if line.starts_with('\t') {
            1
        } else {
            line.chars()
                .take(TAB_WIDTH)
                .take_while(|c| *c == ' ')
                .count()
        };
        if remove == 0 {
            return;
        }
        self.textarea.cancel_selection();
        self.edit(None, |t| {
            t.move_cursor(CursorMove::Head);
            t.delete_str(remove)
        });
        jump(&mut self.textarea, (row, col.saturating_sub(remove)));
    }

    fn move_cursor(&mut self, movement: CursorMove, extend: bool) {
        self.begin_move(extend);
        self.textarea.move_cursor(movement);
    }

    fn begin_move(&mut self, extend: bool) {
        if extend {
            if !self.textarea.is_selecting() {
                self.textarea.start_selection();
            }
        } else {
            self.textarea.cancel_selection();
        }
        self.history.open = None;
    }

    /// Up/Down by screen rows (wrapped lines count as several), aiming at the same screen column.
    fn move_vertically(&mut self, rows: isize, extend: bool) {
        let width = self.wrap_width();
        let lines = self.textarea.lines();
        let (row, col) = self.cursor();
        let layout = LineLayout::new(&lines[row.min(lines.len() - 1)], width);
        let segment = layout.segment_of(col);
        let x = self
            .view
            .desired_x
            .unwrap_or_else(|| layout.x_of(segment, col));
        let mut position = (row, segment);
        let mut moved = false;
        for _ in 0..rows.unsigned_abs() {
            let next = if rows < 0 {
                step_back(lines, width, position)
            } else {
                step_forward(lines, width, position)
            };
            match next {
                Some(p) => {
                    position = p;
                    moved = true;
                }
                None => break,
            }
        }
        let target = if moved {
            let layout = LineLayout::new(&lines[position.0], width);
            (position.0, layout.col_at_x(position.1, x))
        } else if rows < 0 {
            (row, 0)
        } else {
            (row, lines[row].chars().count())
        };
        self.begin_move(extend);
        jump(&mut self.textarea, target);
        self.view.desired_x = Some(x);
    }

    fn page_rows(&self) -> usize {
        self.view.text_height.saturating_sub(1).max(1)
    }

    fn wrap_width(&self) -> usize {
        if self.view.text_width == 0 {
            usize::MAX
        } else {
            self.view.text_width
        }
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            lines: self.textarea.lines().to_vec(),
            trailing_newline: self.trailing_newline,
            cursor: self.cursor(),
        }
    }

    fn restore(&mut self, snapshot: Snapshot) {
        self.set_lines(snapshot.lines, snapshot.trailing_newline, snapshot.cursor);
    }

    fn set_lines(&mut self, lines: Vec<String>, trailing_newline: bool, cursor: (usize, usize)) {
        self.textarea = new_textarea(lines);
        self.trailing_newline = trailing_newline;
        jump(&mut self.textarea, cursor);
        self.dirty.set(None);
        self.revision += 1;
        self.view.follow_cursor = true;
        self.view.desired_x = None;
    }

    /// Replace the text as one undo step, keeping the cursor on its line (reloads, conflicts).
    fn replace_keeping_line(&mut self, text: &str) {
        if self.text() == text {
            return;
        }
        let cursor = self.cursor();
        let snapshot = self.snapshot();
        self.history.push(snapshot);
        self.history.open = None;
        let (lines, trailing) = split_text(text);
        self.set_lines(lines, trailing, cursor);
    }

    /// Move the view so lines `first..=last` are visible with [`SCROLL_OFF`] rows around them
    /// where they fit (their start, when they are taller than the view); a view already showing
    /// them stays.
    fn scroll_to_lines(&mut self, (first, last): (usize, usize)) {
        let width = self.wrap_width();
        let height = self.view.text_height.max(1);
        let lines = self.textarea.lines();
        let last_line = lines.len() - 1;
        let (first, last) = (
            first.min(last_line),
            last.min(last_line).max(first.min(last_line)),
        );
        let margin = SCROLL_OFF.min(height.saturating_sub(1) / 2);
        let end = (
            last,
            LineLayout::new(&lines[last], width).segments.len() - 1,
        );
        let highest = walk_back(lines, width, (first, 0), margin);
        let lowest = walk_back(lines, width, end, height - 1 - margin);
        if self.view.top > highest {
            self.view.top = highest;
        } else if self.view.top < lowest {
            self.view.top = lowest.min(highest);
        }
    }

    /// Move the view so the cursor is visible with [`SCROLL_OFF`] rows around it.
    fn scroll_to_cursor(&mut self) {
        let width = self.wrap_width();
        let height = self.view.text_height.max(1);
        let lines = self.textarea.lines();
        let (row, col) = self.cursor();
        let row = row.min(lines.len() - 1);
        let cursor = (row, LineLayout::new(&lines[row], width).segment_of(col));
        let margin = SCROLL_OFF.min(height.saturating_sub(1) / 2);
        let highest = walk_back(lines, width, cursor, margin);
        if self.view.top > highest {
            self.view.top = highest;
        }
        let lowest = walk_back(lines, width, cursor, height - 1 - margin);
        if self.view.top < lowest {
            self.view.top = lowest;
        }
    }

    /// Keep the view from scrolling past the end (the last row stays at the bottom at most).
    fn clamp_top(&mut self) {
        let width = self.wrap_width();
        let lines = self.textarea.lines();
        let last_line = lines.len() - 1;
        let last = (
            last_line,
            LineLayout::new(&lines[last_line], width).segments.len() - 1,
        );
        let max_top = walk_back(lines, width, last, self.view.text_height.saturating_sub(1));
        if self.view.top > max_top {
            self.view.top = max_top;
        }
        let top_line = self.view.top.0.min(last_line);
        let segments = LineLayout::new(&lines[top_line], width).segments.len();
        self.view.top = (top_line, self.view.top.1.min(segments - 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Fingerprint, TextFormat};
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crate::vault::note_io::content_hash;

    fn note(text: &str) -> NoteText {
        NoteText {
            text: text.to_string(),
            format: TextFormat::default(),
            fingerprint: Fingerprint {
                hash: content_hash(text.as_bytes()),
                mtime_ns: 0,
                size: text.len() as u64,
            },
        }
    }

    #[test]
    fn the_changed_lines_of_an_edit_are_found_between_what_is_kept() {
        let lines = |text: &str| split_text(text).0;
        let old = lines("a\nb\nc\nd\n");
        assert_eq!(changed_lines(&old, &lines("a\nB\nc\nd\n")), (1, 1));
        assert_eq!(changed_lines(&old, &lines("a\nb\nx\ny\nc\nd\n")), (2, 3));
        // Lines removed: the line after the removal; at the end, the last line.
        assert_eq!(changed_lines(&old, &lines("a\nd\n")), (1, 1));
        assert_eq!(changed_lines(&old, &lines("a\nb\n")), (1, 1));
        // A repeated line is not counted twice at the start and the end.
        let same = lines("x\nx\n");
        assert_eq!(changed_lines(&same, &lines("x\nx\nx\n")), (2, 2));
    }

    fn opened(text: &str) -> EditorPane {
        let mut pane = EditorPane::new();
        pane.open("Notes/Plan.md", note(text));
        pane
    }

    fn press(pane: &mut EditorPane, code: KeyCode) {
        pane.handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
    }

    fn press_with(pane: &mut EditorPane, code: KeyCode, modifiers: KeyModifiers) {
        pane.handle_key(&KeyEvent::new(code, modifiers));
    }

    fn type_text(pane: &mut EditorPane, text: &str) {
        for c in text.chars() {
            if c == '\n' {
                press(pane, KeyCode::Enter);
            } else {
                press(pane, KeyCode::Char(c));
            }
        }
    }

    /// Put the cursor at char offset `at`.
    fn cursor_to(pane: &mut EditorPane, at: usize) {
        pane.select_chars(at..at);
    }

    const SAMPLE: &str = "---\ntags: [plan]\n---\n# Plan for Q3\n\nWe ship the **editor** first; see [[Roadmap#Goals|the roadmap]] and #work/q3.\n\n## Tasks\n\n- [x] sketch the layout\n- [ ] write the `render` code\n1. measure\n2. ship\n\n> Quotes stay *calm*.\n\n```rust\nfn main() { println!(\"# not a heading\"); }\n```\n\nLast line with a very long sentence that goes on and on so that it has to wrap around at the pane's right edge.\n";

    #[test]
    fn open_and_text_round_trip_exactly() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\n\n",
            "# 日本語\n本文です\n",
            "no newline at the end",
            "\n\nblank lines first",
        ] {
            let pane = opened(text);
            assert_eq!(pane.text(), text, "{text:?}");
            assert!(!pane.is_dirty(), "{text:?}");
            assert_eq!(pane.path(), Some("Notes/Plan.md"));
            assert_eq!(pane.note().map(|n| n.text.as_str()), Some(text));
        }
    }

    #[test]
    fn typing_makes_dirty_and_saving_makes_clean() {
        let mut pane = opened("hello\n");
        press(&mut pane, KeyCode::End);
        type_text(&mut pane, " 世界");
        assert_eq!(pane.text(), "hello 世界\n");
        assert!(pane.is_dirty());
        pane.mark_saved(note("hello 世界\n"));
        assert!(!pane.is_dirty());
        // Undo after saving makes it dirty again: the saved text is the reference.
        pane.undo();
        assert_eq!(pane.text(), "hello \n", "the word is one step");
        pane.undo();
        assert_eq!(pane.text(), "hello\n", "the space before it another");
        assert!(pane.is_dirty());
    }

    #[test]
    fn undo_steps_are_words_not_keystrokes() {
        let mut pane = opened("");
        type_text(&mut pane, "hello world");
        assert!(pane.undo());
        assert_eq!(pane.text(), "hello ");
        assert!(pane.undo());
        assert_eq!(pane.text(), "");
        assert!(!pane.undo(), "nothing left to undo");
        assert!(pane.redo());
        assert_eq!(pane.text(), "hello ");
        assert!(pane.handle(Action::Redo));
        assert_eq!(pane.text(), "hello world");
        assert!(pane.handle(Action::Undo));
        assert_eq!(pane.text(), "hello ");
        assert!(!pane.handle(Action::Save), "saving is the App's");
    }

    #[test]
    fn moving_the_cursor_ends_an_undo_step() {
        let mut pane = opened("ab");
        press(&mut pane, KeyCode::Char('x'));
        press(&mut pane, KeyCode::Right);
        press(&mut pane, KeyCode::Char('y'));
        assert_eq!(pane.text(), "xayb");
        pane.undo();
        assert_eq!(pane.text(), "xab");
    }

    #[test]
    fn a_failed_edit_leaves_no_undo_step() {
        let mut pane = opened("abc");
        type_text(&mut pane, "x");
        press(&mut pane, KeyCode::Home);
        press(&mut pane, KeyCode::Backspace); // at the very start: nothing to delete
        pane.undo();
        assert_eq!(pane.text(), "abc", "the undo removed the typed x");
    }

    #[test]
    fn apply_edit_is_one_undo_step() {
        let mut pane = opened("one\ntwo\nthree\n");
        press(&mut pane, KeyCode::Down);
        press(&mut pane, KeyCode::End);
        type_text(&mut pane, "!");
        let before = pane.text();
        pane.apply_edit("one\nTWO, rewritten\nand a new line\nthree\n");
        assert_eq!(pane.text(), "one\nTWO, rewritten\nand a new line\nthree\n");
        assert!(pane.undo());
        assert_eq!(pane.text(), before, "one undo restores the text exactly");
        assert!(pane.redo());
        assert_eq!(pane.text(), "one\nTWO, rewritten\nand a new line\nthree\n");
        // The same text again is no step at all.
        pane.apply_edit("one\nTWO, rewritten\nand a new line\nthree\n");
        pane.undo();
        assert_eq!(pane.text(), before);
    }

    /// Why the pane keeps its own undo stack: in the textarea, select-all + insert is two history
    /// entries, so one undo would leave an empty note. (If a later version makes it one entry,
    /// this fails and the pane could use the textarea's history again.)
    #[test]
    fn the_textareas_own_history_cannot_make_a_replacement_one_step() {
        let mut textarea = TextArea::new(vec!["old text".to_string()]);
        textarea.select_all();
        textarea.insert_str("new text");
        assert!(textarea.undo());
        assert_eq!(textarea.lines(), [""], "only the insert was undone");
        assert!(textarea.undo());
        assert_eq!(textarea.lines(), ["old text"]);
    }

    #[test]
    fn apply_edit_keeps_the_cursor_near_where_it_was() {
        let mut pane = opened("aaa\nbbb\nccc");
        cursor_to(&mut pane, 9); // "ccc", column 1
        pane.apply_edit("aaa\nNEW\nbbb\nccc");
        assert_eq!(pane.cursor_line_col(), (3, 1), "after the change: shifted");
        cursor_to(&mut pane, 1);
        pane.apply_edit("aaa\nNEW\nbbb\nccc and more");
        assert_eq!(pane.cursor_char(), 1, "before the change: stays");
        pane.apply_edit("XYZaaa\nNEW\nbbb\nccc and more");
        assert_eq!(
            pane.cursor_char(),
            4,
            "text inserted before it: moves along"
        );
        cursor_to(&mut pane, 13); // inside "bbb"
        pane.apply_edit("XYZaaa\nNEW\nchanged\nccc and more");
        assert_eq!(
            pane.cursor_line_col(),
            (2, 7),
            "inside: end of the new text"
        );
    }

    #[test]
    fn apply_edit_can_change_the_trailing_newline() {
        let mut pane = opened("a");
        pane.apply_edit("a\nb\n");
        assert_eq!(pane.text(), "a\nb\n");
        pane.undo();
        assert_eq!(pane.text(), "a");
    }

    #[test]
    fn selection_chars_count_unicode_scalars() {
        let mut pane = opened("日本語 text\né\nend");
        press(&mut pane, KeyCode::Right);
        for _ in 0..3 {
            press_with(&mut pane, KeyCode::Right, KeyModifiers::SHIFT);
        }
        assert_eq!(pane.selection_chars(), Some(1..4));
        assert_eq!(pane.selected_text().as_deref(), Some("本語 "));
        press_with(&mut pane, KeyCode::Down, KeyModifiers::SHIFT);
        assert_eq!(pane.selection_chars(), Some(1..10));
        assert_eq!(pane.selected_text().as_deref(), Some("本語 text\né"));
        let state = pane.editor_state();
        assert_eq!(state.selection, Some(1..10));
        assert_eq!(state.cursor, 10);
        assert_eq!(state.text, "日本語 text\né\nend");
        // A backwards selection is still start < end.
        press(&mut pane, KeyCode::Esc);
        assert_eq!(pane.selection_chars(), None);
        press_with(&mut pane, KeyCode::Left, KeyModifiers::SHIFT);
        press_with(&mut pane, KeyCode::Left, KeyModifiers::SHIFT);
        assert_eq!(pane.selection_chars(), Some(8..10));
        assert_eq!(pane.selected_text().as_deref(), Some("\né"));
    }

    #[test]
    fn typing_replaces_the_selection_as_one_step() {
        let mut pane = opened("keep this word");
        pane.select_chars(10..14);
        type_text(&mut pane, "text");
        assert_eq!(pane.text(), "keep this text");
        pane.undo();
        assert_eq!(pane.text(), "keep this word");
    }

    #[test]
    fn select_all_and_paste() {
        let mut pane = opened("old\ntext");
        press_with(&mut pane, KeyCode::Char('a'), KeyModifiers::CONTROL);
        assert_eq!(pane.selection_chars(), Some(0..8));
        pane.insert_text("pasted\r\nlines");
        assert_eq!(pane.text(), "pasted\nlines");
        pane.undo();
        assert_eq!(pane.text(), "old\ntext");
    }

    #[test]
    fn link_under_cursor() {
        let pane_at = |text: &str, at: usize| {
            let mut pane = opened(text);
            cursor_to(&mut pane, at);
            pane.link_under_cursor()
        };
        assert_eq!(pane_at("see [[a]] here", 6).as_deref(), Some("a"));
        assert_eq!(
            pane_at("see [[a]] here", 4).as_deref(),
            Some("a"),
            "on the brackets"
        );
        assert_eq!(
            pane_at("see [[a|b]] here", 9).as_deref(),
            Some("a"),
            "alias dropped"
        );
        assert_eq!(
            pane_at("see [[a#h]] here", 8).as_deref(),
            Some("a"),
            "heading dropped"
        );
        assert_eq!(
            pane_at("x ![[Folder/Note#^block|shown]]", 10).as_deref(),
            Some("Folder/Note")
        );
        assert_eq!(pane_at("日本 [[日記]]", 5).as_deref(), Some("日記"));
        assert_eq!(pane_at("see [[a]] here", 1), None, "before the link");
        assert_eq!(pane_at("see [[a]] here", 9), None, "just after it");
        assert_eq!(
            pane_at("see [[#Heading]]", 8),
            None,
            "a link into this note"
        );
        assert_eq!(pane_at("`[[code]]`", 4), None, "inside inline code");
        assert_eq!(EditorPane::new().link_under_cursor(), None);
    }

    #[test]
    fn disk_change_on_a_clean_buffer_reloads_and_keeps_the_line() {
        let mut pane = opened("a\nb\nc\nd\n");
        cursor_to(&mut pane, 4); // line 2
        let disk = note("a\nB changed\nc\nd\ne\n");
        pane.on_disk_change(disk.clone());
        assert!(!pane.conflict());
        assert_eq!(pane.text(), "a\nB changed\nc\nd\ne\n");
        assert!(!pane.is_dirty());
        assert_eq!(pane.note(), Some(&disk));
        assert_eq!(pane.cursor_line_col().0, 2);
        // The old text is one undo away (and then the buffer differs from disk).
        pane.undo();
        assert_eq!(pane.text(), "a\nb\nc\nd\n");
        assert!(pane.is_dirty());
    }

    #[test]
    fn disk_change_with_the_same_text_only_takes_the_fingerprint() {
        let mut pane = opened("a\n");
        type_text(&mut pane, "x");
        let mut same = note("a\n");
        same.fingerprint.mtime_ns = 42;
        pane.on_disk_change(same.clone());
        assert!(!pane.conflict());
        assert_eq!(pane.note(), Some(&same));
        assert_eq!(pane.text(), "xa\n");
        // The disk now holds exactly the buffer: clean, no conflict.
        pane.on_disk_change(note("xa\n"));
        assert!(!pane.conflict());
        assert!(!pane.is_dirty());
    }

    #[test]
    fn disk_change_on_a_dirty_buffer_is_a_conflict() {
        let mut pane = opened("a\nb\nc\n");
        type_text(&mut pane, "mine ");
        pane.on_disk_change(note("a\nb\nc\ntheirs\n"));
        assert!(pane.conflict());
        assert_eq!(pane.text(), "mine a\nb\nc\n", "the buffer is untouched");
        assert!(pane.is_dirty());
    }

    #[test]
    fn merge_of_disjoint_changes() {
        let mut pane = opened("a\nb\nc\nd\n");
        type_text(&mut pane, "mine ");
        pane.on_disk_change(note("a\nb\nc\nd theirs\n"));
        assert_eq!(pane.resolve_conflict(ConflictChoice::Merge), Ok(()));
        assert!(!pane.conflict());
        assert_eq!(pane.text(), "mine a\nb\nc\nd theirs\n");
        assert!(pane.is_dirty(), "the merge is not saved yet");
        assert_eq!(
            pane.note().map(|n| n.text.as_str()),
            Some("a\nb\nc\nd theirs\n"),
            "the disk version is the new base"
        );
        pane.undo();
        assert_eq!(
            pane.text(),
            "mine a\nb\nc\nd\n",
            "the merge is one undo step"
        );
    }

    #[test]
    fn merge_of_overlapping_changes_fails_and_keeps_the_conflict() {
        let mut pane = opened("a\nb\nc\n");
        press(&mut pane, KeyCode::Down);
        type_text(&mut pane, "mine ");
        pane.on_disk_change(note("a\ntheirs b\nc\n"));
        let error = pane.resolve_conflict(ConflictChoice::Merge).unwrap_err();
        assert_eq!(error, "Cannot merge: both versions changed line 2");
        assert!(pane.conflict());
        assert_eq!(pane.text(), "a\nmine b\nc\n");
        assert_eq!(pane.note().map(|n| n.text.as_str()), Some("a\nb\nc\n"));
    }

    #[test]
    fn keep_mine_and_take_theirs() {
        let mut pane = opened("base\n");
        type_text(&mut pane, "mine ");
        let disk = note("theirs\n");
        pane.on_disk_change(disk.clone());
        assert_eq!(pane.resolve_conflict(ConflictChoice::KeepMine), Ok(()));
        assert!(!pane.conflict());
        assert_eq!(pane.text(), "mine base\n");
        assert!(pane.is_dirty());
        assert_eq!(
            pane.note(),
            Some(&disk),
            "a save now overwrites it knowingly"
        );

        pane.on_disk_change(note("theirs again\n"));
        assert!(pane.conflict());
        assert_eq!(pane.resolve_conflict(ConflictChoice::TakeTheirs), Ok(()));
        assert_eq!(pane.text(), "theirs again\n");
        assert!(!pane.is_dirty());
        pane.undo();
        assert_eq!(pane.text(), "mine base\n", "my text is one undo away");
        // Without a conflict, resolving does nothing.
        assert_eq!(pane.resolve_conflict(ConflictChoice::TakeTheirs), Ok(()));
        assert_eq!(pane.text(), "mine base\n");
    }

    #[test]
    fn mark_saved_ends_a_conflict() {
        let mut pane = opened("a\n");
        type_text(&mut pane, "b");
        pane.on_disk_change(note("c\n"));
        pane.mark_saved(note("ba\n"));
        assert!(!pane.conflict());
        assert!(!pane.is_dirty());
    }

    #[test]
    fn enter_continues_lists_and_quotes() {
        let mut pane = opened("- item");
        press(&mut pane, KeyCode::End);
        type_text(&mut pane, "\nnext");
        assert_eq!(pane.text(), "- item\n- next");
        let mut pane = opened("  1. first");
        press(&mut pane, KeyCode::End);
        type_text(&mut pane, "\nsecond");
        assert_eq!(pane.text(), "  1. first\n  2. second");
        let mut pane = opened("- [x] done");
        press(&mut pane, KeyCode::End);
        type_text(&mut pane, "\ntodo");
        assert_eq!(pane.text(), "- [x] done\n- [ ] todo");
        let mut pane = opened("> quoted");
        press(&mut pane, KeyCode::End);
        type_text(&mut pane, "\nmore");
        assert_eq!(pane.text(), "> quoted\n> more");
        let mut pane = opened("    indented code");
        press(&mut pane, KeyCode::End);
        type_text(&mut pane, "\nx");
        assert_eq!(pane.text(), "    indented code\n    x");
    }

    #[test]
    fn enter_on_an_empty_item_ends_the_list() {
        let mut pane = opened("- item");
        press(&mut pane, KeyCode::End);
        press(&mut pane, KeyCode::Enter);
        assert_eq!(pane.text(), "- item\n- ");
        press(&mut pane, KeyCode::Enter);
        assert_eq!(pane.text(), "- item\n");
        assert_eq!(pane.cursor_line_col(), (1, 0));
    }

    #[test]
    fn enter_inside_a_fence_only_indents() {
        let mut pane = opened("```\n- not a list");
        press(&mut pane, KeyCode::Down);
        press(&mut pane, KeyCode::End);
        press(&mut pane, KeyCode::Enter);
        assert_eq!(pane.text(), "```\n- not a list\n");
    }

    #[test]
    fn tab_indents_list_items_and_shift_tab_outdents() {
        let mut pane = opened("- item");
        press(&mut pane, KeyCode::End);
        press(&mut pane, KeyCode::Tab);
        assert_eq!(pane.text(), "    - item");
        assert_eq!(pane.cursor_line_col(), (0, 10));
        press(&mut pane, KeyCode::BackTab);
        assert_eq!(pane.text(), "- item");
        assert_eq!(pane.cursor_line_col(), (0, 6));
        let mut pane = opened("ab");
        press(&mut pane, KeyCode::Right);
        press(&mut pane, KeyCode::Tab);
        assert_eq!(pane.text(), "a   b", "spaces to the next tab stop");
    }

    #[test]
    fn word_movement_and_deletion() {
        let mut pane = opened("alpha beta gamma");
        press(&mut pane, KeyCode::End);
        press_with(&mut pane, KeyCode::Backspace, KeyModifiers::CONTROL);
        assert_eq!(pane.text(), "alpha beta ");
        press_with(&mut pane, KeyCode::Left, KeyModifiers::CONTROL);
        assert_eq!(pane.cursor_line_col(), (0, 6));
        press_with(&mut pane, KeyCode::Home, KeyModifiers::CONTROL);
        press_with(&mut pane, KeyCode::Delete, KeyModifiers::ALT);
        assert_eq!(pane.text(), " beta ");
    }

    #[test]
    fn keys_do_nothing_without_a_note() {
        let mut pane = EditorPane::new();
        type_text(&mut pane, "abc");
        pane.insert_text("x");
        assert_eq!(pane.text(), "");
        assert!(!pane.is_dirty());
        assert_eq!(pane.path(), None);
    }

    #[test]
    fn close_forgets_the_note() {
        let mut pane = opened("text");
        type_text(&mut pane, "x");
        pane.close();
        assert_eq!(pane.path(), None);
        assert_eq!(pane.text(), "");
        assert!(!pane.undo());
        assert_eq!(pane.note(), None);
    }

    #[test]
    fn up_and_down_move_by_screen_rows_in_wrapped_lines() {
        let mut pane = opened("short\nthis line is long enough to wrap twice at twenty\nend");
        let theme = Theme::builtin_dark();
        let mut buf = buffer(30, 10);
        pane.render(buf.area, &mut buf, &theme, true);
        // Text width: 30 - 2 borders - 4 gutter - 1 spare = 23.
        assert_eq!(pane.view.text_width, 23);
        press(&mut pane, KeyCode::Down);
        assert_eq!(pane.cursor_line_col(), (1, 0));
        press(&mut pane, KeyCode::Down);
        // Rows: "this line is long " | "enough to wrap twice at " | "twenty".
        assert_eq!(
            pane.cursor_line_col(),
            (1, 18),
            "still the long line, its second row"
        );
        press(&mut pane, KeyCode::Down);
        assert_eq!(pane.cursor_line_col(), (1, 42), "its third row");
        press(&mut pane, KeyCode::Down);
        assert_eq!(pane.cursor_line_col(), (2, 0));
        press(&mut pane, KeyCode::Down);
        assert_eq!(pane.cursor_line_col(), (2, 3), "last row: to the end");
        press(&mut pane, KeyCode::Up);
        press(&mut pane, KeyCode::Up);
        press(&mut pane, KeyCode::Up);
        press(&mut pane, KeyCode::Up);
        assert_eq!(pane.cursor_line_col().0, 0);
        press(&mut pane, KeyCode::Up);
        assert_eq!(pane.cursor_line_col(), (0, 0), "first row: to the start");
    }

    #[test]
    fn up_down_keep_the_screen_column() {
        let mut pane = opened("abcdef\nab\nabcdef");
        press(&mut pane, KeyCode::End);
        press(&mut pane, KeyCode::Down);
        assert_eq!(pane.cursor_line_col(), (1, 2));
        press(&mut pane, KeyCode::Down);
        assert_eq!(pane.cursor_line_col(), (2, 6), "back to column 6");
    }

    #[test]
    fn clicks_move_the_cursor() {
        let mut pane = opened("first\nsecond line");
        let theme = Theme::builtin_dark();
        let mut buf = buffer(40, 8);
        pane.render(buf.area, &mut buf, &theme, true);
        // Border 1 + gutter 4: text starts at x = 5; line 2 is y = 2.
        assert!(pane.click(5 + 3, 2));
        assert_eq!(pane.cursor_line_col(), (1, 3));
        assert!(pane.click(38, 1), "past the end of a line: its end");
        assert_eq!(pane.cursor_line_col(), (0, 5));
        assert!(!pane.click(5, 7), "below the text");
    }

    #[test]
    fn the_view_follows_the_cursor_and_the_wheel_scrolls_it() {
        let text: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let mut pane = opened(&text);
        let theme = Theme::builtin_dark();
        let mut buf = buffer(40, 12);
        for _ in 0..50 {
            press(&mut pane, KeyCode::Down);
        }
        pane.render(buf.area, &mut buf, &theme, true);
        let screen = buffer_text(&buf);
        assert!(screen.contains("line 51"), "{screen}");
        assert!(
            screen.contains("line 54"),
            "three lines of margin below: {screen}"
        );
        pane.scroll_view(-20);
        pane.render(buf.area, &mut buf, &theme, true);
        let screen = buffer_text(&buf);
        assert!(!screen.contains("line 51 "), "scrolled away: {screen}");
        assert_eq!(pane.cursor_position(), None, "the cursor is off screen");
        press(&mut pane, KeyCode::Right);
        pane.render(buf.area, &mut buf, &theme, true);
        assert!(buffer_text(&buf).contains("line 51"));
        // Never past the end.
        pane.scroll_view(1000);
        pane.render(buf.area, &mut buf, &theme, true);
        let screen = buffer_text(&buf);
        assert!(screen.contains("line 100"), "{screen}");
        assert!(
            screen.contains("line 91"),
            "the last page is full: {screen}"
        );
    }

    #[test]
    fn far_positions_beyond_u16_are_reached() {
        let text: String = (0..70_000).map(|n| format!("{n}\n")).collect();
        let mut pane = opened(&text);
        let offset = text.find("69999\n").unwrap_or(0);
        cursor_to(&mut pane, offset + 2);
        assert_eq!(pane.cursor_line_col(), (69_999, 2));
        assert_eq!(pane.cursor_char(), offset + 2);
    }

    fn render_text(pane: &mut EditorPane, width: u16, height: u16, focused: bool) -> Buffer {
        let theme = Theme::builtin_dark();
        let mut buf = buffer(width, height);
        pane.render(buf.area, &mut buf, &theme, focused);
        buf
    }

    /// The sample note, edited (dirty), with "the layout" selected.
    fn sample_pane() -> EditorPane {
        let mut pane = opened(SAMPLE);
        let at = SAMPLE.find("sketch").unwrap_or(0);
        cursor_to(&mut pane, at);
        type_text(&mut pane, "quickly ");
        let text = pane.text();
        let start = text.find("the layout").unwrap_or(0);
        let start = text[..start].chars().count();
        pane.select_chars(start..start + "the layout".len());
        pane
    }

    /// A note with links that resolve and links that do not, in a vault of these notes.
    const LINKS: &str = "# Launch notes\n\nSee [[Plan]], [[Projects/Roadmap#Goals|the goals]] and [[Budget 2027]].\n\n| who | what |\n| --- | --- |\n| Ana | [[Plan\\|the plan]] and [[Caterers\\|food]] |\n\n![[diagram.png]] ![[Moodboard]] [web](https://example.com)\n\n`[[Not a link]]` and [[#Top]]\n";

    fn linked_pane() -> (EditorPane, std::sync::Arc<crate::host::LinkTargets>) {
        let mut pane = EditorPane::new();
        pane.open("Launch notes.md", note(LINKS));
        let targets = std::sync::Arc::new(crate::host::LinkTargets::new(
            ["Plan.md", "Projects/Roadmap.md", "Launch notes.md"].map(String::from),
        ));
        pane.set_link_targets(std::sync::Arc::clone(&targets));
        (pane, targets)
    }

    /// The editor as text, then the role each link on screen is drawn in.
    fn with_link_roles(buf: &Buffer, links: &[&str]) -> String {
        let theme = Theme::builtin_dark();
        let mut out = buffer_text(buf);
        out.push_str("--- links ---\n");
        for link in links {
            let style = style_at(buf, link).map(|s| (s.fg, s.add_modifier));
            let role = [
                Role::MdLink,
                Role::MdLinkUnresolved,
                Role::MdCode,
                Role::Text,
            ]
            .into_iter()
            .find(|r| {
                let want = theme.style(*r);
                style == Some((want.fg, want.add_modifier))
            })
            .map_or("?", Role::name);
            out.push_str(&format!("{link} → {role}\n"));
        }
        out
    }

    const SHOWN_LINKS: [&str; 10] = [
        "[[Plan]]",
        "[[Projects/Roadmap#Goals|the goals]]",
        "[[Budget 2027]]",
        "[[Plan\\|the plan]]",
        "[[Caterers\\|food]]",
        "![[diagram.png]]",
        "![[Moodboard]]",
        "[web](https://example.com)",
        "[[Not a link]]",
        "[[#Top]]",
    ];

    #[test]
    fn snapshot_unresolved_links_80x24() {
        let (mut pane, _) = linked_pane();
        let buf = render_text(&mut pane, 80, 24, false);
        let text = with_link_roles(&buf, &SHOWN_LINKS);
        insta::assert_snapshot!("editor_unresolved_links_80x24", text);
    }

    #[test]
    fn unresolved_links_use_their_role_and_resolved_ones_stay_links() {
        let (mut pane, _) = linked_pane();
        let text = with_link_roles(&render_text(&mut pane, 120, 40, false), &SHOWN_LINKS);
        for resolved in [
            "[[Plan]] →",
            "goals]] →",
            "[[Plan\\|the plan]] →",
            "[[#Top]] →",
            "![[diagram.png]] →",
            "[web](https://example.com) →",
        ] {
            assert!(
                text.contains(&format!("{resolved} md_link\n")),
                "{resolved}\n{text}"
            );
        }
        for missing in ["[[Budget 2027]]", "[[Caterers\\|food]]", "![[Moodboard]]"] {
            assert!(
                text.contains(&format!("{missing} → md_link_unresolved\n")),
                "{missing}\n{text}"
            );
        }
        assert!(text.contains("[[Not a link]] → md_code\n"), "{text}");
        // Before the host's listing comes, no link is called unresolved.
        let mut plain = EditorPane::new();
        plain.open("Launch notes.md", note(LINKS));
        let text = with_link_roles(&render_text(&mut plain, 120, 40, false), &SHOWN_LINKS);
        assert!(!text.contains("unresolved"), "{text}");
    }

    #[test]
    fn a_frame_of_a_long_note_looks_up_only_the_links_it_draws() {
        let text: String = (0..5_000)
            .map(|n| format!("- item {n}: [[Note {n}]] and [[Missing {n}]]\n"))
            .collect();
        let targets = std::sync::Arc::new(crate::host::LinkTargets::new(
            (0..5_000).map(|n| format!("Notes/Note {n}.md")),
        ));
        let mut pane = opened(&text);
        pane.set_link_targets(std::sync::Arc::clone(&targets));
        let middle = text.find("- item 2500:").unwrap_or(0);
        cursor_to(&mut pane, middle);
        render_text(&mut pane, 120, 40, true);
        let lookups =
            |t: &crate::host::LinkTargets| t.lookups.swap(0, std::sync::atomic::Ordering::Relaxed);
        lookups(&targets);
        let frames = 50;
        let started = std::time::Instant::now();
        let mut buf = render_text(&mut pane, 120, 40, true);
        for _ in 1..frames {
            buf = render_text(&mut pane, 120, 40, true);
        }
        let per_frame = started.elapsed() / frames;
        // 38 text rows (the border takes two), two links a row.
        let looked_up = lookups(&targets);
        assert!(
            looked_up <= 38 * 2 * frames as usize,
            "{looked_up} lookups in {frames} frames"
        );
        assert!(looked_up > 0);
        let screen = with_link_roles(&buf, &["[[Note 2500]]", "[[Missing 2500]]"]);
        assert!(screen.contains("[[Note 2500]] → md_link\n"), "{screen}");
        assert!(
            screen.contains("[[Missing 2500]] → md_link_unresolved\n"),
            "{screen}"
        );
        eprintln!("a frame of a 5,000-line note with 10,000 links: {per_frame:?}");
    }

    #[test]
    fn snapshot_markdown_note_80x24() {
        let mut pane = sample_pane();
        let buf = render_text(&mut pane, 80, 24, true);
        insta::assert_snapshot!("editor_markdown_80x24", buffer_text(&buf));
    }

    #[test]
    fn snapshot_markdown_note_120x40() {
        let mut pane = sample_pane();
        let buf = render_text(&mut pane, 120, 40, true);
        insta::assert_snapshot!("editor_markdown_120x40", buffer_text(&buf));
    }

    #[test]
    fn snapshot_conflict_80x24() {
        let mut pane = sample_pane();
        pane.on_disk_change(note("# Plan for Q3\n\nSomeone else rewrote this.\n"));
        let buf = render_text(&mut pane, 80, 24, true);
        insta::assert_snapshot!("editor_conflict_80x24", buffer_text(&buf));
    }

    #[test]
    fn snapshot_conflict_after_failed_merge_120x40() {
        let mut pane = sample_pane();
        pane.on_disk_change(note("# Plan for Q3\n\nSomeone else rewrote this.\n"));
        assert!(pane.resolve_conflict(ConflictChoice::Merge).is_err());
        let buf = render_text(&mut pane, 120, 40, false);
        insta::assert_snapshot!("editor_conflict_merge_failed_120x40", buffer_text(&buf));
    }

    #[test]
    fn snapshot_no_note_80x24() {
        let mut pane = EditorPane::new();
        let buf = render_text(&mut pane, 80, 24, true);
        insta::assert_snapshot!("editor_empty_80x24", buffer_text(&buf));
    }

    #[test]
    fn styles_come_from_the_theme() {
        let theme = Theme::builtin_dark();
        let mut pane = sample_pane();
        let buf = render_text(&mut pane, 120, 40, true);
        let fg_of = |needle: &str| style_at(&buf, needle).and_then(|s| s.fg);
        assert_eq!(fg_of("Plan for Q3"), theme.style(Role::MdHeading).fg);
        assert!(
            style_at(&buf, "Plan for Q3").is_some_and(|s| s.add_modifier.contains(Modifier::BOLD))
        );
        assert_eq!(fg_of("#work/q3"), theme.style(Role::MdTag).fg);
        assert_eq!(fg_of("[[Roadmap"), theme.style(Role::MdLink).fg);
        assert_eq!(fg_of("`render`"), theme.style(Role::MdCode).fg);
        assert_eq!(
            style_at(&buf, "fn main").and_then(|s| s.bg),
            theme.style(Role::MdCodeBlock).bg
        );
        assert_eq!(
            style_at(&buf, "the layout").and_then(|s| s.bg),
            theme.style(Role::Selection).bg
        );
        assert_eq!(fg_of("Quotes stay"), theme.style(Role::MdQuote).fg);
        assert_eq!(fg_of("tags: [plan]"), theme.style(Role::Dim).fg);
        assert_eq!(fg_of("●"), theme.style(Role::Notice).fg, "the dirty mark");
        assert_eq!(
            style_at(&buf, "╭").and_then(|s| s.fg),
            theme.style(Role::BorderFocused).fg
        );
        // The gutter: other lines dim.
        assert_eq!(fg_of(" 1 "), theme.style(Role::Dim).fg);
        // The cursor line (the selection's end, on the "- [x]" line) has the cursor-line background.
        assert_eq!(
            style_at(&buf, "- [x]").and_then(|s| s.bg),
            theme.style(Role::CursorLine).bg
        );
    }

    #[test]
    fn the_conflict_banner_uses_the_notice_role_and_the_keymap() {
        let theme = Theme::builtin_dark();
        let mut pane = opened("a\n");
        type_text(&mut pane, "b");
        pane.on_disk_change(note("c\n"));
        let buf = render_text(&mut pane, 80, 10, true);
        assert_eq!(
            style_at(&buf, "Changed on disk").and_then(|s| s.fg),
            theme.style(Role::Notice).fg
        );
        assert!(
            buffer_text(&buf)
                .contains("Changed on disk — [k] keep mine  [t] take theirs  [m] merge")
        );
        // Keys follow the key map.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("keymap.toml"),
            "version = 1\n[conflict]\nkeep_mine = \"K\"\n",
        )
        .unwrap();
        let (keymap, errors) = Keymap::load("default", Some(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        pane.set_key_hints(&keymap);
        let buf = render_text(&mut pane, 80, 10, true);
        assert!(buffer_text(&buf).contains("[K] keep mine"));
    }

    #[test]
    fn unfocused_panes_draw_no_cursor() {
        let mut pane = opened("text");
        render_text(&mut pane, 40, 6, false);
        assert_eq!(pane.cursor_position(), None);
        render_text(&mut pane, 40, 6, true);
        assert_eq!(pane.cursor_position(), Some((5, 1)));
    }

    #[test]
    fn never_panics_at_any_size() {
        let mut conflicted = sample_pane();
        conflicted.on_disk_change(note("other\n"));
        let _ = conflicted.resolve_conflict(ConflictChoice::Merge);
        let mut panes = vec![EditorPane::new(), sample_pane(), conflicted, opened("")];
        for pane in &mut panes {
            for (w, h) in [
                (0, 0),
                (1, 1),
                (2, 2),
                (3, 3),
                (5, 2),
                (8, 4),
                (13, 5),
                (300, 100),
            ] {
                for focused in [true, false] {
                    let _ = render_text(pane, w, h, focused);
                }
                // Keys after a tiny frame must not panic either.
                press(pane, KeyCode::Down);
                press(pane, KeyCode::PageDown);
                press(pane, KeyCode::Up);
            }
        }
    }

    #[test]
    fn a_5000_line_note_edits_at_the_end() {
        // Correctness on a long note; the cost per keystroke is for benchmarks, not timed tests.
        let text: String = (0..5000)
            .map(|n| format!("- line {n} with **bold**, `code`, [[link {n}]] and #tag{n}\n"))
            .collect();
        let mut pane = opened(&text);
        press_with(&mut pane, KeyCode::End, KeyModifiers::CONTROL);
        let theme = Theme::builtin_dark();
        let mut buf = buffer(120, 40);
        pane.render(buf.area, &mut buf, &theme, true);
        for _ in 0..5 {
            type_text(&mut pane, "x");
            pane.render(buf.area, &mut buf, &theme, true);
        }
        assert!(buffer_text(&buf).contains("line 4999"));
        assert!(
            pane.text().contains("#tag4999xxxxx"),
            "typed at the end of the last line"
        );
    }

    #[test]
    fn wrapping_breaks_after_spaces_and_inside_long_words() {
        let layout = LineLayout::new("hello big world", 9);
        assert_eq!(layout.segments, vec![0..10, 10..15], "the space hangs");
        let layout = LineLayout::new("hello big world", 7);
        assert_eq!(layout.segments, vec![0..6, 6..10, 10..15]);
        let layout = LineLayout::new("abcdefghij", 4);
        assert_eq!(layout.segments, vec![0..4, 4..8, 8..10]);
        let layout = LineLayout::new("日本語の文", 4);
        assert_eq!(layout.segments, vec![0..2, 2..4, 4..5], "two cells each");
        assert_eq!(LineLayout::new("", 4).segments, vec![0..0]);
    }

    #[test]
    fn offsets_map_through_an_edit() {
        assert_eq!(map_offset("abcdef", "abXYZdef", 1), 1);
        assert_eq!(map_offset("abcdef", "abXYZdef", 4), 6);
        assert_eq!(
            map_offset("abcdef", "abXYZdef", 3),
            5,
            "inside: end of the new text"
        );
        assert_eq!(position_of(&["ab".into(), "cd".into()], 3), (1, 0));
        assert_eq!(position_of(&["ab".into()], 99), (0, 2));
        assert_eq!(char_offset(&["日本".into(), "x".into()], (1, 1)), 4);
    }
}
