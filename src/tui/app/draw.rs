//! Drawing the app: the panes side by side (or one maximized), the overlays and banner above them,
//! the message line and the status bar.

use super::*;

impl App {
    pub fn draw(&mut self, frame: &mut Frame) {
        let area = frame.area();
        self.render(area, frame.buffer_mut());
    }

    /// Draw the whole screen into `buf` (tests call this directly).
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let message_rows = self
            .message_rows(area.width)
            .min(area.height.saturating_sub(1) / 2);
        let [main, message, status] = Layout::vertical([
            Constraint::Min(0),
            Constraint::Length(message_rows),
            Constraint::Length(1),
        ])
        .areas(area);
        let (files_area, editor_area, chat_area) = self.pane_areas(main);
        if files_area.is_empty() && self.focus == Pane::Files {
            // The pane went away (a narrower window): the keyboard goes where typing happens.
            self.focus = self.text_pane();
        }
        self.files_area = files_area;
        self.editor_area = editor_area;
        self.chat_area = chat_area;
        self.input_area = Rect::default();
        if !files_area.is_empty() {
            self.files
                .render(files_area, buf, &self.theme, self.focus == Pane::Files);
        }
        if editor_area.width > 0 && editor_area.height > 0 {
            if self.editor.path().is_some() {
                self.editor
                    .render(editor_area, buf, &self.theme, self.focus == Pane::Editor);
            } else {
                self.render_no_note(editor_area, buf);
            }
        }
        if chat_area.width > 0 && chat_area.height > 0 {
            self.render_chat(chat_area, buf);
        }
        self.render_completion(main, buf);
        self.render_argument_hint(buf);
        self.render_status(status, buf, message_rows == 0);
        if message_rows > 0 {
            self.render_message(message, buf);
        }
        if let Some(overlay) = self.overlay.as_mut() {
            match overlay {
                Overlay::Picker(picker) => picker.render(main, buf, &self.theme),
                Overlay::Templates(templates) => templates.picker.render(main, buf, &self.theme),
                Overlay::Sessions(_)
                | Overlay::Usage(_)
                | Overlay::Help(_)
                | Overlay::Rewind(_)
                | Overlay::Tools(_)
                | Overlay::Tasks(_)
                | Overlay::Backlinks(_)
                | Overlay::Models(_) => {
                    if let Some(view) = overlay.view() {
                        view.render(main, buf, &self.theme);
                    }
                }
            }
        }
        if let Some(prompt) = &self.prompt {
            prompt.render(main, buf, &self.theme, &self.keymap);
        }
        if let Some(question) = &self.trust_prompt {
            question.render(main, buf, &self.theme, &self.keymap);
        }
        if let Some(offer) = &self.recovery_prompt {
            offer.render(main, buf, &self.theme, &self.keymap);
        }
        if self.banner.is_active() {
            self.banner.render(main, buf, &self.theme, &self.keymap);
        }
    }

    /// Whether the file pane is on screen at this width (before it is checked for room).
    pub(super) fn files_wanted(&self, width: u16) -> bool {
        match self.files_shown {
            Some(shown) => shown,
            // The start screen shows the vault instead of an empty editor area.
            None => self.editor.path().is_none() || width >= FILES_AUTO_WIDTH,
        }
    }

    /// File pane, editor and chat areas: the file pane on the left when shown, the editor and
    /// the chat side by side (stacked on narrow terminals), or one pane maximised.
    pub(super) fn pane_areas(&self, main: Rect) -> (Rect, Rect, Rect) {
        let none = Rect::default();
        match self.maximized {
            Some(Pane::Editor) => return (none, main, none),
            Some(Pane::Chat) => return (none, none, main),
            Some(Pane::Files) => return (main, none, none),
            None => {}
        }
        let mut rest = main;
        let mut files = none;
        // The pane needs as much room again beside it; narrower screens leave it out.
        if self.files_wanted(main.width) && main.width >= FILES_WIDTH * 2 {
            let [left, right] =
                Layout::horizontal([Constraint::Length(FILES_WIDTH), Constraint::Min(0)])
                    .areas(main);
            files = left;
            rest = right;
        }
        // Without a note the chat takes the rest (Ctrl+P or the file pane bring the editor).
        if self.editor.path().is_none() {
            return (files, none, rest);
        }
        let direction = if main.width < STACK_BELOW_WIDTH {
            Direction::Vertical
        } else {
            Direction::Horizontal
        };
        let [a, b] = Layout::default()
            .direction(direction)
            .constraints([
                Constraint::Percentage(self.split),
                Constraint::Percentage(100 - self.split),
            ])
            .areas(rest);
        (files, a, b)
    }

    /// The `[[` list: under the cursor in the editor, above the message box in the chat.
    pub(super) fn render_completion(&mut self, main: Rect, buf: &mut Buffer) {
        let Some(completion) = self.completion.as_mut() else {
            return;
        };
        let typed = crate::tui::width::str_width(completion.query()) as u16 + 2;
        match (completion.target, self.focus) {
            (Target::Editor, Pane::Editor) => {
                if let Some((x, y)) = self.editor.cursor_position() {
                    completion.render(main, x.saturating_sub(typed), y + 1, y, buf, &self.theme);
                }
            }
            (Target::Chat, Pane::Chat) if !self.input_area.is_empty() => {
                let input = self.input_area;
                // Inside the transcript, just above its bottom border.
                let above = input.y.saturating_sub(1);
                completion.render(main, input.x + 2, main.bottom(), above, buf, &self.theme);
            }
            _ => self.completion = None,
        }
    }

    pub(super) fn pane_block(&self, title: String, focused: bool) -> Block<'static> {
        let (border, title_role) = Theme::pane_roles(focused);
        Block::default()
            .borders(Borders::ALL)
            .border_style(self.theme.style(border))
            .title(Span::styled(title, self.theme.style(title_role)))
    }

    pub(super) fn render_no_note(&self, area: Rect, buf: &mut Buffer) {
        let focused = self.focus == Pane::Editor;
        let block = self.pane_block(" No note open ".into(), focused);
        let inner = block.inner(area);
        block.render(area, buf);
        let keys = self
            .keymap
            .keys_for(KeyContext::Global, Action::OpenPicker)
            .join(", ");
        let lines = vec![
            Line::default(),
            Line::from(Span::styled(
                format!("{keys} opens a note"),
                self.theme.style(Role::Dim),
            ))
            .centered(),
        ];
        Paragraph::new(lines).render(inner, buf);
    }

    pub(super) fn render_chat(&mut self, area: Rect, buf: &mut Buffer) {
        let focused = self.focus == Pane::Chat;
        let input_height = self.input.height(area.width).min(area.height / 2).max(3);
        let [transcript_area, input_area] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(input_height)]).areas(area);
        self.input_area = input_area;
        self.transcript
            .render(transcript_area, buf, &self.theme, focused);
        let placeholder = match self.state {
            AgentState::Starting => "Indexing the vault…",
            AgentState::Idle if !self.input.images().is_empty() => {
                "Ask about the image (Enter sends)"
            }
            AgentState::Idle => "Ask about your notes (Enter sends, /help for commands)",
            _ => "The agent is working — Esc interrupts",
        };
        self.input
            .render(input_area, buf, &self.theme, focused, placeholder);
    }

    /// The status bar's left part without the message: the agent's badge, the vault, the note.
    pub(super) fn status_facts(&self) -> (Span<'static>, Vec<Span<'static>>) {
        let theme = &self.theme;
        let (badge, badge_role) = match &self.state {
            AgentState::Starting => (" indexing ".to_string(), Role::StatusWarning),
            AgentState::Idle => (" ready ".to_string(), Role::StatusKey),
            AgentState::Thinking => (" thinking ".to_string(), Role::StatusWarning),
            AgentState::Streaming => (" writing ".to_string(), Role::StatusWarning),
            AgentState::Tool(name) => (format!(" {name} "), Role::StatusWarning),
            AgentState::WaitingForYou => (" your answer ".to_string(), Role::StatusWarning),
        };
        let mut spans = Vec::new();
        // First, so a narrow status bar cuts the vault's name rather than what is on its way.
        if let Some(waiting) = self.waiting_for() {
            spans.push(Span::styled(
                format!(" {waiting} │"),
                theme.style(Role::StatusAccent),
            ));
        }
        spans.push(Span::styled(
            format!(" {} ", self.info.vault),
            theme.style(Role::StatusBar),
        ));
        if self.info.local_only {
            spans.push(Span::styled(
                "│ local only ",
                theme.style(Role::StatusAccent),
            ));
        }
        if let Some(path) = self.editor.path() {
            let dirty = if self.editor.is_dirty() { " ●" } else { "" };
            spans.push(Span::styled(
                format!("│ {path}{dirty} "),
                theme.style(if self.editor.is_dirty() {
                    Role::StatusWarning
                } else {
                    Role::StatusBar
                }),
            ));
        }
        (Span::styled(badge, theme.style(badge_role)), spans)
    }

    /// The message's span in the status bar.
    pub(super) fn message_span(&self) -> Option<Span<'static>> {
        let (text, role) = self.flash.as_ref()?;
        let role = match role {
            Role::Error | Role::StatusWarning => Role::StatusWarning,
            _ => Role::StatusAccent,
        };
        Some(Span::styled(format!("│ {text} "), self.theme.style(role)))
    }

    /// Rows of a message line above the status bar: none when the message fits in the status
    /// bar itself (beside the badge, if need be alone with it), else enough to show it whole.
    pub(super) fn message_rows(&self, width: u16) -> u16 {
        let Some(message) = self.message_span() else {
            return 0;
        };
        let (badge, _) = self.status_facts();
        if badge.width() + message.width() <= usize::from(width) {
            return 0;
        }
        let text = self.flash.as_ref().map(|(t, _)| t.as_str()).unwrap_or("");
        // One column of margin each side, words wrapped.
        crate::tui::saving::wrapped_rows(text, usize::from(width.saturating_sub(2)))
    }

    /// A message too long for the status bar, whole, on the rows above it.
    pub(super) fn render_message(&self, area: Rect, buf: &mut Buffer) {
        let Some((text, role)) = &self.flash else {
            return;
        };
        let role = match role {
            Role::Error | Role::StatusWarning => Role::StatusWarning,
            _ => Role::StatusAccent,
        };
        Clear.render(area, buf);
        buf.set_style(area, self.theme.style(Role::StatusBar));
        Paragraph::new(Span::styled(text.clone(), self.theme.style(role)))
            .block(Block::default().padding(ratatui::widgets::Padding::horizontal(1)))
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(area, buf);
    }

    /// The status bar. `with_message`: the message goes in it (it fits); the facts on the right
    /// and then the vault and note make room for it, so a message is never cut.
    pub(super) fn render_status(&self, area: Rect, buf: &mut Buffer, with_message: bool) {
        let theme = &self.theme;
        Clear.render(area, buf);
        buf.set_style(area, theme.style(Role::StatusBar));
        let (badge, facts) = self.status_facts();
        let message = self.message_span().filter(|_| with_message);
        let room = usize::from(area.width);
        let facts_width: usize = facts.iter().map(Span::width).sum();
        let message_width = message.as_ref().map_or(0, Span::width);
        let mut spans = vec![badge.clone()];
        // The vault and note stay unless the message needs their room.
        if badge.width() + facts_width + message_width <= room {
            spans.extend(facts);
        }
        let message_shown = message.is_some();
        spans.extend(message);
        let left = Line::from(spans);
        let tokens = self.usage.input_tokens
            + self.usage.output_tokens
            + self.usage.cache_read_input_tokens
            + self.usage.cache_creation_input_tokens;
        let context = (self.last_context_tokens * 100)
            .checked_div(self.info.context_window)
            .unwrap_or(0)
            .min(999);
        // `~`: the figure holds estimates (the server reported no usage).
        let mark = |estimated: bool| if estimated { "~" } else { "" };
        let mut right = format!(
            "{} · {}{} tok · ctx {}{}%",
            self.info.model,
            mark(self.usage.estimated),
            crate::tui::views::compact(tokens),
            mark(self.last_context_estimated),
            context
        );
        if let Some(cost) = self.cost() {
            right.push_str(&format!(" · ${cost:.2}"));
        }
        if self.banner.queued() > 0 {
            right.push_str(&format!(" · {} waiting", self.banner.queued() + 1));
        }
        right.push(' ');
        let right_width = right.chars().count() as u16;
        // The facts on the right stay whole and the left part is cut to what is left of the row,
        // unless a message needs the row: then the right part goes.
        let right_fits =
            usize::from(area.width) > left.width() + usize::from(right_width) || !message_shown;
        let left_width = if right_fits && area.width > right_width + 20 {
            let r = Rect::new(area.x + area.width - right_width, area.y, right_width, 1);
            Paragraph::new(Span::styled(right, theme.style(Role::StatusAccent))).render(r, buf);
            area.width - right_width - 1
        } else {
            area.width
        };
        Paragraph::new(left).render(Rect::new(area.x, area.y, left_width, 1), buf);
    }

    /// The session's estimated cost, when the model has a price.
    pub(super) fn cost(&self) -> Option<f64> {
        let u = &self.usage;
        Some(self.info.price?.cost(
            u.input_tokens,
            u.output_tokens,
            u.cache_read_input_tokens,
            u.cache_creation_input_tokens,
        ))
    }
}
