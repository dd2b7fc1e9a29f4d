//! `vaultchat ask PROMPT`: one agent turn without the full-screen app (README.md).
//!
//! This is a front end like the app: it sends one `Op::UserTurn`, prints the reply as it
//! streams, and answers each permission request by the `--approve` policy — on a terminal it
//! shows the diff and asks.

use super::outln;
use super::{Context, Failure};
use crate::agent::{
    Agent, AgentEvent, Attachment, BuildError, CompactionInfo, FocusedNote, NoteContext, Op,
    PendingTools, PermissionRequest, PromptFrame, Proposal, ProviderFlags, Resume, SessionBuilder,
    TurnEnd, TurnLimits, TurnOutcome,
};
use crate::commands;
use crate::hooks::{Event, Hooks};
use crate::mcp::McpStartup;
use crate::mcp::plugins::ServerPlan;
use crate::permission::Answer;
use crate::store::Actor;
use crate::text::diff::LineKind;
use crate::tools::session::EditorState;
use crate::tools::workspace::Workspace;
use crate::vault::{Access, note_io};
use clap::{Args, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct AskArgs {
    /// What to ask.
    pub prompt: String,
    /// The note to treat as open in the editor (its session tools edit it).
    #[arg(long, value_name = "PATH")]
    pub note: Option<String>,
    /// The selected text of --note, as START..END in characters (end exclusive).
    #[arg(long, value_name = "START..END", requires = "note")]
    pub selection: Option<String>,
    /// Continue the session with this id (or a unique prefix of it).
    #[arg(long, value_name = "ID", conflicts_with = "continue_")]
    pub session: Option<String>,
    /// Continue the vault's most recent session.
    #[arg(long = "continue")]
    pub continue_: bool,
    /// Start a new session from the summary of the vault's most recent one (or of --session ID),
    /// linked to it: a long session continued with a fresh context.
    #[arg(long = "continue-new", conflicts_with = "continue_")]
    pub continue_new: bool,
    /// How to answer permission requests: ask on the terminal, deny them all, or approve them
    /// all (paths outside the vault and protected folders stay refused).
    #[arg(long, value_enum, default_value_t = Approve::Ask)]
    pub approve: Approve,
    /// Print one JSON object with the reply, tool calls, edits and usage instead of streaming.
    #[arg(long)]
    pub json: bool,
    /// The most model responses in this turn.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// Attach an image (PNG, JPEG, GIF or WebP; repeatable).
    #[arg(long = "image", value_name = "FILE")]
    pub images: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Approve {
    Ask,
    None,
    All,
}

/// A usage error: exit code 2.
fn usage(message: String) -> Result<ExitCode, Failure> {
    eprintln!("vaultchat: {}", crate::quote::terminal_text(&message));
    Ok(ExitCode::from(2))
}

pub fn run(ctx: &Context, global: &super::GlobalArgs, args: &AskArgs) -> Result<ExitCode, Failure> {
    let vault = ctx.vault()?;
    let choice = match crate::agent::build::provider_choice(&ctx.config, &provider_flags(global)) {
        Ok(choice) => choice,
        Err(problem) => return usage(problem.0),
    };
    let attachments = match attachments(ctx, args) {
        Ok(attachments) => attachments,
        Err(message) => return usage(message),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // The person's MCP servers start now, while the vault opens; the agent waits for them
    // before its first request.
    // So do the vault's plugins, when the person trusts them.
    let plan = ServerPlan::new(&ctx.config, &vault, &ctx.paths.database_file());
    for problem in &plan.problems {
        eprintln!("vaultchat: {}", crate::quote::terminal_text(problem));
    }
    let (mcp, window_probe) = {
        let _runtime = runtime.enter();
        (
            McpStartup::spawn(plan.specs),
            // The model's window, from its server, while the vault opens.
            crate::llm::models::spawn_probe(&ctx.config.provider, &choice.settings, &choice.model),
        )
    };
    let workspace = Workspace::open(vault, &ctx.paths, &ctx.config, Actor::Agent)?;
    let (hooks, hooks_done) =
        super::hook_notices::hooks_on_stderr(ctx, &runtime, workspace.vault());
    workspace.on_written(hooks.written_listener());
    let context = match note_context(&workspace, args) {
        Ok(c) => c,
        Err(message) => return usage(message),
    };
    let turn = match command_turn(ctx, &workspace, &args.prompt, &context, (&runtime, &mcp)) {
        Ok(turn) => turn,
        Err(message) => return usage(message),
    };
    let resume = match (&args.session, args.continue_, args.continue_new) {
        (session, _, true) => Resume::ContinueNew(session.clone()),
        (Some(id), _, false) => Resume::Session(id.clone()),
        (None, true, false) => Resume::Latest,
        (None, false, false) => Resume::New,
    };
    if let Some(probe) = window_probe
        && let Err(e) = runtime.block_on(probe)
    {
        tracing::warn!("the context window probe ended early: {e}");
    }
    let agent = SessionBuilder::new(&ctx.config, ctx.paths.database_file(), workspace, choice)
        .max_steps(args.max_steps)
        .pending_tools((!mcp.is_empty()).then(|| tools_reporting_failures(mcp.clone())))
        .build(resume)
        .map_err(|e| match e {
            BuildError::Rules(e) => Failure::new(format!("{}: {e}", ctx.config_path.display())),
            e => Failure::new(e.to_string()),
        })?;

    hooks.set_session(agent.session_id());
    hooks.fire(Event::SessionStart, Vec::new());
    let outcome = runtime.block_on(async {
        let driven = drive(agent, args, attachments, context, turn, &hooks).await;
        hooks.fire(Event::SessionEnd, Vec::new());
        // The hooks run to their end (each bounded by its timeout), so `ask` returns after them.
        hooks_done.wait(super::hook_notices::HOOKS_AT_EXIT).await;
        // Closed before the runtime ends, so every server is waited for (no zombies, no
        // orphans) rather than killed on the way out.
        mcp.shutdown().await;
        driven
    })?;
    report(args, outcome)
}

/// `--image` files as attachments: at most a message's worth, each read within the size limit.
fn attachments(ctx: &Context, args: &AskArgs) -> Result<Vec<Attachment>, String> {
    if args.images.len() > crate::attach::MAX_IMAGES_PER_MESSAGE {
        return Err(format!(
            "{} images given; a message takes at most {}",
            args.images.len(),
            crate::attach::MAX_IMAGES_PER_MESSAGE
        ));
    }
    args.images
        .iter()
        .map(|path| {
            crate::attach::load_image(path, ctx.config.attachments.max_file_bytes())
                .map(|image| Attachment {
                    media_type: image.media_type.to_string(),
                    data: image.data,
                })
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// The turn's result: the JSON document with `--json`, the error on stderr unless a notice said
/// it already, and the exit code (1 for an error or an interruption).
fn report(args: &AskArgs, outcome: Driven) -> Result<ExitCode, Failure> {
    let Driven {
        outcome,
        thinking,
        compactions,
        said,
    } = outcome;
    if args.json {
        let mut out = std::io::stdout().lock();
        let mut value = serde_json::to_value(&outcome)?;
        // The model's reasoning, apart from `reply`; absent when it did not think aloud.
        if let (false, Some(fields)) = (thinking.is_empty(), value.as_object_mut()) {
            fields.insert("thinking".into(), thinking.into());
        }
        if !compactions.is_empty() {
            value["compactions"] = serde_json::to_value(&compactions)?;
        }
        serde_json::to_writer(&mut out, &value)?;
        writeln!(out)?;
    } else if !outcome.reply.is_empty() {
        outln!();
    }
    if let Some(error) = outcome.error.as_ref().filter(|e| !said.contains(e)) {
        eprintln!(
            "vaultchat: {}",
            crate::quote::terminal_text(&error.to_string())
        );
    }
    Ok(match outcome.stop_reason {
        TurnEnd::Error | TurnEnd::Interrupted => ExitCode::from(1),
        TurnEnd::EndTurn
        | TurnEnd::MaxTokens
        | TurnEnd::Refusal
        | TurnEnd::ContextWindowExceeded
        | TurnEnd::MaxSteps => ExitCode::SUCCESS,
    })
}

/// The servers' tools once they started; a server that did not start is named on stderr (it
/// never fails the turn: the model works with the tools there are).
fn tools_reporting_failures(mcp: McpStartup) -> PendingTools {
    Box::pin(async move {
        let servers = mcp.ready().await;
        super::servers::say_not_started(servers.statuses());
        servers.tools()
    })
}

/// What one turn of `ask` came to.
struct Driven {
    outcome: TurnOutcome,
    /// The model's reasoning (each response's thinking, separated by a blank line).
    thinking: String,
    /// The compactions made during the turn.
    compactions: Vec<CompactionInfo>,
    /// What was already said on stderr (notices), so the turn's error is not said twice.
    said: Vec<String>,
}

/// Run one turn, printing and answering as it goes.
/// The op that starts the turn: the prompt as typed, or the command it named made into one.
fn first_op(
    args: &AskArgs,
    attachments: Vec<Attachment>,
    context: NoteContext,
    turn: Option<CommandTurn>,
) -> Op {
    match turn {
        Some((text, limits, frame)) => Op::CommandTurn {
            text,
            attachments,
            context,
            limits,
            frame,
        },
        None => Op::UserTurn {
            text: commands::message_text(&args.prompt).into_owned(),
            attachments,
            context,
        },
    }
}

async fn drive(
    agent: Agent,
    args: &AskArgs,
    attachments: Vec<Attachment>,
    context: NoteContext,
    turn: Option<CommandTurn>,
    hooks: &Hooks,
) -> Result<Driven, Failure> {
    let (ops, mut events, task) = agent.spawn();
    ops.send(first_op(args, attachments, context, turn))
        .await
        .map_err(|_| Failure::new("the agent stopped before the turn began"))?;
    let chatty = !args.json;
    let show_tools = std::io::stderr().is_terminal();
    let mut outcome = None;
    let mut thinking = String::new();
    // Whether something else came since the last thinking: the next thinking is a new response's.
    let mut thinking_ended = false;
    let mut compactions = Vec::new();
    let mut said = Vec::new();
    while let Some(event) = events.recv().await {
        if !matches!(event, AgentEvent::ThinkingDelta(_)) {
            thinking_ended = !thinking.is_empty();
        }
        match event {
            // A new session exists from its first turn on: its writes' hooks name it.
            AgentEvent::TurnStarted { session_id } => hooks.set_session(Some(&session_id)),
            AgentEvent::Usage(_) | AgentEvent::CompactDone => {}
            AgentEvent::Compacted(info) => {
                notice(&crate::agent::compaction_line(&info));
                compactions.push(info);
            }
            // Kept out of the printed reply; `--json` reports it in its own field.
            AgentEvent::ThinkingDelta(text) => {
                if thinking_ended {
                    thinking.push_str("\n\n");
                    thinking_ended = false;
                }
                thinking.push_str(&text);
            }
            AgentEvent::TextDelta(text) if chatty => print_reply(&text),
            AgentEvent::TextDelta(_) => {}
            AgentEvent::ToolCallStarted { name, input, .. } if show_tools => eprintln!(
                "\n· {} {}",
                crate::quote::terminal(&name),
                crate::quote::terminal(&input.to_string())
            ),
            AgentEvent::ToolCallStarted { .. } => {}
            AgentEvent::ToolCallFinished(record) => {
                tracing::info!(tool = %record.name, is_error = record.is_error, decision = ?record.decision, "tool call");
            }
            AgentEvent::Notice(text) => {
                notice(&text);
                said.push(text);
            }
            // `ask` opens no editor (its --note is not `in_editor`), so no edit is addressed to one.
            AgentEvent::EditorEdit { id, path, .. } => {
                tracing::warn!(%path, "an editor edit without an editor");
                let _ = ops
                    .send(Op::EditorApplied {
                        id,
                        result: no_editor_here(),
                    })
                    .await;
            }
            AgentEvent::PermissionRequested(request) => {
                let (answer, hunks) = answer_for(args.approve, &request).await;
                let _ = ops
                    .send(Op::Decision {
                        request: request.id,
                        answer,
                        hunks,
                    })
                    .await;
            }
            AgentEvent::TurnDone(done) => {
                hooks.set_session(Some(&done.session_id));
                hooks.fire(Event::AfterTurn, Vec::new());
                outcome = Some(done);
                let _ = ops.send(Op::Shutdown).await;
            }
        }
    }
    let _ = task.await;
    outcome
        .map(|outcome| Driven {
            outcome,
            thinking,
            compactions,
            said,
        })
        .ok_or_else(|| Failure::new("the agent stopped without finishing the turn"))
}

/// A line on stderr, escaped (it may quote the model, a note or a server).
fn notice(text: &str) {
    eprintln!("vaultchat: {}", crate::quote::terminal_text(text));
}

/// Part of the reply on stdout as it streams. The model may repeat what a note or a tool result
/// said, escapes and all, so it is escaped too.
fn print_reply(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(crate::quote::terminal_text(text).as_bytes());
    let _ = out.flush();
}

/// The `--approve` policy's answer; `ask` asks on the terminal (and denies without one).
async fn answer_for(approve: Approve, request: &PermissionRequest) -> (Answer, Option<Vec<bool>>) {
    match approve {
        Approve::All => (Answer::Once, None),
        Approve::None => (
            Answer::Deny {
                reason: Some("vaultchat ask runs with --approve none".into()),
            },
            None,
        ),
        Approve::Ask => {
            if !std::io::stdin().is_terminal() {
                return (
                    Answer::Deny {
                        reason: Some(
                            "no terminal to ask the person on (use --approve all to allow writes)"
                                .into(),
                        ),
                    },
                    None,
                );
            }
            let request = request.clone();
            tokio::task::spawn_blocking(move || prompt_on_terminal(&request))
                .await
                .unwrap_or((Answer::Deny { reason: None }, None))
        }
    }
}

/// Show the request with its coloured diff on stderr and read the answer from stdin.
fn prompt_on_terminal(request: &PermissionRequest) -> (Answer, Option<Vec<bool>>) {
    let colour = std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\nvaultchat wants to run {}",
        crate::quote::terminal(&request.tool)
    );
    let _ = writeln!(
        err,
        "  why it asks: {}",
        crate::quote::terminal(&request.reason)
    );
    match &request.proposal {
        Some(proposal) => write_proposal(&mut err, proposal, colour),
        None => {
            let _ = writeln!(
                err,
                "  input: {}",
                crate::quote::terminal(&request.input.to_string())
            );
        }
    }
    (read_answer(&mut err, request), None)
}

/// `text` in the SGR colour `code` when `colour` is on.
fn paint(colour: bool, code: &str, text: &str) -> String {
    if colour {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// A proposed change: its summary, then each hunk (a change to several files, a move, names each
/// file before its first hunk). Text from the model or the note is escaped for the terminal.
fn write_proposal(err: &mut impl Write, proposal: &Proposal, colour: bool) {
    let _ = writeln!(
        err,
        "  {}  {}",
        crate::quote::terminal(&proposal.summary),
        paint(colour, "1", &proposal.diff.summary())
    );
    let mut file_starts = Vec::new();
    let mut first = 0;
    for file in &proposal.files {
        file_starts.push((first, file));
        first += file.hunks;
    }
    for (index, hunk) in proposal.diff.hunks.iter().enumerate() {
        for (_, file) in file_starts.iter().filter(|(start, _)| *start == index) {
            let name = if file.path == file.path_after {
                file.path.clone()
            } else {
                format!("{} → {}", file.path, file.path_after)
            };
            let name = format!("■ {}", crate::quote::terminal(&name));
            let _ = writeln!(err, "{}", paint(colour, "1", &name));
        }
        let header = format!(
            "@@ -{},{} +{},{} @@",
            hunk.old_start + 1,
            hunk.old_len,
            hunk.new_start + 1,
            hunk.new_len
        );
        let _ = writeln!(err, "{}", paint(colour, "36", &header));
        for line in &hunk.lines {
            let (mark, code) = match line.kind {
                LineKind::Added => ("+", "32"),
                LineKind::Removed => ("-", "31"),
                LineKind::Context => (" ", "2"),
            };
            let text = format!("{mark}{}", crate::quote::terminal(&line.text));
            let _ = writeln!(err, "{}", paint(colour, code, &text));
        }
    }
}

/// The options the request allows, then the person's answer from stdin: Enter alone (or anything
/// unknown) denies, with an optional reason for the model.
fn read_answer(err: &mut impl Write, request: &PermissionRequest) -> Answer {
    let mut options = vec!["[y] once"];
    if request.offer_session {
        options.push("[s] this session");
    }
    if request.offer_always {
        options.push("[a] always");
    }
    options.push("[n] deny (default)");
    let _ = write!(err, "{}: ", options.join("  "));
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().read_line(&mut line).is_err() {
        return Answer::Deny { reason: None };
    }
    match line.trim() {
        "y" | "Y" => Answer::Once,
        "s" | "S" if request.offer_session => Answer::Session,
        "a" | "A" if request.offer_always => Answer::Always { with_path: false },
        _ => {
            let _ = write!(err, "reason for the model (optional): ");
            let _ = err.flush();
            let mut reason = String::new();
            let _ = std::io::stdin().read_line(&mut reason);
            let reason = reason.trim().to_string();
            Answer::Deny {
                reason: (!reason.is_empty()).then_some(reason),
            }
        }
    }
}

/// `--note` and `--selection` as the agent's note context.
fn note_context(workspace: &Workspace, args: &AskArgs) -> Result<NoteContext, String> {
    let Some(name) = &args.note else {
        return Ok(NoteContext::default());
    };
    let path = workspace
        .resolve_note(name, Access::Write)
        .map_err(|e| format!("--note: {e}"))?;
    let note = note_io::read_note(&path).map_err(|e| format!("--note: {e}"))?;
    let chars = note.text.chars().count();
    let selection = match &args.selection {
        None => None,
        Some(spec) => {
            let parsed = spec.split_once("..").and_then(|(a, b)| {
                Some((
                    a.trim().parse::<usize>().ok()?,
                    b.trim().parse::<usize>().ok()?,
                ))
            });
            match parsed {
                Some((start, end)) if start < end && end <= chars => Some(start..end),
                Some(_) => {
                    return Err(format!(
                        "--selection {spec}: the note has {chars} characters; give START..END with START < END ≤ {chars}"
                    ));
                }
                None => {
                    return Err(format!(
                        "--selection {spec}: write it as START..END in characters, e.g. 0..42"
                    ));
                }
            }
        }
    };
    let cursor = selection.as_ref().map_or(0, |s| s.start);
    Ok(NoteContext {
        note: Some(FocusedNote {
            path: path.rel().to_string(),
            editor: EditorState {
                text: note.text,
                selection,
                cursor,
            },
            in_editor: false,
        }),
    })
}

/// The text, limits and prompt frame of a turn a command starts.
type CommandTurn = (String, TurnLimits, PromptFrame);

/// A prompt that runs one of the person's or the vault's commands (`/weekly-review ARGS`), or an
/// MCP server's prompt (`/server:prompt ARGS`, asked of the server once the servers started):
/// its prompt and its limits (a command file's made by the host's rule, `host::file_turn`, as in
/// the app). `None` for a prompt that is no command (plain text, or a path such as
/// `/etc/hosts`); an error for a built-in of the chat, a name no command has (saying why the
/// vault's are not offered, when they are not) and a prompt that cannot be made.
fn command_turn(
    ctx: &Context,
    workspace: &Workspace,
    prompt: &str,
    context: &NoteContext,
    (runtime, mcp): (&tokio::runtime::Runtime, &McpStartup),
) -> Result<Option<CommandTurn>, String> {
    let Some((name, rest)) = commands::command_invocation(prompt) else {
        return Ok(None);
    };
    let mut catalog = commands::catalog(&ctx.paths, workspace.vault());
    if catalog.find(name).is_none() && name.contains(':') && !mcp.is_empty() {
        let command = runtime.block_on(async {
            let servers = mcp.ready().await;
            let listing = servers.prompts().await;
            // A server that could not list its prompts is said once, as in the app.
            for failure in &listing.new_failures {
                notice(failure);
            }
            catalog.add_prompts(listing);
            let command = catalog.find(name).cloned()?;
            Some(commands::get_prompt(&servers, &command, rest).await)
        });
        if let Some(got) = command {
            let (text, frame) = crate::host::prompt_turn(name, got?)?;
            return Ok(Some((text, TurnLimits::default(), frame)));
        }
    }
    for problem in &catalog.problems {
        tracing::warn!("a command is left out: {problem}");
    }
    let Some(command) = catalog.find(name) else {
        return Err(crate::host::no_such_command(name, &catalog));
    };
    let (text, limits) = crate::host::file_turn(command, rest, context, &mut |tag| {
        workspace
            .notes_tagged(tag, commands::MAX_TAGGED_NOTES + 1)
            .map_err(|e| e.to_string())
    })?;
    Ok(Some((text, limits, PromptFrame::default())))
}

/// The provider flags of the command line.
pub(super) fn provider_flags(global: &super::GlobalArgs) -> ProviderFlags {
    ProviderFlags {
        provider: global.provider.clone(),
        model: global.model.clone(),
        base_url: global.base_url.clone(),
    }
}

/// `ask` has no editor: an edit addressed to one is refused, so the call does not wait forever.
fn no_editor_here() -> crate::agent::EditorEditResult {
    crate::agent::EditorEditResult::Refused("`vaultchat ask` has no editor open".into())
}
