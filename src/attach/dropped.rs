//! Files dropped on the terminal. Terminals paste a dropped file as its path — quoted
//! (`'/home/me/My Photo.jpg'`), with escaped spaces (`/home/me/My\ Photo.jpg`), or as a `file://`
//! URL — and several dropped files as several such paths separated by spaces or newlines. When every
//! word of a paste is an image file that exists, the chat attaches the images instead of typing
//! the paths.

use std::path::PathBuf;

/// The most files one paste may attach (the chat refuses more images per message anyway).
const MAX_DROPPED_FILES: usize = 20;

/// The image files a paste names, when it names nothing else; `None` for ordinary text. Only
/// absolute paths (or `~/…`) with an image extension that are existing files count; one stat per
/// word, only for words that look like such paths.
pub fn dropped_image_paths(pasted: &str) -> Option<Vec<PathBuf>> {
    let words = shell_words(pasted.trim())?;
    if words.is_empty() || words.len() > MAX_DROPPED_FILES {
        return None;
    }
    words
        .iter()
        .map(|word| image_path(word).filter(|path| path.is_file()))
        .collect()
}

/// The path a word names, when it looks like a dropped image file.
fn image_path(word: &str) -> Option<PathBuf> {
    let path = if let Some(url_path) = word.strip_prefix("file://") {
        // `file:///home/me/a%20b.jpg`; `file://localhost/…` names the same machine.
        let url_path = url_path.strip_prefix("localhost").unwrap_or(url_path);
        PathBuf::from(crate::vault::percent::percent_decode(url_path)?)
    } else if let Some(rest) = word.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else {
        PathBuf::from(word)
    };
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    let is_image = matches!(extension.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp");
    (path.is_absolute() && is_image).then_some(path)
}

/// Split like a POSIX shell does for quoting: `'…'` literal, `"…"` with `\` escapes, `\` escapes
/// outside quotes; whitespace separates words. `None` when a quote is left open.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        inner => word.push(inner),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        inner => word.push(inner),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_terminals_paste_a_dropped_file_is_understood() {
        let dir = tempfile::tempdir().unwrap();
        let photo = dir.path().join("My Photo.JPG");
        let shot = dir.path().join("shot.png");
        std::fs::write(&photo, b"x").unwrap();
        std::fs::write(&shot, b"x").unwrap();
        let (p, s) = (photo.display().to_string(), shot.display().to_string());
        let escaped = p.replace(' ', "\\ ");
        let url = format!("file://{}", p.replace(' ', "%20"));
        for pasted in [
            format!("'{p}'"),
            format!("\"{p}\""),
            escaped.clone(),
            url.clone(),
            format!("{escaped}\n"),
        ] {
            assert_eq!(
                dropped_image_paths(&pasted),
                Some(vec![photo.clone()]),
                "{pasted}"
            );
        }
        assert_eq!(
            dropped_image_paths(&format!("'{p}' {s}")),
            Some(vec![photo.clone(), shot.clone()])
        );
        assert_eq!(
            dropped_image_paths(&format!("{url}\n{s}")),
            Some(vec![photo, shot])
        );
    }

    #[test]
    fn text_that_is_not_only_existing_image_files_is_typed_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("shot.png");
        let notes = dir.path().join("notes.md");
        std::fs::write(&shot, b"x").unwrap();
        std::fs::write(&notes, b"x").unwrap();
        let s = shot.display().to_string();
        for pasted in [
            String::new(),
            "look at this".to_string(),
            format!("look at {s}"),
            notes.display().to_string(),
            dir.path().join("gone.png").display().to_string(),
            "shot.png".to_string(),
            format!("'{s}"),
            "file:///bad%zz.png".to_string(),
            dir.path().display().to_string(),
        ] {
            assert_eq!(dropped_image_paths(&pasted), None, "{pasted:?}");
        }
        let many = vec![s; MAX_DROPPED_FILES + 1].join(" ");
        assert_eq!(dropped_image_paths(&many), None);
    }
}
