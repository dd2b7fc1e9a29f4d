//! The backlinks view, as Obsidian's backlinks pane: the notes that link to the open note, each
//! under its name with the linking lines (line number and the line itself, its `[[links]]` in
//! the link colour), then the lines that name the note without linking it ("unlinked mentions").
//! Enter opens the linking note with the cursor on that line.
//!
//! The text comes from notes anyone may have written: every path and line is escaped
//! (`quote::terminal`) and cut to the row before it is drawn, and the host sends at most a page
//! of links (the view says how many more there are).

use super::{Hint, ListCursor, Nav, View, ViewOutcome, draw_box, footer, is_release, nav_of};
use super::{one_line, put_line, style_row, text_width, truncate};
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub use crate::host::{BacklinkList, LinkLine};

/// What the view knows of one list: still on its way, arrived, or why it cannot be had.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Loaded<T> {
    Loading,
    Ready(T),
    Failed(String),
}

impl<T> From<Result<T, String>> for Loaded<T> {
    fn from(result: Result<T, String>) -> Self {
        match result {
            Ok(value) => Loaded::Ready(value),
            Err(why) => Loaded::Failed(why),
        }
    }
}

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    /// "Linked mentions", "Unlinked mentions", with their counts.
    Section(String),
    /// A linking note (path without `.md`, escaped) and how many of its lines are listed.
    Note { label: String, count: usize },
    /// A line: where it is, its text escaped onto one line, and the name it mentions (for an
    /// unlinked mention).
    Line {
        path: String,
        line: usize,
        text: String,
        mention: Option<String>,
    },
    /// A dim remark: loading, empty, "N more", a failure.
    Remark(String),
}

impl Row {
    fn selectable(&self) -> bool {
        matches!(self, Row::Line { .. })
    }
}

/// The backlinks overlay of one note.
#[derive(Debug, Clone)]
pub struct BacklinksView {
    /// The note whose backlinks these are (vault-relative).
    path: String,
    links: Loaded<BacklinkList>,
    mentions: Loaded<Vec<LinkLine>>,
    rows: Vec<Row>,
    cursor: ListCursor,
    keymap: Keymap,
    /// A listing was asked for and its last answer has not come (the mentions, or a failure).
    asked: bool,
    /// The vault changed again while it was asked: one more listing when the answer comes.
    again: bool,
}

/// Rows said while the links of a note are on their way, and when there are none.
pub const LOADING: &str = "Finding the notes that link here…";
pub const EMPTY: &str = "No notes link here.";

impl BacklinksView {
    /// The view of `path` while its links are fetched.
    pub fn loading(path: &str) -> Self {
        let mut view = Self {
            path: path.to_string(),
            links: Loaded::Loading,
            mentions: Loaded::Loading,
            rows: Vec::new(),
            cursor: ListCursor::default(),
            keymap: Keymap::default_map(),
            asked: true,
            again: false,
        };
        view.rebuild();
        view
    }

    /// Whether to ask the host for the listing again now that the vault changed: not while an
    /// answer is on its way (a burst of syncs — a `git pull`, autosaves — costs one listing
    /// more, not one each); that answer is followed by one more.
    pub fn ask_again(&mut self) -> bool {
        if self.asked {
            self.again = true;
            return false;
        }
        self.asked = true;
        true
    }

    /// The last answer of a listing came: whether the vault changed meanwhile (ask again).
    fn answered(&mut self) -> bool {
        self.asked = false;
        std::mem::take(&mut self.again)
    }

    /// Show the keys of `keymap` (the active one) in the hints.
    pub fn with_keymap(mut self, keymap: &Keymap) -> Self {
        self.keymap = keymap.clone();
        self
    }

    /// The note whose backlinks the view shows.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The links arrived (again, after the vault changed: the selection stays on its line).
    /// `true` when the vault changed since it was asked: list again (a failure is the listing's
    /// last answer; the mentions follow links that came).
    pub fn set_links(&mut self, result: Result<BacklinkList, String>) -> bool {
        let failed = result.is_err();
        self.links = result.into();
        self.rebuild();
        failed && self.answered()
    }

    /// The unlinked mentions arrived, the listing's last answer: `true` when the vault changed
    /// since it was asked (list again).
    pub fn set_mentions(&mut self, result: Result<Vec<LinkLine>, String>) -> bool {
        self.mentions = result.into();
        self.rebuild();
        self.answered()
    }

    /// Lay the rows out from what has arrived, keeping the selection on the same line when it is
    /// still listed (else on the same row number), and on a line when there is one.
    fn rebuild(&mut self) {
        let selected = self.selected_place();
        let mut rows = Vec::new();
        match &self.links {
            Loaded::Loading => {}
            Loaded::Failed(why) => rows.push(Row::Remark(format!(
                "The links cannot be listed: {}",
                one_line(&crate::quote::terminal(why))
            ))),
            Loaded::Ready(list) => {
                let notes = distinct_notes(&list.links);
                let heading = match (list.total, notes) {
                    (0, _) => "Linked mentions".to_string(),
                    (1, _) => "Linked mentions · 1 link".to_string(),
                    (n, 1) => format!("Linked mentions · {n} links from 1 note"),
                    (n, notes) if list.total == list.links.len() => {
                        format!("Linked mentions · {n} links from {notes} notes")
                    }
                    (n, _) => format!("Linked mentions · {n} links"),
                };
                rows.push(Row::Section(heading));
                if list.links.is_empty() {
                    rows.push(Row::Remark(EMPTY.into()));
                }
                push_grouped(&mut rows, &list.links);
                let more = list.total.saturating_sub(list.links.len());
                if more > 0 {
                    rows.push(Row::Remark(format!(
                        "… {more} more (the first {} are listed)",
                        list.links.len()
                    )));
                }
                match &self.mentions {
                    Loaded::Loading => {
                        rows.push(Row::Section("Unlinked mentions".into()));
                        rows.push(Row::Remark("looking for lines that name this note…".into()));
                    }
                    Loaded::Failed(why) => {
                        rows.push(Row::Section("Unlinked mentions".into()));
                        rows.push(Row::Remark(format!(
                            "cannot be searched: {}",
                            one_line(&crate::quote::terminal(why))
                        )));
                    }
                    // None at all: the list is Obsidian's empty pane, with nothing after it.
                    Loaded::Ready(mentions) if mentions.is_empty() => {}
                    Loaded::Ready(mentions) => {
                        rows.push(Row::Section(format!(
                            "Unlinked mentions · {}",
                            mentions.len()
                        )));
                        push_grouped(&mut rows, mentions);
                    }
                }
            }
        }
        // Nothing links here and nothing names it: the empty state alone says so.
        let nothing = matches!(&self.links, Loaded::Ready(l) if l.links.is_empty())
            && matches!(&self.mentions, Loaded::Ready(m) if m.is_empty());
        if nothing {
            rows.clear();
        }
        self.rows = rows;
        let at = selected
            .and_then(|(path, line)| {
                self.rows.iter().position(
                    |r| matches!(r, Row::Line { path: p, line: l, .. } if *p == path && *l == line),
                )
            })
            .unwrap_or(self.cursor.selected);
        self.cursor.selected = at.min(self.rows.len().saturating_sub(1));
        self.snap(true);
    }

    /// The selected line's place, when a line is selected.
    fn selected_place(&self) -> Option<(String, usize)> {
        match self.rows.get(self.cursor.selected) {
            Some(Row::Line { path, line, .. }) => Some((path.clone(), *line)),
            _ => None,
        }
    }

    /// Move the selection off a heading or remark: onward in the direction it moved, else back.
    fn snap(&mut self, forward: bool) {
        if self.rows.is_empty() {
            self.cursor.selected = 0;
            return;
        }
        let at = self.cursor.selected.min(self.rows.len() - 1);
        let ahead = |from: usize| (from..self.rows.len()).find(|&i| self.rows[i].selectable());
        let behind = |from: usize| (0..=from).rev().find(|&i| self.rows[i].selectable());
        if self.rows.get(at).is_some_and(Row::selectable) {
            return;
        }
        let found = if forward {
            ahead(at).or_else(|| behind(at))
        } else {
            behind(at).or_else(|| ahead(at))
        };
        self.cursor.selected = found.unwrap_or(0);
    }

    fn row_line(
        &self,
        row: &Row,
        selected: bool,
        width: usize,
        digits: usize,
        theme: &Theme,
    ) -> Line<'static> {
        let base = super::row_style(theme, selected);
        let with = |role: Role| base.patch(theme.style(role));
        match row {
            Row::Section(text) => Line::from(Span::styled(
                truncate(text, width),
                super::strong(theme, Role::FilesHeader),
            )),
            Row::Note { label, count } => {
                let count = format!("  {count}");
                let room = width.saturating_sub(2 + text_width(&count));
                Line::from(vec![
                    Span::raw("  "),
                    Span::styled(truncate(label, room), super::strong(theme, Role::Text)),
                    Span::styled(count, theme.style(Role::Dim)),
                ])
            }
            Row::Line {
                line,
                text,
                mention,
                ..
            } => {
                let marker = if selected { "  › " } else { "    " };
                let number = format!("{line:>digits$}  ");
                let room = width.saturating_sub(text_width(marker) + text_width(&number));
                let mut spans = vec![
                    Span::styled(marker, with(Role::TitleFocused)),
                    Span::styled(number, with(Role::Dim)),
                ];
                spans.extend(context_spans(text, mention.as_deref(), room, base, theme));
                Line::from(spans)
            }
            Row::Remark(text) => Line::from(vec![
                Span::raw("    "),
                Span::styled(
                    truncate(text, width.saturating_sub(4)),
                    theme.style(Role::Dim),
                ),
            ]),
        }
    }
}

/// How many notes the lines come from (they arrive sorted by note).
fn distinct_notes(lines: &[LinkLine]) -> usize {
    let mut count = 0;
    let mut last: Option<&str> = None;
    for l in lines {
        if last != Some(l.path.as_str()) {
            count += 1;
            last = Some(&l.path);
        }
    }
    count
}

/// The lines under a heading per note, in the order they came (by note, then line).
fn push_grouped(rows: &mut Vec<Row>, lines: &[LinkLine]) {
    let mut at = 0;
    while at < lines.len() {
        let path = &lines[at].path;
        let end = lines[at..]
            .iter()
            .position(|l| l.path != *path)
            .map_or(lines.len(), |n| at + n);
        let label = crate::quote::terminal(path.strip_suffix(".md").unwrap_or(path));
        rows.push(Row::Note {
            label: one_line(&label),
            count: end - at,
        });
        for l in &lines[at..end] {
            rows.push(Row::Line {
                path: l.path.clone(),
                line: l.line,
                text: one_line(&crate::quote::terminal(&l.context)),
                mention: l
                    .mention
                    .as_deref()
                    .map(|m| one_line(&crate::quote::terminal(m))),
            });
        }
        at = end;
    }
}

/// Where the line is marked: its `[[links]]`, or for an unlinked mention the name it mentions
/// (matched case-insensitively; not at all where lowercasing would move the byte offsets).
fn marks(text: &str, mention: Option<&str>) -> Vec<std::ops::Range<usize>> {
    let Some(name) = mention.filter(|n| !n.is_empty()) else {
        return crate::tui::editor_highlight::wikilinks(text);
    };
    let (lower, needle) = (text.to_lowercase(), name.to_lowercase());
    if lower.len() != text.len() {
        return Vec::new();
    }
    lower
        .match_indices(&needle)
        .map(|(at, found)| at..at + found.len())
        .filter(|r| text.is_char_boundary(r.start) && text.is_char_boundary(r.end))
        .collect()
}

/// The linking line in `room` columns, its `[[links]]` in the link colour (a mention's name in
/// the match colour). When the first mark would fall past the row, the start of the line gives
/// way (`…`) so it shows, as Obsidian centres its excerpts on the link.
fn context_spans(
    text: &str,
    mention: Option<&str>,
    room: usize,
    base: ratatui::style::Style,
    theme: &Theme,
) -> Vec<Span<'static>> {
    let mut shown = text.to_string();
    if let Some(first) = marks(&shown, mention).first()
        && text_width(&shown[..first.end]) > room
    {
        let keep_before = room / 3;
        let before = &shown[..first.start];
        let skip = text_width(before).saturating_sub(keep_before);
        let mut cut = 0;
        let mut seen = 0;
        for (i, c) in before.char_indices() {
            if seen >= skip {
                cut = i;
                break;
            }
            seen += crate::tui::width::char_width(c);
            cut = i + c.len_utf8();
        }
        shown = format!("…{}", &shown[cut..]);
    }
    let shown = truncate(&shown, room);
    let text_style = base.patch(theme.style(Role::Text));
    let mark_role = if mention.is_some() {
        Role::PickerMatch
    } else {
        Role::MdLink
    };
    let link_style = base.patch(theme.style(mark_role));
    let mut spans = Vec::new();
    let mut from = 0;
    for link in marks(&shown, mention) {
        if link.start < from {
            continue;
        }
        if link.start > from {
            spans.push(Span::styled(
                shown[from..link.start].to_string(),
                text_style,
            ));
        }
        spans.push(Span::styled(shown[link.clone()].to_string(), link_style));
        from = link.end;
    }
    if from < shown.len() {
        spans.push(Span::styled(shown[from..].to_string(), text_style));
    }
    spans
}

impl View for BacklinksView {
    /// Movement skips the headings; confirm opens the note at the selected line.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        if is_release(key) {
            return None;
        }
        if let Some(nav) = nav_of(action, key) {
            self.cursor.apply(nav, self.rows.len());
            self.snap(matches!(nav, Nav::Down | Nav::PageDown | Nav::Top));
            return None;
        }
        match action {
            Some(Action::Confirm) => match self.rows.get(self.cursor.selected) {
                Some(Row::Line { path, line, .. }) => Some(ViewOutcome::OpenAtLine {
                    path: path.clone(),
                    line: *line,
                }),
                _ => None,
            },
            Some(Action::Cancel | Action::ShowBacklinks) => Some(ViewOutcome::Close),
            _ => None,
        }
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints: &[Hint<'_>] = &[
            (&[Action::Up, Action::Down], "move"),
            (&[Action::Confirm], "open at the line"),
            (&[Action::Cancel], "close"),
        ];
        let footer = footer(&self.keymap, theme, hints, &[], area.width);
        let name = crate::quote::terminal(self.path.strip_suffix(".md").unwrap_or(&self.path));
        let title = format!("Backlinks · {}", one_line(&name));
        let inner = draw_box(area, buf, theme, &title, footer);
        if inner.is_empty() {
            return;
        }
        let width = usize::from(inner.width);
        let visible = usize::from(inner.height);
        if self.rows.is_empty() {
            let text = match self.links {
                Loaded::Loading => LOADING,
                _ => EMPTY,
            };
            super::put_centered(buf, inner, visible / 2, text, theme.style(Role::Dim));
            return;
        }
        self.cursor.fit(self.rows.len(), visible);
        // The heading above the selected line stays in sight when the list scrolls up to it.
        while self.cursor.offset > 0
            && !self.rows[self.cursor.offset - 1].selectable()
            && self.cursor.offset + visible > self.cursor.selected + 1
        {
            self.cursor.offset -= 1;
        }
        let digits = self
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Line { line, .. } => Some(line.to_string().len()),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        let selected_row = self
            .rows
            .get(self.cursor.selected)
            .is_some_and(Row::selectable)
            .then_some(self.cursor.selected);
        for (row, index) in (self.cursor.offset..self.rows.len())
            .take(visible)
            .enumerate()
        {
            let selected = Some(index) == selected_row;
            if selected {
                style_row(buf, inner, row, theme.style(Role::PickerSelected));
            }
            let line = self.row_line(&self.rows[index], selected, width, digits, theme);
            put_line(buf, inner, row, &line);
        }
        super::draw_scrollbar(
            buf,
            theme,
            inner,
            self.rows.len(),
            self.cursor.offset,
            visible,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn at(path: &str, line: usize, context: &str) -> LinkLine {
        LinkLine {
            path: path.into(),
            line,
            context: context.into(),
            mention: None,
        }
    }

    fn links() -> BacklinkList {
        BacklinkList {
            links: vec![
                at(
                    "Home/Chores.md",
                    4,
                    "- [ ] Book the hall for the [[Launch]]",
                ),
                at(
                    "Home/Chores.md",
                    12,
                    "Ask Ana whether the [[Launch#Budget|budget]] covers the caterer",
                ),
                at(
                    "Journal/2026-12-01.md",
                    3,
                    "Long day. Talked with the team about everything that still has to happen before the big day, the venue, the music, the food, and then [[Launch]] came up again",
                ),
                at(
                    "Projects/Plan.md",
                    27,
                    "Depends on: [[Projects/Launch|the launch]]",
                ),
            ],
            total: 4,
        }
    }

    fn mentions() -> Vec<LinkLine> {
        vec![LinkLine {
            mention: Some("Launch".into()),
            ..at("Journal/2026-11-30.md", 8, "The launch party needs a date")
        }]
    }

    fn view() -> BacklinksView {
        let mut view = BacklinksView::loading("Projects/Launch.md");
        view.set_links(Ok(links()));
        view.set_mentions(Ok(mentions()));
        view
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn rendered(view: &mut BacklinksView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    fn open(view: &mut BacklinksView) -> Option<ViewOutcome> {
        view.handle(Some(Action::Confirm), &key(KeyCode::Enter))
    }

    #[test]
    fn backlinks_80x24() {
        insta::assert_snapshot!(buffer_text(&rendered(&mut view(), 80, 24)));
    }

    #[test]
    fn backlinks_120x40() {
        insta::assert_snapshot!(buffer_text(&rendered(&mut view(), 120, 40)));
    }

    #[test]
    fn backlinks_empty_80x24() {
        let mut view = BacklinksView::loading("Inbox/Lonely.md");
        view.set_links(Ok(BacklinkList::default()));
        view.set_mentions(Ok(Vec::new()));
        let text = buffer_text(&rendered(&mut view, 80, 24));
        assert!(text.contains(EMPTY), "{text}");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn backlinks_empty_120x40() {
        let mut view = BacklinksView::loading("Inbox/Lonely.md");
        view.set_links(Ok(BacklinkList::default()));
        view.set_mentions(Ok(Vec::new()));
        insta::assert_snapshot!(buffer_text(&rendered(&mut view, 120, 40)));
    }

    #[test]
    fn loading_then_links_then_mentions() {
        let mut view = BacklinksView::loading("Projects/Launch.md");
        let text = buffer_text(&rendered(&mut view, 80, 24));
        assert!(text.contains(LOADING), "{text}");
        assert_eq!(open(&mut view), None, "nothing to open while loading");
        view.set_links(Ok(links()));
        let text = buffer_text(&rendered(&mut view, 80, 24));
        assert!(
            text.contains("Linked mentions · 4 links from 3 notes"),
            "{text}"
        );
        assert!(
            text.contains("looking for lines that name this note"),
            "{text}"
        );
        view.set_mentions(Ok(mentions()));
        let text = buffer_text(&rendered(&mut view, 80, 24));
        assert!(text.contains("Unlinked mentions · 1"), "{text}");
        assert!(!text.contains("looking for"), "{text}");
    }

    #[test]
    fn no_links_but_mentions_says_so_and_lists_the_mentions() {
        let mut view = BacklinksView::loading("Projects/Launch.md");
        view.set_links(Ok(BacklinkList::default()));
        view.set_mentions(Ok(mentions()));
        let text = buffer_text(&rendered(&mut view, 80, 24));
        assert!(text.contains(EMPTY), "{text}");
        assert_eq!(
            open(&mut view),
            Some(ViewOutcome::OpenAtLine {
                path: "Journal/2026-11-30.md".into(),
                line: 8
            })
        );
    }

    #[test]
    fn movement_skips_headings_and_enter_opens_the_line() {
        let mut view = view();
        rendered(&mut view, 80, 24);
        // The first line is selected, not the heading above it.
        let down = |view: &mut BacklinksView| view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(
            open(&mut view),
            Some(ViewOutcome::OpenAtLine {
                path: "Home/Chores.md".into(),
                line: 4
            })
        );
        view.handle(Some(Action::Up), &key(KeyCode::Up));
        assert_eq!(
            open(&mut view),
            Some(ViewOutcome::OpenAtLine {
                path: "Home/Chores.md".into(),
                line: 4
            }),
            "up from the first line stays on it"
        );
        down(&mut view);
        down(&mut view);
        // Over the next note's heading to its line.
        assert_eq!(
            open(&mut view),
            Some(ViewOutcome::OpenAtLine {
                path: "Journal/2026-12-01.md".into(),
                line: 3
            })
        );
        down(&mut view);
        down(&mut view);
        // Over the section heading into the unlinked mentions; past the last, it stays.
        down(&mut view);
        let mention = Some(ViewOutcome::OpenAtLine {
            path: "Journal/2026-11-30.md".into(),
            line: 8,
        });
        assert_eq!(open(&mut view), mention);
        view.handle(Some(Action::ScrollBottom), &key(KeyCode::End));
        assert_eq!(open(&mut view), mention);
        view.handle(None, &key(KeyCode::Home));
        assert_eq!(
            open(&mut view),
            Some(ViewOutcome::OpenAtLine {
                path: "Home/Chores.md".into(),
                line: 4
            })
        );
        assert_eq!(
            view.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(ViewOutcome::Close)
        );
        assert_eq!(
            view.handle(Some(Action::ShowBacklinks), &key(KeyCode::F(7))),
            Some(ViewOutcome::Close)
        );
    }

    #[test]
    fn a_refresh_keeps_the_selected_line() {
        let mut view = view();
        for _ in 0..3 {
            view.handle(Some(Action::Down), &key(KeyCode::Down));
        }
        // A new link comes first: the selection stays on Plan.md line 27.
        let mut again = links();
        again.links.insert(0, at("A.md", 1, "[[Launch]]"));
        again.total = 5;
        view.set_links(Ok(again));
        assert_eq!(
            open(&mut view),
            Some(ViewOutcome::OpenAtLine {
                path: "Projects/Plan.md".into(),
                line: 27
            })
        );
    }

    #[test]
    fn text_from_notes_is_escaped_and_links_are_coloured() {
        let mut view = BacklinksView::loading("Launch.md");
        view.set_links(Ok(BacklinkList {
            links: vec![at(
                "Evil\u{1b}[2J.md",
                2,
                "see \u{1b}]0;owned\u{7} [[Launch]]",
            )],
            total: 1,
        }));
        view.set_mentions(Ok(Vec::new()));
        let buf = rendered(&mut view, 80, 24);
        let text = buffer_text(&buf);
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.contains("Evil\\u{1b}[2J"), "{text}");
        assert!(
            text.contains("see \\u{1b}]0;owned\\u{7} [[Launch]]"),
            "{text}"
        );
        let theme = Theme::builtin_dark();
        assert_eq!(
            style_at(&buf, "[[Launch]]").and_then(|s| s.fg),
            theme.style(Role::MdLink).fg
        );
        // A mention's name is marked where it stands, whatever its case.
        let buf = rendered(&mut self::view(), 120, 40);
        assert_eq!(
            style_at(&buf, "launch party").and_then(|s| s.fg),
            theme.style(Role::PickerMatch).fg
        );
        assert_eq!(
            crate::tui::testing::style_at_offset(&buf, "launch party", 6).and_then(|s| s.fg),
            theme.style(Role::Text).fg
        );
    }

    #[test]
    fn a_link_far_along_a_long_line_stays_in_sight() {
        let buf = rendered(&mut view(), 80, 24);
        let text = buffer_text(&buf);
        let row = text
            .lines()
            .find(|l| l.contains("    3  "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(row.contains("…") && row.contains("[[Launch]]"), "{row}");
    }

    #[test]
    fn a_cut_list_says_how_many_more_and_failures_are_said() {
        let mut list = links();
        list.total = 1_204;
        let mut view = BacklinksView::loading("Projects/Launch.md");
        view.set_links(Ok(list));
        let text = buffer_text(&rendered(&mut view, 120, 40));
        assert!(text.contains("1204 links"), "{text}");
        assert!(
            text.contains("… 1200 more (the first 4 are listed)"),
            "{text}"
        );
        let mut failed = BacklinksView::loading("Projects/Launch.md");
        failed.set_links(Err("the vault is still being opened".into()));
        let text = buffer_text(&rendered(&mut failed, 80, 24));
        assert!(
            text.contains("cannot be listed: the vault is still"),
            "{text}"
        );
        assert_eq!(open(&mut failed), None);
        for (w, h) in [(0, 0), (3, 3), (10, 4), (20, 6)] {
            rendered(&mut view, w, h);
        }
    }
}
