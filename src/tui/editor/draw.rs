//! Drawing the editor pane: its border and title, the conflict banner, the text with the gutter and
//! the cursor, the scrollbar.

use super::*;

impl EditorPane {
    pub(super) fn block(&self, area: Rect, theme: &Theme, focused: bool) -> Block<'static> {
        let (border, title) = Theme::pane_roles(focused);
        let room = usize::from(area.width).saturating_sub(8);
        let mut title_spans = vec![Span::styled(" ", theme.style(title))];
        match &self.path {
            Some(path) => {
                title_spans.push(Span::styled(
                    EDITOR.truncate_start(path, room),
                    theme.style(title),
                ));
                if self.is_dirty() {
                    title_spans.push(Span::styled(" ●", theme.style(Role::Notice)));
                }
            }
            None => title_spans.push(Span::styled(
                EDITOR.truncate_end("Editor", room),
                theme.style(title),
            )),
        }
        title_spans.push(Span::styled(" ", theme.style(title)));
        let mut block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(border))
            .title(Line::from(title_spans));
        if self.path.is_some() && area.width >= 24 {
            let (row, col) = self.cursor();
            let mut position = format!(
                " Ln {}/{}, Col {} ",
                row + 1,
                self.textarea.lines().len(),
                col + 1
            );
            if let Some(selection) = self.selection_chars() {
                position = format!(" {} selected ·{position}", selection.len());
            }
            if position.chars().count() + 4 <= usize::from(area.width) {
                block = block
                    .title_bottom(Line::styled(position, theme.style(Role::Dim)).right_aligned());
            }
        }
        block
    }

    /// The conflict banner (and the last merge error); returns the rows used.
    pub(super) fn render_conflict(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> u16 {
        let notice = theme.style(Role::Notice);
        let width = usize::from(area.width);
        buf.set_style(Rect { height: 1, ..area }, notice);
        let hints = &self.hints;
        let text = format!(
            " Changed on disk — [{}] keep mine  [{}] take theirs  [{}] merge",
            hints.keep_mine, hints.take_theirs, hints.merge
        );
        buf.set_stringn(
            area.x,
            area.y,
            EDITOR.truncate_end(&text, width),
            width,
            notice.add_modifier(Modifier::BOLD),
        );
        let mut used = 1;
        if let Some(error) = &self.merge_error
            && area.height > 2
        {
            let y = area.y + 1;
            buf.set_stringn(
                area.x,
                y,
                EDITOR.truncate_end(&format!(" {error}"), width),
                width,
                theme.style(Role::Error),
            );
            used += 1;
        }
        used.min(area.height)
    }

    pub(super) fn render_empty(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(area.width);
        let lines = [
            Line::styled("No note open", theme.style(Role::Title)),
            Line::default(),
            Line::from(vec![
                Span::styled("Press ", theme.style(Role::Dim)),
                Span::styled(
                    self.hints.open_picker.clone(),
                    theme.style(Role::Text).add_modifier(Modifier::BOLD),
                ),
                Span::styled(" to open a note", theme.style(Role::Dim)),
            ]),
        ];
        let top = area.y + area.height.saturating_sub(lines.len() as u16) / 2;
        for (i, line) in lines.iter().enumerate() {
            let y = top + i as u16;
            if y >= area.bottom() {
                break;
            }
            let line_width = line.width().min(width);
            let x = area.x + ((width - line_width) / 2) as u16;
            buf.set_line(x, y, line, area.width);
        }
    }

    pub(super) fn render_text(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
    ) {
        let (digits, gutter, text_width) = self.place_view(area);
        let lines = self.textarea.lines();
        let cursor = self.cursor();
        let selection = self
            .textarea
            .selection_range()
            .filter(|(start, end)| start != end);
        let text_style = theme.style(Role::Text);
        let mut state = editor_highlight::state_at(lines, self.view.top.0);
        let mut y = area.y;
        let mut line_index = self.view.top.0;
        let mut first_segment = self.view.top.1;
        while y < area.bottom() && line_index < lines.len() {
            let line = &lines[line_index];
            let (mut line_style, next_state) =
                editor_highlight::highlight_line(line, state, line_index == 0);
            // Only the rows drawn: a lookup or two per link on screen, whatever the note's length.
            if let (Some(targets), Some(path)) = (&self.link_targets, &self.path) {
                editor_highlight::mark_unresolved(line, &mut line_style, |target| {
                    targets.resolves(target, path)
                });
            }
            let layout = LineLayout::new(line, text_width);
            let styles = char_styles(line, &layout, &line_style, theme, text_style);
            let is_cursor_line = line_index == cursor.0;
            for (segment_index, segment) in layout.segments.iter().enumerate().skip(first_segment) {
                if y >= area.bottom() {
                    break;
                }
                let row_area = Rect::new(area.x, y, area.width, 1);
                let text_row = Rect::new(self.view.text_x, y, area.width - gutter as u16, 1);
                if line_style.line == Some(Role::MdCodeBlock) {
                    buf.set_style(text_row, theme.style(Role::MdCodeBlock));
                }
                if focused && is_cursor_line {
                    buf.set_style(row_area, theme.style(Role::CursorLine));
                }
                if gutter > 0 && segment_index == 0 {
                    let number = format!(" {:>digits$} ", line_index + 1);
                    let style = if is_cursor_line {
                        text_style.add_modifier(Modifier::BOLD)
                    } else {
                        theme.style(Role::Dim)
                    };
                    buf.set_stringn(area.x, y, number, gutter, style);
                }
                let selected = |col: usize| {
                    selection.is_some_and(|(start, end)| {
                        (line_index, col) >= start && (line_index, col) < end
                    })
                };
                let row = Rect::new(self.view.text_x, y, area.right() - self.view.text_x, 1);
                let styled = |col: usize| {
                    let style = styles[col];
                    if selected(col) {
                        style.patch(theme.style(Role::Selection))
                    } else {
                        style
                    }
                };
                let x = draw_segment(buf, row, &layout, segment.clone(), text_width, styled);
                let last_segment = segment_index + 1 == layout.segments.len();
                // A selection that runs past the end of the line shows one selected cell there,
                // so selected empty lines are visible.
                if last_segment && selected(layout.chars.len()) && x < area.right() {
                    buf.set_style(Rect::new(x, y, 1, 1), theme.style(Role::Selection));
                }
                if focused && is_cursor_line {
                    let on_this_row = cursor.1 >= segment.start
                        && (cursor.1 < segment.end || (last_segment && cursor.1 == segment.end));
                    if on_this_row {
                        let cursor_x =
                            self.view.text_x as usize + layout.x_of(segment_index, cursor.1);
                        let cursor_x = cursor_x.min(usize::from(area.right()) - 1) as u16;
                        buf.set_style(
                            Rect::new(cursor_x, y, 1, 1),
                            Style::new().add_modifier(Modifier::REVERSED),
                        );
                        self.view.cursor_screen = Some((cursor_x, y));
                    }
                }
                self.view.rows.push(ScreenRow {
                    y,
                    line: line_index,
                    chars: segment.clone(),
                });
                y += 1;
            }
            state = next_state;
            line_index += 1;
            first_segment = 0;
        }
    }

    /// Sizes the gutter and the text column for `area`, remembers them for the cursor and the
    /// mouse, and scrolls so the cursor stays in view: (digits, gutter width, text width).
    fn place_view(&mut self, area: Rect) -> (usize, usize, usize) {
        let line_count = self.textarea.lines().len();
        let digits = line_count.to_string().len().max(2);
        let gutter = if usize::from(area.width) >= digits + 2 + 8 {
            digits + 2
        } else {
            0
        };
        let room = usize::from(area.width) - gutter;
        // One column stays free on the right for the cursor after a line that fills the row.
        let text_width = if room > 2 { room - 1 } else { room.max(1) };
        self.view.text_width = text_width;
        self.view.text_height = usize::from(area.height);
        self.view.text_x = area.x + gutter as u16;
        if let Some(changed) = self.view.reveal.take() {
            self.scroll_to_lines(changed);
            self.view.follow_cursor = false;
        } else if self.view.follow_cursor {
            self.scroll_to_cursor();
        }
        self.clamp_top();
        (digits, gutter, text_width)
    }

    pub(super) fn render_scrollbar(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let total = self.textarea.lines().len();
        let Some(first) = self.view.rows.first() else {
            return;
        };
        let last = self.view.rows.last().map_or(first.line, |r| r.line);
        let shows_all = first.line == 0
            && self.view.top.1 == 0
            && last + 1 >= total
            && self.view.rows.len() < self.view.text_height;
        if shows_all || total == 0 {
            return;
        }
        let track = usize::from(area.height - 2);
        let visible = (last + 1 - first.line).max(1);
        let thumb = (track * visible / total).clamp(1, track);
        let at_end = last + 1 >= total;
        let start = if at_end {
            track - thumb
        } else {
            (track * first.line / total).min(track - thumb)
        };
        let x = area.right() - 1;
        for offset in start..start + thumb {
            let y = area.y + 1 + offset as u16;
            buf.set_stringn(x, y, "┃", 1, theme.style(Role::Scrollbar));
        }
    }
}

/// Draws one screen row of a line (the chars of `segment`) from the left of `row`: runs of equal
/// style go to the buffer in one call (it segments graphemes). Returns the column after the text.
fn draw_segment(
    buf: &mut Buffer,
    row: Rect,
    layout: &LineLayout,
    segment: Range<usize>,
    text_width: usize,
    style_of: impl Fn(usize) -> Style,
) -> u16 {
    let mut x = row.x;
    let mut run = String::new();
    let mut run_style = Style::new();
    let mut used = 0;
    for col in segment {
        let width = layout.widths[col];
        // The spare column takes a space that hangs past the wrap width.
        if used + width > text_width + 1 {
            break;
        }
        let style = style_of(col);
        if !run.is_empty() && style != run_style {
            x = buf
                .set_stringn(x, row.y, &run, usize::from(row.right() - x), run_style)
                .0;
            run.clear();
        }
        run_style = style;
        push_shown(&mut run, layout.chars[col]);
        used += width;
    }
    if !run.is_empty() {
        x = buf
            .set_stringn(x, row.y, &run, usize::from(row.right() - x), run_style)
            .0;
    }
    x
}
