//! The `[[` completion list: typing `[[` in the editor or the chat input opens a list of the
//! vault's notes by title and alias, filtered as the person types (nucleo, fuzzy, as the picker).
//! Up/Down choose, Enter or Tab accept, Esc closes; any other key keeps typing.
//!
//! Accepting inserts the link target and `]]`. The target is what Obsidian links by: the file
//! name without `.md`, or the vault path without `.md` when two notes share the file name; a
//! row found by an alias inserts `Name|alias`, so the link reads as the alias and still resolves
//! in Obsidian. With nothing typed yet, the notes touched last come first.
//!
//! The same list, drawn and moved the same way, is the `/` list of commands ([`Kind::Commands`],
//! decisions §64): typing `/` at the start of the chat input lists every command with its
//! description, names starting with what is typed first, then fuzzy matches.

use crate::tui::files::NoteEntry;
use crate::tui::name_rank::{self, NameQuery, Tier};
use crate::tui::theme::{Role, Theme};
use crate::tui::width::{EDITOR, str_width};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use std::collections::HashMap;

/// The most rows the list shows at once.
pub const MAX_ROWS: usize = 8;
/// The most candidates kept.
const MAX_CANDIDATES: usize = 50;
/// Added to a title's score so a title match comes before the same match in an alias (within a
/// tier of [`crate::tui::name_rank`]).
const TITLE_BONUS: u32 = 8;

/// Which text box the list belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Editor,
    Chat,
}

/// What the list offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Notes, after `[[`.
    Links,
    /// Commands, after a `/` at the start of the chat input.
    Commands,
}

/// One command as the `/` list offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandChoice {
    /// Without the slash.
    pub name: String,
    pub description: String,
    /// Whether it needs arguments (Enter then completes the name and waits for them).
    pub takes_arguments: bool,
}

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// What the row shows: the title, or the alias that matched.
    pub label: String,
    /// Set when the row was found by an alias.
    pub alias: bool,
    /// The note's vault path (shown dimmed).
    pub path: String,
    /// What accepting inserts after `[[` (without the closing `]]`).
    pub insert: String,
    /// The characters of `label` the query matched (char indices, sorted), to light them.
    pub hits: Vec<usize>,
    /// A greyed row that says something and cannot be chosen (why the vault's commands are
    /// not listed).
    pub disabled: bool,
    /// A command that takes arguments.
    pub takes_arguments: bool,
}

/// The open list: where its `[[` is, what was typed after it, and the ranked candidates.
#[derive(Debug, Clone)]
pub struct LinkCompletion {
    pub target: Target,
    pub kind: Kind,
    /// (line, char column) of the first `[` of `[[` in the text box.
    pub anchor: (usize, usize),
    query: String,
    candidates: Vec<Candidate>,
    selected: usize,
    scroll: usize,
    /// The rows' area in the last frame, for clicks.
    list_area: Rect,
    /// The `/` list's commands and why the vault's are withheld, made once when the list opens
    /// (and again when the host's answer brings a new list), not at each keystroke.
    commands: Vec<CommandChoice>,
    withheld: Option<String>,
}

impl LinkCompletion {
    /// A list for the `[[` at `anchor`, with nothing typed yet.
    pub fn new(
        target: Target,
        anchor: (usize, usize),
        notes: &[NoteEntry],
        recent: &[&str],
    ) -> Self {
        let mut completion = LinkCompletion {
            target,
            kind: Kind::Links,
            anchor,
            query: String::new(),
            candidates: Vec::new(),
            selected: 0,
            scroll: 0,
            list_area: Rect::default(),
            commands: Vec::new(),
            withheld: None,
        };
        completion.candidates = rank(notes, "", recent);
        completion
    }

    /// The `/` list for a `/` at `anchor` in the chat input, with nothing typed after it yet;
    /// `withheld` (why the vault's commands are not listed) makes a greyed last row.
    pub fn commands(
        anchor: (usize, usize),
        commands: Vec<CommandChoice>,
        withheld: Option<&str>,
    ) -> Self {
        LinkCompletion {
            target: Target::Chat,
            kind: Kind::Commands,
            anchor,
            query: String::new(),
            candidates: rank_commands(&commands, "", withheld),
            selected: 0,
            scroll: 0,
            list_area: Rect::default(),
            commands,
            withheld: withheld.map(str::to_string),
        }
    }

    /// The host read the commands again: the `/` list's new commands, filtered by what is typed
    /// (the choice kept).
    pub fn set_command_choices(&mut self, commands: Vec<CommandChoice>, withheld: Option<&str>) {
        self.commands = commands;
        self.withheld = withheld.map(str::to_string);
        let query = self.query.clone();
        self.set_command_query(&query);
    }

    /// The name typed after `/` changed, or the list of commands did: filter again.
    pub fn set_command_query(&mut self, query: &str) {
        // Keep the choice when only the list changed (the host's answer came in), not the query.
        let kept = (query == self.query)
            .then(|| self.selected().map(|c| c.insert.clone()))
            .flatten();
        self.query = query.to_string();
        self.candidates = rank_commands(&self.commands, query, self.withheld.as_deref());
        self.selected = kept
            .and_then(|name| self.candidates.iter().position(|c| c.insert == name))
            .unwrap_or(0);
        self.scroll = 0;
    }

    pub fn query(&self) -> &str {
        &self.query
    }

    /// The text after `[[` changed: filter again, keeping the selection on the first match.
    pub fn set_query(&mut self, query: &str, notes: &[NoteEntry], recent: &[&str]) {
        if query == self.query && !self.candidates.is_empty() {
            return;
        }
        self.query = query.to_string();
        self.candidates = rank(notes, query, recent);
        self.selected = 0;
        self.scroll = 0;
    }

    pub fn candidates(&self) -> &[Candidate] {
        &self.candidates
    }

    /// The chosen row; a greyed row is never chosen.
    pub fn selected(&self) -> Option<&Candidate> {
        self.candidates.get(self.selected).filter(|c| !c.disabled)
    }

    /// A click at screen (`column`, `row`): `Some(true)` selects the row under it (to accept it),
    /// `Some(false)` is a click on the list but not on a row, `None` a click elsewhere.
    pub fn click(&mut self, column: u16, row: u16) -> Option<bool> {
        let area = self.list_area;
        let frame = Rect::new(
            area.x.saturating_sub(1),
            area.y.saturating_sub(1),
            area.width + 2,
            area.height + 2,
        );
        if !frame.contains(ratatui::layout::Position::new(column, row)) {
            return None;
        }
        if !area.contains(ratatui::layout::Position::new(column, row)) {
            return Some(false);
        }
        let index = self.scroll + usize::from(row - area.y);
        if self.candidates.get(index).is_none_or(|c| c.disabled) {
            return Some(false);
        }
        self.selected = index;
        Some(true)
    }

    /// Move the selection by `delta`, wrapping around the ends (as editors' completion lists do).
    pub fn move_selection(&mut self, delta: isize) {
        let len = self.candidates.len() as isize;
        if len == 0 {
            return;
        }
        self.selected = (self.selected as isize + delta).rem_euclid(len) as usize;
        // A greyed row is stepped over (there is at most one, and never only it to choose).
        if self.candidates[self.selected].disabled && len > 1 {
            self.selected = (self.selected as isize + delta.signum()).rem_euclid(len) as usize;
        }
    }

    /// Where the list goes: its top-left corner at (`x`, `y`) when it fits below, else its
    /// bottom at `above_y` (exclusive); inside `bounds`, as wide as its rows want within limits.
    fn popup(&self, bounds: Rect, x: u16, y: u16, above_y: u16) -> Rect {
        let shown = self.candidates.len().clamp(1, MAX_ROWS);
        let height = (shown as u16 + 2).min(bounds.height);
        let widest = self
            .candidates
            .iter()
            .map(|c| str_width(&c.label) + 2 + str_width(&c.path))
            .max()
            .unwrap_or(20);
        // A command's description is worth more room than a note's path.
        let most = match self.kind {
            Kind::Links => 60,
            Kind::Commands => 76,
        };
        let width = (widest as u16 + 4).clamp(30, most).min(bounds.width);
        let x = x.clamp(bounds.x, bounds.right() - width);
        let fits_below = y + height <= bounds.bottom();
        let top = if fits_below {
            y
        } else if above_y >= bounds.y + height {
            above_y - height
        } else {
            bounds.bottom() - height
        };
        Rect::new(x, top, width, height)
    }

    /// The frame's title: what has been typed after `/` or `[[`, cut to half the `width`.
    fn title(&self, width: u16) -> String {
        let typed = || EDITOR.truncate_start(&self.query, usize::from(width) / 2);
        match self.kind {
            Kind::Commands => format!(" /{} ", typed()),
            Kind::Links if self.query.is_empty() => " Link to a note ".to_string(),
            Kind::Links => format!(" [[{} ", typed()),
        }
    }

    /// Draw the list with its top-left corner at (`x`, `y`) when it fits below, else with its
    /// bottom at `above_y` (exclusive); kept inside `bounds`.
    pub fn render(
        &mut self,
        bounds: Rect,
        x: u16,
        y: u16,
        above_y: u16,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        self.list_area = Rect::default();
        let bounds = bounds.intersection(buf.area);
        if bounds.width < 12 || bounds.height < 3 {
            return;
        }
        let popup = self.popup(bounds, x, y, above_y);
        Clear.render(popup, buf);
        buf.set_style(popup, theme.style(Role::Text));
        let title = self.title(popup.width);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(Role::BorderFocused))
            .title(Span::styled(title, theme.style(Role::TitleFocused)));
        let inner = block.inner(popup);
        block.render(popup, buf);
        self.list_area = inner;
        if inner.is_empty() {
            return;
        }
        if self.candidates.is_empty() {
            let nothing = match self.kind {
                Kind::Links => "No note matches",
                Kind::Commands => "No command matches",
            };
            buf.set_stringn(
                inner.x + 1,
                inner.y,
                EDITOR.truncate_end(nothing, usize::from(inner.width) - 1),
                usize::from(inner.width) - 1,
                theme.style(Role::Dim),
            );
            return;
        }
        // Commands' descriptions start in one column, after the longest name (at most half).
        let column = match self.kind {
            Kind::Links => None,
            Kind::Commands => self
                .candidates
                .iter()
                .map(|c| str_width(&c.label))
                .max()
                .map(|w| w.min(usize::from(inner.width) / 2)),
        };
        let rows = usize::from(inner.height);
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + rows {
            self.scroll = self.selected + 1 - rows;
        }
        for (offset, candidate) in self
            .candidates
            .iter()
            .enumerate()
            .skip(self.scroll)
            .take(rows)
        {
            let row_y = inner.y + (offset - self.scroll) as u16;
            let row = Rect::new(inner.x, row_y, inner.width, 1);
            let selected = offset == self.selected && !candidate.disabled;
            render_candidate(buf, row, candidate, selected, column, theme);
        }
    }
}

/// One candidate on one row: a marker, the label with its matched characters marked, and the
/// path on the right when there is room (cut from its start).
fn render_candidate(
    buf: &mut Buffer,
    row: Rect,
    candidate: &Candidate,
    selected: bool,
    column: Option<usize>,
    theme: &Theme,
) {
    let row_y = row.y;
    let selection = if selected {
        buf.set_style(row, theme.style(Role::PickerSelected));
        theme.style(Role::PickerSelected)
    } else {
        Style::new()
    };
    let width = usize::from(row.width);
    let marker = if selected { "▌" } else { " " };
    buf.set_stringn(
        row.x,
        row_y,
        marker,
        width,
        theme.style(Role::BorderFocused).patch(selection),
    );
    // The label whole when it fits; the path takes what is left, from its end.
    let label = EDITOR.truncate_end(&candidate.label, width.saturating_sub(2));
    let label_role = if candidate.disabled {
        Role::Dim
    } else if candidate.alias {
        Role::MdLink
    } else {
        Role::Text
    };
    let label_style = theme.style(label_role).patch(selection);
    let matched = label_style.patch(theme.style(Role::PickerMatch));
    let mut end = row.x + 1;
    let room_end = row.x + width.saturating_sub(1) as u16;
    for (index, c) in label.chars().enumerate() {
        let style = if candidate.hits.contains(&index) {
            matched
        } else {
            label_style
        };
        let mut tmp = [0u8; 4];
        let room = usize::from(room_end.saturating_sub(end));
        end = buf
            .set_stringn(end, row_y, c.encode_utf8(&mut tmp), room, style)
            .0;
    }
    if let Some(column) = column {
        // A command's description: from the column, cut at its end.
        let x = (row.x + 1 + column as u16 + 2).max(end + 1);
        let room = usize::from(row.right().saturating_sub(x)).saturating_sub(1);
        if room >= 6 {
            let description = EDITOR.truncate_end(&candidate.path, room);
            buf.set_stringn(
                x,
                row_y,
                &description,
                room,
                theme.style(Role::Dim).patch(selection),
            );
        }
        return;
    }
    let path_room = usize::from(row.right().saturating_sub(end)).saturating_sub(3);
    if path_room >= 6 {
        let path = EDITOR.truncate_start(&candidate.path, path_room);
        let path_x = row.right() - str_width(&path) as u16 - 1;
        buf.set_stringn(
            path_x,
            row_y,
            &path,
            path_room,
            theme.style(Role::Dim).patch(selection),
        );
    }
}

/// The text between an open `[[` and the cursor, or `None` when the cursor is not in a link being
/// typed any more (it left the line or went before the `[[`, or the text has `]`, `|`, `#`, `^`).
pub fn query_after_anchor(line: &str, anchor_col: usize, cursor_col: usize) -> Option<String> {
    if cursor_col < anchor_col + 2 {
        return None;
    }
    let chars: Vec<char> = line.chars().collect();
    if chars.get(anchor_col) != Some(&'[') || chars.get(anchor_col + 1) != Some(&'[') {
        return None;
    }
    let query: String = chars.get(anchor_col + 2..cursor_col)?.iter().collect();
    if query.contains([']', '|', '#', '^', '[']) {
        return None;
    }
    Some(query)
}

/// Whether the two characters before `cursor_col` are `[[` (the person just typed the second).
pub fn just_opened(line: &str, cursor_col: usize) -> bool {
    cursor_col >= 2 && {
        let mut before = line.chars().skip(cursor_col - 2);
        before.next() == Some('[') && before.next() == Some('[')
    }
}

/// What a link to `note` says: its file name, or its path when another note has the same name
/// (names compared as the link resolver compares them: `NoteEntry::link_key`), so the link
/// inserted resolves to this note by the rule the graph and `move_note` use.
fn link_target(note: &NoteEntry, stem_counts: &HashMap<String, usize>) -> String {
    let stem = note.stem();
    if stem_counts.get(&note.link_key()).copied().unwrap_or(0) > 1 {
        note.path_without_md().to_string()
    } else {
        stem.to_string()
    }
}

/// How many notes have each of the file names of `chosen` (ignoring case). Only the chosen
/// notes' names are counted, so a keystroke allocates nothing per note of the vault.
fn stem_counts(notes: &[NoteEntry], chosen: &[usize]) -> HashMap<String, usize> {
    let mut counts: HashMap<String, usize> =
        chosen.iter().map(|&i| (notes[i].link_key(), 0)).collect();
    // A cheap look at each name first (its length and first byte, lower-cased): an ASCII name
    // that differs there cannot be one of the chosen; only the others are folded (an ASCII
    // name's fold is its lower case, so the look cannot miss one).
    let shape = |stem: &str| {
        (
            stem.len(),
            stem.bytes().next().map(|b| b.to_ascii_lowercase()),
        )
    };
    let shapes: std::collections::HashSet<_> = counts.keys().map(|k| shape(k)).collect();
    for note in notes {
        let stem = note.stem();
        if (!stem.is_ascii() || shapes.contains(&shape(stem)))
            && let Some(count) = counts.get_mut(&note.link_key())
        {
            *count += 1;
        }
    }
    counts
}

/// The order of names ignoring case, without allocating.
fn by_name(a: &str, b: &str) -> std::cmp::Ordering {
    let lower = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<Vec<_>>();
    if a.is_ascii() && b.is_ascii() {
        a.bytes()
            .map(|c| c.to_ascii_lowercase())
            .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
    } else {
        lower(a).cmp(&lower(b))
    }
}

/// Recency as a tie-break key: earlier in `recent` is more recent; a note not in it is oldest.
fn recency_key(recent: &[&str], note: &NoteEntry) -> i64 {
    recent
        .iter()
        .position(|p| *p == note.path)
        .map_or(i64::MIN, |n| -(n as i64))
}

/// A note as a candidate by its title (or file name).
fn title_candidate(note: &NoteEntry, counts: &HashMap<String, usize>) -> Candidate {
    Candidate {
        label: note.display_title().to_string(),
        alias: false,
        path: note.path.clone(),
        insert: link_target(note, counts),
        hits: Vec::new(),
        disabled: false,
        takes_arguments: false,
    }
}

/// With nothing typed: the notes of `recent` in its order, then the others by title.
fn recent_first(notes: &[NoteEntry], recent: &[&str]) -> Vec<Candidate> {
    let mut order: Vec<usize> = (0..notes.len()).collect();
    let compare = |&a: &usize, &b: &usize| {
        recency_key(recent, &notes[b])
            .cmp(&recency_key(recent, &notes[a]))
            .then_with(|| by_name(notes[a].display_title(), notes[b].display_title()))
    };
    // Only the first rows are shown: choose them, then sort those.
    if order.len() > MAX_CANDIDATES {
        order.select_nth_unstable_by(MAX_CANDIDATES, compare);
        order.truncate(MAX_CANDIDATES);
    }
    order.sort_by(compare);
    let counts = stem_counts(notes, &order);
    order
        .into_iter()
        .map(|i| title_candidate(&notes[i], &counts))
        .collect()
}

/// The candidates for `query`, best first, by the picker's rule ([`crate::tui::name_rank`]):
/// the name that is the query, then names that start with it, then a word that does, then fuzzy
/// matches; the matcher's score, then the order of `recent`, break ties. Each note appears once:
/// by its title (or file name) when that matches, else by its best-matching alias. An empty
/// query lists the notes in the order of `recent` first, then by title.
pub fn rank(notes: &[NoteEntry], query: &str, recent: &[&str]) -> Vec<Candidate> {
    let recency = |note: &NoteEntry| recency_key(recent, note);
    let by_title = title_candidate;
    if query.trim().is_empty() {
        return recent_first(notes, recent);
    }
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let names = NameQuery::new(query);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    let mut score = |text: &str| pattern.score(Utf32Str::new(text, &mut buf), &mut matcher);
    // (tier, score, recency, note, the alias it was found by)
    let mut scored: Vec<(Tier, u32, i64, usize, Option<usize>)> = Vec::new();
    for (index, note) in notes.iter().enumerate() {
        let title = note.display_title();
        let title_score = score(title)
            .max(score(note.stem()))
            .map(|s| s + TITLE_BONUS);
        let alias_best = note
            .aliases
            .iter()
            .enumerate()
            .filter_map(|(n, alias)| score(alias).map(|s| (s, n)))
            .max_by_key(|(s, _)| *s);
        let (found, alias) = match (title_score, alias_best) {
            (Some(t), Some((a, _))) if t >= a => (t, None),
            (Some(t), None) => (t, None),
            (_, Some((a, n))) => (a, Some(n)),
            (None, None) => continue,
        };
        let tier = match alias {
            Some(n) => names.tier(&note.aliases[n]),
            None => names.best_tier([title, note.stem()]),
        };
        scored.push((tier, found, recency(note), index, alias));
    }
    let label_len = |&(_, _, _, index, alias): &(Tier, u32, i64, usize, Option<usize>)| {
        let note = &notes[index];
        alias.map_or(note.display_title().len(), |n| note.aliases[n].len())
    };
    scored.sort_by(|a, b| {
        name_rank::compare((a.0, a.1, a.2), (b.0, b.1, b.2))
            .then_with(|| label_len(a).cmp(&label_len(b)))
            .then_with(|| notes[a.3].path.cmp(&notes[b.3].path))
    });
    scored.truncate(MAX_CANDIDATES);
    let chosen: Vec<usize> = scored.iter().map(|s| s.3).collect();
    let counts = stem_counts(notes, &chosen);
    scored
        .into_iter()
        .map(|(_, _, _, index, alias)| {
            let note = &notes[index];
            let mut candidate = match alias {
                None => by_title(note, &counts),
                Some(n) => {
                    let alias = &note.aliases[n];
                    Candidate {
                        label: alias.clone(),
                        alias: true,
                        path: note.path.clone(),
                        insert: format!("{}|{alias}", link_target(note, &counts)),
                        hits: Vec::new(),
                        disabled: false,
                        takes_arguments: false,
                    }
                }
            };
            candidate.hits = hits(&pattern, &mut matcher, &candidate.label);
            candidate
        })
        .collect()
}

/// The commands for `query` (typed after `/`): names that start with it first, in list order,
/// then the others that match it fuzzily, best first; a greyed row saying `withheld` last.
pub fn rank_commands(
    commands: &[CommandChoice],
    query: &str,
    withheld: Option<&str>,
) -> Vec<Candidate> {
    let row = |command: &CommandChoice| Candidate {
        label: format!("/{}", command.name),
        alias: false,
        path: command.description.clone(),
        insert: command.name.clone(),
        hits: Vec::new(),
        disabled: false,
        takes_arguments: command.takes_arguments,
    };
    let mut found: Vec<Candidate> = Vec::new();
    if query.is_empty() {
        found.extend(commands.iter().map(row));
    } else {
        let lowered = query.to_lowercase();
        let (prefixed, rest): (Vec<&CommandChoice>, Vec<&CommandChoice>) = commands
            .iter()
            .partition(|c| c.name.to_lowercase().starts_with(&lowered));
        found.extend(prefixed.into_iter().map(|c| {
            let mut candidate = row(c);
            // The slash, then the typed prefix.
            candidate.hits = (1..=query.chars().count()).collect();
            candidate
        }));
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut buf = Vec::new();
        let mut fuzzy: Vec<(u32, &CommandChoice)> = rest
            .into_iter()
            .filter_map(|c| {
                pattern
                    .score(Utf32Str::new(&c.name, &mut buf), &mut matcher)
                    .map(|s| (s, c))
            })
            .collect();
        fuzzy.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        found.extend(fuzzy.into_iter().map(|(_, c)| {
            let mut candidate = row(c);
            candidate.hits = hits(&pattern, &mut matcher, &c.name)
                .into_iter()
                .map(|i| i + 1)
                .collect();
            candidate
        }));
    }
    found.truncate(MAX_CANDIDATES);
    if let Some(why) = withheld {
        found.push(Candidate {
            label: "vault commands not listed".to_string(),
            alias: false,
            path: why.to_string(),
            insert: String::new(),
            hits: Vec::new(),
            disabled: true,
            takes_arguments: false,
        });
    }
    found
}

/// The name typed after a `/` that starts the chat input's first line, while the cursor is in
/// it; `None` once the name ends (a space) or the cursor left it.
pub fn command_query(row: usize, line: &str, cursor_col: usize) -> Option<String> {
    if row != 0 || cursor_col == 0 || !line.starts_with('/') {
        return None;
    }
    let query: String = line.chars().skip(1).take(cursor_col - 1).collect();
    (!query.contains(char::is_whitespace)).then_some(query)
}

/// Which characters of `text` the words of `pattern` match.
fn hits(pattern: &Pattern, matcher: &mut Matcher, text: &str) -> Vec<usize> {
    let mut buf = Vec::new();
    let haystack = Utf32Str::new(text, &mut buf);
    let mut found = Vec::new();
    let mut hits = Vec::new();
    for atom in pattern.atoms.iter().filter(|atom| !atom.negative) {
        found.clear();
        if atom.indices(haystack, matcher, &mut found).is_some() {
            hits.extend(found.iter().map(|&i| i as usize));
        }
    }
    hits.sort_unstable();
    hits.dedup();
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(path: &str, title: &str, aliases: &[&str]) -> NoteEntry {
        NoteEntry {
            path: path.into(),
            title: title.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            modified_ns: 0,
        }
    }

    fn vault() -> Vec<NoteEntry> {
        vec![
            note(
                "Projects/Garden Planner.md",
                "Garden Planner",
                &["veg beds"],
            ),
            note("Welcome.md", "Welcome", &[]),
            note("Daily/Plan.md", "Daily plan", &[]),
            note("Projects/Plan.md", "Project plan", &["roadmap"]),
        ]
    }

    #[test]
    fn fuzzy_titles_rank_first_and_insert_the_file_name() {
        let found = rank(&vault(), "gard", &[]);
        assert_eq!(found[0].label, "Garden Planner");
        assert_eq!(found[0].insert, "Garden Planner");
        assert!(!found[0].alias);
        let found = rank(&vault(), "wlc", &[]);
        assert_eq!(found[0].label, "Welcome");
    }

    #[test]
    fn an_alias_match_inserts_name_and_alias() {
        let found = rank(&vault(), "roadm", &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].label, "roadmap");
        assert!(found[0].alias);
        // Two notes are called Plan: the path tells them apart.
        assert_eq!(found[0].insert, "Projects/Plan|roadmap");
    }

    #[test]
    fn the_exact_name_comes_first_as_in_the_picker() {
        let notes = vec![
            note("tldr/tart.md", "", &[]),
            note("tldr/guitar.md", "", &[]),
            note("tldr/gnu-tar.md", "", &[]),
            note("tldr/tar.md", "", &[]),
            note("tldr/compress.md", "", &["zip"]),
            note("tldr/zipinfo.md", "", &[]),
        ];
        let labels = |query: &str, recent: &[&str]| -> Vec<String> {
            rank(&notes, query, recent)
                .into_iter()
                .map(|c| c.label)
                .collect()
        };
        assert_eq!(labels("tar", &[]), ["tar", "tart", "gnu-tar", "guitar"]);
        assert_eq!(
            labels("zip", &[]),
            ["zip", "zipinfo"],
            "the alias is the name"
        );
        // Two notes of one name: the recent one first, and the links say their paths.
        let twins = vec![note("a/cp.md", "", &[]), note("b/cp.md", "", &[])];
        let found = rank(&twins, "cp", &["b/cp.md"]);
        assert_eq!(found[0].path, "b/cp.md");
        assert_eq!(found[0].insert, "b/cp");
        assert_eq!(rank(&twins, "cp", &[])[0].path, "a/cp.md");
    }

    #[test]
    fn no_query_lists_recent_notes_first() {
        let found = rank(&vault(), "", &["Welcome.md"]);
        assert_eq!(found[0].label, "Welcome");
        assert_eq!(found[1].label, "Daily plan");
        assert_eq!(found.len(), 4);
    }

    #[test]
    fn the_query_ends_where_a_link_ends() {
        assert_eq!(
            query_after_anchor("see [[Gar", 4, 9).as_deref(),
            Some("Gar")
        );
        assert_eq!(query_after_anchor("see [[", 4, 6).as_deref(), Some(""));
        assert_eq!(query_after_anchor("see [[Gar", 4, 5), None, "before the [[");
        assert_eq!(query_after_anchor("see [[a]]", 4, 9), None);
        assert_eq!(query_after_anchor("see [[a|b", 4, 9), None);
        assert_eq!(query_after_anchor("see (a", 4, 6), None, "no [[ there");
        assert!(just_opened("see [[", 6));
        assert!(!just_opened("see [", 5));
        assert!(just_opened("é[[", 3));
    }

    fn choice(name: &str) -> CommandChoice {
        CommandChoice {
            name: name.into(),
            description: String::new(),
            takes_arguments: false,
        }
    }

    #[test]
    fn commands_starting_with_the_query_come_before_fuzzy_ones_and_a_withheld_row_is_greyed() {
        let commands = [
            choice("new"),
            choice("weekly-review"),
            choice("rewind"),
            choice("study:flashcards"),
        ];
        let found = rank_commands(&commands, "re", Some("not trusted"));
        let names: Vec<&str> = found.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            names,
            ["/rewind", "/weekly-review", "vault commands not listed"]
        );
        assert_eq!(
            found[0].hits,
            [1, 2],
            "the slash is not typed, the prefix is"
        );
        assert!(found[2].disabled);
        let mut list = LinkCompletion::commands((0, 0), commands.to_vec(), Some("not trusted"));
        list.set_command_query("rewi");
        list.move_selection(1);
        assert_eq!(
            list.selected().map(|c| c.insert.as_str()),
            Some("rewind"),
            "the greyed row is stepped over"
        );
        assert_eq!(command_query(0, "/wee", 4).as_deref(), Some("wee"));
        assert_eq!(command_query(0, "/weekly-review x", 16), None);
        assert_eq!(command_query(1, "/wee", 4), None, "only the first line");
        assert_eq!(command_query(0, "a/b", 3), None);
    }

    #[test]
    fn moving_wraps_around() {
        let mut list = LinkCompletion::new(Target::Editor, (0, 0), &vault(), &[]);
        list.move_selection(-1);
        assert_eq!(list.selected().map(|c| c.label.as_str()), Some("Welcome"));
        list.move_selection(1);
        assert_eq!(
            list.selected().map(|c| c.label.as_str()),
            Some("Daily plan")
        );
    }
}
