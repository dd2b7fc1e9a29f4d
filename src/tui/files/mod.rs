//! The file pane: the vault's folders and notes as a tree on the left of the screen, with the
//! notes touched last in a "Recent" section at the top (the model is in [`tree`]).
//!
//! Keys (`[files]` in the key maps): up/down move, Enter opens a note or opens/closes a folder,
//! →/← open/close a folder (← on a note goes to its folder), `n` asks for a name and creates a
//! note, `m` asks for the selected note's new path and proposes the move (with its link fixes)
//! in the banner, Esc gives the keyboard back. The pane follows the note open in the editor: it is
//! highlighted and its folders are open. Opening and creating are the App's (`FileOutcome`).

pub mod tree;

use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::theme::{Role, Theme};
use crate::tui::width::{EDITOR, str_width};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Widget;
pub use tree::{FileTree, NoteEntry, NoteTable, Row, RowKind};

/// What the App must do after a key or a click in the pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// Open this note (vault-relative path), the way the picker opens one.
    Open(String),
    /// Create a note with this name (vault-relative, `.md` optional).
    Create(String),
    /// Move (or rename) the note at `from` to `to` (vault-relative, `.md` optional): proposed
    /// through the banner, with the links to it, like the agent's `move_note`.
    Move { from: String, to: String },
    /// Give the keyboard back to the editor or the chat.
    Leave,
}

/// Key names for the pane's hints, from the active key map.
#[derive(Debug, Clone)]
struct Hints {
    new_note: String,
    confirm: String,
}

impl Hints {
    fn from_keymap(keymap: &Keymap) -> Self {
        let first = |action| {
            keymap
                .keys_for(KeyContext::Files, action)
                .into_iter()
                .next()
                .unwrap_or_else(|| "?".to_string())
        };
        Hints {
            new_note: first(Action::NewNote),
            confirm: first(Action::Confirm),
        }
    }
}

/// The pane: the tree, the selected row, the scroll offset and the new-note prompt.
pub struct FilePane {
    tree: FileTree,
    /// The selected row, by what it shows (rows move when notes come and go).
    selected: Option<RowKind>,
    /// The first row shown.
    scroll: usize,
    /// Keep the selection in view (off while the wheel scrolls).
    follow_selection: bool,
    /// The name being typed for a new note (or a note's new path, with `moving`).
    prompt: Option<String>,
    /// The note the prompt asks a new path for (the move key), instead of a new note's name.
    moving: Option<String>,
    /// The list's rows on screen in the last frame, for clicks and paging.
    list_area: Rect,
    hints: Hints,
}

impl Default for FilePane {
    fn default() -> Self {
        Self::new()
    }
}

impl FilePane {
    pub fn new() -> Self {
        FilePane {
            tree: FileTree::new(),
            selected: None,
            scroll: 0,
            follow_selection: true,
            prompt: None,
            moving: None,
            list_area: Rect::default(),
            hints: Hints::from_keymap(&Keymap::default_map()),
        }
    }

    /// Show the keys of `keymap` in the hints.
    pub fn set_key_hints(&mut self, keymap: &Keymap) {
        self.hints = Hints::from_keymap(keymap);
    }

    pub fn tree(&self) -> &FileTree {
        &self.tree
    }

    /// A fresh listing of the vault's notes.
    pub fn set_notes(&mut self, notes: Vec<NoteEntry>) {
        self.tree.set_notes(notes);
    }

    /// A note was just created: list it at once.
    pub fn add_note(&mut self, note: NoteEntry) {
        self.tree.add_note(note);
    }

    /// A listed note was written at `modified_ns` (see [`FileTree::touch`]).
    pub fn touch(&mut self, path: &str, modified_ns: i64) {
        self.tree.touch(path, modified_ns);
    }

    /// The editor shows `path` now. Opened (`now_ns` given): it also counts as touched for
    /// "Recent". The selection moves to it in the tree.
    pub fn follow(&mut self, path: Option<&str>, now_ns: Option<i64>) {
        let changed = self.tree.active() != path;
        self.tree.set_active(path, now_ns);
        if changed && let Some(path) = path {
            self.selected = Some(RowKind::Note {
                path: path.to_string(),
            });
            self.follow_selection = true;
        }
    }

    /// Whether the new-note prompt is open (keys are typed into it).
    pub fn prompting(&self) -> bool {
        self.prompt.is_some()
    }

    /// The selected row as it is now, if any.
    pub fn selected(&self) -> Option<RowKind> {
        let (rows, index) = self.rows_and_selection();
        Some(rows.get(index?)?.kind.clone())
    }

    /// The rows as they are now and the index of the selected one (the first selectable row
    /// when the selection is gone).
    fn rows_and_selection(&self) -> (std::sync::Arc<Vec<Row>>, Option<usize>) {
        let rows = self.tree.rows();
        let index = self
            .selected
            .as_ref()
            .and_then(|kind| rows.iter().position(|r| r.kind.same_place(kind)))
            .or_else(|| rows.iter().position(Row::selectable));
        (rows, index)
    }

    fn select_index(&mut self, rows: &[Row], index: usize) {
        if let Some(row) = rows.get(index) {
            self.selected = Some(row.kind.clone());
            self.follow_selection = true;
        }
    }

    /// Move the selection by `delta` selectable rows.
    fn move_selection(&mut self, delta: isize) {
        let (rows, current) = self.rows_and_selection();
        let selectable: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].selectable()).collect();
        if selectable.is_empty() {
            return;
        }
        let at = current
            .and_then(|c| selectable.iter().position(|&i| i == c))
            .unwrap_or(0);
        let target = (at as isize + delta).clamp(0, selectable.len() as isize - 1) as usize;
        self.select_index(&rows, selectable[target]);
    }

    /// A key while the pane has the keyboard; `action` is the key's action in `[files]`.
    pub fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<FileOutcome> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        if self.prompt.is_some() {
            return self.handle_prompt(action, key);
        }
        let page = usize::from(self.list_area.height.max(1)) as isize;
        match action {
            Some(Action::Up) => self.move_selection(-1),
            Some(Action::Down) => self.move_selection(1),
            Some(Action::PageUp) => self.move_selection(-page),
            Some(Action::PageDown) => self.move_selection(page),
            Some(Action::ScrollTop) => self.move_selection(isize::MIN / 2),
            Some(Action::ScrollBottom) => self.move_selection(isize::MAX / 2),
            Some(Action::Confirm) => return self.activate(),
            Some(Action::Expand) => self.expand(),
            Some(Action::Collapse) => self.collapse(),
            Some(Action::NewNote) => self.start_prompt(),
            Some(Action::Rename) => self.start_move_prompt(),
            Some(Action::Cancel) => return Some(FileOutcome::Leave),
            _ => {}
        }
        None
    }

    /// Enter on the selected row: a note opens, a folder opens or closes.
    fn activate(&mut self) -> Option<FileOutcome> {
        let (rows, index) = self.rows_and_selection();
        let row = rows.get(index?)?;
        self.selected = Some(row.kind.clone());
        match &row.kind {
            RowKind::Recent { path } | RowKind::Note { path } => {
                Some(FileOutcome::Open(path.clone()))
            }
            RowKind::Folder { path, .. } => {
                self.tree.toggle(path);
                None
            }
            RowKind::Header(_) => None,
        }
    }

    /// →: open a closed folder, or step into an open one.
    fn expand(&mut self) {
        let (rows, Some(index)) = self.rows_and_selection() else {
            return;
        };
        if let RowKind::Folder { path, expanded } = &rows[index].kind {
            if *expanded {
                self.move_selection(1);
            } else {
                self.tree.expand(path);
            }
        }
    }

    /// ←: close an open folder, or go to the folder holding the row.
    fn collapse(&mut self) {
        let (rows, Some(index)) = self.rows_and_selection() else {
            return;
        };
        let parent = match &rows[index].kind {
            RowKind::Folder {
                path,
                expanded: true,
            } => {
                self.tree.collapse(path);
                return;
            }
            RowKind::Folder { path, .. } | RowKind::Note { path } => {
                tree::parent_folder(path).to_string()
            }
            RowKind::Recent { .. } | RowKind::Header(_) => return,
        };
        if parent.is_empty() {
            return;
        }
        self.selected = Some(RowKind::Folder {
            path: parent.clone(),
            expanded: self.tree.is_expanded(&parent),
        });
        self.follow_selection = true;
    }

    /// Ask for a new note's name, starting in the folder of the selection.
    fn start_prompt(&mut self) {
        let folder = match &self.selected {
            Some(RowKind::Folder { path, .. }) => path.clone(),
            Some(RowKind::Note { path }) => tree::parent_folder(path).to_string(),
            _ => String::new(),
        };
        self.prompt = Some(if folder.is_empty() {
            folder
        } else {
            format!("{folder}/")
        });
    }

    /// Ask for the selected note's new path, starting from its current one.
    fn start_move_prompt(&mut self) {
        let Some(RowKind::Note { path }) = self.selected() else {
            return;
        };
        self.prompt = Some(path.strip_suffix(".md").unwrap_or(&path).to_string());
        self.moving = Some(path);
    }

    fn handle_prompt(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<FileOutcome> {
        let prompt = self.prompt.as_mut()?;
        match action {
            Some(Action::Confirm) => {
                let name = prompt.trim().to_string();
                if name.is_empty() || name.ends_with('/') {
                    return None;
                }
                self.prompt = None;
                return Some(match self.moving.take() {
                    Some(from) => FileOutcome::Move { from, to: name },
                    None => FileOutcome::Create(name),
                });
            }
            Some(Action::Cancel) => {
                self.prompt = None;
                self.moving = None;
                return None;
            }
            _ => {}
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('u') if ctrl => prompt.clear(),
            KeyCode::Char('w') if ctrl => {
                let trimmed = prompt.trim_end_matches(|c: char| c != ' ' && c != '/');
                let keep = if trimmed.len() == prompt.len() {
                    prompt[..prompt.len().saturating_sub(1)].len()
                } else {
                    trimmed.len()
                };
                prompt.truncate(keep);
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => prompt.push(c),
            KeyCode::Backspace => {
                prompt.pop();
            }
            _ => {}
        }
        None
    }

    /// Text pasted while the prompt is open goes into it (one line).
    pub fn paste(&mut self, text: &str) {
        if let Some(prompt) = self.prompt.as_mut() {
            prompt.push_str(text.lines().next().unwrap_or_default());
        }
    }

    /// A click at screen (`column`, `row`): select the row under it; a note opens, a folder
    /// opens or closes.
    pub fn click(&mut self, column: u16, row: u16) -> Option<FileOutcome> {
        let area = self.list_area;
        if column < area.x || column >= area.right() || row < area.y || row >= area.bottom() {
            return None;
        }
        let index = self.scroll + usize::from(row - area.y);
        let rows = self.tree.rows();
        let clicked = rows.get(index).filter(|r| r.selectable())?;
        self.selected = Some(clicked.kind.clone());
        self.activate()
    }

    /// Scroll the list by `rows` (the wheel); the selection stays where it is.
    pub fn scroll_by(&mut self, rows: isize) {
        let total = self.tree.rows().len();
        let height = usize::from(self.list_area.height);
        let max = total.saturating_sub(height);
        self.scroll = self.scroll.saturating_add_signed(rows).min(max);
        self.follow_selection = false;
    }

    /// Draw the pane into `area`.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        self.list_area = Rect::default();
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let mut block = theme.pane_block(" Files ", focused);
        let hint = format!(" {} new note ", self.hints.new_note);
        if focused && self.prompt.is_none() && str_width(&hint) + 4 <= usize::from(area.width) {
            block = block.title_bottom(Line::styled(hint, theme.style(Role::Dim)).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let mut list = inner;
        if let Some(prompt) = &self.prompt
            && inner.height >= 3
        {
            list.height -= 2;
            self.render_prompt(prompt, inner, buf, theme);
        }
        if list.is_empty() {
            return;
        }
        self.list_area = list;
        if !self.tree.is_loaded() {
            self.message(list, buf, theme, &["Loading the vault…".to_string()]);
            return;
        }
        let (rows, selected) = self.rows_and_selection();
        if rows.is_empty() {
            let lines = [
                "No notes yet".to_string(),
                format!("{} creates one", self.hints.new_note),
            ];
            self.message(list, buf, theme, &lines);
            return;
        }
        let height = usize::from(list.height);
        if self.follow_selection
            && let Some(selected) = selected
        {
            if selected < self.scroll {
                // Show the section heading above the first row of a section.
                self.scroll = if selected > 0 && !rows[selected - 1].selectable() {
                    selected - 1
                } else {
                    selected
                };
            } else if selected >= self.scroll + height {
                self.scroll = selected + 1 - height;
            }
        }
        self.scroll = self.scroll.min(rows.len().saturating_sub(height));
        for (offset, row) in rows.iter().skip(self.scroll).take(height).enumerate() {
            let y = list.y + offset as u16;
            let is_selected = focused && selected == Some(self.scroll + offset);
            self.render_row(
                Rect::new(list.x, y, list.width, 1),
                buf,
                theme,
                row,
                is_selected,
                &namesakes(&rows, row),
            );
        }
        if rows.len() > height && area.height > 2 {
            draw_scrollbar(area, buf, theme, self.scroll, height, rows.len());
        }
    }

    /// The new-note prompt in the two rows at the bottom of `inner`: what is asked, then the
    /// name being typed.
    fn render_prompt(&self, prompt: &str, inner: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(inner.width);
        // Esc cancels, as everywhere; the pane is too narrow to say both.
        let ask = match &self.moving {
            Some(_) => format!(" Move to · {} proposes", self.hints.confirm),
            None => format!(" New note · {} creates", self.hints.confirm),
        };
        buf.set_stringn(
            inner.x,
            inner.bottom() - 2,
            EDITOR.truncate_end(&ask, width),
            width,
            theme.style(Role::TitleFocused),
        );
        let y = inner.bottom() - 1;
        let room = width.saturating_sub(2);
        let shown = EDITOR.truncate_start(prompt, room);
        let (end, _) = buf.set_stringn(inner.x + 1, y, &shown, room, theme.style(Role::Input));
        if end < inner.right() {
            buf.set_style(
                Rect::new(end, y, 1, 1),
                Style::new().add_modifier(Modifier::REVERSED),
            );
        }
    }

    fn message(&self, area: Rect, buf: &mut Buffer, theme: &Theme, lines: &[String]) {
        for (line, y) in lines.iter().zip(area.y + 1..area.bottom()) {
            buf.set_stringn(
                area.x + 1,
                y,
                EDITOR.truncate_end(line, usize::from(area.width).saturating_sub(2)),
                usize::from(area.width).saturating_sub(1),
                theme.style(Role::Dim),
            );
        }
    }

    /// One row. `namesakes`: the folders of the other "Recent" notes with this row's name.
    fn render_row(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        row: &Row,
        selected: bool,
        namesakes: &[&str],
    ) {
        let selection = if selected {
            buf.set_style(area, theme.style(Role::PickerSelected));
            theme.style(Role::PickerSelected)
        } else {
            Style::new()
        };
        let width = usize::from(area.width);
        let active = row.note_path().is_some() && row.note_path() == self.tree.active();
        let label_role = match &row.kind {
            RowKind::Header(_) => Role::FilesHeader,
            RowKind::Folder { .. } => Role::FilesFolder,
            RowKind::Recent { .. } | RowKind::Note { .. } if active => Role::FilesActive,
            RowKind::Recent { .. } | RowKind::Note { .. } => Role::Text,
        };
        let label_style = theme.style(label_role).patch(selection);
        let indent = "  ".repeat(row.depth);
        let (prefix, prefix_role) = match &row.kind {
            RowKind::Header(_) => (String::from(" "), Role::FilesHeader),
            RowKind::Folder { expanded: true, .. } => (format!(" {indent}▾ "), Role::FilesFolder),
            RowKind::Folder { .. } => (format!(" {indent}▸ "), Role::FilesFolder),
            RowKind::Recent { .. } | RowKind::Note { .. } => {
                (format!(" {indent}  "), Role::FilesFolder)
            }
        };
        let (x, _) = buf.set_stringn(
            area.x,
            area.y,
            &prefix,
            width,
            theme.style(prefix_role).patch(selection),
        );
        let room = usize::from(area.right().saturating_sub(x)).saturating_sub(1);
        let label = EDITOR.truncate_end(&row.label, room);
        let (x, _) = buf.set_stringn(x, area.y, &label, room, label_style);
        // A recent note names its folder after it, dimmed, when there is room: whole, or, when
        // other recent notes have its name, as much of it as tells them apart.
        if let RowKind::Recent { path } = &row.kind {
            let folder = tree::parent_folder(path);
            let room = usize::from(area.right().saturating_sub(x)).saturating_sub(3);
            if let Some(shown) = folder_label(folder, room, namesakes) {
                buf.set_stringn(
                    x + 2,
                    area.y,
                    &shown,
                    room,
                    theme.style(Role::Dim).patch(selection),
                );
            }
        }
    }
}

/// The folders of the other "Recent" rows named as `row` is (none for rows of the tree).
fn namesakes<'a>(rows: &'a [Row], row: &Row) -> Vec<&'a str> {
    if !matches!(row.kind, RowKind::Recent { .. }) {
        return Vec::new();
    }
    rows.iter()
        .filter(|other| matches!(other.kind, RowKind::Recent { .. }))
        .filter(|other| other.label == row.label && other.kind != row.kind)
        .filter_map(|other| other.note_path().map(tree::parent_folder))
        .collect()
}

/// What a "Recent" row shows of its note's `folder` in `room` cells. Whole when it fits. Else,
/// only when other recent notes share the name (`namesakes`: their folders), a short form that
/// tells it from theirs: its first and last folders (`tldr-mirror/…/linux`), its first, its last,
/// or its first alone; a cut folder name says less than none, so otherwise nothing.
fn folder_label(folder: &str, room: usize, namesakes: &[&str]) -> Option<String> {
    if folder.is_empty() {
        return None;
    }
    if str_width(folder) <= room {
        return Some(folder.to_string());
    }
    if namesakes.is_empty() {
        return None;
    }
    let forms = |folder: &str| -> [Option<String>; 4] {
        let first = folder.split('/').next().unwrap_or(folder);
        let last = tree::file_name(folder);
        let nested = folder.contains('/');
        [
            nested.then(|| format!("{first}/…/{last}")),
            nested.then(|| format!("{first}/…")),
            nested.then(|| format!("…/{last}")),
            nested.then(|| first.to_string()),
        ]
    };
    let others: Vec<[Option<String>; 4]> = namesakes.iter().map(|f| forms(f)).collect();
    let fitting = forms(folder)
        .into_iter()
        .enumerate()
        .filter_map(|(n, form)| Some((n, form?)))
        .filter(|(_, form)| str_width(form) <= room)
        .collect::<Vec<_>>();
    let telling = fitting.iter().find(|(n, form)| {
        others
            .iter()
            .all(|other| other[*n].as_deref() != Some(form.as_str()))
    });
    telling.map(|(_, form)| form.clone())
}

/// The scrollbar on the pane's right border: a thumb for the `height` rows shown of `total`,
/// from `scroll`, pinned to the bottom when the last row is shown.
fn draw_scrollbar(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    scroll: usize,
    height: usize,
    total: usize,
) {
    let track = usize::from(area.height - 2);
    let thumb = (track * height / total).clamp(1, track);
    let start = (track * scroll / total).min(track - thumb);
    let start = if scroll + height >= total {
        track - thumb
    } else {
        start
    };
    for offset in start..start + thumb {
        buf.set_stringn(
            area.right() - 1,
            area.y + 1 + offset as u16,
            "┃",
            1,
            theme.style(Role::Scrollbar),
        );
    }
}

#[cfg(test)]
mod move_tests;
#[cfg(test)]
mod tests;
