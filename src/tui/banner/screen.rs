//! Drawing the banner: the modal box with its body, buttons and hints, and the full-screen side-by-
//! side view.

use super::*;
use crate::tui::width::TERMINAL;

// ---------------------------------------------------------------------------------------------
// Drawing

/// What every drawing step needs.
pub(super) struct Screen<'a> {
    pub(super) buf: &'a mut Buffer,
    pub(super) theme: &'a Theme,
    pub(super) keymap: &'a Keymap,
    pub(super) queued: usize,
}

/// The rows of the modal's content, top to bottom; rows that do not fit are `None`.
struct ModalRows {
    reason: Option<Rect>,
    target: Option<Rect>,
    body: Rect,
    choices: Option<Rect>,
    hints: Option<Rect>,
}

impl ModalRows {
    /// Rows of a modal whose body has `body_lines` lines (borders included).
    fn wanted_height(body_lines: usize) -> usize {
        body_lines + 6 + 2
    }

    /// The rows in `area`, giving up (in this order) spacers, the reason, the hints, the
    /// target, when there is not room for everything; the choices row goes last.
    fn split(area: Rect) -> ModalRows {
        let h = area.height;
        let row = |y: u16| Rect::new(area.x, y, area.width, 1);
        let has_reason = h >= 4;
        let has_hints = h >= 3;
        let has_target = h >= 2;
        let has_choices = h >= 1;
        let spacers = h >= 9;
        let mut y = area.y;
        let reason = has_reason.then(|| {
            y += 1;
            row(y - 1)
        });
        let target = has_target.then(|| {
            y += 1;
            row(y - 1)
        });
        if spacers {
            y += 1;
        }
        let bottom_rows = u16::from(has_choices) + u16::from(has_hints);
        let bottom = area.bottom().saturating_sub(bottom_rows);
        let body_end = bottom.saturating_sub(u16::from(spacers)).max(y);
        let body = Rect::new(area.x, y, area.width, body_end - y);
        ModalRows {
            reason,
            target,
            body,
            choices: has_choices.then(|| row(bottom)),
            hints: has_hints.then(|| row(bottom + 1)),
        }
    }
}

/// Where the modal box goes: centred, about 80% wide and up to 70% high, as tall as its content
/// needs; on a small screen the full width and up to the full height.
fn modal_rect(area: Rect, wanted_height: usize) -> Rect {
    let small = area.width < MODAL_FROM_WIDTH || area.height < MODAL_FROM_HEIGHT;
    let width = modal_width(area);
    let max_height = if small {
        area.height
    } else {
        (u32::from(area.height) * 7 / 10) as u16
    };
    let height = u16::try_from(wanted_height)
        .unwrap_or(u16::MAX)
        .clamp(MIN_BOX_HEIGHT.min(max_height), max_height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

/// The modal box's width: about 80% of the screen, all of a small one.
fn modal_width(area: Rect) -> u16 {
    if area.width < MODAL_FROM_WIDTH || area.height < MODAL_FROM_HEIGHT {
        area.width
    } else {
        (u32::from(area.width) * 4 / 5) as u16
    }
}

/// The inside of a box: without its borders, and with a column of padding on each side when
/// there is room for it.
fn content_rect(inner: Rect) -> Rect {
    if inner.width >= 12 {
        Rect::new(inner.x + 1, inner.y, inner.width - 2, inner.height)
    } else {
        inner
    }
}

/// How a choice button is written, from roomy to narrow.
#[derive(Debug, Clone, Copy)]
enum ButtonForm {
    /// ` [y] once ` (the padding makes the focused button a block).
    Padded,
    /// `[y] once`
    Plain,
    /// `y once`
    Tight,
    /// `[y]`
    KeyOnly,
}

impl ButtonForm {
    /// Spaces between two buttons: two where the buttons have no brackets or padding of
    /// their own to keep them apart.
    fn gap(self) -> usize {
        match self {
            ButtonForm::Padded | ButtonForm::Tight => 2,
            ButtonForm::Plain | ButtonForm::KeyOnly => 1,
        }
    }

    fn text(self, key: Option<&str>, label: &str) -> String {
        match (self, key) {
            (ButtonForm::Padded, Some(key)) => format!(" [{key}] {label} "),
            (ButtonForm::Padded, None) => format!(" {label} "),
            (ButtonForm::Plain, Some(key)) => format!("[{key}] {label}"),
            (ButtonForm::Plain | ButtonForm::Tight, None) => label.to_string(),
            (ButtonForm::Tight, Some(key)) => format!("{key} {label}"),
            (ButtonForm::KeyOnly, Some(key)) => format!("[{key}]"),
            (ButtonForm::KeyOnly, None) => label.chars().take(2).collect(),
        }
    }
}

/// The first key bound to `action` in the banner, for hints (`y`, `space`, `pgdn`).
fn key_label(keymap: &Keymap, action: Action) -> Option<String> {
    keymap
        .keys_for(KeyContext::Banner, action)
        .into_iter()
        .next()
        .map(|key| short_key(&key))
}

/// Key names as hints show them: the short forms people know from keyboards.
fn short_key(key: &str) -> String {
    match key {
        "pageup" => "pgup".to_string(),
        "pagedown" => "pgdn".to_string(),
        other => other.to_string(),
    }
}

/// The key that closes or goes back: the first named key bound to deny (`esc`), else the first.
fn back_key_label(keymap: &Keymap) -> String {
    let keys = keymap.keys_for(KeyContext::Banner, Action::Deny);
    keys.iter()
        .find(|k| k.chars().count() > 1)
        .or(keys.first())
        .cloned()
        .unwrap_or_else(|| "esc".to_string())
}

impl Screen<'_> {
    fn style(&self, role: Role) -> Style {
        self.theme.style(role)
    }

    /// Dims what is behind a box, so the box reads as on top.
    fn dim_behind(&mut self, area: Rect) {
        self.buf
            .set_style(area, Style::new().add_modifier(Modifier::DIM));
    }

    /// A rounded box titled `title`, with `right` drawn at the right end of its bottom border.
    /// Returns the inside.
    fn frame(&mut self, rect: Rect, title: Vec<Span<'static>>, right: Vec<Span<'static>>) -> Rect {
        Clear.render(rect, self.buf);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(self.style(Role::BannerBorder));
        let inner = block.inner(rect);
        block.render(rect, self.buf);
        if rect.width > 4 && rect.height > 0 {
            let width = usize::from(rect.width - 4);
            self.buf
                .set_line(rect.x + 2, rect.y, &fit_spans(title, width), rect.width - 4);
        }
        if rect.height > 1 {
            self.bottom_right(rect, right);
        }
        inner
    }

    /// Text at the right end of a box's bottom border.
    fn bottom_right(&mut self, rect: Rect, spans: Vec<Span<'static>>) {
        let width: usize = spans.iter().map(Span::width).sum();
        let room = usize::from(rect.width.saturating_sub(4));
        if width == 0 || width > room {
            return;
        }
        let x = rect.right() - 2 - width as u16;
        self.buf
            .set_line(x, rect.bottom() - 1, &Line::from(spans), width as u16);
    }

    fn queue_label(&self) -> Vec<Span<'static>> {
        if self.queued == 0 {
            return Vec::new();
        }
        vec![Span::styled(
            format!(" {} more waiting ", self.queued),
            self.style(Role::Notice),
        )]
    }

    fn line(&mut self, row: Rect, spans: Vec<Span<'static>>) {
        let line = fit_spans(spans, usize::from(row.width));
        self.buf.set_line(row.x, row.y, &line, row.width);
    }

    // -- the modal ----------------------------------------------------------------------------

    pub(super) fn modal(
        mut self,
        area: Rect,
        request: &PermissionRequest,
        shown: &mut Shown,
        (body_height, body_width): (&mut usize, &mut u16),
    ) {
        // The box is as tall as the diff laid out at the box's width needs (up to its limit).
        let width = modal_width(area);
        let text_width = content_rect(Rect::new(0, 0, width.saturating_sub(2), 1)).width;
        let body_lines = body_row_count(request, &mut shown.layouts, text_width);
        let rect = modal_rect(area, ModalRows::wanted_height(body_lines));
        if rect != area {
            self.dim_behind(area);
        }
        let title = vec![Span::styled(
            format!(" Allow {}? ", printable(&request.tool)),
            self.style(Role::BannerTitle),
        )];
        let inner = self.frame(rect, title, Vec::new());
        let content = content_rect(inner);
        if content.is_empty() {
            return;
        }
        let rows = ModalRows::split(content);
        if let Some(row) = rows.reason {
            let reason = vec![Span::styled(
                printable(&request.reason),
                self.style(Role::Text),
            )];
            self.line(row, reason);
        }
        if let Some(row) = rows.target {
            let target = self.target_spans(request, shown, usize::from(row.width));
            self.line(row, target);
        }
        *body_height = usize::from(rows.body.height).max(1);
        let shown_rows = self.body(rows.body, request, shown, body_width);
        // Which part of a body taller than the box is shown, and the queue, on the bottom border.
        let mut right = Vec::new();
        if let Some((first, last, total)) = shown_rows {
            right.push(Span::styled(
                format!(" rows {first}–{last} of {total} "),
                self.style(Role::Dim),
            ));
        }
        right.extend(self.queue_label());
        if rect.height > 1 {
            self.bottom_right(rect, right);
        }
        match &shown.mode {
            Mode::Reason(text) => {
                if let Some(row) = rows.choices {
                    let full =
                        "Reason for the model (optional), Enter to send, Esc to deny without one:";
                    let short = "Reason (optional) · Enter: send · Esc: deny without";
                    let label = if display_width(full) <= usize::from(row.width) {
                        full
                    } else {
                        short
                    };
                    self.line(row, vec![Span::styled(label, self.style(Role::Text))]);
                }
                if let Some(row) = rows.hints {
                    self.reason_input(row, text);
                }
            }
            Mode::Scope => {
                if let Some(row) = rows.choices {
                    self.scope_prompt(row, rows.hints, request);
                }
            }
            Mode::Choosing | Mode::SideBySide => {
                if let Some(row) = rows.choices {
                    self.choice_buttons(row, request, shown.focus);
                }
                if let Some(row) = rows.hints {
                    self.hints(row, request, shown_rows.is_some());
                }
            }
        }
    }

    /// `update Projects/Plan.md  +3 -1  · hunk 2 of 5`, or the paths of a call without a diff.
    fn target_spans(
        &self,
        request: &PermissionRequest,
        shown: &Shown,
        width: usize,
    ) -> Vec<Span<'static>> {
        let strong = self.style(Role::Text).add_modifier(Modifier::BOLD);
        let Some(proposal) = &request.proposal else {
            return match request.paths.as_slice() {
                [] => vec![Span::styled(
                    format!("{} wants to run with this input:", printable(&request.tool)),
                    self.style(Role::Dim),
                )],
                paths => {
                    let joined = paths
                        .iter()
                        .map(|p| printable(p))
                        .collect::<Vec<_>>()
                        .join(", ");
                    vec![
                        Span::styled("on ", self.style(Role::Dim)),
                        Span::styled(
                            TERMINAL.truncate_start(&joined, width.saturating_sub(3)),
                            strong,
                        ),
                    ]
                }
            };
        };
        let diff = &proposal.diff;
        if let Some(moved) = proposal.files.first().filter(|f| f.path != f.path_after) {
            return self.move_spans(moved, proposal, shown, width);
        }
        let path = printable(&proposal.path);
        let summary = printable(&proposal.summary);
        // "update Projects/Plan.md": the verb plain, the path bold.
        let verb = summary
            .strip_suffix(path.as_str())
            .filter(|v| !v.trim().is_empty())
            .map(str::to_string);
        let mut tail = vec![
            Span::raw("  "),
            Span::styled(format!("+{}", diff.added), self.style(Role::DiffAdded)),
            Span::raw(" "),
            Span::styled(format!("-{}", diff.removed), self.style(Role::DiffRemoved)),
        ];
        let hunks = diff.hunks.len();
        let position = match hunks {
            0 => String::new(),
            1 => "  · 1 hunk".to_string(),
            n => format!("  · hunk {} of {n}", shown.current_hunk + 1),
        };
        if !position.is_empty() {
            tail.push(Span::styled(position, self.style(Role::Dim)));
        }
        let mut spans = Vec::new();
        let mut used: usize = tail.iter().map(Span::width).sum();
        if let Some(verb) = verb {
            used += display_width(&verb);
            spans.push(Span::styled(verb, self.style(Role::Text)));
        }
        spans.push(Span::styled(
            TERMINAL.truncate_start(&path, width.saturating_sub(used).max(8)),
            strong,
        ));
        spans.extend(tail);
        spans
    }

    /// `move Old.md → New/Name.md  +12 -12 · 14 files`: the path change on top of a move's
    /// diff, both paths shortened from the start to fit.
    fn move_spans(
        &self,
        moved: &crate::agent::ProposalFile,
        proposal: &crate::agent::Proposal,
        shown: &Shown,
        width: usize,
    ) -> Vec<Span<'static>> {
        let strong = self.style(Role::Text).add_modifier(Modifier::BOLD);
        let diff = &proposal.diff;
        let mut tail = vec![
            Span::raw("  "),
            Span::styled(format!("+{}", diff.added), self.style(Role::DiffAdded)),
            Span::raw(" "),
            Span::styled(format!("-{}", diff.removed), self.style(Role::DiffRemoved)),
        ];
        let files = proposal.files.len();
        let position = if diff.hunks.is_empty() {
            format!("  · {files} file{}", if files == 1 { "" } else { "s" })
        } else {
            format!(
                "  · hunk {} of {} · {files} files",
                shown.current_hunk + 1,
                diff.hunks.len()
            )
        };
        tail.push(Span::styled(position, self.style(Role::Dim)));
        let used = tail.iter().map(Span::width).sum::<usize>() + display_width("move ") + 3;
        let room = width.saturating_sub(used).max(16);
        let (from, to) = (printable(&moved.path), printable(&moved.path_after));
        let to_room = room.saturating_sub(display_width(&from).min(room / 2));
        let to = TERMINAL.truncate_start(&to, to_room.max(8));
        let from = TERMINAL.truncate_start(&from, room.saturating_sub(display_width(&to)).max(8));
        let mut spans = vec![
            Span::styled("move ", self.style(Role::Text)),
            Span::styled(from, strong),
            Span::styled(" → ", self.style(Role::Text)),
            Span::styled(to, strong),
        ];
        spans.extend(tail);
        spans
    }

    /// The hunk list (or the tool input) with a scroll bar when it overflows. Returns, when
    /// it overflows, the first and last rows shown (1-based) and how many there are.
    fn body(
        &mut self,
        area: Rect,
        request: &PermissionRequest,
        shown: &mut Shown,
        body_width: &mut u16,
    ) -> Option<(usize, usize, usize)> {
        if area.is_empty() {
            return None;
        }
        let height = usize::from(area.height);
        let overflow = body_row_count(request, &mut shown.layouts, area.width) > height;
        // A scroll bar, and a column between it and the text.
        let text_width = if overflow && area.width > 2 {
            area.width - 2
        } else {
            area.width
        };
        if *body_width != text_width {
            // Rows are of the old width: show the current hunk from its header.
            shown.reveal = true;
            *body_width = text_width;
        }
        let text_area = Rect::new(area.x, area.y, text_width, area.height);
        let total = match diff_of(request) {
            Some(diff) if !diff.hunks.is_empty() => {
                let layout = shown.layouts.inline(diff, text_width);
                let total = layout.len();
                shown.current_hunk = shown.current_hunk.min(diff.hunks.len() - 1);
                let hunk = layout.hunk_rows(shown.current_hunk);
                let hidden = hunk.end <= shown.scroll || hunk.start >= shown.scroll + height;
                if shown.reveal || hidden {
                    // The header goes to the top, so what follows the marker is the hunk that
                    // space toggles (clamped to the last page below).
                    shown.scroll = hunk.start;
                    shown.reveal = false;
                }
                shown.scroll = shown.scroll.min(total.saturating_sub(height));
                draw_rows(
                    &layout,
                    text_area,
                    self.buf,
                    diff,
                    self.theme,
                    shown.scroll,
                    Some(shown.current_hunk),
                    &shown.accepted,
                );
                total
            }
            Some(_) => {
                let line = Line::from(Span::styled("No line changes.", self.style(Role::Dim)));
                self.buf.set_line(area.x, area.y, &line, text_width);
                1
            }
            None => {
                let lines = shown.layouts.input(request, text_width);
                let total = lines.len();
                shown.scroll = shown.scroll.min(total.saturating_sub(height));
                let style = self.style(Role::Text);
                for (offset, line) in lines.iter().skip(shown.scroll).take(height).enumerate() {
                    let line =
                        Line::from(Span::styled(truncate(line, usize::from(text_width)), style));
                    self.buf
                        .set_line(area.x, area.y + offset as u16, &line, text_width);
                }
                total
            }
        };
        if !overflow {
            return None;
        }
        if area.width > 1 {
            let bar = Rect::new(area.right() - 1, area.y, 1, area.height);
            scrollbar(bar, self.buf, self.theme, total, shown.scroll);
        }
        Some((shown.scroll + 1, (shown.scroll + height).min(total), total))
    }

    /// `[y] once  [s] session  [a] always  [n] deny`, the focused one highlighted; shorter
    /// forms when the row is narrow.
    fn choice_buttons(&mut self, row: Rect, request: &PermissionRequest, focus: Choice) {
        let offered = choices(request);
        let width = usize::from(row.width);
        let labelled: Vec<(Choice, Option<String>)> = offered
            .iter()
            .map(|&c| (c, key_label(self.keymap, c.action())))
            .collect();
        let forms = [
            ButtonForm::Padded,
            ButtonForm::Plain,
            ButtonForm::Tight,
            ButtonForm::KeyOnly,
        ];
        for (index, form) in forms.iter().enumerate() {
            let texts: Vec<String> = labelled
                .iter()
                .map(|(c, key)| form.text(key.as_deref(), c.label()))
                .collect();
            let gap = form.gap();
            let total: usize = texts.iter().map(|t| display_width(t)).sum::<usize>()
                + gap * texts.len().saturating_sub(1);
            if total <= width || index == forms.len() - 1 {
                let mut spans = Vec::new();
                for ((choice, _), text) in labelled.iter().zip(texts) {
                    let role = if *choice == focus {
                        Role::ButtonFocused
                    } else {
                        Role::Button
                    };
                    spans.push(Span::styled(text, self.style(role)));
                    spans.push(Span::raw(" ".repeat(gap)));
                }
                spans.pop();
                self.line(row, spans);
                return;
            }
        }
    }

    /// Key hints for the choosing mode; items that do not fit are left off from the end.
    fn hints(&mut self, row: Rect, request: &PermissionRequest, overflow: bool) {
        let hunks = hunk_count(request);
        let key = |action| key_label(self.keymap, action);
        let mut items: Vec<(String, &str)> = Vec::new();
        if hunks > 1
            && let (Some(next), Some(prev)) = (key(Action::NextHunk), key(Action::PrevHunk))
        {
            items.push((format!("{next}/{prev}"), "hunk"));
        }
        if hunks > 0 {
            if let Some(k) = key(Action::ToggleHunk) {
                items.push((k, "toggle hunk"));
            }
            if request.proposal.as_ref().is_some_and(|p| p.files.len() > 1)
                && let Some(k) = key(Action::ToggleFile)
            {
                items.push((k, "toggle file"));
            }
            if let Some(k) = key(Action::SideBySide) {
                items.push((k, "side by side"));
            }
        }
        if overflow {
            // With one hunk, j/k only scroll: say so; with several they are named above.
            if hunks <= 1
                && let (Some(next), Some(prev)) = (key(Action::NextHunk), key(Action::PrevHunk))
            {
                items.push((format!("{next}/{prev}"), "scroll"));
            }
            if let (Some(up), Some(down)) = (key(Action::PageUp), key(Action::PageDown)) {
                let what = if hunks <= 1 { "page" } else { "scroll" };
                items.push((format!("{up}/{down}"), what));
            }
        }
        items.push(("←/→".to_string(), "choose"));
        items.push(("enter".to_string(), "confirm"));
        self.hint_items(row, items);
    }

    fn hint_items(&mut self, row: Rect, items: Vec<(String, &str)>) {
        let spans = self.hint_spans(items, usize::from(row.width));
        self.line(row, spans);
    }

    /// `[key] what` items in at most `width` columns; items that do not fit are left off.
    fn hint_spans(&self, items: Vec<(String, &str)>, width: usize) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        let mut used = 0;
        for (key, label) in items {
            let key = format!("[{key}]");
            let sep = if spans.is_empty() { 0 } else { 2 };
            let item_width = sep + display_width(&key) + 1 + display_width(label);
            if used + item_width > width {
                break;
            }
            if sep > 0 {
                spans.push(Span::raw("  "));
            }
            spans.push(Span::styled(key, self.style(Role::Text)));
            spans.push(Span::styled(format!(" {label}"), self.style(Role::Dim)));
            used += item_width;
        }
        spans
    }

    /// `Always allow: [t] this tool everywhere  [p] this tool on <path>  [esc] back` on one
    /// row when it fits; otherwise the way back moves to the second row, and on a narrow screen
    /// the choices get shorter.
    fn scope_prompt(&mut self, row: Rect, hints: Option<Rect>, request: &PermissionRequest) {
        let path = request
            .paths
            .first()
            .map(|p| printable(p))
            .unwrap_or_default();
        let back = format!("[{}] back", back_key_label(self.keymap));
        let width = usize::from(row.width);
        let full = |path: &str| {
            (
                "Always allow: ",
                "[t] this tool everywhere".to_string(),
                format!("[p] this tool on {path}"),
            )
        };
        let short = |path: &str| {
            (
                "Always: ",
                "[t] everywhere".to_string(),
                format!("[p] on {path}"),
            )
        };
        let row_width = |(lead, everywhere, on_path): &(&str, String, String)| {
            display_width(lead) + display_width(everywhere) + 2 + display_width(on_path)
        };
        let mut parts = full(&path);
        if row_width(&parts) > width {
            // Short forms, with the path cut from the start to what is left.
            let room = width.saturating_sub(row_width(&short("")));
            parts = short(&TERMINAL.truncate_start(&path, room.max(8)));
        }
        let together = row_width(&parts) + 2 + display_width(&back) <= width || hints.is_none();
        let (lead, everywhere, on_path) = parts;
        let mut spans = vec![
            Span::styled(lead, self.style(Role::Text)),
            Span::styled(everywhere, self.style(Role::Button)),
            Span::raw("  "),
            Span::styled(on_path, self.style(Role::Button)),
        ];
        let note = "An always rule is kept for this vault, in later sessions too.";
        let mut second = Vec::new();
        if together {
            spans.push(Span::raw("  "));
            spans.push(Span::styled(back, self.style(Role::Dim)));
        } else {
            second.push(Span::styled(back, self.style(Role::Dim)));
            second.push(Span::raw("  "));
        }
        second.push(Span::styled(note, self.style(Role::Dim)));
        self.line(row, spans);
        if let Some(hints) = hints {
            self.line(hints, second);
        }
    }

    /// The reason being typed, its end visible, with a block cursor.
    fn reason_input(&mut self, row: Rect, text: &str) {
        let input = self.style(Role::Input);
        let prompt = "› ";
        let room = usize::from(row.width).saturating_sub(display_width(prompt) + 1);
        let shown = TERMINAL.truncate_start(&printable(text), room);
        let spans = vec![
            Span::styled(prompt, self.style(Role::Dim)),
            Span::styled(shown, input),
            Span::styled(" ", input.add_modifier(Modifier::REVERSED)),
        ];
        self.line(row, spans);
    }

    // -- side by side -------------------------------------------------------------------------

    pub(super) fn side(
        mut self,
        area: Rect,
        request: &PermissionRequest,
        shown: &mut Shown,
        (side_height, side_width): (&mut usize, &mut u16),
    ) {
        let Some(proposal) = &request.proposal else {
            return;
        };
        let diff = &proposal.diff;
        let title = vec![
            Span::styled(
                format!(" Allow {}? ", printable(&request.tool)),
                self.style(Role::BannerTitle),
            ),
            Span::styled("· ", self.style(Role::Dim)),
            Span::styled(
                format!("{}  ", printable(&proposal.path)),
                self.style(Role::Text).add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!("+{}", diff.added), self.style(Role::DiffAdded)),
            Span::raw(" "),
            Span::styled(format!("-{}", diff.removed), self.style(Role::DiffRemoved)),
            Span::styled(" · side by side ", self.style(Role::Dim)),
        ];
        // Borders and the column labels take three rows; a scroll bar takes a column when the
        // rows laid out at the full width do not fit.
        let body_rows = usize::from(area.height.saturating_sub(3));
        let full_width = area.width.saturating_sub(2);
        let overflow = shown.layouts.side(diff, full_width).len() > body_rows;
        // A scroll bar, and a column between it and the text.
        let width = if overflow && full_width > 2 {
            full_width - 2
        } else {
            full_width
        };
        let layout = shown.layouts.side(diff, width);
        let total = layout.len();
        let max = total.saturating_sub(body_rows);
        if shown.side_reveal || *side_width != width {
            shown.side_scroll = layout.hunk_rows(shown.current_hunk).start;
            shown.side_reveal = false;
        }
        shown.side_scroll = shown.side_scroll.min(max);
        let last = (shown.side_scroll + body_rows).min(total);
        let mut right = vec![Span::styled(
            format!(" rows {}–{last} of {total} ", shown.side_scroll + 1),
            self.style(Role::Dim),
        )];
        right.extend(self.queue_label());
        let right_width: usize = right.iter().map(Span::width).sum();
        let inner = self.frame(area, title, right);
        if area.height > 2 && area.width > 4 {
            self.side_hints(area, right_width);
        }
        if inner.is_empty() {
            return;
        }
        // Column labels above the two halves, where their text starts.
        let left_width = width.saturating_sub(1) / 2;
        let label = self.style(Role::Title);
        self.buf.set_stringn(
            inner.x + 1,
            inner.y,
            "before",
            usize::from(left_width.saturating_sub(1)),
            label,
        );
        if width > left_width + 2 {
            let x = inner.x + left_width;
            self.buf
                .set_string(x, inner.y, "│", self.style(Role::Border));
            self.buf.set_stringn(
                x + 2,
                inner.y,
                "after",
                usize::from(width - left_width - 2),
                label,
            );
        }
        let body = Rect::new(inner.x, inner.y + 1, width, inner.height.saturating_sub(1));
        *side_height = usize::from(body.height).max(1);
        *side_width = width;
        draw_rows(
            &layout,
            body,
            self.buf,
            diff,
            self.theme,
            shown.side_scroll,
            Some(shown.current_hunk),
            &shown.accepted,
        );
        if overflow && inner.width > 1 {
            let bar = Rect::new(inner.right() - 1, body.y, 1, body.height);
            scrollbar(bar, self.buf, self.theme, total, shown.side_scroll);
        }
    }

    /// The side-by-side view's keys, on its bottom border, left of the `right_width` columns
    /// the row counter takes.
    fn side_hints(&mut self, area: Rect, right_width: usize) {
        let key = |action| key_label(self.keymap, action);
        let mut items: Vec<(String, &str)> = Vec::new();
        let back = match key(Action::SideBySide) {
            Some(k) => format!("{k}/{}", back_key_label(self.keymap)),
            None => back_key_label(self.keymap),
        };
        items.push((back, "back"));
        if let (Some(down), Some(up)) = (key(Action::NextHunk), key(Action::PrevHunk)) {
            items.push((format!("{down}/{up}"), "scroll"));
        }
        if let (Some(up), Some(down)) = (key(Action::PageUp), key(Action::PageDown)) {
            items.push((format!("{up}/{down}"), "page"));
        }
        if let Some(k) = key(Action::ToggleHunk) {
            items.push((k, "toggle hunk"));
        }
        // Two columns of border at each end, and a gap before the counter.
        let room = usize::from(area.width)
            .saturating_sub(4 + right_width + 2)
            .saturating_sub(2);
        let mut spans = vec![Span::raw(" ")];
        spans.extend(self.hint_spans(items, room));
        spans.push(Span::raw(" "));
        if spans.len() <= 2 {
            return;
        }
        let width: usize = spans.iter().map(Span::width).sum();
        let row = Rect::new(area.x + 2, area.bottom() - 1, width as u16, 1);
        self.line(row, spans);
    }
}
