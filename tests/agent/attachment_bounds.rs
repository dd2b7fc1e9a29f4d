//! `vaultchat ask --image` with what an attacker (or a slip of the hand) names instead of a photo:
//! `/dev/zero`, a named pipe, a 2 GB sparse `.png`, a decompression bomb. The real binary runs as
//! a child under a 1 GB address-space limit (`prlimit --as`); each is refused with a usage error
//! (exit 2) that says why, in well under a second, and nothing reaches the provider.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::FakeLlm;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// The address-space limit the child runs under: the attacks grew to 21 GB.
const ADDRESS_SPACE: &str = "--as=1073741824";
/// How long a refusal may take.
const PROMPTLY: Duration = Duration::from_secs(1);
/// When a child that has not answered is killed (today's code blocks on a FIFO forever).
const GIVE_UP: Duration = Duration::from_secs(20);

struct Setup {
    tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

/// Start the binary once untimed: the first start of a large debug binary reads it from disk,
/// which is not what the refusals are timed for.
fn warm_up() {
    let out = std::process::Command::new(common::bin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

fn setup(config: &str) -> Setup {
    warm_up();
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let data = tmp.path().join("data");
    let config_path = tmp.path().join("config.toml");
    std::fs::write(&config_path, config).unwrap();
    Setup {
        tmp,
        vault,
        data,
        config: config_path,
    }
}

/// `vaultchat ask --image IMAGE` under the address-space limit: its output and how long it took
/// (the child is killed after [`GIVE_UP`], and the output then says so).
fn ask_with_image(s: &Setup, fake: &FakeLlm, image: &Path) -> (Output, Duration) {
    let reference = common::cmd(&s.data, &s.vault);
    let mut c = std::process::Command::new("prlimit");
    c.arg(ADDRESS_SPACE)
        .arg("--")
        .arg(reference.get_program())
        .args(reference.get_args())
        .arg("--config")
        .arg(&s.config)
        .args(["--provider", "anthropic", "--base-url", &fake.base_url])
        .args(["ask", "what is this?", "--image"])
        .arg(image)
        .env_remove("VAULTCHAT_VAULT")
        .env_remove("VAULTCHAT_DATA_DIR")
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = c.spawn().expect("prlimit (util-linux) runs the child");
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > GIVE_UP {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = started.elapsed();
    (child.wait_with_output().unwrap(), elapsed)
}

/// The child was refused promptly with a usage error whose message contains `expected`.
fn assert_refused(what: &str, (out, elapsed): (Output, Duration), expected: &str, fake: &FakeLlm) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{what}: exit {:?} after {elapsed:?}\n{stderr}",
        out.status
    );
    assert!(stderr.contains(expected), "{what}: {stderr}");
    assert!(elapsed < PROMPTLY, "{what}: refused after {elapsed:?}");
    assert!(fake.requests().is_empty(), "{what}: a request was sent");
    eprintln!("{what}: refused in {elapsed:?}");
}

/// CRC-32 (IEEE) as PNG chunks use it.
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

/// A small valid PNG whose header then claims `width`×`height`: the shape of a decompression
/// bomb (a real one, 2.4 MB of compressed zeros, decodes to 2.5 GB) without the megabytes. The
/// compressed IDAT is the small image's; the IHDR's CRC is made right, so a decoder believes it.
pub fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut png = Vec::new();
    image::GrayImage::from_pixel(64, 64, image::Luma([0]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    assert_eq!(&png[12..16], b"IHDR");
    png[16..20].copy_from_slice(&width.to_be_bytes());
    png[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    png
}

#[test]
fn a_device_a_fifo_a_huge_file_and_a_bomb_are_refused_within_a_second() {
    let s = setup("");
    let fake = FakeLlm::start(vec![]);
    let folder = s.tmp.path();

    assert_refused(
        "/dev/zero",
        ask_with_image(&s, &fake, Path::new("/dev/zero")),
        "/dev/zero is a character device, not an image file",
        &fake,
    );

    let fifo = folder.join("shot.png");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    assert_refused(
        "a FIFO",
        ask_with_image(&s, &fake, &fifo),
        "is a named pipe (FIFO), not an image file",
        &fake,
    );

    // A link is followed only to a regular file.
    let link = folder.join("zero.png");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    assert_refused(
        "a link to /dev/zero",
        ask_with_image(&s, &fake, &link),
        "zero.png is a character device",
        &fake,
    );

    let sparse = folder.join("huge.png");
    let file = std::fs::File::create(&sparse).unwrap();
    file.set_len(2 << 30).unwrap();
    drop(file);
    assert_refused(
        "a 2 GB sparse file",
        ask_with_image(&s, &fake, &sparse),
        "huge.png is 2048 MB; files of at most 32 MB are attached (`attachments.max_file_mb`",
        &fake,
    );

    let bomb = folder.join("bomb.png");
    std::fs::write(&bomb, png_claiming(50_000, 50_000)).unwrap();
    assert_refused(
        "a 50000×50000 PNG",
        ask_with_image(&s, &fake, &bomb),
        "bomb.png is 50000×50000 pixels (2500 megapixels); images of at most 100 megapixels",
        &fake,
    );

    assert_refused(
        "a folder",
        ask_with_image(&s, &fake, &s.vault),
        "is a folder, not an image file",
        &fake,
    );
}

#[test]
fn the_size_limit_comes_from_the_config_file() {
    let s = setup("[attachments]\nmax_file_mb = 1\n");
    let fake = FakeLlm::start(vec![]);
    // 2 MB: under the default limit, over this config's.
    let big = s.tmp.path().join("big.png");
    let mut bytes = png_claiming(64, 64);
    bytes.resize(2 * 1024 * 1024, 0);
    std::fs::write(&big, bytes).unwrap();
    assert_refused(
        "a 2 MB file under a 1 MB limit",
        ask_with_image(&s, &fake, &big),
        "big.png is 2 MB; files of at most 1 MB are attached",
        &fake,
    );
}
