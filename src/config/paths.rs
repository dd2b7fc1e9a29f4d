//! Data locations (docs/configuration.md, "Where vaultchat keeps its files").
//!
//! Without an override every location follows the XDG base directories. `--data-dir DIR` (or
//! `VAULTCHAT_DATA_DIR`) puts *everything* under one folder, which is what tests and portable
//! installs want: nothing then touches the person's real config, database or cache.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    #[error(
        "cannot tell where to keep vaultchat's files: neither HOME nor the XDG_* variables are set; \
         set HOME or pass --data-dir DIR"
    )]
    NoHome,
}

/// Every file location vaultchat uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Folder of `config.toml`, `themes/`, `keymap.toml`.
    pub config_dir: PathBuf,
    /// Folder of the app database.
    pub data_dir: PathBuf,
    /// Folder of the per-vault index databases.
    pub index_dir: PathBuf,
    /// Folder of the log file.
    pub state_dir: PathBuf,
}

impl Paths {
    /// Resolve the locations from an explicit data dir (flag or `VAULTCHAT_DATA_DIR`, already
    /// merged by the caller) or from the environment's XDG variables.
    pub fn resolve(data_dir_override: Option<&Path>) -> Result<Self, PathsError> {
        Self::resolve_with(data_dir_override, &|key| std::env::var_os(key))
    }

    /// Same as [`Paths::resolve`], reading the environment through `env` so tests need not mutate
    /// the process environment.
    pub fn resolve_with(
        data_dir_override: Option<&Path>,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Self, PathsError> {
        if let Some(dir) = data_dir_override {
            return Ok(Self::under(dir));
        }
        let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let xdg = |var: &str, fallback: &str| -> Result<PathBuf, PathsError> {
            // The XDG spec says relative values are invalid and must be ignored.
            match env(var).map(PathBuf::from).filter(|p| p.is_absolute()) {
                Some(dir) => Ok(dir.join("vaultchat")),
                None => home
                    .as_ref()
                    .map(|h| h.join(fallback).join("vaultchat"))
                    .ok_or(PathsError::NoHome),
            }
        };
        Ok(Self {
            config_dir: xdg("XDG_CONFIG_HOME", ".config")?,
            data_dir: xdg("XDG_DATA_HOME", ".local/share")?,
            index_dir: xdg("XDG_CACHE_HOME", ".cache")?.join("index"),
            state_dir: xdg("XDG_STATE_HOME", ".local/state")?,
        })
    }

    /// All locations inside one folder.
    pub fn under(dir: &Path) -> Self {
        Self {
            config_dir: dir.to_path_buf(),
            data_dir: dir.to_path_buf(),
            index_dir: dir.join("index"),
            state_dir: dir.to_path_buf(),
        }
    }

    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    pub fn database_file(&self) -> PathBuf {
        self.data_dir.join("vaultchat.db")
    }

    pub fn log_file(&self) -> PathBuf {
        self.state_dir.join("vaultchat.log")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn xdg_variables_win_over_home() {
        let env = env_of(&[
            ("HOME", "/home/p"),
            ("XDG_CONFIG_HOME", "/cfg"),
            ("XDG_CACHE_HOME", "/cache"),
        ]);
        let paths = Paths::resolve_with(None, &env).unwrap();
        assert_eq!(
            paths.config_file(),
            PathBuf::from("/cfg/vaultchat/config.toml")
        );
        assert_eq!(paths.index_dir, PathBuf::from("/cache/vaultchat/index"));
        assert_eq!(
            paths.database_file(),
            PathBuf::from("/home/p/.local/share/vaultchat/vaultchat.db")
        );
        assert_eq!(
            paths.log_file(),
            PathBuf::from("/home/p/.local/state/vaultchat/vaultchat.log")
        );
    }

    #[test]
    fn relative_xdg_values_are_ignored() {
        let env = env_of(&[("HOME", "/home/p"), ("XDG_DATA_HOME", "relative/dir")]);
        let paths = Paths::resolve_with(None, &env).unwrap();
        assert_eq!(
            paths.data_dir,
            PathBuf::from("/home/p/.local/share/vaultchat")
        );
    }

    #[test]
    fn data_dir_overrides_everything() {
        let env = env_of(&[("HOME", "/home/p"), ("XDG_CONFIG_HOME", "/cfg")]);
        let paths = Paths::resolve_with(Some(Path::new("/tmp/vc")), &env).unwrap();
        assert_eq!(paths, Paths::under(Path::new("/tmp/vc")));
        assert_eq!(paths.config_file(), PathBuf::from("/tmp/vc/config.toml"));
        assert_eq!(paths.index_dir, PathBuf::from("/tmp/vc/index"));
    }

    #[test]
    fn no_home_is_a_clear_error() {
        let err = Paths::resolve_with(None, &env_of(&[])).unwrap_err();
        assert!(err.to_string().contains("--data-dir"), "{err}");
    }
}
