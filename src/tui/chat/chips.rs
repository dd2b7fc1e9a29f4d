//! Image chips: `[image 1 · PNG 800×600 · 112 KB]`, in the input box for the images waiting to
//! be sent, and under a sent message in the transcript.

use super::wrap;
use crate::attach::ImageFacts;
use crate::tui::theme::{Role, Theme};
use ratatui::text::{Line, Span};

/// Columns between two chips on a row.
const GAP: usize = 1;

/// The chip of the `number`th image (from 1): `[image 1 · PNG 800×600 · 112 KB]`; the pixel
/// size is left out when it is not known (formats whose header is not read).
pub fn label(number: usize, facts: &ImageFacts) -> String {
    let mut kind = facts.format();
    if let Some((width, height)) = facts.dimensions {
        kind.push_str(&format!(" {width}×{height}"));
    }
    format!("[image {number} · {kind} · {}]", human_size(facts.size))
}

/// Bytes as a person reads them, in the binary units of the 5 MB limit: `812 B`, `112 KB`,
/// `1.2 MB`.
pub fn human_size(bytes: usize) -> String {
    const KB: usize = 1024;
    const MB: usize = 1024 * 1024;
    if bytes < KB {
        format!("{bytes} B")
    } else if bytes < MB {
        format!("{} KB", (bytes + KB / 2) / KB)
    } else {
        format!("{:.1} MB", bytes as f64 / MB as f64)
    }
}

/// How many rows [`chip_rows`] takes for `images` at `width`, at most `max_rows`.
pub fn row_count(images: &[ImageFacts], width: usize, max_rows: usize) -> usize {
    pack(&labels(images), width, max_rows).0.len()
}

/// The chips of `images`, numbered from 1, packed into rows of `width` columns: a chip that
/// does not fit on a row starts the next one, and one wider than a row is cut with `…`. At most
/// `max_rows` rows; chips beyond them are counted in a `+N more` at the end of the last row.
pub fn chip_rows(
    images: &[ImageFacts],
    width: usize,
    max_rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let labels = labels(images);
    let (rows, hidden) = pack(&labels, width, max_rows);
    let chip_style = theme.style(Role::Attachment);
    let last_row = rows.len().saturating_sub(1);
    rows.iter()
        .enumerate()
        .map(|(r, row)| {
            let mut spans = Vec::new();
            for (n, &i) in row.iter().enumerate() {
                if n > 0 {
                    spans.push(Span::raw(" ".repeat(GAP)));
                }
                spans.extend(wrap::truncate(
                    &[Span::styled(labels[i].clone(), chip_style)],
                    width,
                ));
            }
            if r == last_row && hidden > 0 {
                if !row.is_empty() {
                    spans.push(Span::raw(" ".repeat(GAP)));
                }
                spans.push(Span::styled(more(hidden), theme.style(Role::Dim)));
            }
            Line::from(wrap::truncate(&spans, width))
        })
        .collect()
}

fn labels(images: &[ImageFacts]) -> Vec<String> {
    images
        .iter()
        .enumerate()
        .map(|(i, facts)| label(i + 1, facts))
        .collect()
}

/// Rows of chip indices, packed greedily, and how many chips did not fit in `max_rows`.
fn pack(labels: &[String], width: usize, max_rows: usize) -> (Vec<Vec<usize>>, usize) {
    if labels.is_empty() || width == 0 || max_rows == 0 {
        return (Vec::new(), 0);
    }
    let chip_width = |i: usize| wrap::text_width(&labels[i]).min(width);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = 0;
    for i in 0..labels.len() {
        let chip = chip_width(i);
        let needed = if used == 0 { chip } else { used + GAP + chip };
        match rows.last_mut() {
            Some(row) if needed <= width || row.is_empty() => {
                row.push(i);
                used = needed;
            }
            _ => {
                rows.push(vec![i]);
                used = chip;
            }
        }
    }
    let mut hidden = 0;
    if rows.len() > max_rows {
        hidden = rows[max_rows..].iter().map(Vec::len).sum();
        rows.truncate(max_rows);
        // Make room on the last row for the count of what is left out.
        if let Some(last) = rows.last_mut() {
            while !last.is_empty() {
                let shown: usize = last.iter().map(|&i| chip_width(i) + GAP).sum();
                if shown + wrap::text_width(&more(hidden)) <= width {
                    break;
                }
                last.pop();
                hidden += 1;
            }
        }
    }
    (rows, hidden)
}

fn more(hidden: usize) -> String {
    format!("+{hidden} more")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32, size: usize) -> ImageFacts {
        ImageFacts {
            media_type: "image/png".into(),
            dimensions: Some((width, height)),
            size,
        }
    }

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn labels_say_number_format_pixels_and_size() {
        assert_eq!(
            label(1, &png(800, 600, 114_688)),
            "[image 1 · PNG 800×600 · 112 KB]"
        );
        let jpeg = ImageFacts {
            media_type: "image/jpeg".into(),
            dimensions: None,
            size: 900,
        };
        assert_eq!(label(2, &jpeg), "[image 2 · JPEG · 900 B]");
    }

    #[test]
    fn sizes_read_like_a_person_would_write_them() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1024), "1 KB");
        assert_eq!(human_size(1536), "2 KB");
        assert_eq!(human_size(1_258_291), "1.2 MB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MB");
    }

    #[test]
    fn chips_pack_into_rows_and_count_what_does_not_fit() {
        let theme = Theme::builtin_dark();
        let images: Vec<ImageFacts> = (0..5).map(|_| png(800, 600, 114_688)).collect();
        // Each chip is 32 columns: two fit in 70.
        let rows = chip_rows(&images, 70, 5, &theme);
        assert_eq!(row_count(&images, 70, 5), 3);
        assert_eq!(
            texts(&rows),
            [
                "[image 1 · PNG 800×600 · 112 KB] [image 2 · PNG 800×600 · 112 KB]",
                "[image 3 · PNG 800×600 · 112 KB] [image 4 · PNG 800×600 · 112 KB]",
                "[image 5 · PNG 800×600 · 112 KB]",
            ]
        );
        let rows = chip_rows(&images, 70, 2, &theme);
        assert_eq!(row_count(&images, 70, 2), 2);
        assert_eq!(
            texts(&rows),
            [
                "[image 1 · PNG 800×600 · 112 KB] [image 2 · PNG 800×600 · 112 KB]",
                "[image 3 · PNG 800×600 · 112 KB] +2 more",
            ]
        );
        assert_eq!(rows[0].spans[0].style, theme.style(Role::Attachment));
        assert_eq!(
            rows[1].spans.last().map(|s| s.style),
            Some(theme.style(Role::Dim))
        );
    }

    #[test]
    fn a_chip_wider_than_the_row_is_cut() {
        let theme = Theme::builtin_dark();
        let rows = chip_rows(&[png(800, 600, 114_688)], 12, 3, &theme);
        assert_eq!(texts(&rows), ["[image 1 · …"]);
        assert!(chip_rows(&[png(1, 1, 1)], 0, 3, &theme).is_empty());
        assert!(chip_rows(&[], 80, 3, &theme).is_empty());
        // One row that cannot hold even the count still never overflows.
        let rows = chip_rows(&[png(1, 1, 1), png(1, 1, 1)], 5, 1, &theme);
        assert!(rows.iter().all(|r| r.width() <= 5), "{:?}", texts(&rows));
    }
}
