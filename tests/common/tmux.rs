//! A real terminal for end-to-end tests: a private tmux server running one command.

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
    pub fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
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
