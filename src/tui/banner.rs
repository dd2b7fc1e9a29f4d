//! The permission banner (docs/permissions.md): a modal box that asks before a tool call runs. It shows
//! why it asks, the target, the diff with per-hunk toggles (or the tool input when nothing is
//! written), and the choices *once*, *session*, *always* (tool, or tool + path) and *deny* (with
//! an optional reason for the model). Requests that arrive while one is shown wait in a queue.
//!
//! Safety rule: focus starts on *deny* and Enter activates the focused choice, so Enter alone
//! never approves anything; approving takes a deliberate key.
//!
//! Every word of the diff can be read before it is approved: long lines (a Markdown paragraph is
//! one) wrap within the box and the side-by-side view, changed words are marked inside changed
//! lines (`diff_view`), and a diff taller than the box scrolls (j/k read through a tall hunk
//! before moving between hunks; PgUp/PgDn, Home/End, Ctrl+↑/↓), with the rows shown named on the
//! border.

use crate::agent::PermissionRequest;
use crate::protocol::Answer;
use crate::text::diff::TextDiff;
use crate::text::word_diff::HunkWords;
use crate::tui::chat::wrap::{self, Breaks};
use crate::tui::diff_view::{
    DiffLayout, display_width, draw_rows, fit_spans, printable, scrollbar, truncate,
};
use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::theme::{Role, Theme};
use crate::tui::views::typed_char;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

mod screen;
use screen::Screen;
#[cfg(test)]
mod move_tests;
#[cfg(test)]
mod multi_edit_tests;

/// Below this size the banner takes the whole width and height it needs (a box of 80% × 70%
/// would leave too little room for the diff, on a classic 80×24 terminal for one).
const MODAL_FROM_WIDTH: u16 = 100;
const MODAL_FROM_HEIGHT: u16 = 30;
/// The box is never shorter than this (unless the screen is): room for a few diff lines.
const MIN_BOX_HEIGHT: u16 = 12;
/// A reason is a sentence for the model; a runaway paste should not become a prompt of its own.
const MAX_REASON_CHARS: usize = 2000;
/// Rows the body scrolls by before the first frame told the banner how tall it is.
const DEFAULT_PAGE: usize = 10;
/// Columns the diff is laid out in before the first frame told the banner how wide it is.
const DEFAULT_WIDTH: u16 = 76;
/// Below this width the tool input is cut rather than wrapped (as diffs are).
const MIN_INPUT_WRAP: usize = 20;

/// The person's answer to the request with id `request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BannerOutcome {
    /// The id of the answered [`PermissionRequest`].
    pub request: u64,
    /// What the person chose.
    pub answer: Answer,
    /// One flag per hunk of the proposal's diff when some hunks were rejected; `None` when every
    /// hunk is accepted (or there is no diff, or the answer is a denial).
    pub hunks: Option<Vec<bool>>,
}

/// One of the answers offered in the choices row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Once,
    Session,
    Always,
    Deny,
}

impl Choice {
    fn action(self) -> Action {
        match self {
            Choice::Once => Action::ApproveOnce,
            Choice::Session => Action::ApproveSession,
            Choice::Always => Action::ApproveAlways,
            Choice::Deny => Action::Deny,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Choice::Once => "once",
            Choice::Session => "session",
            Choice::Always => "always",
            Choice::Deny => "deny",
        }
    }
}

/// The choices `request` offers, in the order they are shown (deny always last).
fn choices(request: &PermissionRequest) -> Vec<Choice> {
    let mut choices = vec![Choice::Once];
    if request.offer_session {
        choices.push(Choice::Session);
    }
    if request.offer_always {
        choices.push(Choice::Always);
    }
    choices.push(Choice::Deny);
    choices
}

/// What the banner is doing with the shown request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// The diff and the choices row.
    Choosing,
    /// *always* was chosen for a one-path call: tool everywhere, or tool on this path?
    Scope,
    /// *deny* was chosen with its key: an optional reason is being typed.
    Reason(String),
    /// The full-screen side-by-side diff.
    SideBySide,
}

/// The state of the request on screen; reset whenever another request comes to the front.
#[derive(Debug, Clone)]
struct Shown {
    mode: Mode,
    focus: Choice,
    current_hunk: usize,
    accepted: Vec<bool>,
    /// First body line shown (the hunk list, or the tool input).
    scroll: usize,
    /// Set when the current hunk moved: the next frame scrolls it into view.
    reveal: bool,
    /// First row shown in the side-by-side view.
    side_scroll: usize,
    /// Set when the side-by-side view opens: the next frame scrolls it to the current hunk
    /// (rows depend on the width, known only when drawing).
    side_reveal: bool,
    /// The diff laid out for the screen.
    layouts: Layouts,
}

impl Shown {
    fn for_request(request: Option<&PermissionRequest>) -> Shown {
        let diff = request.and_then(diff_of);
        let hunks = diff.map_or(0, |d| d.hunks.len());
        Shown {
            mode: Mode::Choosing,
            focus: Choice::Deny,
            current_hunk: 0,
            accepted: vec![true; hunks],
            scroll: 0,
            reveal: true,
            side_scroll: 0,
            side_reveal: false,
            layouts: Layouts {
                words: diff.map(TextDiff::words).unwrap_or_default(),
                files: request.map(file_labels).unwrap_or_default(),
                inline: Vec::new(),
                side: Vec::new(),
                input: Vec::new(),
            },
        }
    }
}

/// The shown diff's word-level detail (worked out once per request) and its layouts (or the
/// tool input's rows) for the widths drawn last: with and without a scroll bar, so a frame that
/// tries both lays out nothing new, and a key press between frames finds the layout on screen.
#[derive(Debug, Clone)]
struct Layouts {
    words: Vec<HunkWords>,
    /// For a change to several files: each file's label and its hunks.
    files: Vec<(String, Range<usize>)>,
    inline: Vec<(u16, Arc<DiffLayout>)>,
    side: Vec<(u16, Arc<DiffLayout>)>,
    input: Vec<(u16, Arc<Vec<String>>)>,
}

impl Layouts {
    fn inline(&mut self, diff: &TextDiff, width: u16) -> Arc<DiffLayout> {
        let (words, files) = (&self.words, &self.files);
        cached(&mut self.inline, width, || {
            DiffLayout::inline(diff, words, width).with_files(files)
        })
    }

    fn side(&mut self, diff: &TextDiff, width: u16) -> Arc<DiffLayout> {
        let (words, files) = (&self.words, &self.files);
        cached(&mut self.side, width, || {
            DiffLayout::side_by_side(diff, words, width).with_files(files)
        })
    }

    fn input(&mut self, request: &PermissionRequest, width: u16) -> Arc<Vec<String>> {
        cached(&mut self.input, width, || input_rows(request, width))
    }
}

/// What `cache` holds for `width` (two widths at most), made when missing.
fn cached<T>(cache: &mut Vec<(u16, Arc<T>)>, width: u16, make: impl FnOnce() -> T) -> Arc<T> {
    if let Some((_, found)) = cache.iter().find(|(w, _)| *w == width) {
        return Arc::clone(found);
    }
    let made = Arc::new(make());
    if cache.len() >= 2 {
        cache.remove(0);
    }
    cache.push((width, Arc::clone(&made)));
    made
}

/// Each file of a change to several files, labelled (`old → new` for the moved note), with the
/// range of its hunks in the proposal's diff.
fn file_labels(request: &PermissionRequest) -> Vec<(String, Range<usize>)> {
    let Some(proposal) = &request.proposal else {
        return Vec::new();
    };
    let mut first = 0;
    proposal
        .files
        .iter()
        .map(|file| {
            let label = if file.path == file.path_after {
                file.path.clone()
            } else {
                format!("{} → {}", file.path, file.path_after)
            };
            let hunks = first..first + file.hunks;
            first += file.hunks;
            (label, hunks)
        })
        .collect()
}

fn diff_of(request: &PermissionRequest) -> Option<&TextDiff> {
    request.proposal.as_ref().map(|p| &p.diff)
}

fn hunk_count(request: &PermissionRequest) -> usize {
    diff_of(request).map_or(0, |d| d.hunks.len())
}

/// The tool input as pretty JSON lines, for a request that writes nothing.
fn input_lines(request: &PermissionRequest) -> Vec<String> {
    serde_json::to_string_pretty(&request.input)
        .unwrap_or_else(|_| request.input.to_string())
        .lines()
        .map(printable)
        .collect()
}

/// The tool input as pretty JSON in rows of at most `width` columns: a long value wraps, its
/// continuation rows indented under its key (cut with `…` only when the box is very narrow).
fn input_rows(request: &PermissionRequest, width: u16) -> Vec<String> {
    let width = usize::from(width);
    input_lines(request)
        .into_iter()
        .flat_map(|line| {
            if width < MIN_INPUT_WRAP {
                return vec![truncate(&line, width)];
            }
            let indent = line.len() - line.trim_start_matches(' ').len();
            let rest = [Span::raw(" ".repeat(indent + 2))];
            wrap::wrap(&[Span::raw(line)], width, &[], &rest, Breaks::Words)
                .into_iter()
                .map(|row| row.to_string())
                .collect()
        })
        .collect()
}

/// Rows in the scrollable body of the modal when its text is `width` columns wide.
fn body_row_count(request: &PermissionRequest, layouts: &mut Layouts, width: u16) -> usize {
    match diff_of(request) {
        Some(diff) if !diff.hunks.is_empty() => layouts.inline(diff, width).len(),
        Some(_) => 1,
        None => layouts.input(request, width).len(),
    }
}

/// The permission banner: a queue of requests, the front one shown.
#[derive(Debug)]
pub struct Banner {
    queue: VecDeque<PermissionRequest>,
    shown: Shown,
    /// Rows of the modal body at the last frame (for paging).
    body_height: usize,
    /// Columns of the modal body's text at the last frame (the diff's layout).
    body_width: u16,
    /// Rows of the side-by-side view at the last frame.
    side_height: usize,
    /// Columns of the side-by-side rows at the last frame.
    side_width: u16,
}

impl Default for Banner {
    fn default() -> Self {
        Self::new()
    }
}

impl Banner {
    /// An empty banner (nothing shown).
    pub fn new() -> Self {
        Banner {
            queue: VecDeque::new(),
            shown: Shown::for_request(None),
            body_height: DEFAULT_PAGE,
            body_width: DEFAULT_WIDTH,
            side_height: DEFAULT_PAGE,
            side_width: DEFAULT_WIDTH,
        }
    }

    /// Queue a request; the first one shows at once, later ones wait their turn.
    pub fn push(&mut self, request: PermissionRequest) {
        self.queue.push_back(request);
        if self.queue.len() == 1 {
            self.shown = Shown::for_request(self.queue.front());
        }
    }

    /// True while a request is shown.
    pub fn is_active(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Requests waiting behind the shown one.
    pub fn queued(&self) -> usize {
        self.queue.len().saturating_sub(1)
    }

    /// The shown request.
    pub fn current(&self) -> Option<&PermissionRequest> {
        self.queue.front()
    }

    /// A key with its resolved action (`KeyContext::Banner`). Returns an outcome when the shown
    /// request is answered (then the next queued one shows).
    pub fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<BannerOutcome> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        // Taken out while handled so the state can change beside it; put back unless answered.
        let request = self.queue.pop_front()?;
        let answer = match self.shown.mode.clone() {
            Mode::Choosing => self.handle_choosing(&request, action, key),
            Mode::Scope => self.handle_scope(action, key),
            Mode::Reason(text) => self.handle_reason(text, action, key),
            Mode::SideBySide => {
                self.handle_side(&request, action);
                None
            }
        };
        match answer {
            Some(answer) => Some(self.finish(request, answer)),
            None => {
                self.queue.push_front(request);
                None
            }
        }
    }

    /// Interrupt: every request, shown and queued, is denied; returns their ids.
    pub fn cancel_all(&mut self) -> Vec<u64> {
        let ids = self.queue.drain(..).map(|r| r.id).collect();
        self.shown = Shown::for_request(None);
        ids
    }

    fn finish(&mut self, request: PermissionRequest, answer: Answer) -> BannerOutcome {
        let partial = self.shown.accepted.iter().any(|accepted| !accepted);
        let hunks = match answer {
            Answer::Deny { .. } => None,
            _ if partial && request.proposal.is_some() => Some(self.shown.accepted.clone()),
            _ => None,
        };
        self.shown = Shown::for_request(self.queue.front());
        BannerOutcome {
            request: request.id,
            answer,
            hunks,
        }
    }

    fn handle_choosing(
        &mut self,
        request: &PermissionRequest,
        action: Option<Action>,
        key: &KeyEvent,
    ) -> Option<Answer> {
        let offered = choices(request);
        match action {
            Some(Action::ApproveOnce) => Some(Answer::Once),
            Some(Action::ApproveSession) if request.offer_session => Some(Answer::Session),
            Some(Action::ApproveAlways) if request.offer_always => self.always(request),
            Some(Action::Deny) => {
                if typed_char(key).is_some() {
                    // The deny key asks for a reason; Esc (also bound to deny) denies at once.
                    self.shown.mode = Mode::Reason(String::new());
                    None
                } else {
                    Some(Answer::Deny { reason: None })
                }
            }
            Some(Action::SideBySide) => {
                if hunk_count(request) > 0 {
                    self.shown.side_reveal = true;
                    self.shown.mode = Mode::SideBySide;
                }
                None
            }
            Some(Action::NextHunk) => {
                self.step_hunk(request, 1);
                None
            }
            Some(Action::PrevHunk) => {
                self.step_hunk(request, -1);
                None
            }
            Some(Action::ToggleHunk) => {
                let current = self.shown.current_hunk;
                if let Some(flag) = self.shown.accepted.get_mut(current) {
                    *flag = !*flag;
                }
                None
            }
            Some(Action::ToggleFile) => {
                self.toggle_file();
                None
            }
            Some(Action::PageDown) => {
                let page = self.body_height.saturating_sub(1).max(1);
                self.scroll_to(request, self.shown.scroll.saturating_add(page));
                None
            }
            Some(Action::PageUp) => {
                let page = self.body_height.saturating_sub(1).max(1);
                self.scroll_to(request, self.shown.scroll.saturating_sub(page));
                None
            }
            Some(Action::ScrollDown) => {
                self.scroll_to(request, self.shown.scroll.saturating_add(1));
                None
            }
            Some(Action::ScrollUp) => {
                self.scroll_to(request, self.shown.scroll.saturating_sub(1));
                None
            }
            Some(Action::ScrollTop) => {
                self.scroll_to(request, 0);
                None
            }
            Some(Action::ScrollBottom) => {
                self.scroll_to(request, usize::MAX);
                None
            }
            Some(Action::Confirm) => self.activate(request, self.shown.focus),
            None => match key.code {
                KeyCode::Left | KeyCode::BackTab => {
                    self.move_focus(&offered, -1);
                    None
                }
                KeyCode::Right | KeyCode::Tab => {
                    self.move_focus(&offered, 1);
                    None
                }
                KeyCode::Enter => self.activate(request, self.shown.focus),
                _ => None,
            },
            _ => None,
        }
    }

    /// Every hunk of the current hunk's file: all rejected when all were accepted, else all
    /// accepted (a change to several files; nothing otherwise).
    fn toggle_file(&mut self) {
        let current = self.shown.current_hunk;
        let Some((_, hunks)) = self
            .shown
            .layouts
            .files
            .iter()
            .find(|(_, hunks)| hunks.contains(&current))
        else {
            return;
        };
        let hunks = hunks.clone();
        let all = hunks
            .clone()
            .all(|h| self.shown.accepted.get(h).copied().unwrap_or(true));
        for h in hunks {
            if let Some(flag) = self.shown.accepted.get_mut(h) {
                *flag = !all;
            }
        }
    }

    fn move_focus(&mut self, offered: &[Choice], step: isize) {
        let at = offered
            .iter()
            .position(|&c| c == self.shown.focus)
            .unwrap_or(offered.len().saturating_sub(1));
        let next = (at as isize + step).rem_euclid(offered.len().max(1) as isize) as usize;
        if let Some(&choice) = offered.get(next) {
            self.shown.focus = choice;
        }
    }

    /// Enter on the focused choice. Deny here denies at once: the reason prompt belongs to the
    /// deny key, and Enter must never need a second press to take effect safely.
    fn activate(&mut self, request: &PermissionRequest, choice: Choice) -> Option<Answer> {
        match choice {
            Choice::Once => Some(Answer::Once),
            Choice::Session => Some(Answer::Session),
            Choice::Always => self.always(request),
            Choice::Deny => Some(Answer::Deny { reason: None }),
        }
    }

    /// *always*: with exactly one path the scope is asked first; otherwise the tool everywhere
    /// (a rule holds one path glob, and several paths cannot be narrowed to one).
    fn always(&mut self, request: &PermissionRequest) -> Option<Answer> {
        if request.paths.len() == 1 {
            self.shown.mode = Mode::Scope;
            None
        } else {
            Some(Answer::Always { with_path: false })
        }
    }

    /// j/k: read on. Through a hunk taller than the box, one row at a time; once the current
    /// hunk's end (or, going up, its header) is in view, the next or previous hunk, its header
    /// at the top. Without hunks (tool input), one row of scroll.
    fn step_hunk(&mut self, request: &PermissionRequest, step: isize) {
        let hunks = hunk_count(request);
        let scroll = self.shown.scroll;
        let Some(diff) = diff_of(request).filter(|_| hunks > 0) else {
            self.scroll_to(request, scroll.saturating_add_signed(step));
            return;
        };
        let layout = self.shown.layouts.inline(diff, self.body_width);
        let max = layout.len().saturating_sub(self.body_height);
        let rows = layout.hunk_rows(self.shown.current_hunk);
        let current = self.shown.current_hunk;
        if self.shown.reveal {
            // A hunk chosen since the last frame: it will be drawn with its header at the top.
            self.shown.scroll = rows.start.min(max);
            self.shown.reveal = false;
        }
        let scroll = self.shown.scroll;
        if step > 0 {
            if rows.end > scroll + self.body_height || current + 1 >= hunks {
                // More of this hunk below (or nothing after it): scroll.
                self.shown.scroll = (scroll + 1).min(max);
            } else {
                self.shown.current_hunk = current + 1;
                self.shown.reveal = true;
            }
        } else if rows.start < scroll {
            self.shown.scroll = scroll - 1;
        } else if current > 0 {
            self.shown.current_hunk = current - 1;
            self.shown.reveal = true;
        }
    }

    /// Scroll the modal's body to row `target` (clamped to the last page); the current hunk
    /// follows: the one at the top of the view.
    fn scroll_to(&mut self, request: &PermissionRequest, target: usize) {
        let total = body_row_count(request, &mut self.shown.layouts, self.body_width);
        let max = total.saturating_sub(self.body_height);
        let before = self.shown.scroll;
        self.shown.scroll = target.min(max);
        if self.shown.scroll != before
            && let Some(diff) = diff_of(request).filter(|d| !d.hunks.is_empty())
        {
            let layout = self.shown.layouts.inline(diff, self.body_width);
            self.shown.current_hunk = layout.hunk_at(self.shown.scroll);
            self.shown.reveal = false;
        }
    }

    fn handle_scope(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<Answer> {
        match typed_char(key) {
            Some('t') => return Some(Answer::Always { with_path: false }),
            Some('p') => return Some(Answer::Always { with_path: true }),
            _ => {}
        }
        if matches!(action, Some(Action::Deny | Action::Cancel)) || key.code == KeyCode::Esc {
            self.shown.mode = Mode::Choosing;
        }
        None
    }

    fn handle_reason(
        &mut self,
        mut text: String,
        action: Option<Action>,
        key: &KeyEvent,
    ) -> Option<Answer> {
        if let Some(c) = typed_char(key) {
            if text.chars().count() < MAX_REASON_CHARS {
                text.push(c);
            }
            self.shown.mode = Mode::Reason(text);
            return None;
        }
        match key.code {
            KeyCode::Enter => {
                let reason = text.trim();
                Some(Answer::Deny {
                    reason: (!reason.is_empty()).then(|| reason.to_string()),
                })
            }
            KeyCode::Backspace => {
                text.pop();
                self.shown.mode = Mode::Reason(text);
                None
            }
            KeyCode::Esc => Some(Answer::Deny { reason: None }),
            _ if matches!(action, Some(Action::Deny | Action::Cancel)) => {
                Some(Answer::Deny { reason: None })
            }
            _ => None,
        }
    }

    fn handle_side(&mut self, request: &PermissionRequest, action: Option<Action>) {
        let Some(diff) = diff_of(request) else {
            self.shown.mode = Mode::Choosing;
            return;
        };
        let page = self.side_height.saturating_sub(1).max(1) as isize;
        let step = match action {
            Some(Action::SideBySide | Action::Deny | Action::Cancel) => {
                self.shown.mode = Mode::Choosing;
                self.shown.reveal = true;
                return;
            }
            Some(Action::ToggleHunk) => {
                let current = self.shown.current_hunk;
                if let Some(flag) = self.shown.accepted.get_mut(current) {
                    *flag = !*flag;
                }
                return;
            }
            Some(Action::ToggleFile) => {
                self.toggle_file();
                return;
            }
            Some(Action::NextHunk | Action::ScrollDown | Action::Down) => 1,
            Some(Action::PrevHunk | Action::ScrollUp | Action::Up) => -1,
            Some(Action::PageDown) => page,
            Some(Action::PageUp) => -page,
            Some(Action::ScrollTop) => isize::MIN,
            Some(Action::ScrollBottom) => isize::MAX,
            _ => return,
        };
        let layout = self.shown.layouts.side(diff, self.side_width);
        let max = layout.len().saturating_sub(self.side_height);
        if self.shown.side_reveal {
            self.shown.side_scroll = layout.hunk_rows(self.shown.current_hunk).start;
            self.shown.side_reveal = false;
        }
        let before = self.shown.side_scroll.min(max);
        self.shown.side_scroll = before.saturating_add_signed(step).min(max);
        if self.shown.side_scroll != before {
            self.shown.current_hunk = layout.hunk_at(self.shown.side_scroll);
        }
    }

    /// Draw over `area` (the whole screen): a modal box (about 80% wide, up to 70% high,
    /// centred; full screen when the terminal is small) — or the full-screen side-by-side view
    /// when toggled.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, keymap: &Keymap) {
        let area = area.intersection(buf.area);
        let queued = self.queued();
        let Banner {
            queue,
            shown,
            body_height,
            body_width,
            side_height,
            side_width,
        } = self;
        let Some(request) = queue.front() else {
            return;
        };
        if area.is_empty() {
            return;
        }
        let screen = Screen {
            buf,
            theme,
            keymap,
            queued,
        };
        match shown.mode {
            Mode::SideBySide => screen.side(area, request, shown, (side_height, side_width)),
            _ => screen.modal(area, request, shown, (body_height, body_width)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Proposal;
    use crate::tui::testing::{buffer, buffer_text, look, style_at, style_at_offset};
    use crossterm::event::KeyModifiers;
    use serde_json::json;

    /// A paragraph of 450 characters, as Markdown keeps it: one line.
    const PARAGRAPH: &str = "Plan the vegetable beds for spring. Tomatoes go along the south fence, where they get sun from late morning until evening; the herb spiral needs more light than the old apple tree allows, so it moves to the corner by the shed. Beans climb the north trellis again this year, and the compost bin stays behind the greenhouse where the hose reaches it. Order seeds before the end of February, because the good varieties sell out very early, every spring.";

    /// The agent's rewrite: three places changed.
    fn rewritten_paragraph() -> String {
        PARAGRAPH
            .replace("south fence", "west fence")
            .replace("corner by the shed", "sunny corner by the gate")
            .replace("before the end of February", "by mid-February")
    }

    /// A garden note whose paragraph the agent rewrote.
    fn paragraph_request(id: u64) -> PermissionRequest {
        assert_eq!(PARAGRAPH.chars().count(), 450);
        let note = |paragraph: &str| {
            format!("# Garden Planner\n\n{paragraph}\n\n## Beds\n\n- basil\n- beans\n")
        };
        write_request(
            id,
            "Projects/Garden Planner.md",
            &note(PARAGRAPH),
            &note(&rewritten_paragraph()),
        )
    }

    /// The rewritten paragraph, and further down a second, small change.
    fn paragraph_and_list_request(id: u64) -> PermissionRequest {
        let tail: String = (1..=12).map(|n| format!("- task {n}\n")).collect();
        let note = |paragraph: &str, last: &str| {
            format!("# Garden Planner\n\n{paragraph}\n\n{tail}- {last}\n")
        };
        let request = write_request(
            id,
            "Projects/Garden Planner.md",
            &note(PARAGRAPH, "water the beans"),
            &note(&rewritten_paragraph(), "water the beans at dawn"),
        );
        assert_eq!(hunk_count(&request), 2);
        request
    }

    const PLAN_BEFORE: &str = "# Plan\n\nShip the importer by Friday.\nWrite the tests.\nAsk Dana about the API limits.\n\n## Notes\n- keep it small\n";
    const PLAN_AFTER: &str = "# Plan\n\nShip the importer by Monday.\nWrite the tests.\nWrite the docs.\nAsk Dana about the API limits.\n\n## Notes\n- keep it small\n";

    fn write_request(id: u64, path: &str, before: &str, after: &str) -> PermissionRequest {
        PermissionRequest {
            id,
            call_id: format!("call_{id}"),
            tool: "update_note".into(),
            input: json!({"note": path, "body": after}),
            paths: vec![path.into()],
            proposal: Some(Proposal {
                summary: format!("update {path}"),
                path: path.into(),
                diff: TextDiff::new(before, after),
                files: Vec::new(),
            }),
            offer_session: true,
            offer_always: true,
            reason: "update_note writes to the vault".into(),
        }
    }

    fn small_request(id: u64) -> PermissionRequest {
        write_request(id, "Projects/Plan.md", PLAN_BEFORE, PLAN_AFTER)
    }

    /// `lines` lines of meeting notes with every `every`-th line reworded.
    fn changed_every(lines: usize, every: usize) -> (String, String) {
        let before: String = (1..=lines)
            .map(|n| format!("- [ ] item {n}: follow up with the team about the roadmap\n"))
            .collect();
        let after: String = (1..=lines)
            .map(|n| {
                if n % every == 0 {
                    format!(
                        "- [x] item {n}: done, notes in Meetings/2024-05-{:02}.md\n",
                        n % 28 + 1
                    )
                } else {
                    format!("- [ ] item {n}: follow up with the team about the roadmap\n")
                }
            })
            .collect();
        (before, after)
    }

    fn huge_request(id: u64) -> PermissionRequest {
        let (before, after) = changed_every(240, 20);
        write_request(id, "Meetings/Weekly sync.md", &before, &after)
    }

    fn three_hunk_request(id: u64) -> PermissionRequest {
        let (before, after) = changed_every(30, 10);
        let request = write_request(id, "Tasks.md", &before, &after);
        assert_eq!(hunk_count(&request), 3);
        request
    }

    fn mcp_request(id: u64) -> PermissionRequest {
        PermissionRequest {
            id,
            call_id: format!("call_{id}"),
            tool: "github__create_issue".into(),
            input: json!({
                "repo": "acme/importer",
                "title": "Importer drops rows with empty dates",
                "labels": ["bug", "importer"],
                "body": "Found while reviewing Projects/Plan.md: rows without a date are skipped silently."
            }),
            paths: vec![],
            proposal: None,
            offer_session: true,
            offer_always: false,
            reason: "github__create_issue is an MCP tool that does not declare readOnlyHint".into(),
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    /// Press a key the way the App does: resolve it with the key map, then hand both over.
    pub(super) fn press(banner: &mut Banner, code: KeyCode) -> Option<BannerOutcome> {
        let event = key(code);
        let action = Keymap::default_map().action(KeyContext::Banner, &event);
        banner.handle(action, &event)
    }

    fn type_text(banner: &mut Banner, text: &str) {
        for c in text.chars() {
            assert_eq!(press(banner, KeyCode::Char(c)), None, "typing {c:?}");
        }
    }

    fn banner_with(requests: Vec<PermissionRequest>) -> Banner {
        let mut banner = Banner::new();
        for request in requests {
            banner.push(request);
        }
        banner
    }

    /// The banner drawn on a screen of `width` × `height` with the default theme and key map
    /// (the move and multi-edit tests draw through this too).
    pub(super) fn draw(banner: &mut Banner, width: u16, height: u16) -> Buffer {
        let mut buf = buffer(width, height);
        let area = buf.area;
        banner.render(
            area,
            &mut buf,
            &Theme::builtin_dark(),
            &Keymap::default_map(),
        );
        buf
    }

    // -- behaviour ------------------------------------------------------------------------

    #[test]
    fn focus_starts_on_deny_and_enter_denies() {
        let mut banner = banner_with(vec![small_request(7)]);
        assert_eq!(banner.shown.focus, Choice::Deny);
        let outcome = press(&mut banner, KeyCode::Enter);
        assert_eq!(
            outcome,
            Some(BannerOutcome {
                request: 7,
                answer: Answer::Deny { reason: None },
                hunks: None
            })
        );
        assert!(!banner.is_active());
    }

    #[test]
    fn y_approves_once_with_every_hunk() {
        let mut banner = banner_with(vec![three_hunk_request(3)]);
        let outcome = press(&mut banner, KeyCode::Char('y'));
        assert_eq!(
            outcome,
            Some(BannerOutcome {
                request: 3,
                answer: Answer::Once,
                hunks: None
            })
        );
    }

    #[test]
    fn a_toggled_hunk_is_reported_as_rejected() {
        let mut banner = banner_with(vec![three_hunk_request(1)]);
        assert_eq!(press(&mut banner, KeyCode::Char('j')), None);
        assert_eq!(banner.shown.current_hunk, 1);
        assert_eq!(press(&mut banner, KeyCode::Char(' ')), None);
        let outcome = press(&mut banner, KeyCode::Char('y'));
        assert_eq!(
            outcome.map(|o| o.hunks),
            Some(Some(vec![true, false, true]))
        );
    }

    #[test]
    fn toggling_twice_accepts_again_and_every_hunk_may_be_rejected() {
        let mut banner = banner_with(vec![three_hunk_request(1), three_hunk_request(2)]);
        press(&mut banner, KeyCode::Char(' '));
        press(&mut banner, KeyCode::Char(' '));
        let outcome = press(&mut banner, KeyCode::Char('s'));
        assert_eq!(
            outcome,
            Some(BannerOutcome {
                request: 1,
                answer: Answer::Session,
                hunks: None
            })
        );
        for _ in 0..3 {
            press(&mut banner, KeyCode::Char(' '));
            press(&mut banner, KeyCode::Char('j'));
        }
        let outcome = press(&mut banner, KeyCode::Char('y'));
        assert_eq!(
            outcome.map(|o| o.hunks),
            Some(Some(vec![false, false, false]))
        );
    }

    #[test]
    fn a_denial_carries_no_hunk_flags() {
        let mut banner = banner_with(vec![three_hunk_request(1)]);
        press(&mut banner, KeyCode::Char(' '));
        let outcome = press(&mut banner, KeyCode::Esc);
        assert_eq!(outcome.map(|o| o.hunks), Some(None));
    }

    #[test]
    fn always_with_one_path_asks_the_scope() {
        let mut banner = banner_with(vec![small_request(1), small_request(2)]);
        assert_eq!(press(&mut banner, KeyCode::Char('a')), None);
        assert_eq!(banner.shown.mode, Mode::Scope);
        // Enter alone does not pick a scope.
        assert_eq!(press(&mut banner, KeyCode::Enter), None);
        let outcome = press(&mut banner, KeyCode::Char('p'));
        assert_eq!(
            outcome.map(|o| o.answer),
            Some(Answer::Always { with_path: true })
        );
        press(&mut banner, KeyCode::Char('a'));
        let outcome = press(&mut banner, KeyCode::Char('t'));
        assert_eq!(
            outcome.map(|o| o.answer),
            Some(Answer::Always { with_path: false })
        );
    }

    #[test]
    fn esc_leaves_the_scope_prompt_without_answering() {
        let mut banner = banner_with(vec![small_request(1)]);
        press(&mut banner, KeyCode::Char('a'));
        assert_eq!(press(&mut banner, KeyCode::Esc), None);
        assert_eq!(banner.shown.mode, Mode::Choosing);
        assert!(banner.is_active());
    }

    #[test]
    fn always_without_exactly_one_path_means_the_tool_everywhere() {
        let mut request = small_request(1);
        request.paths = vec!["a.md".into(), "b.md".into()];
        let mut banner = banner_with(vec![request]);
        let outcome = press(&mut banner, KeyCode::Char('a'));
        assert_eq!(
            outcome.map(|o| o.answer),
            Some(Answer::Always { with_path: false })
        );
    }

    #[test]
    fn n_asks_for_a_reason_and_enter_sends_it() {
        let mut banner = banner_with(vec![small_request(4)]);
        assert_eq!(press(&mut banner, KeyCode::Char('n')), None);
        // Keys bound to banner actions are text here: `y` must not approve.
        type_text(&mut banner, "too longy");
        press(&mut banner, KeyCode::Backspace);
        let outcome = press(&mut banner, KeyCode::Enter);
        assert_eq!(
            outcome,
            Some(BannerOutcome {
                request: 4,
                answer: Answer::Deny {
                    reason: Some("too long".into())
                },
                hunks: None
            })
        );
    }

    #[test]
    fn the_reason_is_optional() {
        let mut banner = banner_with(vec![small_request(1), small_request(2)]);
        press(&mut banner, KeyCode::Char('n'));
        type_text(&mut banner, "  ");
        let outcome = press(&mut banner, KeyCode::Enter);
        assert_eq!(
            outcome.map(|o| o.answer),
            Some(Answer::Deny { reason: None })
        );
        press(&mut banner, KeyCode::Char('n'));
        type_text(&mut banner, "half a reason");
        let outcome = press(&mut banner, KeyCode::Esc);
        assert_eq!(
            outcome.map(|o| o.answer),
            Some(Answer::Deny { reason: None })
        );
    }

    #[test]
    fn esc_denies_at_once() {
        let mut banner = banner_with(vec![small_request(9)]);
        let outcome = press(&mut banner, KeyCode::Esc);
        assert_eq!(
            outcome.map(|o| (o.request, o.answer)),
            Some((9, Answer::Deny { reason: None }))
        );
    }

    #[test]
    fn the_queue_shows_requests_in_turn() {
        let mut banner = banner_with(vec![small_request(1), huge_request(2)]);
        assert!(banner.is_active());
        assert_eq!(banner.queued(), 1);
        assert_eq!(banner.current().map(|r| r.id), Some(1));
        // State of the first request does not leak into the second.
        press(&mut banner, KeyCode::Left);
        let outcome = press(&mut banner, KeyCode::Char('y'));
        assert_eq!(outcome.map(|o| o.request), Some(1));
        assert_eq!(banner.current().map(|r| r.id), Some(2));
        assert_eq!(banner.queued(), 0);
        assert_eq!(banner.shown.focus, Choice::Deny);
        assert_eq!(banner.shown.accepted.len(), hunk_count(&huge_request(2)));
        press(&mut banner, KeyCode::Char('y'));
        assert!(!banner.is_active());
        assert_eq!(banner.current(), None);
        assert_eq!(press(&mut banner, KeyCode::Char('y')), None);
    }

    #[test]
    fn a_push_while_shown_keeps_the_shown_state() {
        let mut banner = banner_with(vec![three_hunk_request(1)]);
        press(&mut banner, KeyCode::Char('j'));
        banner.push(small_request(2));
        assert_eq!(banner.shown.current_hunk, 1);
        assert_eq!(banner.queued(), 1);
    }

    #[test]
    fn cancel_all_denies_everything() {
        let mut banner = banner_with(vec![small_request(1), small_request(2), mcp_request(3)]);
        assert_eq!(banner.cancel_all(), vec![1, 2, 3]);
        assert!(!banner.is_active());
        assert_eq!(banner.queued(), 0);
        assert_eq!(banner.cancel_all(), Vec::<u64>::new());
    }

    #[test]
    fn options_not_offered_do_nothing() {
        let mut request = small_request(1);
        request.offer_session = false;
        request.offer_always = false;
        let mut banner = banner_with(vec![request]);
        assert_eq!(press(&mut banner, KeyCode::Char('s')), None);
        assert_eq!(press(&mut banner, KeyCode::Char('a')), None);
        assert_eq!(banner.shown.mode, Mode::Choosing);
        // Focus moves between the offered choices only: deny ← once, then wraps to deny.
        press(&mut banner, KeyCode::Left);
        assert_eq!(banner.shown.focus, Choice::Once);
        press(&mut banner, KeyCode::Left);
        assert_eq!(banner.shown.focus, Choice::Deny);
        assert!(banner.is_active());
    }

    #[test]
    fn enter_activates_the_focused_choice() {
        let mut banner = banner_with(vec![small_request(1), small_request(2)]);
        press(&mut banner, KeyCode::Left); // always
        press(&mut banner, KeyCode::Left); // session
        assert_eq!(banner.shown.focus, Choice::Session);
        let outcome = press(&mut banner, KeyCode::Enter);
        assert_eq!(outcome.map(|o| o.answer), Some(Answer::Session));
        press(&mut banner, KeyCode::Tab); // wraps from deny to once
        assert_eq!(banner.shown.focus, Choice::Once);
        let outcome = press(&mut banner, KeyCode::Enter);
        assert_eq!(outcome.map(|o| o.answer), Some(Answer::Once));
    }

    #[test]
    fn j_and_k_move_between_hunks_and_keep_the_current_one_visible() {
        let mut banner = banner_with(vec![huge_request(1)]);
        let hunks = hunk_count(&huge_request(1));
        for _ in 0..hunks + 3 {
            press(&mut banner, KeyCode::Char('j'));
        }
        assert_eq!(banner.shown.current_hunk, hunks - 1);
        let text = buffer_text(&draw(&mut banner, 80, 24));
        let last = diff_of(&huge_request(1))
            .map(|d| crate::tui::diff_view::hunk_header(&d.hunks[hunks - 1]))
            .unwrap_or_default();
        assert!(text.contains(&format!("▶ {last}")), "{text}");
        press(&mut banner, KeyCode::Char('k'));
        assert_eq!(banner.shown.current_hunk, hunks - 2);
        for _ in 0..hunks {
            press(&mut banner, KeyCode::Up);
        }
        assert_eq!(banner.shown.current_hunk, 0);
        let text = buffer_text(&draw(&mut banner, 80, 24));
        assert!(text.contains("▶ @@ -17,7 +17,7 @@"), "{text}");
    }

    #[test]
    fn page_down_scrolls_and_the_current_hunk_follows() {
        let mut banner = banner_with(vec![huge_request(1)]);
        draw(&mut banner, 120, 40);
        let first = banner.shown.scroll;
        press(&mut banner, KeyCode::PageDown);
        assert!(banner.shown.scroll > first);
        assert!(banner.shown.current_hunk > 0);
        let text = buffer_text(&draw(&mut banner, 120, 40));
        assert!(text.contains('▶') || text.contains('▎'), "{text}");
        press(&mut banner, KeyCode::PageUp);
        assert_eq!(banner.shown.scroll, first);
        assert_eq!(banner.shown.current_hunk, 0);
    }

    #[test]
    fn d_shows_side_by_side_and_d_or_esc_return_without_answering() {
        let mut banner = banner_with(vec![three_hunk_request(1)]);
        press(&mut banner, KeyCode::Char('d'));
        assert_eq!(banner.shown.mode, Mode::SideBySide);
        assert_eq!(press(&mut banner, KeyCode::Char('j')), None);
        assert_eq!(
            press(&mut banner, KeyCode::Char('y')),
            None,
            "no approval from the full view"
        );
        assert_eq!(press(&mut banner, KeyCode::Esc), None);
        assert_eq!(banner.shown.mode, Mode::Choosing);
        assert!(banner.is_active());
        press(&mut banner, KeyCode::Char('d'));
        press(&mut banner, KeyCode::Char('d'));
        assert_eq!(banner.shown.mode, Mode::Choosing);
    }

    #[test]
    fn side_by_side_is_not_offered_without_a_diff() {
        let mut banner = banner_with(vec![mcp_request(1)]);
        press(&mut banner, KeyCode::Char('d'));
        assert_eq!(banner.shown.mode, Mode::Choosing);
        let text = buffer_text(&draw(&mut banner, 120, 40));
        assert!(!text.contains("side by side"), "{text}");
        assert!(!text.contains("[a] always"), "{text}");
        assert!(text.contains("[s] session"), "{text}");
    }

    #[test]
    fn key_release_events_are_ignored() {
        let mut banner = banner_with(vec![small_request(1)]);
        let mut event = key(KeyCode::Char('y'));
        event.kind = KeyEventKind::Release;
        assert_eq!(banner.handle(Some(Action::ApproveOnce), &event), None);
        assert!(banner.is_active());
    }

    #[test]
    fn render_never_panics() {
        let (before, after) = changed_every(2000, 3);
        let big = write_request(1, "Big.md", &before, &after);
        let (before, after) = (String::new(), "new\n".repeat(2000));
        let all_new = write_request(2, "New.md", &before, &after);
        let mut empty = small_request(3);
        if let Some(p) = empty.proposal.as_mut() {
            p.diff = TextDiff::new("same\n", "same\n");
        }
        let requests = [big, all_new, empty, mcp_request(4), small_request(5)];
        let setups: [&[KeyCode]; 5] = [
            &[],
            &[KeyCode::Char('j'), KeyCode::PageDown],
            &[KeyCode::Char('n'), KeyCode::Char('x')],
            &[KeyCode::Char('a')],
            &[KeyCode::Char('d'), KeyCode::PageDown, KeyCode::PageDown],
        ];
        for request in &requests {
            for setup in setups {
                let mut banner = banner_with(vec![request.clone(), small_request(99)]);
                for &code in setup {
                    press(&mut banner, code);
                }
                for (w, h) in [
                    (0, 0),
                    (1, 1),
                    (2, 2),
                    (20, 5),
                    (49, 11),
                    (80, 24),
                    (300, 100),
                ] {
                    draw(&mut banner, w, h);
                }
            }
        }
        // Nothing to show: nothing drawn.
        let mut banner = Banner::new();
        assert_eq!(buffer_text(&draw(&mut banner, 10, 3)).trim(), "");
    }

    #[test]
    fn a_small_terminal_gets_a_full_screen_banner() {
        let mut banner = banner_with(vec![small_request(1)]);
        let buf = draw(&mut banner, 40, 10);
        let text = buffer_text(&buf);
        assert!(text.starts_with("╭"), "{text}");
        assert!(text.contains("Allow update_note?"), "{text}");
        // Every choice keeps its name at this width, and the focused one is highlighted.
        assert!(
            text.contains("y once  s session  a always  n deny"),
            "{text}"
        );
        assert_eq!(
            look(style_at(&buf, "n deny")),
            look(Some(Theme::builtin_dark().style(Role::ButtonFocused)))
        );
        // Narrower still, the keys alone.
        let text = buffer_text(&draw(&mut banner, 24, 8));
        assert!(text.contains("[y] [s] [a] [n]"), "{text}");
    }

    #[test]
    fn long_paths_keep_their_end() {
        assert_eq!(
            crate::tui::width::TERMINAL.truncate_start("Projects/2024/Plan.md", 10),
            "…4/Plan.md"
        );
        assert_eq!(
            crate::tui::width::TERMINAL.truncate_start("Plan.md", 10),
            "Plan.md"
        );
        assert_eq!(crate::tui::width::TERMINAL.truncate_start("Plan.md", 0), "");
    }

    // -- styles ---------------------------------------------------------------------------

    #[test]
    fn diff_lines_and_the_focused_choice_use_their_roles() {
        let theme = Theme::builtin_dark();
        let mut banner = banner_with(vec![small_request(1)]);
        let buf = draw(&mut banner, 120, 40);
        assert_eq!(
            look(style_at(&buf, "+ Write the docs.")),
            look(Some(theme.style(Role::DiffAdded)))
        );
        assert_eq!(
            look(style_at(&buf, "- Ship the importer by Friday.")),
            look(Some(theme.style(Role::DiffRemoved)))
        );
        assert_eq!(
            look(style_at(&buf, "[n] deny")),
            look(Some(theme.style(Role::ButtonFocused)))
        );
        assert_eq!(
            look(style_at(&buf, "[y] once")),
            look(Some(theme.style(Role::Button)))
        );
        assert_eq!(
            look(style_at(&buf, "Allow update_note?")),
            look(Some(theme.style(Role::BannerTitle)))
        );
        assert_eq!(
            look(style_at(&buf, "@@ -1,")),
            look(Some(theme.style(Role::DiffHunkHeader)))
        );
        assert_eq!(
            look(style_at(&buf, "▶")),
            look(Some(theme.style(Role::HunkSelected)))
        );
        let added = style_at(&buf, "+2 -1").map(|s| s.fg);
        assert_eq!(added, Some(theme.style(Role::DiffAdded).fg));
    }

    #[test]
    fn a_rejected_hunk_uses_the_rejected_role() {
        let theme = Theme::builtin_dark();
        let mut banner = banner_with(vec![small_request(1)]);
        press(&mut banner, KeyCode::Char(' '));
        let buf = draw(&mut banner, 120, 40);
        assert_eq!(
            look(style_at(&buf, "+ Write the docs.")),
            look(Some(theme.style(Role::HunkRejected)))
        );
        assert!(buffer_text(&buf).contains("✗ rejected"));
    }

    // -- snapshots ------------------------------------------------------------------------

    fn snapshot(name: &str, banner: &mut Banner) {
        for (w, h) in [(80, 24), (120, 40)] {
            let text = buffer_text(&draw(banner, w, h));
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
        }
    }

    #[test]
    fn snapshot_small_diff() {
        snapshot("banner_small", &mut banner_with(vec![small_request(1)]));
    }

    #[test]
    fn snapshot_huge_diff_scrolled_to_hunk_3() {
        let mut banner = banner_with(vec![huge_request(1)]);
        press(&mut banner, KeyCode::Char('j'));
        press(&mut banner, KeyCode::Char('j'));
        press(&mut banner, KeyCode::Char(' '));
        assert_eq!(banner.shown.current_hunk, 2);
        snapshot("banner_huge", &mut banner);
    }

    #[test]
    fn snapshot_queued_requests() {
        let mut banner = banner_with(vec![small_request(1), huge_request(2), mcp_request(3)]);
        snapshot("banner_queued", &mut banner);
    }

    #[test]
    fn snapshot_reason_input() {
        let mut banner = banner_with(vec![small_request(1)]);
        press(&mut banner, KeyCode::Char('n'));
        type_text(&mut banner, "too long, keep the Friday date");
        snapshot("banner_reason", &mut banner);
    }

    #[test]
    fn snapshot_always_scope_prompt() {
        let mut banner = banner_with(vec![small_request(1)]);
        press(&mut banner, KeyCode::Char('a'));
        snapshot("banner_scope", &mut banner);
    }

    #[test]
    fn snapshot_request_without_proposal() {
        snapshot("banner_json", &mut banner_with(vec![mcp_request(1)]));
    }

    // -- prose: wrapped paragraphs, changed words, scrolling ---------------------------------

    /// The rows of the modal's body on screen (below the target line and its spacer).
    fn body_rows(banner: &Banner, buf: &Buffer) -> Vec<String> {
        buffer_text(buf)
            .lines()
            .skip(4)
            .take(banner.body_height)
            .map(str::to_string)
            .collect()
    }

    /// The text column of body rows: after the border, padding and `▎ 3   - ` gutter, before
    /// the gap and the scroll bar.
    fn text_column(row: &str) -> String {
        let chars: Vec<char> = row.chars().collect();
        chars
            .get(10..76)
            .unwrap_or_default()
            .iter()
            .collect::<String>()
    }

    /// The text of the diff line that starts with `sign`, joined from its rows.
    fn line_from_rows(rows: &[String], sign: &str) -> String {
        let Some(first) = rows.iter().position(|r| {
            r.chars()
                .skip(8)
                .collect::<String>()
                .starts_with(&format!("{sign} "))
        }) else {
            return String::new();
        };
        let mut parts = vec![text_column(&rows[first]).trim().to_string()];
        for row in &rows[first + 1..] {
            let gutter: String = row.chars().skip(2).take(8).collect();
            if gutter.trim_start_matches('▎').trim() != "" {
                break;
            }
            parts.push(text_column(row).trim().to_string());
        }
        parts.join(" ")
    }

    #[test]
    fn a_450_character_paragraph_rewrite_is_fully_readable_at_80x24() {
        let mut banner = banner_with(vec![paragraph_request(1)]);
        let buf = draw(&mut banner, 80, 24);
        assert_eq!(banner.body_height, 16);
        let text = buffer_text(&buf);
        assert!(text.contains("rows 1–16 of"), "{text}");
        // Scroll with j one row at a time to the end, keeping every row once.
        let mut rows = body_rows(&banner, &buf);
        loop {
            let before = banner.shown.scroll;
            press(&mut banner, KeyCode::Char('j'));
            let buf = draw(&mut banner, 80, 24);
            if banner.shown.scroll == before {
                break;
            }
            assert_eq!(banner.shown.scroll, before + 1, "j scrolls by one row");
            rows.extend(body_rows(&banner, &buf).last().cloned());
        }
        assert_eq!(banner.shown.current_hunk, 0);
        assert_eq!(line_from_rows(&rows, "-"), PARAGRAPH, "{rows:#?}");
        assert_eq!(
            line_from_rows(&rows, "+"),
            rewritten_paragraph(),
            "{rows:#?}"
        );
        // Nothing is cut: no row of the body ends in an ellipsis.
        assert!(rows.iter().all(|r| !r.contains('…')), "{rows:#?}");
        let text = buffer_text(&draw(&mut banner, 80, 24));
        assert!(text.contains(&format!("of {} ", rows.len())), "{text}");
    }

    #[test]
    fn changed_words_are_styled_apart_from_unchanged_words_in_the_same_row() {
        let theme = Theme::builtin_dark();
        for (w, h) in [(80, 24), (120, 40)] {
            let mut banner = banner_with(vec![paragraph_request(1)]);
            let buf = draw(&mut banner, w, h);
            // In the new version's row with "along the west": "west" changed, "along" not.
            let added_word = style_at_offset(&buf, "along the west", 10);
            let added_rest = style_at_offset(&buf, "along the west", 0);
            assert_eq!(
                look(added_word),
                look(Some(theme.style(Role::DiffAddedWord)))
            );
            assert_eq!(look(added_rest), look(Some(theme.style(Role::DiffAdded))));
            assert_ne!(look(added_word), look(added_rest));
            // In the old version's row with "along the south".
            let removed_word = style_at_offset(&buf, "along the south", 10);
            let removed_rest = style_at_offset(&buf, "along the south", 0);
            assert_eq!(
                look(removed_word),
                look(Some(theme.style(Role::DiffRemovedWord)))
            );
            assert_eq!(
                look(removed_rest),
                look(Some(theme.style(Role::DiffRemoved)))
            );
            assert_ne!(look(removed_word), look(removed_rest));
        }
    }

    #[test]
    fn changed_words_keep_their_style_side_by_side() {
        let theme = Theme::builtin_dark();
        for (w, h) in [(80, 24), (120, 40)] {
            let mut banner = banner_with(vec![paragraph_request(1)]);
            press(&mut banner, KeyCode::Char('d'));
            let buf = draw(&mut banner, w, h);
            let text = buffer_text(&buf);
            assert!(!text.contains('…'), "{text}");
            let row = text
                .lines()
                .find(|l| l.contains("Plan the vegetable"))
                .unwrap_or_default();
            // The old and the new paragraph start on the same row.
            assert_eq!(row.matches("Plan the vegetable").count(), 2, "{text}");
            // "west fence" on the right: "west" changed, "fence" not; "south fence" on the left.
            let word = style_at_offset(&buf, "west fence", 0);
            let rest = style_at_offset(&buf, "west fence", 5);
            assert_eq!(look(word), look(Some(theme.style(Role::DiffAddedWord))));
            assert_eq!(look(rest), look(Some(theme.style(Role::DiffAdded))));
            let word = style_at_offset(&buf, "south fence", 0);
            let rest = style_at_offset(&buf, "south fence", 6);
            assert_eq!(look(word), look(Some(theme.style(Role::DiffRemovedWord))));
            assert_eq!(look(rest), look(Some(theme.style(Role::DiffRemoved))));
        }
    }

    #[test]
    fn j_reads_through_a_tall_hunk_before_moving_on_and_k_comes_back() {
        let mut banner = banner_with(vec![paragraph_and_list_request(1)]);
        draw(&mut banner, 80, 24);
        let layout = banner.shown.layouts.inline(
            diff_of(&paragraph_and_list_request(1)).expect("a diff"),
            banner.body_width,
        );
        let first = layout.hunk_rows(0);
        assert!(
            first.len() > banner.body_height,
            "the first hunk is taller than the box"
        );
        let mut presses = 0;
        while banner.shown.current_hunk == 0 {
            press(&mut banner, KeyCode::Char('j'));
            draw(&mut banner, 80, 24);
            presses += 1;
            assert!(presses < 100);
        }
        // One row per press until the hunk's end was in view, then the next hunk.
        assert_eq!(presses, first.end - banner.body_height + 1);
        let text = buffer_text(&draw(&mut banner, 80, 24));
        assert!(text.contains("▶ @@"), "{text}");
        assert!(text.contains("water the beans at dawn"), "{text}");
        // Space toggles the hunk that is marked; k goes back to the paragraph's header.
        press(&mut banner, KeyCode::Char(' '));
        assert_eq!(banner.shown.accepted, vec![true, false]);
        press(&mut banner, KeyCode::Char('k'));
        let text = buffer_text(&draw(&mut banner, 80, 24));
        assert_eq!(banner.shown.current_hunk, 0);
        assert_eq!(banner.shown.scroll, 0);
        assert!(text.contains("▶ @@ -1,"), "{text}");
        let outcome = press(&mut banner, KeyCode::Char('y'));
        assert_eq!(outcome.map(|o| o.hunks), Some(Some(vec![true, false])));
    }

    #[test]
    fn home_end_and_row_scrolling_move_the_view_and_the_current_hunk_follows() {
        let mut banner = banner_with(vec![paragraph_and_list_request(1)]);
        draw(&mut banner, 80, 24);
        press(&mut banner, KeyCode::End);
        let text = buffer_text(&draw(&mut banner, 80, 24));
        let total = banner
            .shown
            .layouts
            .inline(
                diff_of(&paragraph_and_list_request(1)).expect("a diff"),
                banner.body_width,
            )
            .len();
        assert_eq!(banner.shown.scroll, total - banner.body_height);
        assert!(text.contains(&format!("–{total} of {total} ")), "{text}");
        press(&mut banner, KeyCode::Home);
        assert_eq!(banner.shown.scroll, 0);
        assert_eq!(banner.shown.current_hunk, 0);
        let event = KeyEvent::new(KeyCode::Down, KeyModifiers::CONTROL);
        let action = Keymap::default_map().action(KeyContext::Banner, &event);
        assert_eq!(action, Some(Action::ScrollDown));
        banner.handle(action, &event);
        assert_eq!(banner.shown.scroll, 1);
        // The vim map: G to the end, g to the top.
        let (vim, errors) = Keymap::load("vim", None);
        assert!(errors.is_empty(), "{errors:?}");
        let event = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        banner.handle(vim.action(KeyContext::Banner, &event), &event);
        assert_eq!(banner.shown.scroll, total - banner.body_height);
        let event = key(KeyCode::Char('g'));
        banner.handle(vim.action(KeyContext::Banner, &event), &event);
        assert_eq!(banner.shown.scroll, 0);
        // Side by side too.
        press(&mut banner, KeyCode::Char('d'));
        draw(&mut banner, 80, 24);
        press(&mut banner, KeyCode::End);
        let text = buffer_text(&draw(&mut banner, 80, 24));
        assert!(text.contains("water the beans at dawn"), "{text}");
        press(&mut banner, KeyCode::Home);
        assert_eq!(banner.shown.side_scroll, 0);
    }

    #[test]
    fn side_by_side_opens_at_the_current_hunk_and_a_resize_keeps_it_in_view() {
        let mut banner = banner_with(vec![three_hunk_request(1)]);
        draw(&mut banner, 80, 24);
        press(&mut banner, KeyCode::Char('j'));
        press(&mut banner, KeyCode::Char('j'));
        assert_eq!(banner.shown.current_hunk, 2);
        press(&mut banner, KeyCode::Char('d'));
        let text = buffer_text(&draw(&mut banner, 80, 24));
        // The last hunk: on the last page, its header in view.
        assert!(text.contains("▶ @@ -27,4 @@"), "{text}");
        assert!(banner.shown.side_scroll > 0);
        press(&mut banner, KeyCode::Esc);
        // Inline, scrolled into the tall paragraph; then the terminal grows.
        let mut banner = banner_with(vec![paragraph_and_list_request(1)]);
        draw(&mut banner, 80, 24);
        for _ in 0..3 {
            press(&mut banner, KeyCode::Char('j'));
        }
        draw(&mut banner, 80, 24);
        assert_eq!(banner.shown.scroll, 3);
        let text = buffer_text(&draw(&mut banner, 120, 40));
        assert_eq!(banner.shown.current_hunk, 0);
        assert!(text.contains("▶ @@ -1,"), "{text}");
    }

    #[test]
    fn a_long_tool_input_wraps_under_its_key() {
        let mut banner = banner_with(vec![mcp_request(1)]);
        let text = buffer_text(&draw(&mut banner, 80, 24));
        assert!(!text.contains('…'), "{text}");
        assert!(
            text.contains("│   \"body\": \"Found while reviewing"),
            "{text}"
        );
        // The value goes on under the key, two columns in.
        assert!(text.contains("│     skipped silently.\""), "{text}");
    }

    #[test]
    fn snapshot_paragraph_rewrite_inline() {
        snapshot(
            "banner_paragraph",
            &mut banner_with(vec![paragraph_request(1)]),
        );
    }

    #[test]
    fn snapshot_paragraph_rewrite_side_by_side() {
        let mut banner = banner_with(vec![paragraph_request(1)]);
        press(&mut banner, KeyCode::Char('d'));
        snapshot("banner_paragraph_side_by_side", &mut banner);
    }

    #[test]
    fn snapshot_taller_than_the_screen_scrolled() {
        for (w, h) in [(80, 24), (120, 40)] {
            let mut banner = banner_with(vec![paragraph_and_list_request(1)]);
            draw(&mut banner, w, h);
            press(&mut banner, KeyCode::PageDown);
            let text = buffer_text(&draw(&mut banner, w, h));
            assert!(banner.shown.scroll > 0);
            insta::assert_snapshot!(format!("banner_paragraph_scrolled_{w}x{h}"), text);
        }
    }

    #[test]
    fn snapshot_side_by_side() {
        let mut banner = banner_with(vec![three_hunk_request(1), small_request(2)]);
        press(&mut banner, KeyCode::Char('j'));
        press(&mut banner, KeyCode::Char(' '));
        press(&mut banner, KeyCode::Char('k'));
        press(&mut banner, KeyCode::Char('d'));
        snapshot("banner_side_by_side", &mut banner);
    }

    // -- a soft-wrapped paragraph rewritten into one line ---------------------------------

    /// The garden paragraph as a person wraps it by hand: two lines in the note.
    const WRAPPED_OLD: [&str; 2] = [
        "Tomatoes go along the south fence, where they get sun from late morning",
        "until evening; the herb spiral moves to the corner by the shed.",
    ];

    /// The agent's version: one line, two places changed.
    const JOINED_NEW: &str = "Tomatoes go along the west fence, where they get sun from late morning until evening; the herb spiral moves to the sunny corner by the gate.";

    fn wrapped_paragraph_request(id: u64) -> PermissionRequest {
        let note = |paragraph: &str| format!("# Garden Planner\n\n{paragraph}\n\n- basil\n");
        write_request(
            id,
            "Projects/Garden Planner.md",
            &note(&WRAPPED_OLD.join("\n")),
            &note(JOINED_NEW),
        )
    }

    /// The runs of cells drawn in the changed-word roles, row by row, as `-[text]` (removed) and
    /// `+[text]` (added): what a text snapshot cannot show of the highlights.
    fn changed_word_runs(buf: &Buffer) -> Vec<String> {
        let theme = Theme::builtin_dark();
        let roles = [
            ('-', look(Some(theme.style(Role::DiffRemovedWord)))),
            ('+', look(Some(theme.style(Role::DiffAddedWord)))),
        ];
        let area = buf.area;
        let mut runs = Vec::new();
        for y in area.top()..area.bottom() {
            let mut open: Option<(char, String)> = None;
            for x in area.left()..area.right() {
                let cell = &buf[(x, y)];
                let sign = roles
                    .iter()
                    .find(|(_, role)| *role == look(Some(cell.style())))
                    .map(|(sign, _)| *sign);
                match (&mut open, sign) {
                    (Some((open_sign, text)), Some(sign)) if *open_sign == sign => {
                        text.push_str(cell.symbol());
                    }
                    (_, sign) => {
                        if let Some((open_sign, text)) = open.take() {
                            runs.push(format!("{open_sign}[{text}]"));
                        }
                        open = sign.map(|s| (s, cell.symbol().to_string()));
                    }
                }
            }
            if let Some((sign, text)) = open {
                runs.push(format!("{sign}[{text}]"));
            }
        }
        runs
    }

    #[test]
    fn two_wrapped_lines_rewritten_into_one_show_only_the_changed_words() {
        for (w, h) in [(80, 24), (120, 40)] {
            let mut banner = banner_with(vec![wrapped_paragraph_request(1)]);
            let buf = draw(&mut banner, w, h);
            let runs = changed_word_runs(&buf);
            // The second old line's words are all in the new line: nothing of it is marked,
            // and none of its words are marked as new.
            assert_eq!(
                runs.iter().map(|r| r.replace(' ', "")).collect::<Vec<_>>(),
                ["-[south]", "-[shed]", "+[west]", "+[sunny]", "+[gate]"]
                    .map(String::from)
                    .to_vec(),
                "{w}x{h}: {runs:?}\n{}",
                buffer_text(&buf)
            );
            let text = buffer_text(&buf);
            insta::assert_snapshot!(
                format!("banner_wrapped_paragraph_joined_{w}x{h}"),
                format!(
                    "{text}\nchanged words: {}\n",
                    changed_word_runs(&buf).join(" ")
                )
            );
        }
    }

    #[test]
    fn two_wrapped_lines_rewritten_into_one_side_by_side() {
        let mut banner = banner_with(vec![wrapped_paragraph_request(1)]);
        press(&mut banner, KeyCode::Char('d'));
        let buf = draw(&mut banner, 120, 40);
        let text = buffer_text(&buf);
        // The first old row faces the new line.
        let row = text
            .lines()
            .find(|l| l.contains("Tomatoes go along"))
            .unwrap_or_default();
        assert_eq!(row.matches("Tomatoes go along").count(), 2, "{text}");
        let runs = changed_word_runs(&buf).join(" ");
        assert!(runs.contains("-[south]"), "{runs}\n{text}");
        assert!(runs.contains("+[west]"), "{runs}\n{text}");
        assert!(!runs.contains("-[until"), "{runs}\n{text}");
    }
}
