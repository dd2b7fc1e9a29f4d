//! The full-screen app (DESIGN.md §1, §2): everything on screen. The only module that may use
//! ratatui, crossterm, ratatui-textarea, syntect and arboard.

pub mod banner;
pub mod clipboard;
pub mod diff_view;
pub mod editor;
pub mod editor_highlight;
pub mod keymap;
pub mod picker;
#[cfg(test)]
pub mod testing;
pub mod theme;
pub mod views;
