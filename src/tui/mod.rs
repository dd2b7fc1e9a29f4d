//! The full-screen app (DESIGN.md §1, §2): everything on screen. The only module that may use
//! ratatui, crossterm, ratatui-textarea, syntect and arboard.

pub mod chat;
pub mod highlight;
pub mod keymap;
#[cfg(test)]
pub mod testing;
pub mod theme;
