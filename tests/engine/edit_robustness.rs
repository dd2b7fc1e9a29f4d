//! Edits quoted the way models quote prose (issue 19): passages of real-looking notes (hard-wrapped
//! paragraphs, hard breaks, lists, quotes, a table, CJK, frontmatter; fixtures in
//! `tests/fixtures/edit_robustness/`) are quoted to `update_note`'s `replace_text.find` after the
//! transformations models apply — lines re-flowed into one, quotes straightened, double spaces
//! collapsed, hard-break spaces dropped, no-break spaces written as spaces, accents composed — and
//! each edit must land exactly (the note equals the expected bytes) or be refused with the note
//! untouched; never land anywhere else. Misquotes (a changed word) are refused with the intended
//! passage in the result; ambiguous normalised matches are refused.

use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use unicode_normalization::UnicodeNormalization;
use vaultchat::config::{Config, Paths};
use vaultchat::store::Actor;
use vaultchat::tools::workspace::{self, Workspace};
use vaultchat::tools::{Registry, ToolError};
use vaultchat::vault::Vault;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/edit_robustness")
        .join(name);
    fs::read_to_string(path).unwrap()
}

/// The passages an edit targets: (fixture, the passage exactly as the note has it).
const PASSAGES: &[(&str, &str)] = &[
    (
        "wrapped.md",
        "Type two opening square\nbrackets and start typing the name of the note you want to link to; a\nlist of suggestions appears as you type.  Press Enter to accept one.",
    ),
    (
        "wrapped.md",
        "controlled by the \u{201c}Automatically update internal links\u{201d} setting, which\nis on by default.",
    ),
    (
        "wrapped.md",
        "points to it, so a link never breaks because of a new name.  This is",
    ),
    (
        "wrapped.md",
        "`[[Internal links|custom display text]]`.  The link still points to\nthe same note;",
    ),
    (
        "wrapped.md",
        "The block's ID is added\nto the end of the paragraph",
    ),
    (
        "poem.md",
        "The river runs slow under the bridge,  \nthe lamps come on one by one,  \nand the dog knows the way home.",
    ),
    (
        "poem.md",
        "She said, \u{201c}We should come back in spring,\u{201d} and I said\nthat we would, though we both knew it was \u{2018}maybe\u{2019} at best.",
    ),
    (
        "poem.md",
        "The walk is 4\u{a0}km from the gate to the old mill, about\n45\u{a0}minutes",
    ),
    ("poem.md", "M.\u{a0}Durand keeps the key."),
    (
        "french.md",
        "Le cafe\u{301} de la rue Mercie\u{300}re ouvre a\u{300} sept heures.",
    ),
    (
        "french.md",
        "toujours la me\u{302}me histoire sur l'e\u{301}te\u{301} ou\u{300} la Sao\u{302}ne a de\u{301}borde\u{301}.",
    ),
    (
        "french.md",
        "cre\u{300}me et un pain au chocolat avant le marche\u{301}, et le patron raconte\ntoujours",
    ),
    (
        "french.md",
        "\u{ab} la me\u{301}moire est une i\u{302}le \u{bb} \u{2014} e\u{301}crit sur le tableau\npre\u{300}s de la caisse",
    ),
    (
        "lists.md",
        "more than two minutes into the \u{201c}Next actions\u{201d}\n  list, with a due date",
    ),
    (
        "lists.md",
        "Review the calendar for the coming week and  block\n  time for deep work",
    ),
    (
        "lists.md",
        "Read the \u{201c}Getting started\u{201d} guide.",
    ),
    (
        "lists.md",
        "think with them.  The links are where the thinking",
    ),
    (
        "table.md",
        "| Templater | Fills templates with \u{201c}variables\u{201d}  | active  |",
    ),
    (
        "table.md",
        "The table above is kept by hand.  Update it when a plugin's\nstatus changes",
    ),
    ("cjk.md", "作者认为，笔记的价值不在于收集，\n而在于连接。"),
    (
        "cjk.md",
        "日本語のメモ：毎朝、前日のノートを一つ読み返して、\n新しいリンクを一つ追加する。",
    ),
    (
        "cjk.md",
        "\u{300c}写作不是思考的结果，而是思考的媒介。\u{300d}这句话我抄在了书签上。",
    ),
];

/// One way a model misquotes a passage: its name and the function that applies it.
type Transformation = (&'static str, fn(&str) -> String);

/// How models quote: each transformation alone, then all of them at once.
fn transformations() -> Vec<Transformation> {
    vec![
        ("reflow", reflow),
        ("straight quotes", straighten),
        ("collapsed spaces", collapse),
        ("hard break dropped", drop_hard_breaks),
        ("nbsp as space", nbsp_as_space),
        ("composed accents", compose),
        ("all at once", |s| {
            compose(&nbsp_as_space(&collapse(&straighten(&reflow(
                &drop_hard_breaks(s),
            )))))
        }),
    ]
}

/// Lines re-flowed into one: a line break and the indentation around it become one space.
fn reflow(s: &str) -> String {
    let mut out = String::new();
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            let trimmed = out.trim_end_matches([' ', '\t']).len();
            out.truncate(trimmed);
            out.push(' ');
            out.push_str(line.trim_start_matches([' ', '\t']));
        } else {
            out.push_str(line);
        }
    }
    out
}

fn straighten(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            c => c,
        })
        .collect()
}

fn collapse(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        out.push(c);
    }
    out
}

fn drop_hard_breaks(s: &str) -> String {
    s.replace("  \n", "\n")
}

fn nbsp_as_space(s: &str) -> String {
    s.replace('\u{a0}', " ")
}

fn compose(s: &str) -> String {
    s.nfc().collect()
}

struct Suite {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    reg: Registry,
    next: usize,
}

/// How one edit ended.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// The note is exactly the expected text.
    Landed,
    /// Refused, the note untouched; the result's message.
    Refused(String),
    /// Anything else: the note changed somewhere it should not have.
    Elsewhere(String),
}

impl Suite {
    fn new() -> Suite {
        let tmp = tempfile::tempdir().unwrap();
        let vault = tmp.path().join("vault");
        fs::create_dir_all(&vault).unwrap();
        let paths = Paths::under(&tmp.path().join("data"));
        let ws = Workspace::open(
            Vault::open(&vault).unwrap(),
            &paths,
            &Config::default(),
            Actor::Agent,
        )
        .unwrap();
        let mut reg = Registry::new();
        workspace::register(&mut reg, &ws);
        Suite {
            _tmp: tmp,
            vault,
            reg,
            next: 0,
        }
    }

    /// A fresh copy of `fixture`, edited once with `find` → `replace`; `expected` is what the
    /// note must then be when the edit lands.
    async fn edit(&mut self, fixture: &str, find: &str, replace: &str, expected: &str) -> Outcome {
        self.next += 1;
        let name = format!("case-{:03}.md", self.next);
        let original = self::fixture(fixture);
        fs::write(self.vault.join(&name), &original).unwrap();
        let result = self
            .reg
            .call(
                "update_note",
                json!({"note": name, "replace_text": {"find": find, "replace": replace}}),
            )
            .await;
        let now = fs::read_to_string(self.vault.join(&name)).unwrap();
        match result {
            Ok(_) if now == expected => Outcome::Landed,
            Err(ToolError::Invalid(message)) if now == original => Outcome::Refused(message),
            other => Outcome::Elsewhere(format!("{other:?}\n--- note now:\n{now}")),
        }
    }
}

/// The note with `passage` (which occurs once) replaced by `replace`.
fn expected(fixture: &str, passage: &str, replace: &str) -> String {
    let text = self::fixture(fixture);
    assert_eq!(text.matches(passage).count(), 1, "{fixture}: {passage:?}");
    text.replacen(passage, replace, 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quoted_the_way_models_quote_prose_edits_land_exactly() {
    let mut suite = Suite::new();
    let (mut cases, mut landed, mut refused) = (0, 0, Vec::new());
    for (n, (fixture, passage)) in PASSAGES.iter().enumerate() {
        for (name, transform) in transformations() {
            let quote = transform(passage);
            if quote == *passage {
                continue;
            }
            cases += 1;
            let replace = format!("Rewritten passage {n}.");
            let want = expected(fixture, passage, &replace);
            match suite.edit(fixture, &quote, &replace, &want).await {
                Outcome::Landed => landed += 1,
                Outcome::Refused(message) => refused.push(format!(
                    "{fixture} passage {n} ({name}): {quote:?}\n  {message}"
                )),
                Outcome::Elsewhere(what) => {
                    panic!("{fixture} passage {n} ({name}) landed elsewhere: {what}")
                }
            }
        }
    }
    let rate = landed as f64 / cases as f64;
    eprintln!(
        "edit robustness: {landed} of {cases} quoted edits landed exactly ({:.1}%), {} refused, 0 elsewhere",
        rate * 100.0,
        refused.len()
    );
    for r in &refused {
        eprintln!("refused: {r}");
    }
    assert!(cases >= 40, "only {cases} cases");
    assert!(
        rate >= 0.95,
        "{landed} of {cases} landed:\n{}",
        refused.join("\n")
    );
}

/// A changed word is not a quoting habit: the edit is refused, and the result quotes the passage
/// the model meant, with its line number, so the retry can copy it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misquotes_are_refused_with_the_intended_passage() {
    let mut suite = Suite::new();
    let misquotes: &[(&str, &str, &str)] = &[
        // (fixture, what the model quoted, a line of the passage it meant)
        (
            "wrapped.md",
            "Type two opening round brackets and start typing the name of the note",
            "Obsidian can link to any note in your vault. Type two opening square",
        ),
        (
            "poem.md",
            "She said, \"We should come back in summer,\" and I said",
            "She said, \u{201c}We should come back in spring,\u{201d} and I said",
        ),
        (
            "lists.md",
            "Read the \"Getting going\" guide.",
            "1. Read the \u{201c}Getting started\u{201d} guide.",
        ),
        (
            "table.md",
            "| Calendar  | Shows weekly notes on a calendar   | paused  |",
            "| Calendar  | Shows daily notes on a calendar   | paused  |",
        ),
        (
            "cjk.md",
            "今天读完了《卡片笔记阅读法》。",
            "今天读完了《卡片笔记写作法》。作者认为，笔记的价值不在于收集，",
        ),
        (
            "french.md",
            "Le cafe\u{301} de la rue Mercie\u{300}re ferme a\u{300} sept heures.",
            "Le cafe\u{301} de la rue Mercie\u{300}re ouvre a\u{300} sept heures. On y prend un",
        ),
    ];
    for (fixture, quote, meant) in misquotes {
        let original = self::fixture(fixture);
        let line = original.lines().position(|l| l == *meant).unwrap() + 1;
        let line = format!("line {line}");
        let lines = format!("lines {}-", &line[5..]);
        match suite.edit(fixture, quote, "X", &original).await {
            Outcome::Refused(message) => {
                assert!(message.contains("not found"), "{fixture}: {message}");
                let shown = format!("{meant:?}");
                let shown = shown.trim_matches('"');
                assert!(
                    message.contains(shown)
                        && (message.contains(&format!("{line}:")) || message.contains(&lines)),
                    "{fixture}: the result should quote {shown} at {line}:\n{message}"
                );
            }
            other => panic!("{fixture}: a misquote must be refused, got {other:?}"),
        }
    }
}

/// A quote that matches several places once normalised is refused, naming where they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ambiguous_normalised_matches_are_refused() {
    let mut suite = Suite::new();
    for (quote, lines) in [
        ("Check the \u{201c}backup\u{201d}  drive.", "lines 3 and 4"),
        ("Step one:   start the server.", "lines 6 and 7"),
        ("Step  one: start\nthe server.", "lines 6 and 7"),
    ] {
        let original = fixture("repeats.md");
        match suite.edit("repeats.md", quote, "X", &original).await {
            Outcome::Refused(message) => {
                assert!(
                    message.contains("2 places") && message.contains(lines),
                    "{quote:?}: {message}"
                );
            }
            other => panic!("{quote:?}: an ambiguous quote must be refused, got {other:?}"),
        }
    }
    // An exact match wins over normalised ones: the straight-quoted line is the one meant.
    let want = expected("repeats.md", "Check the \"backup\" drive.", "Done.");
    assert_eq!(
        suite
            .edit("repeats.md", "Check the \"backup\" drive.", "Done.", &want)
            .await,
        Outcome::Landed
    );
}
