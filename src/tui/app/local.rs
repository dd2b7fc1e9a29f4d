//! The person's own changes in the banner — a move from the file pane, the chat as a note
//! (`/save`), `/rewind` — with one id allocator and one answer path. The host plans a change of
//! the vault and applies it once approved ([`LocalChange`]); a rewind's text goes into the
//! editor buffer (saved like any typing), so it never needs the host.

use super::{App, Effect};
use crate::agent::{PermissionRequest, Proposal};
use crate::host::{ChangeKind, LocalChange, Request};
use crate::tui::banner::BannerOutcome;
use crate::tui::theme::Role;

/// Banner requests the app makes itself have ids from here up, far above the agent's.
pub(super) const LOCAL_REQUESTS: u64 = 1 << 62;

/// The local changes the banner is asking about.
#[derive(Default)]
pub(super) struct LocalChanges {
    /// How many ids were given out (the next is `LOCAL_REQUESTS + given`).
    given: u64,
    pending: Vec<(u64, Pending)>,
}

/// What an approval does.
enum Pending {
    /// Applied to the vault by the host.
    Vault(Box<LocalChange>),
    /// Put into the editor buffer: the text `/rewind` restores.
    Buffer(String),
}

impl LocalChanges {
    fn add(&mut self, pending: Pending) -> u64 {
        let id = LOCAL_REQUESTS + self.given;
        self.given += 1;
        self.pending.push((id, pending));
        id
    }

    fn take(&mut self, id: u64) -> Option<Pending> {
        let at = self
            .pending
            .iter()
            .position(|(pending, _)| *pending == id)?;
        Some(self.pending.remove(at).1)
    }
}

impl App {
    /// A change the host planned: shown in the banner for the person to answer.
    pub fn propose_change(&mut self, change: Box<LocalChange>) {
        let mut request = change.request.clone();
        request.id = self.local.add(Pending::Vault(change));
        self.banner.push(request);
    }

    /// /rewind chose a revision: show the change back to its text as a diff; applied to the
    /// buffer (one undo step, unsaved) only when approved.
    pub fn rewind_to(&mut self, revision: i64, text: String) {
        let Some(path) = self.editor.path().map(str::to_string) else {
            return;
        };
        let current = self.editor.text();
        let diff = crate::text::diff::TextDiff::new(&current, &text);
        if diff.is_empty() {
            self.flash("the note already has that text", Role::Notice);
            return;
        }
        let id = self.local.add(Pending::Buffer(text));
        self.banner.push(PermissionRequest {
            id,
            call_id: format!("rewind-{revision}"),
            tool: "rewind".into(),
            input: serde_json::json!({ "note": path, "revision": revision }),
            paths: vec![path.clone()],
            proposal: Some(Proposal {
                summary: format!("restore {path} to the text before revision {revision}"),
                path,
                diff,
                files: Vec::new(),
            }),
            offer_session: false,
            offer_always: false,
            reason: "/rewind restores the text before an agent edit".into(),
        });
    }

    /// The banner's answer when it was about a local change. `true` when it was one.
    pub(super) fn answer_local(&mut self, outcome: &BannerOutcome) -> bool {
        if outcome.request < LOCAL_REQUESTS {
            return false;
        }
        let Some(pending) = self.local.take(outcome.request) else {
            return true;
        };
        let denied = matches!(outcome.answer, crate::protocol::Answer::Deny { .. });
        match (pending, denied) {
            (Pending::Vault(change), true) => match change.kind {
                ChangeKind::Move { .. } => self.flash("not moved", Role::Notice),
                ChangeKind::ChatNote => self.flash("the chat was not saved", Role::Notice),
                // Never asked about: made at once.
                ChangeKind::Create => {}
            },
            (Pending::Vault(change), false) => {
                self.effects.push(Effect::Host(Request::ApplyChange {
                    change,
                    hunks: outcome.hunks.clone(),
                }))
            }
            (Pending::Buffer(_), true) => {}
            (Pending::Buffer(text), false) => self.restore_text(text, outcome.hunks.as_deref()),
        }
        true
    }

    /// The approved hunks of a rewind go into the editor.
    fn restore_text(&mut self, text: String, hunks: Option<&[bool]>) {
        let current = self.editor.text();
        let diff = crate::text::diff::TextDiff::new(&current, &text);
        let restored = match hunks {
            Some(flags) => crate::text::diff::apply_hunks(&current, &text, &diff, flags),
            None => text,
        };
        self.editor.apply_edit(&restored);
        if self.saver.autosave() {
            self.flash("restored in the editor", Role::Notice);
        } else {
            self.flash("restored in the editor — save to keep it", Role::Notice);
        }
    }

    /// A planned change arrived, or why it cannot be made.
    pub(super) fn on_planned(&mut self, result: Result<Box<LocalChange>, String>) {
        match result {
            Ok(change) => self.propose_change(change),
            Err(why) => self.on_error(why),
        }
    }

    /// An applied change: what it wrote, or why nothing was.
    pub(super) fn on_applied(
        &mut self,
        kind: ChangeKind,
        result: Result<crate::host::AppliedChange, String>,
    ) {
        let warning = result.as_ref().ok().and_then(|a| a.warning.clone());
        match kind {
            ChangeKind::Move { from, .. } => {
                self.on_moved(&from, result.map(|a| a.files_changed));
                if let Some(warning) = warning {
                    self.on_error(format!("the move was made, but {warning}"));
                }
            }
            ChangeKind::Create => match result {
                Ok(applied) => {
                    let path = applied.files_changed.into_iter().next().unwrap_or_default();
                    self.on_note_created(&path, crate::time::now_ns());
                }
                Err(why) => self.on_error(format!("the note was not created: {why}")),
            },
            ChangeKind::ChatNote => {
                let path = result.map(|a| a.files_changed.into_iter().next().unwrap_or_default());
                self.on_chat_saved(path);
                if let Some(warning) = warning {
                    self.on_error(format!("the chat note was written, but {warning}"));
                }
            }
        }
    }
}
