//! `/save` (and `/save last`): the chat as a note in the vault (`agent::export`). The host
//! plans the new note from the stored session; the banner shows it as a diff like any write, and
//! only an approval creates it.

use super::{App, Effect};
use crate::host::{ChangeRequest, Request};
use crate::tui::theme::Role;

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
            .push(Effect::Host(Request::PlanChange(ChangeRequest::ChatNote {
                session: id,
                last,
            })));
    }

    /// A saved chat was written (`Ok(path)`) or not (`Err(why)`).
    pub fn on_chat_saved(&mut self, result: Result<String, String>) {
        match result {
            Ok(path) => {
                self.flash(format!("chat saved as {path}"), Role::Notice);
                self.effects.push(Effect::Host(Request::ListFiles));
            }
            Err(why) => self.on_error(format!("the chat was not saved: {why}")),
        }
    }
}
