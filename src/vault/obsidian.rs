//! What the vault's Obsidian settings say about daily notes and templates:
//! `.obsidian/daily-notes.json` (the core Daily notes plugin: `folder`, `format`, `template`) and
//! `.obsidian/templates.json` (the core Templates plugin: `folder`, `dateFormat`, `timeFormat`).
//!
//! These files are written by Obsidian, and by anyone who syncs the vault, so they are read as
//! untrusted: through the root handle (never through a link), at most [`MAX_SETTINGS_BYTES`],
//! and anything wrong with them — too big, not UTF-8, not JSON, a field of the wrong type — is a
//! warning that names the file, with Obsidian's own default in its place. They never stop
//! vaultchat. Absent files and empty fields are Obsidian's defaults, with no warning.

use super::Vault;
use super::contained::ContainedError;
use serde_json::Value;

/// The Daily notes plugin's settings file.
pub const DAILY_NOTES_FILE: &str = ".obsidian/daily-notes.json";

/// The Templates plugin's settings file.
pub const TEMPLATES_FILE: &str = ".obsidian/templates.json";

/// Obsidian's settings files are a few hundred bytes; a bigger one is not a settings file.
pub const MAX_SETTINGS_BYTES: usize = 64 * 1024;

/// Obsidian's default daily note format and `{{date}}` format.
pub const DEFAULT_DATE_FORMAT: &str = "YYYY-MM-DD";

/// Obsidian's default `{{time}}` format.
pub const DEFAULT_TIME_FORMAT: &str = "HH:mm";

/// Where daily notes go and what they start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyNotes {
    /// Vault-relative folder, no slashes at either end; "" is the vault root.
    pub folder: String,
    /// moment.js format of the note's name; may contain `/` (folders by year, month, …).
    pub format: String,
    /// Vault-relative path of the template note (as Obsidian stores it: `.md` may be left out).
    pub template: Option<String>,
}

impl Default for DailyNotes {
    fn default() -> Self {
        Self {
            folder: String::new(),
            format: DEFAULT_DATE_FORMAT.to_string(),
            template: None,
        }
    }
}

/// Where templates live and how their date and time variables are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Templates {
    /// Vault-relative folder of the templates; `None` when none is set.
    pub folder: Option<String>,
    /// moment.js format of `{{date}}`.
    pub date_format: String,
    /// moment.js format of `{{time}}`.
    pub time_format: String,
}

impl Default for Templates {
    fn default() -> Self {
        Self {
            folder: None,
            date_format: DEFAULT_DATE_FORMAT.to_string(),
            time_format: DEFAULT_TIME_FORMAT.to_string(),
        }
    }
}

/// Both plugins' settings, and what was wrong with the files (each warning names its file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub daily: DailyNotes,
    pub templates: Templates,
    pub warnings: Vec<String>,
}

/// Reads both settings files of `vault`. Never fails: what cannot be used is a warning and
/// Obsidian's default. Not logged here: the operation that reads them logs their warnings once
/// (`Workspace::obsidian_settings`), a quiet read (the permission check's) not at all.
pub fn read_settings(vault: &Vault) -> Settings {
    let mut warnings = Vec::new();
    let daily_file = read_json(vault, DAILY_NOTES_FILE, &mut warnings);
    let daily = daily_from(daily_file.as_ref(), &mut warnings);
    let templates_file = read_json(vault, TEMPLATES_FILE, &mut warnings);
    let templates = templates_from(templates_file.as_ref(), &mut warnings);
    Settings {
        daily,
        templates,
        warnings,
    }
}

fn daily_from(file: Option<&Value>, warnings: &mut Vec<String>) -> DailyNotes {
    let defaults = DailyNotes::default();
    let Some(file) = file else {
        return defaults;
    };
    let field =
        |key: &str, warnings: &mut Vec<String>| string_field(file, DAILY_NOTES_FILE, key, warnings);
    DailyNotes {
        folder: field("folder", warnings)
            .map(|f| folder_of(&f))
            .unwrap_or(defaults.folder),
        format: field("format", warnings).unwrap_or(defaults.format),
        template: field("template", warnings).map(|t| t.trim_matches('/').to_string()),
    }
}

fn templates_from(file: Option<&Value>, warnings: &mut Vec<String>) -> Templates {
    let defaults = Templates::default();
    let Some(file) = file else {
        return defaults;
    };
    let field =
        |key: &str, warnings: &mut Vec<String>| string_field(file, TEMPLATES_FILE, key, warnings);
    Templates {
        folder: field("folder", warnings)
            .map(|f| folder_of(&f))
            .filter(|f| !f.is_empty()),
        date_format: field("dateFormat", warnings).unwrap_or(defaults.date_format),
        time_format: field("timeFormat", warnings).unwrap_or(defaults.time_format),
    }
}

/// A folder as Obsidian writes it (`Journal/Daily/`, `/Journal`) without slashes at its ends.
fn folder_of(text: &str) -> String {
    text.trim().trim_matches('/').to_string()
}

/// The non-empty string `key` of `file`; absent, null or empty is `None` (Obsidian's default);
/// another type is a warning and `None`.
fn string_field(file: &Value, rel: &str, key: &str, warnings: &mut Vec<String>) -> Option<String> {
    match file.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(_) => {
            warnings.push(format!(
                "`{rel}`: `{key}` is not text, so Obsidian's default is used instead"
            ));
            None
        }
    }
}

/// The JSON object in `rel`, or `None` when the file is absent (silently) or unusable (with a
/// warning).
fn read_json(vault: &Vault, rel: &str, warnings: &mut Vec<String>) -> Option<Value> {
    // One open: the size comes from the open file, and at most one byte past the limit is read,
    // however large the file (a settings file of gigabytes costs a 64 KiB read).
    let (bytes, size) = match vault.handle().read_span(rel, 0, MAX_SETTINGS_BYTES + 1) {
        Ok(read) => read,
        Err(ContainedError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            warnings.push(format!(
                "`{rel}` cannot be read ({e}), so Obsidian's defaults are used"
            ));
            return None;
        }
    };
    if size > MAX_SETTINGS_BYTES as u64 || bytes.len() > MAX_SETTINGS_BYTES {
        let size = size.max(bytes.len() as u64);
        warnings.push(format!(
            "`{rel}` is {size} bytes, more than the {MAX_SETTINGS_BYTES} a settings file may have, so Obsidian's defaults are used"
        ));
        return None;
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        warnings.push(format!(
            "`{rel}` is not UTF-8 text, so Obsidian's defaults are used"
        ));
        return None;
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Some(value),
        Ok(_) => {
            warnings.push(format!(
                "`{rel}` is not a JSON object, so Obsidian's defaults are used"
            ));
            None
        }
        // The parser's message names a line and column, never the file's text.
        Err(e) => {
            warnings.push(format!(
                "`{rel}` is not valid JSON ({e}), so Obsidian's defaults are used"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn vault_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, bytes) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let vault = Vault::open(dir.path()).unwrap();
        (dir, vault)
    }

    #[test]
    fn absent_files_are_obsidians_defaults() {
        let (_dir, vault) = vault_with(&[]);
        let settings = read_settings(&vault);
        assert_eq!(settings, Settings::default());
        assert_eq!(settings.daily.folder, "");
        assert_eq!(settings.daily.format, "YYYY-MM-DD");
        assert_eq!(settings.daily.template, None);
        assert_eq!(settings.templates.folder, None);
        assert_eq!(settings.templates.date_format, "YYYY-MM-DD");
        assert_eq!(settings.templates.time_format, "HH:mm");
    }

    #[test]
    fn settings_are_read_as_obsidian_writes_them() {
        let (_dir, vault) = vault_with(&[
            (
                DAILY_NOTES_FILE,
                br#"{"folder": "Journal/Daily/", "format": "YYYY/MM/YYYY-MM-DD ddd", "template": "Templates/Daily", "autorun": true}"#,
            ),
            (
                TEMPLATES_FILE,
                "\u{feff}{\"folder\": \"/Templates\", \"dateFormat\": \"DD.MM.YYYY\", \"timeFormat\": \"h:mm A\"}"
                    .as_bytes(),
            ),
        ]);
        let settings = read_settings(&vault);
        assert_eq!(
            settings.daily,
            DailyNotes {
                folder: "Journal/Daily".into(),
                format: "YYYY/MM/YYYY-MM-DD ddd".into(),
                template: Some("Templates/Daily".into()),
            }
        );
        assert_eq!(
            settings.templates,
            Templates {
                folder: Some("Templates".into()),
                date_format: "DD.MM.YYYY".into(),
                time_format: "h:mm A".into(),
            }
        );
        assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);
    }

    #[test]
    fn empty_fields_are_defaults_without_a_warning() {
        let (_dir, vault) = vault_with(&[(
            DAILY_NOTES_FILE,
            br#"{"folder": "", "format": " ", "template": null}"#,
        )]);
        let settings = read_settings(&vault);
        assert_eq!(settings.daily, DailyNotes::default());
        assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);
    }

    #[test]
    fn broken_files_are_warnings_and_defaults() {
        let big = format!("{{\"folder\": \"{}\"}}", "a".repeat(MAX_SETTINGS_BYTES));
        let (_dir, vault) = vault_with(&[
            (DAILY_NOTES_FILE, br#"{"folder": "Journal", "format": 5"#),
            (TEMPLATES_FILE, big.as_bytes()),
        ]);
        let settings = read_settings(&vault);
        assert_eq!(settings.daily, DailyNotes::default());
        assert_eq!(settings.templates, Templates::default());
        assert_eq!(settings.warnings.len(), 2, "{:?}", settings.warnings);
        assert!(
            settings.warnings[0].contains(".obsidian/daily-notes.json` is not valid JSON"),
            "{:?}",
            settings.warnings
        );
        assert!(
            settings.warnings[1].contains("more than the 65536"),
            "{:?}",
            settings.warnings
        );

        let (_dir, vault) = vault_with(&[
            (DAILY_NOTES_FILE, br#"{"folder": ["a"], "format": "YYYY"}"#),
            (TEMPLATES_FILE, b"[1, 2]"),
        ]);
        let settings = read_settings(&vault);
        assert_eq!(settings.daily.folder, "");
        assert_eq!(settings.daily.format, "YYYY");
        assert_eq!(settings.templates, Templates::default());
        assert_eq!(settings.warnings.len(), 2, "{:?}", settings.warnings);
        assert!(settings.warnings[0].contains("`folder` is not text"));
        assert!(settings.warnings[1].contains("is not a JSON object"));

        let (_dir, vault) = vault_with(&[(DAILY_NOTES_FILE, b"{\"folder\": \"\xff\"}")]);
        let settings = read_settings(&vault);
        assert!(
            settings.warnings[0].contains("not UTF-8"),
            "{:?}",
            settings.warnings
        );
    }

    /// A settings file of 10 MB (or a sparse one of 4 GiB) is refused by its size, before any
    /// of it is read: one warning that names the file and its size, and Obsidian's defaults.
    #[test]
    fn a_huge_settings_file_is_one_warning_and_the_defaults() {
        let ten_mb = format!(
            "{{\"folder\": \"Journal\", \"pad\": \"{}\"}}",
            "x".repeat(10 * 1024 * 1024)
        );
        let (dir, vault) = vault_with(&[(DAILY_NOTES_FILE, ten_mb.as_bytes())]);
        let settings = read_settings(&vault);
        assert_eq!(settings.daily, DailyNotes::default());
        assert_eq!(settings.warnings.len(), 1, "{:?}", settings.warnings);
        let size = ten_mb.len();
        assert!(
            settings.warnings[0].starts_with(&format!(
                "`{DAILY_NOTES_FILE}` is {size} bytes, more than the 65536"
            )),
            "{:?}",
            settings.warnings
        );
        let sparse = std::fs::File::create(dir.path().join(TEMPLATES_FILE)).unwrap();
        sparse.set_len(4 << 30).unwrap();
        let settings = read_settings(&vault);
        assert_eq!(settings.templates, Templates::default());
        assert_eq!(settings.warnings.len(), 2, "{:?}", settings.warnings);
        assert!(settings.warnings[1].contains("is 4294967296 bytes"));
    }

    /// Whatever is wrong with the JSON, each file gives one warning that names it, and the
    /// defaults of what it would have set.
    #[test]
    fn invalid_json_is_one_warning_per_file_and_the_defaults() {
        for (text, says) in [
            (&b"{\"folder\": \"Journal\","[..], "is not valid JSON"),
            (b"", "is not valid JSON"),
            (b"{\"folder\": \"a\"} trailing", "is not valid JSON"),
            (b"\"Journal\"", "is not a JSON object"),
            (b"null", "is not a JSON object"),
            (b"{\"folder\": \"\xc3\"}", "is not UTF-8"),
        ] {
            let (_dir, vault) = vault_with(&[(DAILY_NOTES_FILE, text), (TEMPLATES_FILE, text)]);
            let settings = read_settings(&vault);
            assert_eq!(settings.daily, DailyNotes::default(), "{text:?}");
            assert_eq!(settings.templates, Templates::default(), "{text:?}");
            assert_eq!(
                settings.warnings.len(),
                2,
                "{text:?}: {:?}",
                settings.warnings
            );
            for (warning, file) in settings
                .warnings
                .iter()
                .zip([DAILY_NOTES_FILE, TEMPLATES_FILE])
            {
                assert!(
                    warning.starts_with(&format!("`{file}` {says}"))
                        && warning.ends_with("so Obsidian's defaults are used"),
                    "{text:?}: {warning}"
                );
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_settings_file_that_is_a_link_is_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.json"), br#"{"folder": "Elsewhere"}"#).unwrap();
        let (dir, vault) = vault_with(&[(".obsidian/keep", b"")]);
        std::os::unix::fs::symlink(
            outside.path().join("x.json"),
            dir.path().join(DAILY_NOTES_FILE),
        )
        .unwrap();
        let settings = read_settings(&vault);
        assert_eq!(settings.daily.folder, "");
        assert_eq!(settings.warnings.len(), 1, "{:?}", settings.warnings);
    }
}
