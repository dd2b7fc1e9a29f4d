//! Moving a note from the file pane: the move key asks for a new path, the runner plans the move
//! (`move_note`'s plan: the note and every link to it), the banner shows it as one diff over
//! several files, and only an approval applies it, with the hunks and files the person kept.

use super::{App, Effect, LOCAL_REQUESTS};
use crate::agent::{PermissionRequest, Proposal, ProposalFile};
use crate::tools::workspace::Plan;
use crate::tui::banner::BannerOutcome;
use crate::tui::theme::Role;

/// The banner id of the person's own move (one at a time): a local request, above the agent's
/// ids and far above /rewind's (which count up from `LOCAL_REQUESTS`).
const LOCAL_MOVE: u64 = u64::MAX;
const _: () = assert!(LOCAL_MOVE > LOCAL_REQUESTS);

impl App {
    /// The planned move of `from` to `to`: shown in the banner for the person to answer.
    pub fn propose_move(&mut self, plan: Plan) {
        let from = plan.path().rel().to_string();
        let to = plan
            .extra
            .get("to")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        self.banner.push(PermissionRequest {
            id: LOCAL_MOVE,
            call_id: "file-pane-move".into(),
            tool: "move_note".into(),
            input: serde_json::json!({ "note": from, "to": to }),
            paths: vec![from.clone(), to],
            proposal: Some(Proposal {
                summary: plan.describe(),
                path: from,
                diff: plan.diff(),
                files: ProposalFile::of_plan(&plan),
            }),
            offer_session: false,
            offer_always: false,
            reason: "the links to the note are rewritten so that none breaks".into(),
        });
        self.local_move = Some(Box::new(plan));
    }

    /// The banner's answer when it was about the person's move: an approval applies it (with
    /// the hunks kept). `true` when the answer was the move's.
    pub(super) fn answer_local_move(&mut self, outcome: &BannerOutcome) -> bool {
        if outcome.request != LOCAL_MOVE {
            return false;
        }
        let Some(plan) = self.local_move.take() else {
            return true;
        };
        if matches!(outcome.answer, crate::permission::Answer::Deny { .. }) {
            self.flash("not moved", Role::Notice);
        } else {
            self.effects
                .push(Effect::ApplyMove(plan, outcome.hunks.clone()));
        }
        true
    }

    /// The agent moved a note: the file list follows, and so does the editor when the note was
    /// open (its old path no longer exists). `result` is the tool's JSON result.
    pub(super) fn after_agent_move(&mut self, result: &str) {
        let Ok(result) = serde_json::from_str::<serde_json::Value>(result) else {
            return;
        };
        let (Some(from), Some(to)) = (result["from"].as_str(), result["path"].as_str()) else {
            return;
        };
        self.effects.push(Effect::LoadFiles);
        if self.editor.path() == Some(from) {
            self.open_note(to.to_string());
        }
    }

    /// A move finished: `Ok` with the files it changed, the moved note first at its new path.
    pub fn on_moved(&mut self, from: &str, result: Result<Vec<String>, String>) {
        match result {
            Ok(changed) => {
                let to = changed.first().cloned().unwrap_or_default();
                let others = changed.len().saturating_sub(1);
                self.flash(
                    format!(
                        "moved {from} to {to}; links fixed in {others} other note{}",
                        if others == 1 { "" } else { "s" }
                    ),
                    Role::Notice,
                );
                self.effects.push(Effect::LoadFiles);
                if self.editor.path() == Some(from) {
                    self.open_note(to);
                }
            }
            Err(e) => self.on_error(format!("the note was not moved: {e}")),
        }
    }
}
