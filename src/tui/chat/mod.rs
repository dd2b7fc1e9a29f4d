//! The chat pane: the transcript (a list of cells) and the input box.
//!
//! Every cell keeps its laid-out lines, keyed by (width, the cell's revision), so a frame lays out
//! only cells that changed since the last one; their heights sit in a Fenwick tree, so finding the
//! first visible cell and updating one cell's height cost O(log n); and only the visible rows are
//! drawn. A reply that is streaming is split into a settled head, laid out once, and a tail laid
//! out again on each delta, so one delta costs only its tail however long the conversation is.
//!
//! The laid-out lines are paged: only the cells within [`KEEP_LAID_OUT`] cells of the view keep
//! theirs (a cell's lines weigh several times its text), so over a long day the transcript holds
//! each cell's text and height, and the lines of a bounded window around what is on screen. A
//! cell scrolled back into view is laid out again, at the same height.

pub mod cell;
pub mod chips;
mod heights;
pub mod input;
pub mod markdown;
pub mod rendered;
pub mod thinking;
pub mod wrap;

pub use cell::{Cell, ToolStatus};
pub use input::ChatInput;

use crate::agent::{CallDecision, ToolCallRecord};
use crate::protocol::Render;
use crate::tui::keymap::Action;
use crate::tui::theme::{Role, Theme};
use heights::Heights;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use std::collections::{BTreeSet, HashMap};

/// The index of a cell in the transcript.
pub type CellId = usize;

/// Rows one scroll step moves.
const SCROLL_STEP: u16 = 3;
/// Rows of the previous page that stay in view after a page up or down, for orientation.
const PAGE_OVERLAP: usize = 2;
/// Shown in an empty transcript until the App sets its own hint.
const DEFAULT_HINT: &str = "Ask about your notes — [[Note]] pulls a note in";
const DEFAULT_TITLE: &str = "Chat";
/// How many cells on each side of the visible ones keep their laid-out lines; farther cells keep
/// only their text and height. Enough for several pages of scrolling without laying out again.
pub const KEEP_LAID_OUT: usize = 64;

/// A cell with what the transcript knows about it.
struct Entry {
    cell: Cell,
    /// Goes up on every change of the cell, so a cached layout knows it is stale.
    revision: u64,
    /// How the person let a tool call through (shown on the summary line).
    approval: Option<CallDecision>,
    /// How a plugin asked this tool's results to be drawn.
    render: Option<Render>,
    layout: Option<Layout>,
}

/// A cell's lines at one width. A streaming reply keeps its settled `head` (the Markdown before
/// `settled` bytes) apart from its `tail`, with a blank row between when both have rows.
struct Layout {
    width: usize,
    revision: u64,
    head: Vec<Line<'static>>,
    tail: Vec<Line<'static>>,
    settled: usize,
}

impl Layout {
    fn gap(&self) -> usize {
        usize::from(!self.head.is_empty() && !self.tail.is_empty())
    }

    fn rows(&self) -> usize {
        self.head.len() + self.gap() + self.tail.len()
    }

    /// Row `row` of the cell; `None` for the blank row between head and tail.
    fn row(&self, row: usize) -> Option<&Line<'static>> {
        if row < self.head.len() {
            return self.head.get(row);
        }
        let row = row - self.head.len();
        let gap = self.gap();
        if row < gap {
            None
        } else {
            self.tail.get(row - gap)
        }
    }
}

/// Lay out a cell from scratch (`reuse`: highlighted code from earlier layouts may be reused).
fn fresh_layout(entry: &Entry, width: usize, theme: &Theme, reuse: bool) -> Layout {
    match &entry.cell {
        Cell::Assistant {
            text,
            streaming: true,
        } => {
            let settled = markdown::stable_prefix_len(text, 0);
            let head = markdown::render_markdown_with(&text[..settled], width, theme, reuse);
            let mut tail = markdown::render_markdown_with(&text[settled..], width, theme, reuse);
            cell::add_stream_cursor(&mut tail, width, theme);
            Layout {
                width,
                revision: entry.revision,
                head,
                tail,
                settled,
            }
        }
        cell => Layout {
            width,
            revision: entry.revision,
            head: entry
                .render
                .and_then(|render| {
                    rendered::rendered_tool_lines(cell, entry.approval, render, width, theme, reuse)
                })
                .unwrap_or_else(|| cell::layout_with(cell, entry.approval, width, theme, reuse)),
            tail: Vec::new(),
            settled: 0,
        },
    }
}

/// Bring a cell's layout up to date; true when it had to be laid out (fully or its tail).
fn refresh_layout(entry: &mut Entry, width: usize, theme: &Theme) -> bool {
    if let Some(layout) = &entry.layout
        && layout.width == width
        && layout.revision == entry.revision
    {
        return false;
    }
    // A streaming reply only grows: lay out what settled since last time, and the new tail.
    if let (
        Cell::Assistant {
            text,
            streaming: true,
        },
        Some(layout),
    ) = (&entry.cell, &mut entry.layout)
        && layout.width == width
        && layout.settled <= text.len()
        && text.is_char_boundary(layout.settled)
    {
        let settled = markdown::stable_prefix_len(text, layout.settled);
        if settled > layout.settled {
            let part = markdown::render_markdown(&text[layout.settled..settled], width, theme);
            if !layout.head.is_empty() && !part.is_empty() {
                layout.head.push(Line::default());
            }
            layout.head.extend(part);
            layout.settled = settled;
        }
        let mut tail = markdown::render_markdown(&text[settled..], width, theme);
        cell::add_stream_cursor(&mut tail, width, theme);
        layout.tail = tail;
        layout.revision = entry.revision;
        return true;
    }
    entry.layout = Some(fresh_layout(entry, width, theme, true));
    true
}

/// A cell's rows at `width` guessed from its rows at `old_width` without laying it out: its
/// wrapped text scales with the width (short lines that did not wrap make this an overestimate
/// when narrowing). Made exact when the cell comes into view (`lay_out_visible`).
fn estimated_rows(id: CellId, old_rows: usize, old_width: usize, width: usize) -> usize {
    let gap = usize::from(id > 0 && old_rows > 0);
    let lines = old_rows - gap;
    if lines == 0 {
        return 0;
    }
    (lines * old_width).div_ceil(width.max(1)).max(1) + gap
}

/// The rows a cell takes in the transcript: its lines and, after the first cell, a blank row
/// before them. A cell without lines takes none.
fn entry_rows(id: CellId, layout_rows: usize) -> usize {
    if layout_rows == 0 {
        0
    } else {
        layout_rows + usize::from(id > 0)
    }
}

/// The transcript: cells, their cached layouts and heights, and the scroll position.
pub struct Transcript {
    entries: Vec<Entry>,
    heights: Heights,
    /// The text width (and theme) the cached layouts and heights are for.
    layout_width: Option<usize>,
    layout_theme: Option<Theme>,
    /// Cells changed since the last frame, in the order they changed (may repeat).
    dirty: Vec<CellId>,
    /// The assistant cell that is receiving deltas.
    streaming: Option<CellId>,
    /// The cells that hold laid-out lines (the page around the view, see [`KEEP_LAID_OUT`]).
    laid_out: BTreeSet<CellId>,
    /// Whether the view sticks to the bottom as cells grow.
    follow: bool,
    /// The first visible row when not following.
    top: usize,
    /// Rows of text the last frame had room for.
    viewport: usize,
    layouts: u64,
    title: String,
    hint: String,
    /// How plugin tools' results are drawn, by tool name (`NAME__tool`).
    renders: HashMap<String, Render>,
}

impl Default for Transcript {
    fn default() -> Self {
        Self::new()
    }
}

impl Transcript {
    /// An empty transcript that follows the bottom.
    pub fn new() -> Self {
        Transcript {
            entries: Vec::new(),
            heights: Heights::new(),
            layout_width: None,
            layout_theme: None,
            dirty: Vec::new(),
            streaming: None,
            laid_out: BTreeSet::new(),
            follow: true,
            top: 0,
            viewport: 0,
            layouts: 0,
            title: DEFAULT_TITLE.into(),
            hint: DEFAULT_HINT.into(),
            renders: HashMap::new(),
        }
    }

    /// How plugin tools' results are drawn (from the vault's `[plugins.NAME.render]`), for the
    /// tool cells added from now on.
    pub fn set_tool_renders(&mut self, renders: HashMap<String, Render>) {
        self.renders = renders;
    }

    /// The pane's title (e.g. the session's name).
    pub fn set_title(&mut self, title: impl Into<String>) {
        self.title = title.into();
    }

    /// The hint an empty transcript shows (the App names the keys of the active key map).
    pub fn set_hint(&mut self, hint: impl Into<String>) {
        self.hint = hint.into();
    }

    /// Add a cell at the end. A streaming reply pushed while another streams completes the other.
    pub fn push(&mut self, cell: Cell) -> CellId {
        // Whatever comes after the model's reasoning means the reasoning is complete.
        self.finish_thinking();
        let streams = matches!(
            cell,
            Cell::Assistant {
                streaming: true,
                ..
            }
        );
        if streams {
            self.finish_streaming();
        }
        let id = self.entries.len();
        if streams {
            self.streaming = Some(id);
        }
        let render = match &cell {
            Cell::Tool { name, .. } => self.renders.get(name).copied(),
            _ => None,
        };
        self.entries.push(Entry {
            cell,
            revision: 0,
            approval: None,
            render,
            layout: None,
        });
        self.heights.push(0);
        self.dirty.push(id);
        id
    }

    /// Add what the person wrote.
    pub fn push_user(&mut self, text: &str) {
        self.push_user_with_images(text, Vec::new());
    }

    /// Add what the person wrote with the images they sent along (shown as chips).
    pub fn push_user_with_images(&mut self, text: &str, images: Vec<crate::attach::ImageFacts>) {
        self.push(Cell::User {
            text: text.to_string(),
            images,
        });
    }

    /// Streaming: append to the last Assistant cell while it is streaming, else start one.
    pub fn append_delta(&mut self, text: &str) {
        if let Some(id) = self.streaming
            && let Some(Entry {
                cell:
                    Cell::Assistant {
                        text: reply,
                        streaming: true,
                    },
                ..
            }) = self.entries.get_mut(id)
        {
            reply.push_str(text);
            self.touch(id);
            return;
        }
        self.push(Cell::Assistant {
            text: text.to_string(),
            streaming: true,
        });
    }

    /// Streaming: append to the model's reasoning while it arrives (the last cell), else start
    /// a folded thinking cell. A reply streaming before it is complete.
    pub fn append_thinking(&mut self, text: &str) {
        let id = self.entries.len().checked_sub(1);
        if let Some(id) = id
            && let Some(Entry {
                cell:
                    Cell::Thinking {
                        text: so_far,
                        streaming: true,
                        ..
                    },
                ..
            }) = self.entries.get_mut(id)
        {
            so_far.push_str(text);
            self.touch(id);
            return;
        }
        self.finish_streaming();
        self.push(Cell::Thinking {
            text: text.to_string(),
            streaming: true,
            expanded: false,
        });
    }

    /// A stored response's reasoning, complete and folded.
    pub fn push_thinking(&mut self, text: &str) {
        self.finish_streaming();
        self.push(Cell::Thinking {
            text: text.to_string(),
            streaming: false,
            expanded: false,
        });
    }

    /// The reasoning streaming in the last cell (if any) is complete.
    fn finish_thinking(&mut self) {
        let Some(id) = self.entries.len().checked_sub(1) else {
            return;
        };
        if let Some(Cell::Thinking { streaming, .. }) =
            self.entries.get_mut(id).map(|e| &mut e.cell)
            && *streaming
        {
            *streaming = false;
            self.touch(id);
        }
    }

    /// The streaming assistant cell (if any) is complete. A reply that stayed empty disappears.
    pub fn finish_streaming(&mut self) {
        self.finish_thinking();
        let Some(id) = self.streaming.take() else {
            return;
        };
        let mut empty = false;
        if let Some(Entry {
            cell: Cell::Assistant { text, streaming },
            ..
        }) = self.entries.get_mut(id)
        {
            *streaming = false;
            empty = text.trim().is_empty();
        }
        if empty && id + 1 == self.entries.len() {
            self.entries.pop();
            self.heights.pop();
            self.laid_out.remove(&id);
            self.dirty.retain(|d| *d != id);
        } else {
            self.touch(id);
        }
    }

    /// A tool call began: its summary line appears with a running status. Text streamed before
    /// it is complete (the model moved on to the call).
    pub fn tool_started(&mut self, call_id: &str, name: &str, input: &serde_json::Value) {
        self.finish_streaming();
        self.push(Cell::Tool {
            call_id: call_id.to_string(),
            name: name.to_string(),
            input: input.clone(),
            status: ToolStatus::Running,
            result: String::new(),
            expanded: false,
        });
    }

    /// A tool call finished: its status, result and (when the person approved it) the decision.
    pub fn tool_finished(&mut self, record: &ToolCallRecord) {
        let new_status = match record.decision {
            CallDecision::Denied => ToolStatus::Denied,
            CallDecision::Refused => ToolStatus::Refused,
            _ if record.is_error => ToolStatus::Failed,
            _ => ToolStatus::Done,
        };
        let approval = matches!(
            record.decision,
            CallDecision::ApprovedOnce
                | CallDecision::ApprovedSession
                | CallDecision::ApprovedAlways
        )
        .then_some(record.decision);
        let found = self
            .entries
            .iter()
            .rposition(|e| matches!(&e.cell, Cell::Tool { call_id, .. } if *call_id == record.id));
        let id = match found {
            Some(id) => id,
            None => {
                self.finish_streaming();
                self.push(Cell::Tool {
                    call_id: record.id.clone(),
                    name: record.name.clone(),
                    input: record.input.clone(),
                    status: ToolStatus::Running,
                    result: String::new(),
                    expanded: false,
                })
            }
        };
        if let Some(entry) = self.entries.get_mut(id) {
            if let Cell::Tool { status, result, .. } = &mut entry.cell {
                *status = new_status;
                *result = record.result.clone();
            }
            entry.approval = approval;
        }
        self.touch(id);
    }

    /// Add an error.
    pub fn push_error(&mut self, text: &str) {
        self.push(Cell::Error {
            text: text.to_string(),
        });
    }

    /// Add a note from vaultchat itself.
    pub fn push_system(&mut self, text: &str) {
        self.push(Cell::System {
            text: text.to_string(),
        });
    }

    /// Add a compaction of the conversation (collapsed; its summary shows when expanded).
    pub fn push_compaction(&mut self, info: &crate::agent::CompactionInfo) {
        self.finish_streaming();
        self.push(Cell::Compaction {
            headline: crate::agent::compaction_line(info),
            summary: info.summary.clone(),
            expanded: false,
        });
    }

    /// Add a stored compaction (a resumed session's transcript).
    pub fn push_stored_compaction(&mut self, headline: &str, summary: Option<&str>) {
        self.push(Cell::Compaction {
            headline: headline.to_string(),
            summary: summary.map(str::to_string),
            expanded: false,
        });
    }

    /// Expand or collapse the most recent tool call, thinking or compaction.
    pub fn toggle_last_tool(&mut self) {
        let last = self.entries.iter().rposition(|e| {
            matches!(
                e.cell,
                Cell::Tool { .. } | Cell::Thinking { .. } | Cell::Compaction { .. }
            )
        });
        if let Some(id) = last {
            if let Some(
                Cell::Tool { expanded, .. }
                | Cell::Thinking { expanded, .. }
                | Cell::Compaction { expanded, .. },
            ) = self.entries.get_mut(id).map(|e| &mut e.cell)
            {
                *expanded = !*expanded;
            }
            self.touch(id);
        }
    }

    /// Remove every cell (a new session).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.heights.clear();
        self.laid_out.clear();
        self.dirty.clear();
        self.streaming = None;
        self.follow = true;
        self.top = 0;
    }

    /// How many cells.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no cells.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cell `id`, if it exists.
    pub fn cell(&self, id: CellId) -> Option<&Cell> {
        self.entries.get(id).map(|e| &e.cell)
    }

    /// Whether the view sticks to the bottom as new text arrives.
    pub fn is_following(&self) -> bool {
        self.follow
    }

    /// How many cells have been laid out so far (fully, or a streaming reply's tail): a measure
    /// of the work the cache saves, for tests and benchmarks.
    pub fn layout_count(&self) -> u64 {
        self.layouts
    }

    fn touch(&mut self, id: CellId) {
        if let Some(entry) = self.entries.get_mut(id) {
            entry.revision += 1;
            if self.dirty.last() != Some(&id) {
                self.dirty.push(id);
            }
        }
    }

    /// The highest first row: the one that shows the last row at the bottom.
    fn max_top(&self) -> usize {
        self.heights.total().saturating_sub(self.viewport)
    }

    /// The first visible row now.
    fn current_top(&self) -> usize {
        if self.follow {
            self.max_top()
        } else {
            self.top.min(self.max_top())
        }
    }

    fn scroll_to(&mut self, top: usize) {
        let max_top = self.max_top();
        self.top = top.min(max_top);
        // At the bottom the view follows again, so new text shows as it arrives.
        self.follow = self.top >= max_top;
    }

    /// Scroll up `lines` rows; the view stops following the bottom.
    pub fn scroll_up(&mut self, lines: u16) {
        let top = self.current_top().saturating_sub(usize::from(lines));
        self.scroll_to(top);
    }

    /// Scroll down `lines` rows; reaching the bottom resumes following.
    pub fn scroll_down(&mut self, lines: u16) {
        let top = self.current_top().saturating_add(usize::from(lines));
        self.scroll_to(top);
    }

    fn page(&self) -> usize {
        self.viewport.saturating_sub(PAGE_OVERLAP).max(1)
    }

    /// Scroll up by a page.
    pub fn page_up(&mut self) {
        let top = self.current_top().saturating_sub(self.page());
        self.scroll_to(top);
    }

    /// Scroll down by a page.
    pub fn page_down(&mut self) {
        let top = self.current_top().saturating_add(self.page());
        self.scroll_to(top);
    }

    /// Scroll to the first row.
    pub fn scroll_top(&mut self) {
        self.scroll_to(0);
    }

    /// Scroll to the bottom and follow it again.
    pub fn scroll_bottom(&mut self) {
        self.follow = true;
        self.top = self.max_top();
    }

    /// Scroll and tool-detail actions; true if the action was one of them.
    pub fn handle(&mut self, action: Action) -> bool {
        match action {
            Action::ScrollUp => self.scroll_up(SCROLL_STEP),
            Action::ScrollDown => self.scroll_down(SCROLL_STEP),
            Action::PageUp => self.page_up(),
            Action::PageDown => self.page_down(),
            Action::ScrollTop => self.scroll_top(),
            Action::ScrollBottom => self.scroll_bottom(),
            Action::ToggleDetails => self.toggle_last_tool(),
            _ => return false,
        }
        true
    }

    /// Bring layouts and heights up to date for `width` and `theme`: after a change of width or
    /// theme every layout is dropped and each cell's height estimated from its old one (a
    /// resize lays out what comes into view, not a day of replies); otherwise only the cells that
    /// changed are laid out again.
    fn update_layouts(&mut self, width: usize, theme: &Theme) {
        let theme_changed = self.layout_theme.as_ref() != Some(theme);
        if self.layout_width != Some(width) || theme_changed {
            // Keep the row at the top of the view in view across the re-wrap.
            let anchor = (!self.follow)
                .then(|| self.heights.locate(self.top))
                .flatten();
            let old_width = self.layout_width.unwrap_or(width).max(1);
            let changed: BTreeSet<CellId> = self.dirty.drain(..).collect();
            let mut rows = Vec::with_capacity(self.entries.len());
            for (id, entry) in self.entries.iter_mut().enumerate() {
                let old = self.heights.get(id);
                if changed.contains(&id)
                    || Some(id) == self.streaming
                    || self.layout_width.is_none()
                {
                    // A cell whose height is stale (changed or added since the last frame), the
                    // reply that streams (laid out a tail at a time), or the first frame: laid
                    // out now.
                    if theme_changed {
                        entry.layout = None;
                    }
                    if refresh_layout(entry, width, theme) {
                        self.layouts += 1;
                    }
                    self.laid_out.insert(id);
                    rows.push(entry_rows(
                        id,
                        entry.layout.as_ref().map_or(0, Layout::rows),
                    ));
                    continue;
                }
                entry.layout = None;
                self.laid_out.remove(&id);
                rows.push(estimated_rows(id, old, old_width, width));
            }
            self.heights.rebuild(rows);
            self.dirty.clear();
            if let Some((id, offset)) = anchor {
                // The anchor cell is laid out at once, so its offset means the same row.
                self.lay_out_visible(id, id, width, theme);
                let height = self.heights.get(id);
                self.top = self.heights.prefix(id) + offset.min(height.saturating_sub(1));
            }
            self.layout_width = Some(width);
            self.layout_theme = Some(theme.clone());
            return;
        }
        let dirty = std::mem::take(&mut self.dirty);
        for id in dirty {
            let Some(entry) = self.entries.get_mut(id) else {
                continue;
            };
            if refresh_layout(entry, width, theme) {
                self.layouts += 1;
            }
            self.laid_out.insert(id);
            let rows = entry_rows(id, entry.layout.as_ref().map_or(0, Layout::rows));
            let old = self.heights.get(id);
            if rows != old {
                // A cell above the view that grows or shrinks must not move what is being read.
                if !self.follow && self.heights.prefix(id) + old <= self.top {
                    self.top = (self.top + rows).saturating_sub(old);
                }
                self.heights.set(id, rows);
            }
        }
    }

    /// Draw the visible part. Uses the cache: only cells whose text changed (or a new width) are
    /// laid out again, and only visible cells are drawn; the first visible cell is found through
    /// the running heights, never by walking every cell's lines.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        let Some(frame) = self.frame(area, buf, theme, focused) else {
            return;
        };
        let width = usize::from(frame.text.width);
        self.update_layouts(width, theme);
        self.viewport = usize::from(frame.text.height);
        let mut visible = self.visible_cells(self.viewport);
        // Heights made exact (after a resize they were estimates) can bring other cells into
        // view: lay out until every cell in view is laid out. Each round lays out at least one.
        while let Some((first, last)) = visible {
            if !self.lay_out_visible(first, last, width, theme) {
                break;
            }
            visible = self.visible_cells(self.viewport);
        }
        self.draw(&frame, buf, theme, |this, id, row| {
            this.entries
                .get(id)
                .and_then(|e| e.layout.as_ref())
                .and_then(|l| l.row(row))
        });
        if let Some((first, last)) = visible {
            self.page_out(first, last);
        }
    }

    /// The same picture without the cache (every cell laid out every time) — for the benchmark
    /// baseline only.
    pub fn render_uncached(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        let Some(frame) = self.frame(area, buf, theme, focused) else {
            return;
        };
        let width = usize::from(frame.text.width);
        let layouts: Vec<Layout> = self
            .entries
            .iter()
            .map(|e| fresh_layout(e, width, theme, false))
            .collect();
        self.layouts += layouts.len() as u64;
        let rows = layouts
            .iter()
            .enumerate()
            .map(|(id, l)| entry_rows(id, l.rows()))
            .collect();
        self.heights.rebuild(rows);
        // The cached layouts no longer match these heights; the next cached frame redoes them.
        self.layout_width = None;
        self.dirty.clear();
        self.draw(&frame, buf, theme, |_, id, row| {
            layouts.get(id).and_then(|l| l.row(row))
        });
    }

    /// How many cells hold laid-out lines now (bounded by the page around the view).
    pub fn laid_out_count(&self) -> usize {
        self.laid_out.len()
    }

    /// The first and last cell with a row in view, for a viewport of `rows` rows.
    fn visible_cells(&self, rows: usize) -> Option<(CellId, CellId)> {
        let top = self.current_top();
        let (first, _) = self.heights.locate(top)?;
        let bottom = (top + rows.max(1))
            .min(self.heights.total())
            .saturating_sub(1);
        let last = self.heights.locate(bottom).map_or(first, |(id, _)| id);
        Some((first, last.max(first)))
    }

    /// Lay out the visible cells that lost their lines to paging (their height is kept, so the
    /// view does not move; it is corrected if it differs).
    /// Whether any cell was laid out.
    fn lay_out_visible(
        &mut self,
        first: CellId,
        last: CellId,
        width: usize,
        theme: &Theme,
    ) -> bool {
        let mut any = false;
        for id in first..=last {
            let Some(entry) = self.entries.get_mut(id) else {
                break;
            };
            if entry.layout.is_some() {
                continue;
            }
            if refresh_layout(entry, width, theme) {
                self.layouts += 1;
            }
            any = true;
            self.laid_out.insert(id);
            let rows = entry_rows(id, entry.layout.as_ref().map_or(0, Layout::rows));
            if rows != self.heights.get(id) {
                self.heights.set(id, rows);
            }
        }
        any
    }

    /// Drop the lines of cells more than [`KEEP_LAID_OUT`] cells away from the view (never the
    /// streaming reply's: it is laid out a tail at a time).
    fn page_out(&mut self, first: CellId, last: CellId) {
        let low = first.saturating_sub(KEEP_LAID_OUT);
        let high = last.saturating_add(KEEP_LAID_OUT);
        let far: Vec<CellId> = self
            .laid_out
            .range(..low)
            .chain(self.laid_out.range(high.saturating_add(1)..))
            .copied()
            .filter(|id| Some(*id) != self.streaming)
            .collect();
        for id in far {
            self.laid_out.remove(&id);
            if let Some(entry) = self.entries.get_mut(id) {
                entry.layout = None;
            }
        }
    }

    /// The pane's frame (border, title) and the rectangle for text; `None` when there is no room.
    fn frame(&self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) -> Option<Frame> {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return None;
        }
        let block = theme.pane_block(format!(" {} ", self.title), focused);
        let inner = block.inner(area);
        buf.set_style(area, theme.style(Role::Text));
        block.render(area, buf);
        // One column of padding on each side, when there is room for it.
        let text = if inner.width > 4 {
            Rect {
                x: inner.x + 1,
                width: inner.width - 2,
                ..inner
            }
        } else {
            inner
        };
        if text.is_empty() {
            return None;
        }
        Some(Frame {
            area,
            inner,
            text,
            focused,
        })
    }

    /// Draw the visible rows, the scroll bar and the "more below" mark. `row_of(self, cell, row)`
    /// gives row `row` of cell `cell` (`None` for a blank row).
    fn draw<'a, F>(&'a mut self, frame: &Frame, buf: &mut Buffer, theme: &Theme, row_of: F)
    where
        F: Fn(&'a Self, CellId, usize) -> Option<&'a Line<'static>>,
    {
        self.viewport = usize::from(frame.text.height);
        if self.entries.is_empty() {
            draw_hint(&self.hint, frame.text, buf, theme);
            return;
        }
        let top = self.current_top();
        if self.follow {
            self.top = top;
        }
        let this: &'a Self = self;
        let mut position = this.heights.locate(top);
        for y in frame.text.top()..frame.text.bottom() {
            let Some((id, offset)) = position else {
                break;
            };
            // The first row of every cell but the first is the blank row between cells.
            let separator = usize::from(id > 0);
            if offset >= separator
                && let Some(line) = row_of(this, id, offset - separator)
            {
                buf.set_line(frame.text.x, y, line, frame.text.width);
            }
            position = if offset + 1 < this.heights.get(id) {
                Some((id, offset + 1))
            } else {
                this.heights
                    .locate(top + usize::from(y - frame.text.top()) + 1)
            };
        }
        this.draw_scroll_marks(frame, top, buf, theme);
    }

    fn draw_scroll_marks(&self, frame: &Frame, top: usize, buf: &mut Buffer, theme: &Theme) {
        let total = self.heights.total();
        let rows = usize::from(frame.text.height);
        if total <= rows || frame.area.width < 2 {
            return;
        }
        // The scroll bar sits on the right border: the thumb is the visible share of the whole.
        let track = usize::from(frame.inner.height);
        let x = frame.area.right() - 1;
        if track > 0 {
            let thumb = (track * rows / total).clamp(1, track);
            let max_top = total - rows;
            let start = (track - thumb) * top.min(max_top) / max_top.max(1);
            let style = theme.style(Role::Scrollbar);
            for i in start..start + thumb {
                let y = frame.inner.y + i as u16;
                buf[(x, y)].set_symbol("┃").set_style(style);
            }
        }
        let below = total - (top + rows).min(total);
        if below > 0 {
            let mark = format!(" ↓ {below} more ");
            let mark_width = wrap::text_width(&mark) as u16;
            if frame.area.width > mark_width + 4 {
                let role = if frame.focused {
                    Role::TitleFocused
                } else {
                    Role::Title
                };
                let x = frame.area.right() - 2 - mark_width;
                buf.set_string(x, frame.area.bottom() - 1, &mark, theme.style(role));
            }
        }
    }
}

/// Where a frame of the transcript goes.
struct Frame {
    area: Rect,
    inner: Rect,
    text: Rect,
    focused: bool,
}

/// The hint of an empty transcript, centred.
fn draw_hint(hint: &str, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let lines = wrap::wrap(
        &[Span::styled(hint, theme.style(Role::Dim))],
        usize::from(area.width),
        &[],
        &[],
        wrap::Breaks::Words,
    );
    let height = lines.len().min(usize::from(area.height)) as u16;
    let y0 = area.y + (area.height - height) / 2;
    for (i, line) in lines.iter().take(usize::from(height)).enumerate() {
        let width = (wrap::spans_width(&line.spans) as u16).min(area.width);
        let x = area.x + (area.width - width) / 2;
        buf.set_line(x, y0 + i as u16, line, width);
    }
}

/// Whether a drawn cell's style shows `expected`: its colours (where `expected` sets them) and
/// its modifiers. A buffer cell always has every colour set, so plain equality would not do.
#[cfg(test)]
fn drawn_as(actual: Option<ratatui::style::Style>, expected: ratatui::style::Style) -> bool {
    actual.is_some_and(|actual| {
        expected.fg.is_none_or(|fg| actual.fg == Some(fg))
            && expected.bg.is_none_or(|bg| actual.bg == Some(bg))
            && actual.add_modifier.contains(expected.add_modifier)
    })
}

#[cfg(test)]
mod tests;
