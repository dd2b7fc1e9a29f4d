//! `vaultchat [VAULT]`: the full-screen app.

use super::{Context, Failure, GlobalArgs};
use crate::agent::build::{configured_model, provider_choice};
use std::io::IsTerminal;
use std::process::ExitCode;

pub fn run(ctx: &Context, global: &GlobalArgs) -> Result<ExitCode, Failure> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(Failure::new(
            "the full-screen app needs a terminal; for scripts use `vaultchat ask`, `search` or `mcp`",
        ));
    }
    let vault = ctx.vault()?;
    let flags = super::ask_cmd::provider_flags(global);
    let (provider, provider_problem) = match provider_choice(&ctx.config, &flags) {
        Ok(choice) => (Some(choice), None),
        Err(problem) => (None, Some(format!("no agent: {problem}"))),
    };
    // Without a provider the status line still names what the config asks for.
    let kind = provider
        .as_ref()
        .map_or(ctx.config.provider.kind, |c| c.settings.kind);
    let model = match &provider {
        Some(choice) => choice.model.clone(),
        None => configured_model(&ctx.config, &flags).unwrap_or_else(|| "(none)".into()),
    };
    let launch = crate::host::Launch {
        vault,
        paths: ctx.paths.clone(),
        config: ctx.config.clone(),
        provider,
        provider_problem,
        provider_name: kind.as_str().to_string(),
        model,
        theme: ctx.config.ui.theme.clone().unwrap_or_else(|| "dark".into()),
        keymap: ctx
            .config
            .ui
            .keymap
            .clone()
            .unwrap_or_else(|| "default".into()),
    };
    crate::tui::run::run(launch)?;
    Ok(ExitCode::SUCCESS)
}
