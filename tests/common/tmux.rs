//! A real terminal for end-to-end tests: a private tmux server running one command.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Start `command` (a shell command line) in a `width`×`height` pane on a private server.
    pub fn start(command: &str, width: u16, height: u16) -> Tmux {
        let socket = format!(
            "vaultchat-test-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
                % 1_000_000_000
        );
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
            ])
            .args(["-x", &width.to_string(), "-y", &height.to_string(), command])
            .status()
            .expect("tmux runs (scripts/install-test-deps installs it)");
        assert!(status.success());
        Tmux { socket }
    }

    /// Run a tmux command against this server; returns its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane's text (with `-S -200`, what scrolled off too).
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t", "-S", "-200"])
    }

    /// The pane's text with its colour and attribute escapes.
    pub fn screen_with_escapes(&self) -> String {
        self.run(&["capture-pane", "-p", "-e", "-t", "t", "-S", "-200"])
    }

    /// Wait (up to 30 s) until `check` accepts the screen; returns it.
    ///
    /// A frame reaches tmux in several writes, so one capture can show half of the new frame over
    /// the old one. The check must accept a second capture taken a moment later, and that later
    /// screen is the one returned: callers assert on it, and it is the settled frame.
    pub fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if check(&screen) {
                std::thread::sleep(Duration::from_millis(30));
                let settled = self.screen();
                if check(&settled) {
                    return settled;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{what} never appeared:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_text(&self, needle: &str) -> String {
        self.wait_for(needle, |s| s.contains(needle))
    }

    /// Send keys (`"Enter"`, `"C-q"`, `"y"`; `"-l"` first sends the rest literally).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn type_text(&self, text: &str) {
        self.keys(&["-l", text]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// A shell-quoted word.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The shell line that runs the app in a tmux pane against the fake provider at `base_url`:
/// `env ENV… ANTHROPIC_API_KEY=k TERM=xterm-256color vaultchat --data-dir DATA EXTRA… --provider
/// anthropic --base-url URL VAULT`, then `EXIT=<code>` and a pause, so a test can read the restored
/// screen after the app quits.
pub fn app_line(
    env: &[&str],
    data: &Path,
    base_url: &str,
    extra: &[String],
    vault: &Path,
) -> String {
    let mut words: Vec<String> = vec![
        super::bin().to_string(),
        "--data-dir".into(),
        data.display().to_string(),
    ];
    words.extend(extra.iter().cloned());
    words.extend([
        "--provider".into(),
        "anthropic".into(),
        "--base-url".into(),
        base_url.to_string(),
        vault.display().to_string(),
    ]);
    let words: Vec<String> = words.iter().map(|w| quote(w)).collect();
    format!(
        "env {} ANTHROPIC_API_KEY=k TERM=xterm-256color {}; echo EXIT=$?; sleep 60",
        env.join(" "),
        words.join(" ")
    )
}
