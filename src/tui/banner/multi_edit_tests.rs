//! One `update_note` call with several replacements (`edits`): planned by the real workspace
//! tool, shown as one banner with a hunk per edit, applied as one revision; an overlapping pair
//! is refused whole and changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::agent::{Proposal, ProposalFile};
use crate::config::{Config, Paths};
use crate::store::{Actor, Store};
use crate::tools::Registry;
use crate::tools::workspace::{self, Workspace};
use crate::tui::testing::buffer_text;
use pretty_assertions::assert_eq;
use serde_json::json;

// The five passages are more than six unchanged lines apart, so each edit is a hunk of its own
// (changes closer than 2 × 3 context lines share a hunk, as in a unified diff).
const NOTE: &str = "# Garden log\n\n\
Kept since the first spring in the new house.\n\
Every bed has a page; this one is the summary.\n\
Dates are when the work was done, not planned.\n\
Photos live in the attachments folder.\n\
The old notebook is scanned into the archive.\n\n\
The tomatoes went in along the south fence on the\n\
twelfth, two weeks later than planned.\n\n\
The soil test came back low in potassium, so the\n\
compost went on thick this year, and the bed by\n\
the shed got a second load before the rain.\n\
The leaf mould from last autumn is nearly ready.\n\n\
- basil: sown indoors\n- beans: not yet\n- chard: thinned\n\n\
Slugs were worst in the week of heavy rain; the\n\
copper tape on the raised beds did better than\n\
the beer traps, which filled in two days.\n\
The netting stays on until the plants are tall.\n\n\
Watering is every \u{201c}second\u{201d} evening until the\n\
beds are mulched.\n\n\
The water butt fills in one storm; a second one\n\
would see the garden through a dry fortnight.\n\
The hose reaches every bed but the far corner.\n\
Mulch is straw this year, not bark.\n\n\
## Next\n\n\
Order seeds before the end of February.  Ask Dana\n\
about the spare hose.\n";

fn workspace() -> (tempfile::TempDir, Arc<Workspace>, Registry) {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Garden log.md"), NOTE).unwrap();
    let paths = Paths::under(&tmp.path().join("data"));
    let ws = Workspace::open(
        crate::vault::Vault::open(&vault).unwrap(),
        &paths,
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let mut registry = Registry::new();
    workspace::register(&mut registry, &ws);
    (tmp, ws, registry)
}

fn five_edits() -> serde_json::Value {
    // Quoted the way a model quotes: re-flowed lines, straight quotes, one space after a stop.
    json!({"note": "Garden log.md", "edits": [
        {"find": "along the south fence on the twelfth", "replace": "along the west fence on the twelfth"},
        {"find": "- beans: not yet", "replace": "- beans: sown outside"},
        {"find": "every \"second\" evening", "replace": "every evening"},
        {"find": "Order seeds before the end of February. Ask Dana", "replace": "Order seeds by mid-February. Ask Dana"},
        {"find": "# Garden log", "replace": "# Garden log 2024"},
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_edits_are_one_banner_with_five_hunks_and_one_revision() {
    let (_tmp, ws, registry) = workspace();
    let input = five_edits();
    let tool = registry.get("update_note").unwrap();
    let plan = tool.plan(input.clone()).unwrap().await.unwrap();
    let diff = plan.diff();
    assert_eq!(diff.hunks.len(), 5);
    let request = PermissionRequest {
        id: 1,
        call_id: "call_1".into(),
        tool: "update_note".into(),
        input,
        paths: vec!["Garden log.md".into()],
        proposal: Some(Proposal {
            summary: plan.describe(),
            path: "Garden log.md".into(),
            diff,
            files: ProposalFile::of_plan(&plan),
        }),
        offer_session: true,
        offer_always: true,
        reason: "update_note changes the vault".into(),
    };
    let mut banner = Banner::new();
    banner.push(request);
    for (w, h) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(
            format!("banner_five_edits_{w}x{h}"),
            buffer_text(&super::tests::draw(&mut banner, w, h))
        );
    }
    ws.apply(&plan, None).unwrap();
    let text = std::fs::read_to_string(ws.vault().root().join("Garden log.md")).unwrap();
    assert_eq!(
        text,
        NOTE.replace("south fence on the\ntwelfth", "west fence on the twelfth")
            .replace("beans: not yet", "beans: sown outside")
            .replace("every “second” evening", "every evening")
            .replace("before the end of February.  Ask", "by mid-February. Ask")
            .replace("# Garden log", "# Garden log 2024")
    );
    let store = Store::open(&Paths::under(&_tmp.path().join("data")).database_file()).unwrap();
    let revisions = store
        .revisions_of(ws.vault_id(), "Garden log.md", 10)
        .unwrap();
    assert_eq!(revisions.len(), 1, "{revisions:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_edits_are_refused_whole() {
    let (tmp, _ws, registry) = workspace();
    let input = json!({"note": "Garden log.md", "edits": [
        {"find": "- beans: not yet", "replace": "- beans: sown"},
        {"find": "not yet\n- chard", "replace": "soon\n- chard"},
        {"find": "# Garden log", "replace": "# Log"},
    ]});
    let err = registry.call("update_note", input).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("`edits[0].find` and `edits[1].find` overlap"),
        "{err}"
    );
    let text = std::fs::read_to_string(tmp.path().join("vault/Garden log.md")).unwrap();
    assert_eq!(text, NOTE);
}
