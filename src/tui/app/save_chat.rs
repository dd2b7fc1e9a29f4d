//! `/save` (and `/save last`): the chat as a note in the vault (`agent::export`). The runner
//! plans the new note from the stored session; the banner shows it as a diff like any write, and
//! only an approval creates it.

use super::{App, Effect, LOCAL_REQUESTS};
use crate::agent::{PermissionRequest, Proposal, ProposalFile};
use crate::tools::workspace::Plan;
use crate::tui::banner::BannerOutcome;
use crate::tui::theme::Role;

/// The banner id of a saved chat (one at a time): a local request, beside the person's move.
const LOCAL_SAVE: u64 = u64::MAX - 1;
const _: () = assert!(LOCAL_SAVE > LOCAL_REQUESTS);

impl App {
    /// `/save [last]`: ask the runner for the note of this session.
    pub(super) fn save_chat(&mut self, arg: &str) {
        let last = match arg {
            "" => false,
            "last" => true,
            other => {
                self.flash(
                    format!(
                        "/save {other}: use /save (the whole chat) or /save last (the last reply)"
                    ),
                    Role::Error,
                );
                return;
            }
        };
        let Some(id) = self.info.session_id.clone() else {
            self.flash("nothing to save yet: the chat is empty", Role::Notice);
            return;
        };
        // The store holds a reply only once it is finished: saving now would miss what streams.
        if self.busy() {
            self.flash("a turn is running; /save when it has ended", Role::Notice);
            return;
        }
        self.effects
            .push(Effect::PlanChatNote { session: id, last });
    }

    /// The planned note of the chat: shown in the banner for the person to answer.
    pub fn propose_chat_note(&mut self, plan: Plan) {
        let path = plan.path().rel().to_string();
        self.banner.push(PermissionRequest {
            id: LOCAL_SAVE,
            call_id: "save-chat".into(),
            tool: "create_note".into(),
            input: serde_json::json!({ "path": path }),
            paths: vec![path.clone()],
            proposal: Some(Proposal {
                summary: plan.describe(),
                path,
                diff: plan.diff(),
                files: ProposalFile::of_plan(&plan),
            }),
            offer_session: false,
            offer_always: false,
            reason: "the chat is saved as a new note (/save)".into(),
        });
        self.local_save = Some(Box::new(plan));
    }

    /// The banner's answer when it was about a saved chat. `true` when the answer was its.
    pub(super) fn answer_local_save(&mut self, outcome: &BannerOutcome) -> bool {
        if outcome.request != LOCAL_SAVE {
            return false;
        }
        let Some(plan) = self.local_save.take() else {
            return true;
        };
        if matches!(outcome.answer, crate::permission::Answer::Deny { .. }) {
            self.flash("the chat was not saved", Role::Notice);
        } else {
            self.effects
                .push(Effect::ApplyChatNote(plan, outcome.hunks.clone()));
        }
        true
    }

    /// A saved chat was written (`Ok(path)`) or not (`Err(why)`).
    pub fn on_chat_saved(&mut self, result: Result<String, String>) {
        match result {
            Ok(path) => {
                self.flash(format!("chat saved as {path}"), Role::Notice);
                self.effects.push(Effect::LoadFiles);
            }
            Err(why) => self.on_error(format!("the chat was not saved: {why}")),
        }
    }
}
