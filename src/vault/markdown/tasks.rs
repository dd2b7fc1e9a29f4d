//! Tasks: `- [ ] text` list items, read the way the Obsidian Tasks plugin and Dataview read them.
//!
//! A task is a list item of any marker (`-`, `*`, `+`, `1.`, `1)`), at any depth and inside block
//! quotes, whose content starts with `[c]` (one character), then a space and some text. pulldown-cmark
//! decides what is a list item, so nothing inside fenced or indented code, inline code, HTML blocks or
//! the frontmatter counts. The status character keeps the Tasks plugin's default meanings.

use super::*;

/// One task of a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    /// 1-based line of the task's checkbox.
    pub line: usize,
    pub status: TaskStatus,
    /// The task's text on its first line, without the checkbox and without the Tasks plugin's
    /// emoji dates (`📅 2026-12-03`, `⏳ …`, `✅ …`) or Dataview's `[due:: …]`-style date fields.
    pub text: String,
    /// The due date, `YYYY-MM-DD`: Tasks' `📅` (or `📆`, `🗓`) or Dataview's `[due:: …]`/`(due:: …)`.
    pub due: Option<String>,
    /// The status character between the brackets (one character, perhaps several bytes).
    pub checkbox: Range<usize>,
}

/// The Tasks plugin's default statuses; anything else keeps its character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TaskStatus {
    /// `[ ]`
    Open,
    /// `[x]` or `[X]`
    Done,
    /// `[/]`
    InProgress,
    /// `[-]`
    Cancelled,
    /// Any other character (`[>]`, `[?]`, `[!]`, …): a custom status.
    Other(char),
}

impl TaskStatus {
    pub fn from_char(c: char) -> Self {
        match c {
            ' ' => Self::Open,
            'x' | 'X' => Self::Done,
            '/' => Self::InProgress,
            '-' => Self::Cancelled,
            other => Self::Other(other),
        }
    }

    /// The name the CLI, the tools and the index use: `open`, `done`, `in_progress`, `cancelled`,
    /// else the character itself.
    pub fn name(self) -> String {
        match self {
            Self::Open => "open".into(),
            Self::Done => "done".into(),
            Self::InProgress => "in_progress".into(),
            Self::Cancelled => "cancelled".into(),
            Self::Other(c) => c.to_string(),
        }
    }

    /// The inverse of [`TaskStatus::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "open" => Some(Self::Open),
            "done" => Some(Self::Done),
            "in_progress" => Some(Self::InProgress),
            "cancelled" => Some(Self::Cancelled),
            other => {
                let mut chars = other.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Some(Self::from_char(c)),
                    _ => None,
                }
            }
        }
    }

    /// The character written between the brackets.
    pub fn mark(self) -> char {
        match self {
            Self::Open => ' ',
            Self::Done => 'x',
            Self::InProgress => '/',
            Self::Cancelled => '-',
            Self::Other(c) => c,
        }
    }

    /// Checked off.
    pub fn is_done(self) -> bool {
        self == Self::Done
    }
}

/// Every task of a note, in order. Pure and linear; pulldown-cmark runs only when some line looks
/// like a task (most notes have none).
pub fn tasks(text: &str) -> Vec<Task> {
    if !might_have_tasks(text) {
        return Vec::new();
    }
    let body_start = frontmatter_bounds(text).map_or(0, |b| b.whole.end);
    let body = &text[body_start..];
    let items: Vec<usize> = Parser::new_ext(body, Options::ENABLE_FOOTNOTES)
        .into_offset_iter()
        .filter_map(|(event, range)| {
            matches!(event, Event::Start(Tag::Item)).then_some(body_start + range.start)
        })
        .collect();
    tasks_at_items(text, &items)
}

/// The tasks among the list items that start at `items` (offsets of their markers in `text`, as
/// pulldown-cmark reports them with the same options as here; [`parse`] passes its own).
pub(super) fn tasks_at_items(text: &str, items: &[usize]) -> Vec<Task> {
    if items.is_empty() {
        return Vec::new();
    }
    let lines = LineIndex::new(text);
    items
        .iter()
        .filter_map(|&at| task_at(text, at, &lines))
        .collect()
}

/// The task whose list marker starts at `at`, if the item is one.
fn task_at(text: &str, at: usize, lines: &LineIndex) -> Option<Task> {
    let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n);
    let item = &text[at..line_end];
    let after_marker = super::blocks::after_list_marker(item)?;
    let content = after_marker.trim_start_matches([' ', '\t']);
    if content.len() == after_marker.len() {
        return None; // `-[ ]` is not a list item's content
    }
    let inner = content.strip_prefix('[')?;
    let status = inner.chars().next()?;
    if status == '\n' || status == ']' {
        return None; // `- []`
    }
    let rest = inner[status.len_utf8()..].strip_prefix(']')?;
    // `- [ ]x` is not a task, and neither is `- [ ]` with nothing after it.
    if !rest.starts_with([' ', '\t']) || rest.trim().is_empty() {
        return None;
    }
    // `inner` runs from the status character to the end of the line.
    let checkbox_start = line_end - inner.len();
    let checkbox = checkbox_start..checkbox_start + status.len_utf8();
    let (text_out, due) = task_fields(rest.trim());
    Some(Task {
        line: lines.line(at),
        status: TaskStatus::from_char(status),
        text: text_out,
        due,
        checkbox,
    })
}

/// A cheap line scan before the real parse: some line, after indentation, block-quote marks and a
/// list marker, has `[` and a `]` two or three bytes on (one character of up to two bytes; wider
/// characters are rare enough to also pass by the four-byte check).
fn might_have_tasks(text: &str) -> bool {
    text.split('\n').any(|line| {
        let rest = line.trim_start_matches([' ', '\t', '>']);
        let Some(after) = super::blocks::after_list_marker(rest) else {
            return false;
        };
        let content = after.trim_start_matches([' ', '\t']);
        let b = content.as_bytes();
        b.first() == Some(&b'[') && (2..=5).any(|k| b.get(k) == Some(&b']'))
    })
}

/// Emoji that the Tasks plugin puts before a date: due (`📅`, `📆`, `🗓`), scheduled (`⏳`, `⌛`),
/// start (`🛫`), created (`➕`), done (`✅`), cancelled (`❌`).
const DUE_EMOJI: [&str; 3] = ["📅", "📆", "🗓"];
const OTHER_DATE_EMOJI: [&str; 6] = ["⏳", "⌛", "🛫", "➕", "✅", "❌"];

/// The task's text without its date fields, and its due date.
fn task_fields(text: &str) -> (String, Option<String>) {
    let mut due = None;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some((len, date, is_due)) = emoji_date(rest).or_else(|| dataview_date(rest)) {
            if is_due && due.is_none() {
                due = Some(date);
            }
            rest = &rest[len..];
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    (out.split_whitespace().collect::<Vec<_>>().join(" "), due)
}

/// `📅 2026-12-03` at the start of `s` (an emoji variation selector and spaces allowed before the
/// date): its length, the date and whether it is the due date.
fn emoji_date(s: &str) -> Option<(usize, String, bool)> {
    let (emoji, is_due) = DUE_EMOJI
        .iter()
        .map(|e| (e, true))
        .chain(OTHER_DATE_EMOJI.iter().map(|e| (e, false)))
        .find(|(e, _)| s.starts_with(**e))?;
    let after = &s[emoji.len()..];
    let after = after.strip_prefix('\u{fe0f}').unwrap_or(after);
    let trimmed = after.trim_start_matches([' ', '\t']);
    let date = date_prefix(trimmed)?;
    Some((
        s.len() - trimmed.len() + date.len(),
        date.to_string(),
        is_due,
    ))
}

/// Dataview's `[due:: 2026-12-03]` or `(due:: 2026-12-03)` (any date field: `scheduled`, `start`,
/// `created`, `completion`, `cancelled`) at the start of `s`.
fn dataview_date(s: &str) -> Option<(usize, String, bool)> {
    let close = match s.as_bytes().first()? {
        b'[' => ']',
        b'(' => ')',
        _ => return None,
    };
    let inner = &s[1..];
    let (key, value) = inner.split_once("::")?;
    let key = key.trim();
    if ![
        "due",
        "scheduled",
        "start",
        "created",
        "completion",
        "cancelled",
    ]
    .iter()
    .any(|k| k.eq_ignore_ascii_case(key))
    {
        return None;
    }
    let value_trimmed = value.trim_start_matches([' ', '\t']);
    let date = date_prefix(value_trimmed)?;
    let after = value_trimmed[date.len()..].trim_start_matches([' ', '\t']);
    after.strip_prefix(close)?;
    let len = s.len() - after.len() + 1;
    Some((len, date.to_string(), key.eq_ignore_ascii_case("due")))
}

/// A `YYYY-MM-DD` date at the start of `s` (month 01–12, day 01–31).
fn date_prefix(s: &str) -> Option<&str> {
    let date = s.get(..10)?;
    let b = date.as_bytes();
    let digits = |r: Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10)) {
        return None;
    }
    let month: u8 = date[5..7].parse().ok()?;
    let day: u8 = date[8..10].parse().ok()?;
    ((1..=12).contains(&month) && (1..=31).contains(&day)).then_some(date)
}

/// `text` with the task at `checkbox` given `status`'s character: the one edit a toggle makes.
pub fn set_task_status(text: &str, checkbox: Range<usize>, status: char) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    out.push_str(&text[..checkbox.start]);
    out.push(status);
    out.push_str(&text[checkbox.end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// (line, status, text, due) of every task.
    fn found(text: &str) -> Vec<(usize, String, String, Option<String>)> {
        tasks(text)
            .into_iter()
            .map(|t| (t.line, t.status.name(), t.text, t.due))
            .collect()
    }

    fn t(
        line: usize,
        status: &str,
        text: &str,
        due: Option<&str>,
    ) -> (usize, String, String, Option<String>) {
        (line, status.into(), text.into(), due.map(str::to_owned))
    }

    #[test]
    fn every_marker_depth_and_quote() {
        let text = "---\ntags: [a]\n---\n- [ ] dash\n* [x] star\n+ [X] plus\n1. [/] dot\n2) [-] paren\n- parent\n  - [ ] nested\n    1. [?] deeper\n> - [ ] quoted\n> > * [>] twice quoted\n";
        assert_eq!(
            found(text),
            vec![
                t(4, "open", "dash", None),
                t(5, "done", "star", None),
                t(6, "done", "plus", None),
                t(7, "in_progress", "dot", None),
                t(8, "cancelled", "paren", None),
                t(10, "open", "nested", None),
                t(11, "?", "deeper", None),
                t(12, "open", "quoted", None),
                t(13, ">", "twice quoted", None),
            ]
        );
    }

    #[test]
    fn code_and_malformed_items_are_not_tasks() {
        let text = "```\n- [ ] fenced\n```\n\n~~~md\n- [x] tilde fenced\n~~~\n\n    - [ ] indented code\n\nsee `- [ ] inline` here\n\n- []\n- [ ]x\n- [ ]\n- [ ]   \n-[ ] no space\n- [ ] real one\n- [xx] two chars\n";
        assert_eq!(found(text), vec![t(18, "open", "real one", None)]);
    }

    #[test]
    fn frontmatter_lists_are_not_tasks() {
        let text = "---\ntodo:\n  - [ ] not a task\n---\n- [ ] a task\n";
        assert_eq!(found(text), vec![t(5, "open", "a task", None)]);
    }

    #[test]
    fn due_dates_from_the_tasks_plugin_and_dataview() {
        let text = "- [ ] pay rent 📅 2026-12-03\n- [ ] call ⏳ 2026-11-30 📅 2026-12-05 ➕ 2026-11-01\n- [x] filed [due:: 2026-12-01] ✅ 2026-12-02\n- [ ] (due:: 2026-12-09) paren field\n- [ ] not a date 📅 soon\n- [ ] bad month [due:: 2026-13-01]\n";
        assert_eq!(
            found(text),
            vec![
                t(1, "open", "pay rent", Some("2026-12-03")),
                t(2, "open", "call", Some("2026-12-05")),
                t(3, "done", "filed", Some("2026-12-01")),
                t(4, "open", "paren field", Some("2026-12-09")),
                t(5, "open", "not a date 📅 soon", None),
                t(6, "open", "bad month [due:: 2026-13-01]", None),
            ]
        );
    }

    #[test]
    fn the_checkbox_span_is_the_status_character() {
        let text = "intro\n> - [ ] é task\n- [é] odd status\n";
        let found = tasks(text);
        assert_eq!(found.len(), 2);
        assert_eq!(&text[found[0].checkbox.clone()], " ");
        assert_eq!(&text[found[1].checkbox.clone()], "é");
        assert_eq!(found[1].status, TaskStatus::Other('é'));
        assert_eq!(
            set_task_status(text, found[0].checkbox.clone(), 'x'),
            "intro\n> - [x] é task\n- [é] odd status\n"
        );
    }

    #[test]
    fn status_names_round_trip() {
        for c in [' ', 'x', '/', '-', '>', '?'] {
            let status = TaskStatus::from_char(c);
            assert_eq!(TaskStatus::from_name(&status.name()), Some(status));
        }
        assert!(TaskStatus::from_char('X').is_done());
        assert_eq!(TaskStatus::from_name("nope"), None);
    }

    /// `parse` takes the list items of its own pulldown-cmark pass when it runs one, and asks
    /// [`tasks`] otherwise: either way the same tasks.
    #[test]
    fn parse_finds_the_same_tasks_on_either_path() {
        let notes = [
            "- [ ] plain\n- [x] done\n",
            "# Coded\n\n- [ ] with `code`\n\n```\n- [ ] fenced\n```\n> 1. [/] quoted\n",
            "---\ntags: [a]\n---\ntext\n\n* [-] after frontmatter 📅 2026-12-03\n",
            "no tasks at all\n",
        ];
        for note in notes {
            let expected = tasks(note);
            assert_eq!(
                super::super::parse_with(note, true).tasks,
                expected,
                "{note:?}"
            );
            assert_eq!(
                super::super::parse_with(note, false).tasks,
                expected,
                "{note:?}"
            );
        }
        assert_eq!(tasks(notes[1]).len(), 2);
    }

    #[test]
    fn notes_without_candidates_skip_the_parse() {
        assert!(!might_have_tasks("plain text\n- list item\n[link] here\n"));
        assert!(might_have_tasks("> 1. [ ] x\n"));
    }
}
