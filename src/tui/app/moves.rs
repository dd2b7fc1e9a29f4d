//! Moving a note from the file pane: the move key asks for a new path, the host plans the move
//! (`move_note`'s plan: the note and every link to it), the banner shows it as one diff over
//! several files (`local.rs`), and only an approval applies it, with the hunks and files kept.

use super::{App, Effect};
use crate::host::Request;
use crate::tui::theme::Role;

impl App {
    /// The agent moved a note: the file list follows, and so does the editor when the note was
    /// open (its old path no longer exists). `result` is the tool's JSON result.
    pub(super) fn after_agent_move(&mut self, result: &str) {
        let Ok(result) = serde_json::from_str::<serde_json::Value>(result) else {
            return;
        };
        let (Some(from), Some(to)) = (result["from"].as_str(), result["path"].as_str()) else {
            return;
        };
        self.effects.push(Effect::Host(Request::ListFiles));
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
                self.effects.push(Effect::Host(Request::ListFiles));
                if self.editor.path() == Some(from) {
                    self.open_note(to);
                }
            }
            Err(e) => self.on_error(format!("the note was not moved: {e}")),
        }
    }
}
