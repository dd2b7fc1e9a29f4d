//! Daily notes and templates for the app: today's note made as the person's own action (the
//! same path as `vaultchat daily`), and the templates of the templates folder filled in for the
//! note the person is editing.

use super::core::Core;
use super::{DailyOpened, FilledTemplate, HostEvent};
use crate::tools::workspace::{Filling, fill};

/// Today's note (created from its template when missing): `DailyNote`.
pub(super) fn open_today(core: &Core) {
    let Some(ready) = core.ready() else { return };
    let today = crate::time::day_number(crate::time::now_ms());
    core.tell(HostEvent::DailyNote(
        ready
            .workspace
            .daily_for_person(today, None)
            .map(|outcome| DailyOpened {
                path: outcome.path,
                created: outcome.created,
                warnings: outcome.warnings,
            })
            .map_err(|e| e.to_string()),
    ));
}

/// The templates, filled for a note named `title` at this moment: `Templates`.
pub(super) fn templates(core: &Core, title: &str) {
    let Some(ready) = core.ready() else { return };
    let workspace = &ready.workspace;
    // The settings once for the listing and every template (each read used to read them again).
    let formats = workspace.template_settings();
    let result = workspace.list_templates_in(&formats).map(|paths| {
        let folder = formats.folder.clone().unwrap_or_default();
        let now_ms = crate::time::now_ms();
        paths
            .into_iter()
            .filter_map(|path| match workspace.read_template_in(&formats, &path) {
                Ok(template) => Some(FilledTemplate {
                    name: template_name(&folder, &path),
                    text: fill(
                        &template.text,
                        &Filling {
                            title,
                            at_ms: now_ms,
                            formats: &formats,
                        },
                    ),
                    path,
                }),
                Err(e) => {
                    tracing::warn!("the template {path} is left out: {e}");
                    None
                }
            })
            .collect()
    });
    core.tell(HostEvent::Templates(result.map_err(|e| e.to_string())));
}

/// `Work/Standup` for `Templates/Work/Standup.md` in the folder `Templates`.
fn template_name(folder: &str, path: &str) -> String {
    let inside = path
        .strip_prefix(folder)
        .map_or(path, |rest| rest.trim_start_matches('/'));
    inside.strip_suffix(".md").unwrap_or(inside).to_string()
}
