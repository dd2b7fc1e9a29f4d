//! The backlinks view's request: the links to the open note from other notes (the index's link
//! graph), then the lines that name it without linking it, as two answers so the links show
//! while the mentions are still being looked for.

use super::core::Core;
use super::{BacklinkList, HostEvent, LinkLine};

/// The most links the view is sent at once (it says how many there are in all).
const VIEW_LIMIT: usize = 500;

pub(super) fn list(core: &Core, path: String) {
    // Answered even while the vault opens: the view waits for this answer, not for a notice.
    let Some(ready) = core.ready.get() else {
        return core.tell(HostEvent::Backlinks {
            path,
            result: Err("the vault is still being opened; try again in a moment".into()),
        });
    };
    let workspace = &ready.workspace;
    let result = workspace
        .backlinks_of(&path, VIEW_LIMIT)
        .map(|page| BacklinkList {
            links: page
                .items
                .into_iter()
                .map(|link| LinkLine {
                    path: link.path,
                    line: link.line as usize,
                    context: link.context,
                    mention: None,
                })
                .collect(),
            total: usize::try_from(page.total).unwrap_or(usize::MAX),
        })
        .map_err(|e| e.to_string());
    let listed = result.is_ok();
    core.tell(HostEvent::Backlinks {
        path: path.clone(),
        result,
    });
    if !listed {
        return;
    }
    let result = workspace
        .unlinked_mentions_of(&path)
        .map(|mentions| {
            mentions
                .into_iter()
                .map(|m| LinkLine {
                    path: m.path,
                    line: m.line,
                    context: m.context,
                    mention: Some(m.name),
                })
                .collect()
        })
        .map_err(|e| e.to_string());
    core.tell(HostEvent::UnlinkedMentions { path, result });
}
