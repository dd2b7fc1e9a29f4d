//! `kill -9` during indexing: the next run converges and the database passes its integrity checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::time::Duration;

#[test]
fn killed_index_builds_converge_on_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    let manifest = gen_vault(&vault, 2000, 5);
    let mut killed_mid_run = 0;
    for delay_ms in [20u64, 80, 200, 400] {
        let mut child = cmd(&data, &vault)
            .args(["index", "--rebuild"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Pacing only: the kill lands at a different point of each build; that it lands
        // mid-run is counted below, not assumed.
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    assert!(
        killed_mid_run >= 2,
        "the builds finished too fast to be interrupted"
    );

    let summary = ok(&data, &vault, &["index"]);
    assert!(summary.contains("2008 notes"), "{summary}");
    let doctor = ok(&data, &vault, &["doctor"]);
    assert!(doctor.contains("2008 notes, up to date"), "{doctor}");
    assert!(!doctor.contains("FAIL"), "{doctor}");
    for needle in manifest["needles"].as_array().unwrap().iter().take(10) {
        let v = search_json(&data, &vault, needle["phrase"].as_str().unwrap(), 3);
        assert_eq!(v["results"][0]["path"], needle["path"]);
    }
}
