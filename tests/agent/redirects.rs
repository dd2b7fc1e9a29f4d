//! `[privacy] local_only` holds for every byte: a server that answers with a redirect is not
//! followed — not by the chat (both wire formats), the window probe, `doctor`'s provider check or
//! the embeddings client (docs/safety.md, "Threat model: servers (redirects)").
//!
//! Each test runs in a network namespace of its own, where the "public" address 203.0.113.5
//! (TEST-NET-3) lives on the namespace's loopback: vaultchat runs inside it, the configured
//! server listens on its 127.0.0.1 and answers every request (or some) with a 307 or 302 to
//! 203.0.113.5, where a second listener counts what reaches it. Nothing leaves the namespace,
//! and a followed redirect would be seen by that listener. Needs root and `ip netns` (it fails
//! without them, unless `VAULTCHAT_SKIP_NETNS_TESTS` is set).

use crate::common;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The address that stands for "another machine on the internet".
const PUBLIC: &str = "203.0.113.5";

/// A network namespace with only a loopback device, holding 127.0.0.1 and [`PUBLIC`].
struct Netns {
    name: String,
}

impl Netns {
    fn new() -> Option<Netns> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "vc-redirect-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let ip = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !ip(&["netns", "add", &name]) {
            // A test that cannot run says so; it is skipped only when asked to be.
            assert!(
                std::env::var_os("VAULTCHAT_SKIP_NETNS_TESTS").is_some(),
                "`ip netns add` failed: these tests need root and iproute2 (set VAULTCHAT_SKIP_NETNS_TESTS=1 to skip them)"
            );
            eprintln!("SKIPPED: no network namespace (VAULTCHAT_SKIP_NETNS_TESTS is set)");
            return None;
        }
        let netns = Netns { name };
        assert!(ip(&["-n", &netns.name, "link", "set", "lo", "up"]));
        assert!(ip(&[
            "-n",
            &netns.name,
            "addr",
            "add",
            &format!("{PUBLIC}/32"),
            "dev",
            "lo"
        ]));
        Some(netns)
    }

    /// Run `work` on a thread that has entered the namespace: sockets it creates and processes it
    /// starts belong to the namespace.
    fn within<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> T {
        let path = PathBuf::from("/run/netns").join(&self.name);
        std::thread::spawn(move || {
            let handle = std::fs::File::open(&path).unwrap();
            rustix::thread::move_into_link_name_space(
                handle.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .unwrap();
            work()
        })
        .join()
        .unwrap()
    }

    fn listen(&self, host: &'static str) -> TcpListener {
        self.within(move || TcpListener::bind((host, 0)).unwrap())
    }

    fn output(&self, mut command: Command) -> Output {
        self.within(move || command.output().unwrap())
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// One request as a listener saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    body: String,
}

/// What a listener answers to a request: status line and headers (without the blank line) and
/// body.
type Answer = Box<dyn Fn(&Seen) -> (String, String) + Send + Sync>;

/// A one-request-per-connection HTTP/1.1 server on `listener`, recording what it is sent.
struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(listener: TcpListener, answer: Answer) -> Server {
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let answer = Arc::new(answer);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (record, answer) = (record.clone(), answer.clone());
                std::thread::spawn(move || serve(stream, &record, &answer));
            }
        });
        Server { addr, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, record: &Mutex<Vec<Seen>>, answer: &Answer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let seen = Seen {
        method: parts.next().unwrap_or_default().to_string(),
        path: parts.next().unwrap_or_default().to_string(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    record.lock().unwrap().push(seen.clone());
    let (head, body) = answer(&seen);
    let mut stream = stream;
    let _ = write!(
        stream,
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

/// The configured server (on 127.0.0.1) and the "public" one it redirects to.
struct Pair {
    netns: Netns,
    local: Server,
    public: Server,
}

impl Pair {
    /// `redirects(request)` says which requests the local server redirects (with `status`) to
    /// the same path on the public address; the others get `otherwise`.
    fn start(
        status: u16,
        redirects: fn(&Seen) -> bool,
        otherwise: fn(&Seen) -> (String, String),
    ) -> Option<Pair> {
        let netns = Netns::new()?;
        let public = Server::start(
            netns.listen(PUBLIC),
            Box::new(|_| {
                (
                    "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain".into(),
                    "reached the public address".into(),
                )
            }),
        );
        let target = public.addr;
        let reason = if status == 307 {
            "Temporary Redirect"
        } else {
            "Found"
        };
        let local = Server::start(
            netns.listen("127.0.0.1"),
            Box::new(move |seen| {
                if redirects(seen) {
                    (
                        format!(
                            "HTTP/1.1 {status} {reason}\r\nLocation: http://{target}{}",
                            seen.path
                        ),
                        String::new(),
                    )
                } else {
                    otherwise(seen)
                }
            }),
        );
        Some(Pair {
            netns,
            local,
            public,
        })
    }

    fn base(&self) -> String {
        format!("http://{}", self.local.addr)
    }

    /// The redirect was seen by the local server, refused, and nothing reached the public one.
    fn assert_refused(&self, what: &str, output: &str, status: u16) {
        assert!(
            !self.local.seen().is_empty(),
            "{what}: the local server was never asked\n{output}"
        );
        let reached: Vec<String> = self
            .public
            .seen()
            .iter()
            .map(|seen| format!("{} {} ({} bytes)", seen.method, seen.path, seen.body.len()))
            .collect();
        assert!(
            reached.is_empty(),
            "{what} ({status}): the redirect was followed to {PUBLIC}: {reached:#?}\n{output}"
        );
        for part in [
            format!(
                "answered {status} with a redirect to http://{}",
                self.public.addr
            ),
            "vaultchat follows no redirects".to_string(),
            "nothing was sent there".to_string(),
        ] {
            assert!(
                output.contains(&part),
                "{what} ({status}): {part:?} is not in\n{output}"
            );
        }
    }
}

fn everything(_: &Seen) -> bool {
    true
}

fn nothing_else(_: &Seen) -> (String, String) {
    ("HTTP/1.1 404 Not Found".into(), String::new())
}

const NOTE: &str = "# Plan\n\nThe secret plan lives in this note.\n";

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

fn setup(config: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), NOTE).unwrap();
    let data = tmp.path().join("data");
    let path = tmp.path().join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[provider]\nidle_timeout_secs = 3\nconnect_timeout_secs = 2\nmax_retries = 0\n[privacy]\nlocal_only = true\n{config}"
        ),
    )
    .unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
        config: path,
    }
}

fn command(s: &Setup, args: &[&str]) -> Command {
    let mut c = common::cmd(&s.data, &s.vault);
    c.arg("--config")
        .arg(&s.config)
        .args(args)
        .env("VAULTCHAT_LOG", "vaultchat=info");
    c
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn log(s: &Setup) -> String {
    std::fs::read_to_string(s.data.join("vaultchat.log")).unwrap_or_default()
}

/// A chat through the given provider, every request of it redirected: refused, and the prompt
/// (with the note it names) reaches nobody else.
fn chat_redirect_is_refused(provider: &str, base_suffix: &str) {
    for status in [307, 302] {
        let Some(pair) = Pair::start(status, everything, nothing_else) else {
            return;
        };
        let s = setup("");
        let base = format!("{}{base_suffix}", pair.base());
        let mut chat = command(
            &s,
            &[
                "--provider",
                provider,
                "--base-url",
                &base,
                "--model",
                "m",
                "ask",
                "--note",
                "Plan.md",
                "what is the plan?",
            ],
        );
        chat.env("ANTHROPIC_API_KEY", "sk-ant-test");
        let out = pair.netns.output(chat);
        let output = text(&out);
        assert!(!out.status.success(), "{output}");
        pair.assert_refused(provider, &output, status);
        let posted: Vec<Seen> = pair
            .local
            .seen()
            .into_iter()
            .filter(|seen| {
                seen.path.ends_with("/chat/completions") || seen.path.ends_with("/messages")
            })
            .collect();
        assert!(
            posted.iter().any(|seen| seen.body.contains("secret plan")),
            "the chat request never reached the local server: {posted:#?}\n{output}"
        );
        assert_eq!(posted.len(), 1, "a refused redirect is not retried");
    }
}

#[test]
fn openai_chat_redirect_is_refused_and_reaches_nothing() {
    chat_redirect_is_refused("openai", "/v1");
}

#[test]
fn anthropic_chat_redirect_is_refused_and_reaches_nothing() {
    chat_redirect_is_refused("anthropic", "");
}

/// The window probe (`GET /v1/models`, `/props`, `/api/show`) runs before each `ask`: its
/// redirects are refused (and logged) while the chat itself, not redirected, answers.
#[test]
fn window_probe_redirect_is_refused_and_reaches_nothing() {
    fn probes(seen: &Seen) -> bool {
        seen.method != "POST" || seen.path.starts_with("/api/")
    }
    fn chat(_: &Seen) -> (String, String) {
        let chunk = |delta: &str, finish: &str| {
            format!(
                "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
            )
        };
        (
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream".into(),
            format!(
                "{}{}data: [DONE]\n\n",
                chunk(
                    "{\"role\":\"assistant\",\"content\":\"Local answer.\"}",
                    "null"
                ),
                chunk("{}", "\"stop\"")
            ),
        )
    }
    for status in [307, 302] {
        let Some(pair) = Pair::start(status, probes, chat) else {
            return;
        };
        let s = setup("");
        let base = format!("{}/v1", pair.base());
        let out = pair.netns.output(command(
            &s,
            &[
                "--provider",
                "openai",
                "--base-url",
                &base,
                "--model",
                "m",
                "ask",
                "hello",
            ],
        ));
        let output = text(&out);
        assert!(out.status.success(), "{output}");
        assert!(output.contains("Local answer."), "{output}");
        assert!(
            pair.local
                .seen()
                .iter()
                .any(|seen| seen.method == "GET" && seen.path == "/v1/models"),
            "the probe never asked: {:#?}",
            pair.local.seen()
        );
        pair.assert_refused("the window probe", &log(&s), status);
    }
}

/// `doctor` asks the provider for its model list: the redirect is reported as the problem.
#[test]
fn doctor_provider_check_redirect_is_refused_and_reaches_nothing() {
    for status in [307, 302] {
        let Some(pair) = Pair::start(status, everything, nothing_else) else {
            return;
        };
        let s = setup("");
        let base = format!("{}/v1", pair.base());
        let out = pair.netns.output(command(
            &s,
            &[
                "--provider",
                "openai",
                "--base-url",
                &base,
                "--model",
                "m",
                "doctor",
            ],
        ));
        let output = text(&out);
        assert!(
            pair.local
                .seen()
                .iter()
                .any(|seen| seen.path == "/v1/models"),
            "{output}"
        );
        pair.assert_refused("doctor", &output, status);
    }
}

/// `vaultchat index` embeds the notes for semantic search (the client `semantic_search_notes`
/// uses too): the note text goes to the configured server only.
#[test]
fn embeddings_redirect_is_refused_and_reaches_nothing() {
    for status in [307, 302] {
        let Some(pair) = Pair::start(status, everything, nothing_else) else {
            return;
        };
        let s = setup(&format!(
            "[embeddings]\nbase_url = \"{}/v1\"\nmodel = \"e\"\n",
            pair.base()
        ));
        let out = pair.netns.output(command(&s, &["index"]));
        let output = text(&out);
        assert!(!out.status.success(), "{output}");
        assert!(
            pair.local
                .seen()
                .iter()
                .any(|seen| seen.path == "/v1/embeddings" && seen.body.contains("secret plan")),
            "{output}"
        );
        pair.assert_refused("embeddings", &output, status);
    }
}
