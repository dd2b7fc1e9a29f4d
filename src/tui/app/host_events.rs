//! The host's answers and news, each turned into the app's state: one exhaustive match, so that
//! a new kind of event cannot go unhandled.

use super::{App, Effect};
use crate::host::{HostEvent, Request, StartUp};
use crate::protocol::NoteText;
use crate::tui::chat::Transcript;
use crate::tui::theme::Role;
use crate::tui::trust_prompt::TrustPrompt;
use crate::tui::views::models::ModelsView;
use crate::tui::views::rewind::RewindView;
use crate::tui::views::tools::ToolsView;
use crate::tui::views::usage::UsageView;

impl App {
    pub fn on_host(&mut self, event: HostEvent) {
        if self.waiting.as_ref().is_some_and(|w| w.answered_by(&event)) {
            self.waiting = None;
        }
        match event {
            HostEvent::Started(start_up) => self.on_started(start_up),
            HostEvent::Ready(Ok(())) => {
                self.on_ready();
                self.on_vault_changed();
            }
            HostEvent::Ready(Err(e)) => self.on_error(e),
            HostEvent::McpStarted { failed } => {
                for (name, message) in failed {
                    self.on_error(format!("the MCP server `{name}` did not start: {message}"));
                }
                self.on_mcp_started();
            }
            HostEvent::Synced { listing_changed } => self.on_synced(listing_changed),
            HostEvent::AgentStarted {
                generation,
                resumed,
            } => {
                self.agent_generation = generation;
                if let Some((id, conversation)) = resumed {
                    self.on_resumed(id, conversation);
                }
            }
            HostEvent::Agent { generation, event } => {
                if generation == self.agent_generation {
                    self.on_agent_event(event);
                }
            }
            HostEvent::AgentGone { generation } => {
                if generation == self.agent_generation {
                    self.on_agent_gone();
                }
            }
            HostEvent::AgentUnavailable => self.on_agent_unavailable(),
            HostEvent::CommandRefused(message) => self.on_command_refused(&message),
            HostEvent::CommandCancelled(name) => self.on_command_cancelled(&name),
            HostEvent::Commands(catalog) => self.on_commands(catalog),
            HostEvent::NoteOpened { path, note } => self.on_note_opened(&path, note),
            HostEvent::RecoveryFound(kept) => self.on_recovery_found(kept),
            HostEvent::RecoveryCompared { path, file, diff } => {
                if self.editor.path() == Some(path.as_str()) {
                    self.on_recovery_compared(&file, &diff);
                }
            }
            HostEvent::NoteChanged { path, note } => {
                // The editor may have moved on since it asked.
                if self.editor.path() == Some(path.as_str()) {
                    self.on_disk_change(note);
                }
            }
            HostEvent::Saved { path, result } => self.on_saved(&path, result),
            HostEvent::Files(notes) => self.set_notes(notes),
            HostEvent::LinkTargets(targets) => self.editor.set_link_targets(targets),
            HostEvent::Planned { result, .. } => self.on_planned(result),
            HostEvent::Applied { kind, result } => self.on_applied(kind, result),
            HostEvent::Sessions(sessions) => self.show_sessions(sessions),
            HostEvent::Usage(report) => self.show_usage(
                UsageView::new(
                    report.days,
                    report.by_session,
                    report.cost,
                    report.period_days,
                )
                .with_end_ms(report.end_ms),
            ),
            HostEvent::Revisions { path, revisions } => {
                self.show_rewind(RewindView::new(path, revisions))
            }
            HostEvent::RevisionText {
                revision,
                text: Some(text),
            } => self.rewind_to(revision, text),
            HostEvent::RevisionText { text: None, .. } => self
                .on_error("that revision created the note, so there is no earlier text to restore"),
            HostEvent::Tools(report) => self
                .show_tools(ToolsView::new(report.tools, report.servers).with_offer(report.offer)),
            HostEvent::Tasks { tasks, total } => self.show_tasks(tasks, total),
            HostEvent::TaskToggled { path, result } => self.on_task_toggled(&path, result),
            HostEvent::Backlinks { path, result } => self.on_backlinks(&path, result),
            HostEvent::UnlinkedMentions { path, result } => {
                self.on_unlinked_mentions(&path, result)
            }
            HostEvent::Models(Ok(report)) => self.show_models(ModelsView::new(
                &report.label,
                &report.current,
                report.rows,
                report.listed,
            )),
            HostEvent::Models(Err(message)) => self.on_error(message),
            HostEvent::Window { model, tokens } => self.set_context_window(&model, tokens),
            HostEvent::DailyNote(result) => self.on_daily_note(result),
            HostEvent::Templates(result) => self.on_templates(result),
            HostEvent::Unanswered {
                message, notice, ..
            } => {
                if notice {
                    self.flash(message, Role::Notice);
                } else {
                    self.on_error(message);
                }
            }
            HostEvent::Error(message) => self.on_error(message),
            HostEvent::Notice(message) => self.flash(message, Role::Notice),
        }
    }

    /// The index synced a batch: the open note may have changed, the listing may have.
    fn on_synced(&mut self, listing_changed: bool) {
        // During a save the file is about to change by our own hand.
        if !self.save_in_flight() {
            self.check_open_note();
        }
        if listing_changed {
            self.on_vault_changed();
        }
        self.refresh_backlinks();
    }

    /// A save finished: the buffer's state, and the disk's text beside it when it had changed.
    fn on_saved(&mut self, path: &str, result: Result<NoteText, (bool, String)>) {
        let changed = matches!(result, Err((true, _)));
        self.on_save_finished(path, result);
        if changed {
            // Shows the disk's text beside the buffer (or merges it).
            self.check_open_note();
        }
        self.on_note_written(path);
    }

    /// What start-up found: problems for the chat, how plugin tools render, and the plugins
    /// question when it must be asked.
    fn on_started(&mut self, start_up: StartUp) {
        // For the help and the argument hint before the first `/`.
        self.effects.push(Effect::Host(Request::ListCommands));
        for problem in &start_up.problems {
            self.transcript.push_error(problem);
        }
        self.transcript.set_tool_renders(start_up.renders);
        if let Some(question) = start_up.trust_question {
            self.ask_plugin_trust(TrustPrompt::new(question.file, question.command_lines));
        }
    }

    /// `$EDITOR` exited: the note may have changed.
    pub fn after_external_edit(&mut self) {
        self.check_open_note();
    }

    /// The open note changed on disk? Ask the host (it answers `NoteChanged` when it did).
    pub(super) fn check_open_note(&mut self) {
        let (Some(path), Some(note)) = (self.editor.path(), self.editor.note()) else {
            return;
        };
        self.effects.push(Effect::Host(Request::CheckNote {
            path: path.to_string(),
            known: note.fingerprint,
        }));
    }

    /// A resumed session: its transcript rebuilt from the stored conversation.
    fn on_resumed(
        &mut self,
        id: String,
        conversation: Result<crate::agent::StoredConversation, String>,
    ) {
        let (transcript, usage) = match conversation {
            Ok(conversation) => (
                crate::tui::stored_transcript::transcript_of(&conversation),
                conversation.usage,
            ),
            Err(e) => {
                let mut transcript = Transcript::new();
                transcript.push_error(&e);
                (transcript, Default::default())
            }
        };
        self.on_session_resumed(id, transcript, usage);
    }
}
