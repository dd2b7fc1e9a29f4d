//! Pasting an image into the chat end to end: a private X server (Xvfb) whose clipboard holds a
//! PNG (served by xclip), the app in tmux with DISPLAY pointing at it, Ctrl+V, the chip on
//! screen, a question, Enter — and the request the fake provider received carries the image as
//! an Anthropic base64 block whose bytes are a PNG of the pasted size and pixels.
//!
//! Needs `Xvfb` and `xclip` (scripts/install-test-deps installs them). Without them the test is
//! skipped on a developer's machine and fails in CI (`CI=true`), where they must be present.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text};
use common::tmux::{Tmux, app_line};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 200;

/// Children killed when the test ends, however it ends.
struct Killed(Vec<Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Whether the X tools are here; absent in CI is a failure, absent elsewhere a skip.
fn x_tools_present() -> bool {
    let missing: Vec<&str> = ["Xvfb", "xclip"]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        !in_ci,
        "{} missing in CI: scripts/install-test-deps installs them (Debian: xvfb, xclip)",
        missing.join(" and ")
    );
    eprintln!(
        "skipped: {} not installed (scripts/install-test-deps)",
        missing.join(" and ")
    );
    false
}

/// Start Xvfb on a free display (it picks one and prints its number with `-displayfd`).
fn start_xvfb(children: &mut Killed) -> String {
    let mut xvfb = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-nolisten",
            "tcp",
            "-screen",
            "0",
            "640x480x24",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb starts");
    let stdout = xvfb.stdout.take().unwrap();
    children.0.push(xvfb);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let number = line.trim();
    assert!(
        !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()),
        "Xvfb did not report a display: {line:?}"
    );
    format!(":{number}")
}

/// A PNG with a pattern in every channel, so a wrong pixel order or a lost row shows.
fn pattern_png(path: &Path) -> image::RgbaImage {
    let pixels = image::RgbaImage::from_fn(WIDTH, HEIGHT, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8, 255])
    });
    pixels
        .save_with_format(path, image::ImageFormat::Png)
        .unwrap();
    pixels
}

/// Put the PNG on the display's clipboard; xclip stays running to serve it.
fn serve_clipboard(display: &str, png: &Path, children: &mut Killed) {
    let xclip = Command::new("xclip")
        .args(["-quiet", "-selection", "clipboard", "-t", "image/png", "-i"])
        .arg(png)
        .env("DISPLAY", display)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("xclip starts");
    children.0.push(xclip);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let targets = Command::new("xclip")
            .args(["-selection", "clipboard", "-t", "TARGETS", "-o"])
            .env("DISPLAY", display)
            .output()
            .unwrap();
        if String::from_utf8_lossy(&targets.stdout).contains("image/png") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the clipboard never offered image/png"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_v_attaches_the_clipboard_image_and_the_request_carries_it() {
    if !x_tools_present() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let data = tmp.path().join("data");
    let png = tmp.path().join("pasted.png");
    let pixels = pattern_png(&png);

    let mut children = Killed(Vec::new());
    let display = start_xvfb(&mut children);
    serve_clipboard(&display, &png, &mut children);

    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text(
            "A colour gradient.",
            FakeUsage {
                input: 100,
                output: 5,
                cache_read: 0,
                cache_write: 0,
            },
        ),
        chunking: Chunking::Whole,
    }]);
    let display_var = format!("DISPLAY={display}");
    let tmux = Tmux::start(
        &app_line(
            &["-u", "WAYLAND_DISPLAY", &display_var],
            &data,
            &fake.base_url,
            &[],
            &vault,
        ),
        120,
        40,
    );
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.keys(&["C-v"]);
    let screen = tmux.wait_text("[image 1 · PNG 320×200 ·");
    assert!(screen.contains("image 1 attached"), "{screen}");
    tmux.type_text("What is in this picture?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("A colour gradient.");
    // The sent message keeps its chip in the transcript; the input box is empty again.
    assert!(screen.contains("› What is in this picture?"), "{screen}");
    assert_eq!(
        screen.matches("[image 1 · PNG 320×200").count(),
        1,
        "{screen}"
    );

    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let messages = requests[0].body["messages"].as_array().unwrap();
    let content = &messages.last().unwrap()["content"];
    let block = &content[0];
    assert_eq!(block["type"], "image", "{content}");
    assert_eq!(block["source"]["type"], "base64");
    assert_eq!(block["source"]["media_type"], "image/png");
    let bytes = vaultchat::attach::base64_decode(block["source"]["data"].as_str().unwrap())
        .expect("the image data is base64");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    let sent = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .unwrap()
        .to_rgba8();
    assert_eq!(sent.dimensions(), (WIDTH, HEIGHT));
    assert!(sent == pixels, "the pixels arrive as they were copied");
    assert_eq!(content[1]["type"], "text");
    assert_eq!(content[1]["text"], "What is in this picture?");

    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// A photo dropped on the terminal arrives as its quoted path in a bracketed paste (as GNOME
/// Terminal and others send it): the chat attaches the image — a 3000×2000 JPEG scaled to the
/// long-edge limit and still a JPEG — instead of typing the path, and the request carries it.
#[test]
fn a_dropped_photo_is_attached_scaled_not_typed() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let data = tmp.path().join("data");
    let photo = tmp.path().join("My Photo.jpg");
    image::RgbImage::from_fn(3000, 2000, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
    })
    .save_with_format(&photo, image::ImageFormat::Jpeg)
    .unwrap();

    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text(
            "A photo of stripes.",
            FakeUsage {
                input: 100,
                output: 5,
                cache_read: 0,
                cache_write: 0,
            },
        ),
        chunking: Chunking::Whole,
    }]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.run(&["set-buffer", &format!("'{}'", photo.display())]);
    tmux.run(&["paste-buffer", "-p", "-t", "t"]);
    let screen = tmux.wait_text("[image 1 · JPEG 1568×1045 ·");
    assert!(
        !screen.contains("My Photo.jpg"),
        "the path is not typed: {screen}"
    );
    tmux.type_text("What is this?");
    tmux.keys(&["Enter"]);
    tmux.wait_text("A photo of stripes.");

    let requests = fake.requests();
    let content = &requests[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"];
    assert_eq!(
        content[0]["source"]["media_type"], "image/jpeg",
        "{content}"
    );
    let bytes =
        vaultchat::attach::base64_decode(content[0]["source"]["data"].as_str().unwrap()).unwrap();
    let sent = image::load_from_memory_with_format(&bytes, image::ImageFormat::Jpeg).unwrap();
    assert_eq!((sent.width(), sent.height()), (1568, 1045));
}

/// CRC-32 (IEEE), as PNG chunks use it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A small PNG whose header claims 50000×50000 (a decompression bomb's shape without its
/// megabytes): a 64×64 gray image with its IHDR rewritten and its CRC made right.
fn bomb_png(path: &Path) {
    let mut png = Vec::new();
    image::GrayImage::new(64, 64)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    png[16..20].copy_from_slice(&50_000u32.to_be_bytes());
    png[20..24].copy_from_slice(&50_000u32.to_be_bytes());
    let crc = crc32(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(path, png).unwrap();
}

/// The attack on the app: the path of a decompression bomb, then of a 2 GB sparse
/// `.png`, dropped on the terminal while the app runs under a 1 GB address-space limit. Each is
/// refused on the screen with its reason; the app keeps running, the message typed before is
/// kept, and it quits normally.
#[test]
fn a_dropped_bomb_or_huge_file_is_refused_and_the_app_lives_on() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let data = tmp.path().join("data");
    let bomb = tmp.path().join("bomb.png");
    bomb_png(&bomb);
    let huge = tmp.path().join("huge.png");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();

    let fake = FakeLlm::start(vec![]);
    let line = format!(
        "prlimit --as=1073741824 -- {}",
        app_line(&[], &data, &fake.base_url, &[], &vault)
    );
    let tmux = Tmux::start(&line, 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("keep this");
    for (path, reason) in [
        (&bomb, "bomb.png is 50000×50000 pixels (2500 megapixels)"),
        (&huge, "huge.png is 2048 MB; files of at most 32 MB"),
    ] {
        tmux.run(&["set-buffer", &format!("'{}'", path.display())]);
        tmux.run(&["paste-buffer", "-p", "-t", "t"]);
        tmux.wait_for(reason, |s| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(reason)
        });
    }
    let screen = tmux.screen();
    assert!(screen.contains("keep this"), "{screen}");
    assert!(!screen.contains("[image 1"), "{screen}");
    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(fake.requests().is_empty());
}
