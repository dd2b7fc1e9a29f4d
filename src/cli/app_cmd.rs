//! `vaultchat [VAULT]`: the full-screen app.

use super::{Context, Failure, GlobalArgs};
use crate::llm::ProviderKind;
use std::io::IsTerminal;
use std::process::ExitCode;

pub fn run(ctx: &Context, global: &GlobalArgs) -> Result<ExitCode, Failure> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(Failure(
            "the full-screen app needs a terminal; for scripts use `vaultchat ask`, `search` or `mcp`".into(),
        ));
    }
    let vault = ctx.vault()?;
    let (provider, provider_problem, model, kind) =
        match super::ask_cmd::provider_settings(ctx, global) {
            Ok((settings, model)) => {
                let kind = settings.kind;
                (Some(settings), None, model, kind)
            }
            Err(problem) => (
                None,
                Some(format!("no agent: {problem}")),
                global
                    .model
                    .clone()
                    .or_else(|| ctx.config.provider.model.clone())
                    .unwrap_or_else(|| "(none)".into()),
                match ctx.config.provider.kind {
                    crate::config::ProviderKind::Anthropic => ProviderKind::Anthropic,
                    crate::config::ProviderKind::Openai => ProviderKind::OpenAi,
                },
            ),
        };
    let launch = crate::tui::run::Launch {
        vault,
        paths: ctx.paths.clone(),
        config: ctx.config.clone(),
        provider,
        provider_problem,
        provider_name: match kind {
            ProviderKind::Anthropic => "anthropic".into(),
            ProviderKind::OpenAi => "openai".into(),
        },
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
