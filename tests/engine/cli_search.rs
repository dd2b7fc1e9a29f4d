//! `vaultchat index` and `vaultchat search` driven as a person would: the real binary on real
//! vaults.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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
    let chars: Vec<char> = snippet.chars().collect();
    let [start, end] =
        [0, 1].map(|i| v["results"][0]["highlights"][0][i].as_u64().unwrap() as usize);
    assert_eq!(
        chars[start..end].iter().collect::<String>(),
        "検索",
        "{snippet}"
    );
    assert!(snippet.contains("検索できる"), "{snippet}");
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
        assert_eq!(
            keys,
            BTreeSet::from(["path", "title", "snippet", "highlights", "score"])
        );
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

/// Where `path` ranks (1-based) for `query`, if in the first `limit`.
fn rank_of(
    index: &mut vaultchat::index::Index,
    query: &str,
    path: &str,
    limit: usize,
) -> Option<usize> {
    index
        .search(query, limit)
        .unwrap()
        .results
        .iter()
        .position(|hit| hit.path == path)
        .map(|i| i + 1)
}

/// The relevance set, part one: cases written by hand where a person expects one note on top
/// (a title that is also a word in many bodies, a longer title starting with it, an alias, a
/// note named by one of the query's words, a tie broken by age).
#[test]
fn relevance_hand_written_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let notes = [
        (
            "grep.md",
            "# grep\n\nFind patterns in files using regular expressions.\n",
        ),
        (
            "git-grep.md",
            "# git-grep\n\nSearch a repository: like grep, grep for grep, grep grep grep.\n",
        ),
        ("xml.md", "# xml\n\nTools for XML.\n"),
        (
            "xml-p2x.md",
            "# xml-p2x\n\nConvert xml to xml, xml, xml and xml.\n",
        ),
        (
            "Properties.md",
            "# Properties\n\nKey and value pairs in the frontmatter.\n",
        ),
        (
            "Properties view.md",
            "# Properties view\n\nThe Properties view lists properties, properties, properties.\n",
        ),
        (
            "pages/tar.md",
            "# tar\n\n> Archiving utility.\n\n- Create an archive from files: `tar cf target.tar file1`\n",
        ),
        (
            "pages.de/tar.md",
            "# tar\n\n> Archivierungswerkzeug.\n\n- Ein Archiv erstellen: `tar cf ziel.tar datei`\n",
        ),
        (
            "Backups.md",
            "# Backups\n\nA tar archive, then a tar archive of the tar archive, every tar archive checked.\n",
        ),
        (
            "Getting Things Done.md",
            "---\naliases: [GTD]\n---\n# Getting Things Done\n\nCapture, clarify, organise.\n",
        ),
        (
            "Notes on GTD.md",
            "# Notes on GTD\n\nGTD gtd gtd: what GTD means to me.\n",
        ),
        ("Duplicate A.md", "# Duplicate A\n\ntie breaker words\n"),
        ("Duplicate B.md", "# Duplicate B\n\ntie breaker words\n"),
    ];
    for (path, text) in notes {
        let file = vault.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    // B is the newer of two notes that score the same.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    std::fs::File::options()
        .write(true)
        .open(vault.join("Duplicate A.md"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let mut index = open_index(&vault, &tmp.path().join("data"));
    let cases = [
        ("grep", "grep.md"),
        ("GREP", "grep.md"),
        ("xml", "xml.md"),
        ("properties", "Properties.md"),
        ("Properties view", "Properties view.md"),
        ("tar archive", "pages/tar.md"),
        ("gtd", "Getting Things Done.md"),
        ("getting things", "Getting Things Done.md"),
        ("tie breaker", "Duplicate B.md"),
    ];
    let mut failures = Vec::new();
    for (query, want) in cases {
        let top = index.search(query, 5).unwrap().results;
        if top.first().map(|h| h.path.as_str()) != Some(want) {
            failures.push(format!(
                "{query:?}: want {want}, got {:?}",
                top.iter().map(|h| &h.path).collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The relevance set, part two, generated: every note of a generated vault searched by its title
/// (success@1) and by the first words of its first paragraph (success@5); prints MRR too.
#[test]
fn relevance_generated_titles_and_descriptions() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let manifest = gen_vault(&vault, 600, 5);
    let mut index = open_index(&vault, &tmp.path().join("data"));
    let notes = manifest["notes"].as_array().unwrap();
    let (mut title_hits, mut title_rr, mut desc_hits, mut desc_rr, mut desc_total) =
        (0, 0.0, 0, 0.0, 0);
    let mut misses = Vec::new();
    for note in notes {
        let path = note["path"].as_str().unwrap();
        let title = note["title"].as_str().unwrap();
        match rank_of(&mut index, title, path, 10) {
            Some(rank) => {
                title_hits += usize::from(rank == 1);
                title_rr += 1.0 / rank as f64;
            }
            None => misses.push(title.to_string()),
        }
        // The description: the first eight words of the first paragraph of prose.
        let text = std::fs::read_to_string(vault.join(path)).unwrap();
        let paragraph = text.split("\n\n").map(str::trim).find(|p| {
            !p.is_empty() && !p.starts_with('#') && !p.starts_with("---") && !p.starts_with("```")
        });
        let Some(paragraph) = paragraph else { continue };
        // As a person remembers a sentence: its words in order, without the punctuation.
        let words: Vec<&str> = paragraph
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .take_while(|w| !w.is_empty() && w.chars().all(char::is_alphanumeric))
            .take(8)
            .collect();
        if words.len() < 4 {
            continue;
        }
        desc_total += 1;
        if let Some(rank) = rank_of(&mut index, &words.join(" "), path, 5) {
            desc_hits += 1;
            desc_rr += 1.0 / rank as f64;
        }
    }
    let n = notes.len() as f64;
    let title_at_1 = title_hits as f64 / n;
    let desc_at_5 = desc_hits as f64 / desc_total as f64;
    eprintln!(
        "relevance on {} generated notes: title success@1 {:.1}% (MRR {:.3}); description success@5 {:.1}% (MRR@5 {:.3}) over {desc_total}",
        notes.len(),
        title_at_1 * 100.0,
        title_rr / n,
        desc_at_5 * 100.0,
        desc_rr / desc_total as f64
    );
    assert!(title_at_1 >= 0.98, "titles not found first: {misses:?}");
    assert!(desc_at_5 >= 0.95);
}

/// One note holding the word 100,000 times: the search still answers (snippets are made for the
/// returned page only, by a linear highlighter), and an over-long query is refused plainly.
#[test]
fn a_note_with_100k_hits_and_an_over_long_query() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(
        vault.join("Huge.md"),
        "a needle in a haystack line\n".repeat(100_000),
    )
    .unwrap();
    for i in 0..20 {
        std::fs::write(vault.join(format!("Other {i}.md")), "one needle here\n").unwrap();
    }
    ok(&data, &vault, &["index"]);
    let started = std::time::Instant::now();
    let v = search_json(&data, &vault, "needle haystack", 5);
    eprintln!("search over a 100k-hit note: {:?}", started.elapsed());
    assert_eq!(result_paths(&v), ["Huge.md"]);
    let snippet = v["results"][0]["snippet"].as_str().unwrap();
    assert!(snippet.starts_with("a needle in a haystack"), "{snippet}");
    assert_eq!(v["results"][0]["highlights"][0], serde_json::json!([2, 8]));

    let long = "word ".repeat(300);
    let out = run(&data, &vault, &["search", &long]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the query is too long"), "{stderr}");
    assert!(stderr.lines().count() <= 2, "{stderr}");
}

/// `doctor` names the notes it cannot read as written: text that is not UTF-8 and frontmatter that
/// is never closed.
#[test]
fn doctor_lists_notes_it_cannot_read_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Fine.md"), "---\ntitle: Fine\n---\nbody\n").unwrap();
    std::fs::write(vault.join("Latin1.md"), b"caf\xe9 au lait\n").unwrap();
    std::fs::write(vault.join("Open.md"), "---\ntitle: Never closed\nbody\n").unwrap();
    let out = run(&data, &vault, &["doctor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = |needle: &str| {
        stdout
            .lines()
            .find(|l| l.contains(needle))
            .map(str::to_string)
    };
    let not_utf8 = line("not UTF-8").unwrap_or_default();
    assert!(
        not_utf8.contains("1 not UTF-8") && not_utf8.contains("Latin1.md"),
        "{stdout}"
    );
    let open = line("never closed").unwrap_or_default();
    assert!(
        open.contains("Open.md") && !open.contains("Fine.md"),
        "{stdout}"
    );
}

/// `vaultchat search … | head` ends quietly: when the reader has closed the pipe, the command
/// stops with exit code 0 and nothing on stderr (no "Broken pipe" line, no panic) — for the text
/// and JSON outputs and the other listing commands.
#[test]
fn a_reader_that_closes_the_pipe_ends_the_command_quietly() {
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&vault).unwrap();
    for i in 0..400 {
        std::fs::write(
            vault.join(format!("note {i}.md")),
            format!("# Note {i}\n\nThe garden plan, line {i}.\n"),
        )
        .unwrap();
    }
    ok(&data, &vault, &["index"]);
    let commands: [&[&str]; 5] = [
        &["search", "garden", "--limit", "400"],
        &["search", "garden", "--limit", "400", "--json"],
        &["tools"],
        &["tools", "--json"],
        &["usage"],
    ];
    for args in commands {
        let mut child = cmd(&data, &vault)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the first line is written: every write fails with EPIPE.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{args:?}: exit {:?}, stderr {stderr:?}",
            out.status.code()
        );
    }
}

/// `vaultchat completions bash` prints a script that real bash loads and that completes
/// subcommands and their options; every shell clap knows gets a script, without a config or vault.
#[test]
fn shell_completions_complete_commands_and_options_in_bash() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("vaultchat.bash");
    let out = std::process::Command::new(bin())
        .args(["completions", "bash"])
        .env("VAULTCHAT_DATA_DIR", tmp.path().join("no-data"))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &str, cword: usize| {
        let probe = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; _vaultchat vaultchat \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; echo \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "-c", &probe])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let words: Vec<String> = complete("vaultchat se", 1)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(words, ["sessions", "search"]);
    let options = complete("vaultchat mcp --al", 2);
    assert!(options.contains("--allow-writes"), "{options}");

    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = std::process::Command::new(bin())
            .args(["completions", shell])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("allow-writes"),
            "{shell}: {out:?}"
        );
    }
    let out = std::process::Command::new(bin())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}
