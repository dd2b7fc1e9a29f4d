//! Configuration: where vaultchat keeps its files (XDG, or one `--data-dir`) and the user's
//! `config.toml`, validated into typed settings with errors that name the file and the key.

mod file;
pub mod hooks;
pub mod http;
pub mod locality;
pub mod own_files;
mod paths;
pub mod prices;

pub(crate) use file::line_of_key;
pub use file::{
    Config, ConfigError, EmbeddingsConfig, FilePaneMode, IndexConfig, McpConfig, McpServerConfig,
    PermissionsConfig, Price, ProviderConfig, ProviderKind, ToolSetMode, ToolsMode, UiConfig,
    VAULT_PATH_VARIABLE, is_mcp_server_name, mcp_server_problem,
};
pub use paths::{Paths, PathsError};
pub use prices::{BUILT_IN_AS_OF, ModelPrice, PriceSource};
