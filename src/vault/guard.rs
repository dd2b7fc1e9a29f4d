//! Placeholder: replaced by the path guard implementation.
use std::path::{Path, PathBuf};

/// Folders inside a vault that belong to other programs (or to vaultchat itself) and are never written.
pub const PROTECTED_DIRS: [&str; 4] = [".git", ".obsidian", ".trash", ".vaultchat"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("the vault folder {path} cannot be opened: {source}")]
    VaultUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone)]
pub struct Vault {
    root: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultPath {
    rel: String,
    abs: PathBuf,
}

impl VaultPath {
    pub fn rel(&self) -> &str {
        &self.rel
    }
    pub fn abs(&self) -> &Path {
        &self.abs
    }
}

impl Vault {
    pub fn open(root: impl AsRef<Path>) -> Result<Self, PathError> {
        let root = root.as_ref();
        let canonical = root
            .canonicalize()
            .map_err(|source| PathError::VaultUnreadable {
                path: root.to_path_buf(),
                source,
            })?;
        Ok(Self { root: canonical })
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn resolve(&self, input: &str, _access: Access) -> Result<VaultPath, PathError> {
        Ok(VaultPath {
            rel: input.to_string(),
            abs: self.root.join(input),
        })
    }
}
