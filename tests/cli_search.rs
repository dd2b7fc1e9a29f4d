//! `vaultchat index` and `vaultchat search` driven as a person would: the real binary on real
//! vaults.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use std::collections::BTreeSet;

/// Every planted phrase is the top result; every tag filter returns every note the manifest lists.
#[test]
fn generated_vault_needles_and_tags() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    let manifest = gen_vault(&vault, 800, 11);
    let summary = ok(&data, &vault, &["index"]);
    assert!(summary.contains("indexed 808 notes"), "{summary}");

    let needles = manifest["needles"].as_array().unwrap();
    assert!(needles.len() >= 10);
    for needle in needles {
        let phrase = needle["phrase"].as_str().unwrap();
        let v = search_json(&data, &vault, phrase, 5);
        let paths = result_paths(&v);
        assert_eq!(
            paths.first().map(String::as_str),
            needle["path"].as_str(),
            "needle {phrase}"
        );
        assert_eq!(v["total"], 1, "needle {phrase} is in exactly one note");
    }

    let mut by_tag: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for note in manifest["notes"].as_array().unwrap() {
        for tag in note["tags"].as_array().unwrap() {
            by_tag
                .entry(tag.as_str().unwrap().to_string())
                .or_default()
                .insert(note["path"].as_str().unwrap().to_string());
        }
    }
    assert!(by_tag.len() > 5);
    for (tag, expected) in &by_tag {
        let v = search_json(&data, &vault, &format!("tag:{tag}"), 10_000);
        let got: BTreeSet<String> = result_paths(&v).into_iter().collect();
        let missing: Vec<_> = expected.difference(&got).collect();
        assert!(missing.is_empty(), "tag:{tag} misses {missing:?}");
        assert_eq!(v["total"].as_u64().unwrap() as usize, got.len());
    }
}

#[test]
fn query_language_on_the_sample_vault() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    copy_sample_vault(&vault);
    ok(&data, &vault, &["index"]);
    let top = |q: &str| result_paths(&search_json(&data, &vault, q, 20));

    assert_eq!(top("\"herb spiral\"")[0], "Projects/Garden Planner.md");
    // A phrase needs adjacency: these words exist, but not next to each other.
    assert!(top("\"spiral herb\"").is_empty());
    assert_eq!(top("compo*")[0], "Projects/Garden Planner.md");
    let either: BTreeSet<_> = top("tomatoes OR knee").into_iter().collect();
    assert_eq!(
        either,
        BTreeSet::from([
            "Projects/Garden Planner.md".to_string(),
            "Areas/Health/Running log.md".to_string()
        ])
    );
    // Exclusion.
    let launch = top("priya");
    assert_eq!(launch.len(), 2, "{launch:?}");
    assert_eq!(top("priya -journal"), ["Projects/Vaultchat Launch.md"]);
    // Tags: frontmatter (block list and flow list), inline, nested prefix, exclusion.
    assert_eq!(top("tag:garden"), ["Projects/Garden Planner.md"]);
    assert_eq!(top("tag:#risk"), ["Projects/Vaultchat Launch.md"]);
    assert_eq!(top("tag:meta"), ["Welcome.md"]);
    let work: BTreeSet<_> = top("tag:work").into_iter().collect();
    assert_eq!(work.len(), 2);
    assert_eq!(
        top("tag:work -tag:runbook"),
        ["Projects/Vaultchat Launch.md"]
    );
    // Folders.
    assert_eq!(top("folder:Areas run*"), ["Areas/Health/Running log.md"]);
    assert!(
        top("folder:Projects")
            .iter()
            .all(|p| p.starts_with("Projects/"))
    );
    // Titles and aliases rank: the note titled with the word comes first.
    assert_eq!(top("launch")[0], "Projects/Vaultchat Launch.md");
    assert_eq!(top("home")[0], "Welcome.md");
    // Diacritics fold; non-Latin scripts are found, CJK without spaces included.
    assert_eq!(top("creme brulee"), ["Areas/Health/Running log.md"]);
    assert_eq!(top("Русский"), ["Reading/日本語のメモ.md"]);
    assert_eq!(top("検索"), ["Reading/日本語のメモ.md"]);
    assert_eq!(top("庭づくり"), ["Reading/日本語のメモ.md"]);
    assert!(
        top("検査").is_empty(),
        "characters present but not adjacent"
    );
    // Dot-folders and non-notes are not indexed; code is searchable but `#tags` in code are not tags.
    assert!(top("promptDelete").is_empty());
    assert!(top("tag:not-a-tag").is_empty());
    // Snippets mark the match and come back in the original script.
    let v = search_json(&data, &vault, "検索", 5);
    let snippet = v["results"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("**検索**できる"), "{snippet}");
    assert!(!snippet.contains('\u{200B}'), "{snippet:?}");
    // Punctuation is never query syntax.
    assert!(top("c++ AND NEAR( \"").is_empty());
}

#[test]
fn json_shape_and_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    copy_sample_vault(&vault);
    // No `index` first: a search builds the index on first use.
    let v = search_json(&data, &vault, "the", 2);
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    assert!(v["total"].as_u64().unwrap() > 2);
    for r in v["results"].as_array().unwrap() {
        let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, BTreeSet::from(["path", "title", "snippet", "score"]));
        assert!(r["score"].as_f64().unwrap() > 0.0);
    }
    let scores: Vec<f64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores[0] >= scores[1], "best first: {scores:?}");
    let text = ok(&data, &vault, &["search", "garden"]);
    assert!(text.contains("Projects/Garden Planner.md"), "{text}");
    assert!(text.trim_end().ends_with("matching notes"), "{text}");
    let none = ok(&data, &vault, &["search", "zzzyzzy"]);
    assert_eq!(none, "no notes match \"zzzyzzy\"\n");
}

#[test]
fn search_results_never_point_at_changed_notes() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    copy_sample_vault(&vault);
    ok(&data, &vault, &["index"]);
    std::fs::remove_file(vault.join("Inbox/Ideas.md")).unwrap();
    std::fs::write(
        vault.join("Projects/Garden Planner.md"),
        "# Garden Planner\n\nNow about orchids only.\n",
    )
    .unwrap();
    assert!(result_paths(&search_json(&data, &vault, "weekly review", 5)).is_empty());
    assert!(result_paths(&search_json(&data, &vault, "tomatoes", 5)).is_empty());
}

#[test]
fn errors_are_one_clear_line_with_the_right_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let missing = tmp.path().join("no-such-vault");
    let out = run(&data, &missing, &["search", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no-such-vault") && err.contains("--vault"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());

    // Usage errors exit with 2.
    let out = run(&data, tmp.path(), &["search", "x", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&data, tmp.path(), &["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));

    // A bad config names the file, the line and the key.
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("config.toml"), "[index]\ndebounce = 5\n").unwrap();
    let out = run(&data, tmp.path(), &["search", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml:2") && err.contains("`index.debounce`"),
        "{err}"
    );
    assert!(
        err.contains("debounce_ms"),
        "the fix names the known key: {err}"
    );

    // --config FILE that does not exist.
    let out = cmd(&data, tmp.path())
        .args(["--config", "/nonexistent/c.toml", "doctor"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn config_pointing_at_a_folder_or_a_device_says_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let folder = tmp.path().join("conf.d");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = folder.to_string_lossy().into_owned();
    // /dev/zero never ends: the command must answer instead of reading forever.
    for (config, what) in [
        (folder.as_str(), "is a folder, not a file"),
        ("/dev/null", "is a character device"),
        ("/dev/zero", "is a character device"),
    ] {
        let out = cmd(&data, tmp.path())
            .args(["--config", config, "search", "x"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{config}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(config) && err.contains(what),
            "{config}: {err}"
        );
        assert!(!err.contains("does not exist"), "{config}: {err}");
    }
}

#[test]
fn global_options_go_before_or_after_the_subcommand() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    copy_sample_vault(&vault);
    let after = std::process::Command::new(bin())
        .args(["search", "garden", "--json", "--vault"])
        .arg(&vault)
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    assert!(after.status.success(), "{after:?}");
    let before = std::process::Command::new(bin())
        .arg("--data-dir")
        .arg(&data)
        .env("VAULTCHAT_VAULT", &vault)
        .args(["search", "garden", "--json"])
        .output()
        .unwrap();
    assert!(before.status.success(), "{before:?}");
    assert_eq!(after.stdout, before.stdout);
    // Everything went under --data-dir.
    assert!(data.join("index").is_dir());
    assert!(data.join("vaultchat.log").is_file());
}

#[test]
fn doctor_reports_permission_rules_that_name_no_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    copy_sample_vault(&vault);
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.toml"),
        "[permissions]\ndeny = [\"updte_note\", \"*:Private/**\"]\nallow = [\"read_note\"]\n",
    )
    .unwrap();
    let out = run(&data, &vault, &["doctor"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("FAIL  permissions: [permissions] deny: `updte_note`: `updte_note` names no tool, so the rule would match nothing; did you mean `update_note`?"),
        "{report}"
    );
    std::fs::write(
        data.join("config.toml"),
        "[permissions]\ndeny = [\"update_note\", \"*:Private/**\"]\n",
    )
    .unwrap();
    let report = ok(&data, &vault, &["doctor"]);
    assert!(
        report.contains("ok    permissions: 2 config rules, none naming a missing tool"),
        "{report}"
    );
}

#[test]
fn doctor_reports_each_part() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    copy_sample_vault(&vault);
    let out = run(&data, &vault, &["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("ok    vault") && text.contains("8 notes"),
        "{text}"
    );
    assert!(text.contains("warn  index: not built yet"), "{text}");
    assert!(text.contains("ok    database"), "{text}");
    ok(&data, &vault, &["index"]);
    std::fs::write(vault.join("Inbox/New.md"), "new").unwrap();
    let text = ok(&data, &vault, &["doctor"]);
    assert!(text.contains("1 new, 0 changed, 0 deleted"), "{text}");
    let out = run(&data, &tmp.path().join("nope"), &["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL  vault"));
}

#[test]
fn bare_vaultchat_without_a_terminal_points_to_the_script_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), tmp.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("needs a terminal"), "{text}");
    for cmd in ["vaultchat ask", "search", "mcp"] {
        assert!(text.contains(cmd), "{text}");
    }
    assert!(out.stdout.is_empty(), "nothing on stdout");
}
