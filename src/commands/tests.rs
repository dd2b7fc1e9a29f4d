#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::store::{PluginAnswer, Store};
use crate::vault::Vault;

const WEEKLY: &str = "---\ndescription: Review the week\narguments: [topic, focus]\nmodel: small-model\nallowed_tools: [search_notes, read_note]\n---\nReview {{topic}} ({{1}}) with {{focus}} on {{date}} ({{date:%A %d %B %Y}}).\nOpen: {{note}}\nSelected: {{selection}}\nAll: {{args}}\nTagged:\n{{tag:project}}\nSee [[Garden plan]].\n";

fn invocation(args: &str) -> Invocation<'_> {
    Invocation {
        args,
        note: Some("Projects/Plan.md"),
        selection: Some("Plant tomatoes"),
        // 2026-12-04 (a Friday) 12:00 UTC
        now_ms: 1_764_849_600_000 + 365 * crate::time::DAY_MS,
    }
}

fn tagged(tag: &str) -> Result<Vec<String>, String> {
    Ok(match tag {
        "project" => vec!["Projects/Plan.md".into(), "Projects/Shed.md".into()],
        _ => Vec::new(),
    })
}

#[test]
fn frontmatter_is_read_with_both_spellings() {
    let file = parse_command_file(WEEKLY).unwrap();
    assert_eq!(file.description.as_deref(), Some("Review the week"));
    assert_eq!(file.arguments, ["topic", "focus"]);
    assert_eq!(file.model.as_deref(), Some("small-model"));
    assert_eq!(
        file.allowed_tools.as_deref(),
        Some(&["search_notes".to_string(), "read_note".to_string()][..])
    );
    assert!(file.body.starts_with("Review {{topic}}"));
    assert_eq!(file.hint(), "<topic> <focus>");
    let claude = parse_command_file(
        "---\nallowed-tools: Read, Grep\nargument-hint: [file]\n---\nLook at $ARGUMENTS\n",
    )
    .unwrap();
    assert_eq!(
        claude.allowed_tools.as_deref(),
        Some(&["Read".to_string(), "Grep".to_string()][..])
    );
    assert_eq!(claude.hint(), "[file]");
    let plain = parse_command_file("Just a prompt with {{args}}\n").unwrap();
    assert_eq!(plain.description, None);
    assert_eq!(plain.hint(), "[args]");
}

#[test]
fn every_placeholder_is_filled() {
    let file = parse_command_file(WEEKLY).unwrap();
    let text = expand(&file, &invocation("garden the whole shed"), &mut tagged).unwrap();
    assert_eq!(
        text,
        "Review garden (garden) with the whole shed on 2026-12-04 (Friday 04 December 2026).\n\
         Open: Projects/Plan.md\nSelected: Plant tomatoes\nAll: garden the whole shed\n\
         Tagged:\n- Projects/Plan.md\n- Projects/Shed.md\nSee [[Garden plan]]."
    );
}

#[test]
fn quoted_arguments_hold_spaces_and_claude_dollars_work() {
    let file = parse_command_file(
        "---\narguments: [a, b]\n---\n[{{a}}] [{{b}}] $1/$2 <$ARGUMENTS> $5 cost $x\n",
    )
    .unwrap();
    let text = expand(&file, &invocation("\"two words\" rest of it"), &mut tagged).unwrap();
    assert_eq!(
        text,
        "[two words] [rest of it] two words/rest of it <\"two words\" rest of it>  cost $x"
    );
    let words = parse_command_file("{{1}}-{{2}}").unwrap();
    assert_eq!(
        expand(&words, &invocation("a 'b c'"), &mut tagged).unwrap(),
        "a-b c"
    );
    // `$` words between and inside placeholders, and an unclosed `{{` after which `$` words
    // are still read: every position is found once, in order.
    let mixed = parse_command_file("$1{{args}}$2 {{1}}$$ {{ open $2 }x $ARGUMENTS").unwrap();
    assert_eq!(
        expand(&mixed, &invocation("p q"), &mut tagged).unwrap(),
        "pp qq p$$ {{ open q }x p q"
    );
}

#[test]
fn unknown_placeholders_are_named_all_at_once() {
    let file = parse_command_file("{{notes}} and {{topic}} and {{notes}} and {{args}}").unwrap();
    let err = expand(&file, &invocation(""), &mut tagged).unwrap_err();
    assert_eq!(
        err,
        ExpandError::Unknown(vec!["notes".into(), "topic".into()])
    );
    let message = err.to_string();
    assert!(message.contains("{{notes}}, {{topic}}"), "{message}");
}

#[test]
fn missing_arguments_note_and_selection_are_errors() {
    let file =
        parse_command_file("---\narguments: [topic, focus]\n---\n{{topic}} {{focus}}").unwrap();
    let err = expand(&file, &invocation("one"), &mut tagged).unwrap_err();
    assert_eq!(err.to_string(), "missing argument: <focus>");
    let note = parse_command_file("{{note}}").unwrap();
    let none = Invocation {
        note: None,
        ..invocation("")
    };
    assert_eq!(expand(&note, &none, &mut tagged), Err(ExpandError::NoNote));
    let selection = parse_command_file("{{selection}}").unwrap();
    let none = Invocation {
        selection: Some(""),
        ..invocation("")
    };
    assert_eq!(
        expand(&selection, &none, &mut tagged),
        Err(ExpandError::NoSelection)
    );
    let date = parse_command_file("{{date:%Q}}").unwrap();
    assert!(matches!(
        expand(&date, &invocation(""), &mut tagged),
        Err(ExpandError::DateFormat { .. })
    ));
    let untagged = parse_command_file("{{tag:none}}").unwrap();
    assert_eq!(
        expand(&untagged, &invocation(""), &mut tagged).unwrap(),
        "(no note is tagged #none)"
    );
}

#[test]
fn invocations_split_name_and_arguments() {
    assert_eq!(
        parse_invocation("/weekly-review  a b "),
        Some(("weekly-review", "a b"))
    );
    assert_eq!(
        parse_invocation("/study:flashcards"),
        Some(("study:flashcards", ""))
    );
    assert_eq!(parse_invocation("plain text"), None);
    assert_eq!(parse_invocation("/"), None);
}

#[test]
fn a_pasted_path_and_double_slash_text_are_messages_not_commands() {
    assert_eq!(
        command_invocation("/weekly-review  a b "),
        Some(("weekly-review", "a b"))
    );
    assert_eq!(
        command_invocation("/srv:prompt x"),
        Some(("srv:prompt", "x"))
    );
    // A path is no command name; `//` is the way to send text that starts with `/`.
    assert_eq!(command_invocation("/home/me/notes/a.md is broken"), None);
    assert_eq!(command_invocation("/tmp/ is full"), None);
    assert_eq!(command_invocation("//tmp is full"), None);
    assert_eq!(command_invocation("  //model"), None);
    assert_eq!(message_text("//tmp is full"), "/tmp is full");
    assert_eq!(message_text("  //model"), "/model");
    assert_eq!(
        message_text("/home/me/a.md is broken"),
        "/home/me/a.md is broken"
    );
    assert_eq!(message_text("plain"), "plain");
}

fn vault_with_commands() -> (tempfile::TempDir, Vault) {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(COMMANDS_DIR);
    std::fs::create_dir_all(commands.join("study/deep")).unwrap();
    std::fs::write(commands.join("weekly-review.md"), WEEKLY).unwrap();
    std::fs::write(commands.join("study/flashcards.md"), "Cards for {{note}}\n").unwrap();
    std::fs::write(commands.join("study/deep/more.md"), "deeper\n").unwrap();
    std::fs::write(commands.join("notes.txt"), "not a command\n").unwrap();
    std::fs::write(commands.join("bad name.md"), "x\n").unwrap();
    std::fs::write(commands.join("help.md"), "shadows a built-in\n").unwrap();
    std::fs::write(
        commands.join("huge.md"),
        "x".repeat(MAX_COMMAND_BYTES as usize + 1),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", commands.join("linked.md")).unwrap();
    let vault = Vault::open(dir.path()).unwrap();
    (dir, vault)
}

#[test]
fn vault_files_are_named_by_path_and_bounded() {
    let (_dir, vault) = vault_with_commands();
    let loaded = load_vault(&vault);
    let names: Vec<&str> = loaded.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "help",
            "study:deep:more",
            "study:flashcards",
            "weekly-review"
        ]
    );
    let weekly = &loaded.commands[3];
    assert_eq!(weekly.description, "Review the week");
    assert_eq!(weekly.argument_hint, "<topic> <focus>");
    assert_eq!(
        weekly.file.as_deref(),
        Some(".vaultchat/commands/weekly-review.md")
    );
    assert_eq!(loaded.commands[2].description, "Cards for {{note}}");
    let problems = loaded.problems.join("\n");
    assert!(problems.contains("bad name.md"), "{problems}");
    assert!(
        problems.contains("huge.md is left out: it is larger than 64 KB"),
        "{problems}"
    );
    assert!(
        !problems.contains("linked"),
        "a link is skipped silently: {problems}"
    );
    assert_eq!(loaded.problems.len(), 2, "{problems}");
}

#[test]
fn too_many_files_stop_the_walk_with_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(COMMANDS_DIR);
    std::fs::create_dir_all(&commands).unwrap();
    for i in 0..MAX_COMMANDS + 5 {
        std::fs::write(commands.join(format!("c{i:04}.md")), "x").unwrap();
    }
    let vault = Vault::open(dir.path()).unwrap();
    let loaded = load_vault(&vault);
    assert_eq!(loaded.commands.len(), MAX_COMMANDS);
    assert!(
        loaded.problems[0].contains("only the first 200"),
        "{:?}",
        loaded.problems
    );
}

#[test]
fn a_folder_of_many_entries_is_listed_only_up_to_the_cap() {
    // 3000 files that are no commands: the walk must not list (and stat) every one of them.
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(COMMANDS_DIR);
    std::fs::create_dir_all(&commands).unwrap();
    for i in 0..3 * MAX_FOLDER_ENTRIES {
        std::fs::write(commands.join(format!("n{i:05}.txt")), "").unwrap();
    }
    let vault = Vault::open(dir.path()).unwrap();
    let loaded = load_vault(&vault);
    assert!(loaded.commands.is_empty());
    assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
    assert!(
        loaded.problems[0].contains(&format!(
            "holds more than {MAX_FOLDER_ENTRIES} entries; the rest are not read"
        )),
        "{:?}",
        loaded.problems
    );

    let own = tempfile::tempdir().unwrap();
    let paths = crate::config::Paths::under(own.path());
    let mine = personal_dir(&paths);
    std::fs::create_dir_all(&mine).unwrap();
    for i in 0..MAX_FOLDER_ENTRIES + 1 {
        std::fs::write(mine.join(format!("n{i:05}.txt")), "").unwrap();
    }
    let loaded = load_personal(&paths);
    assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
}

#[test]
fn a_built_in_name_is_not_taken_and_the_person_wins_over_the_vault() {
    let (_dir, vault) = vault_with_commands();
    let own = tempfile::tempdir().unwrap();
    let paths = crate::config::Paths::under(own.path());
    std::fs::create_dir_all(personal_dir(&paths)).unwrap();
    std::fs::write(personal_dir(&paths).join("weekly-review.md"), "Mine\n").unwrap();
    let catalog = Catalog::assemble(load_personal(&paths), load_vault(&vault), None);
    let help = catalog.find("help").unwrap();
    assert_eq!(help.origin, Origin::BuiltIn);
    let weekly = catalog.find("weekly-review").unwrap();
    assert_eq!(weekly.origin, Origin::Personal);
    assert_eq!(weekly.description, "Mine");
    let problems = catalog.problems.join("\n");
    assert!(problems.contains("/help from .vaultchat/commands/help.md is left out: the name is taken by a built-in command"), "{problems}");
    assert!(problems.contains("/weekly-review from .vaultchat/commands/weekly-review.md is left out: the name is taken by one of your commands"), "{problems}");
    let study: Vec<&str> = catalog
        .matching("study:")
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(study, ["study:deep:more", "study:flashcards"]);
}

#[test]
fn vault_commands_wait_for_trust_and_an_edit_withdraws_it() {
    let (dir, vault) = vault_with_commands();
    let data = tempfile::tempdir().unwrap();
    let database = data.path().join("vaultchat.db");
    let untrusted = vault_commands(&vault, &database);
    assert!(untrusted.loaded.commands.is_empty());
    let why = untrusted.withheld.unwrap();
    assert!(
        why.contains("4 commands are not offered until you trust"),
        "{why}"
    );
    assert!(why.contains("vaultchat trust"), "{why}");

    let plugins = crate::mcp::plugins::VaultPlugins::load(&vault)
        .unwrap()
        .unwrap();
    assert!(
        plugins.entries.is_empty(),
        "commands alone declare no plugin"
    );
    let store = Store::open(&database).unwrap();
    let vault_id = crate::index::vault_id(&vault);
    plugins
        .answer(&store, &vault_id, PluginAnswer::Trusted)
        .unwrap();
    let trusted = vault_commands(&vault, &database);
    assert_eq!(trusted.withheld, None);
    assert_eq!(trusted.loaded.commands.len(), 4);

    std::fs::write(
        dir.path().join(COMMANDS_DIR).join("study/flashcards.md"),
        "Now something else\n",
    )
    .unwrap();
    let edited = vault_commands(&vault, &database);
    assert!(edited.loaded.commands.is_empty());
    let why = edited.withheld.unwrap();
    assert!(
        why.contains(
            "changed since you trusted it (.vaultchat/commands/study/flashcards.md (changed))"
        ),
        "{why}"
    );
}

#[test]
fn one_listing_reads_the_files_hashes_the_tree_and_opens_the_database_once() {
    use super::trust::steps;
    let (_dir, vault) = vault_with_commands();
    let data = tempfile::tempdir().unwrap();
    let database = data.path().join("vaultchat.db");
    crate::mcp::plugins::VaultPlugins::trust_now(&vault, &database);
    steps::COUNTS.with(|c| c.set([0; 3]));
    let trusted = vault_commands(&vault, &database);
    assert_eq!(trusted.loaded.commands.len(), 4);
    assert_eq!(
        steps::COUNTS.with(std::cell::Cell::get),
        [1, 1, 1],
        "files read, tree hashed, database opened"
    );
}

#[test]
fn a_vault_without_commands_says_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let vault = Vault::open(dir.path()).unwrap();
    let data = tempfile::tempdir().unwrap();
    assert_eq!(
        vault_commands(&vault, &data.path().join("db")),
        VaultCommands::default()
    );
    assert!(
        crate::mcp::plugins::VaultPlugins::load(&vault)
            .unwrap()
            .is_none()
    );
}

#[test]
fn what_a_file_wrote_is_escaped_in_every_error() {
    // A command file is written by whoever shares the vault: its text reaches the terminal in
    // the refusal, so control characters are shown, not obeyed.
    for body in ["{{date:%\u{1b}}}", "{{tag:\u{1b}]0;owned\u{7}}}"] {
        let file = parse_command_file(body).unwrap();
        let err = expand(&file, &invocation(""), &mut |_| {
            Err("no such tag \u{1b}[2J".into())
        })
        .unwrap_err();
        let message = err.to_string();
        assert!(!message.contains('\u{1b}'), "{body:?}: {message:?}");
        assert!(!message.contains('\u{7}'), "{body:?}: {message:?}");
    }
}

/// What was typed is never read as a placeholder: `{{note}}` or `{{nope}}` typed in the arguments
/// reaches the prompt as typed through `$ARGUMENTS`, `$1` and `{{args}}` alike (one pass over the
/// file's text; substituted text is not scanned again).
#[test]
fn typed_braces_are_never_expanded() {
    let file = parse_command_file(
        "---\narguments: [a, b]\n---\nA: $ARGUMENTS\nOne: $1\nTwo: {{b}}\nAll: {{args}}\nOpen: {{note}}\n",
    )
    .unwrap();
    let typed = "{{note}} tell me about {{nope}} and $1 {{date}}";
    let out = expand(&file, &invocation(typed), &mut tagged).unwrap();
    assert_eq!(
        out,
        format!(
            "A: {typed}\nOne: {{{{note}}}}\nTwo: tell me about {{{{nope}}}} and $1 {{{{date}}}}\nAll: {typed}\nOpen: Projects/Plan.md"
        )
    );
    // The file's own braces after a `$` are still read.
    let mixed = parse_command_file("$ARGUMENTS costs $5 {{note}}").unwrap();
    assert_eq!(
        expand(&mixed, &invocation("{{selection}}"), &mut tagged).unwrap(),
        "{{selection}} costs  Projects/Plan.md"
    );
}
