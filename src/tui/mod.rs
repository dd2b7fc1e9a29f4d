//! The full-screen app (docs/architecture.md): everything on screen. The only module that may use
//! ratatui, crossterm, ratatui-textarea, syntect and arboard.

pub mod app;
#[cfg(test)]
mod backlinks_tests;
pub mod banner;
pub mod chat;
pub mod clipboard;
#[cfg(test)]
mod completion_tests;
pub mod diff_view;
pub mod editor;
pub mod editor_highlight;
#[cfg(test)]
mod estimate_tests;
pub mod files;
pub mod highlight;
#[cfg(test)]
mod image_paste_tests;
pub mod keymap;
pub mod link_completion;
pub mod name_rank;
#[cfg(test)]
mod notice_tests;
#[cfg(test)]
mod own_commands_tests;
pub mod picker;
#[cfg(test)]
mod plugin_screens;
pub mod recovery_prompt;
#[cfg(test)]
mod recovery_tests;
pub mod run;
#[cfg(test)]
mod save_chat_tests;
pub mod saving;
#[cfg(test)]
mod saving_tests;
#[cfg(test)]
mod screens;
#[cfg(test)]
mod slash_list_tests;
pub mod stored_transcript;
#[cfg(test)]
mod tasks_tests;
#[cfg(test)]
mod templates_tests;
pub mod term;
#[cfg(test)]
pub mod testing;
pub mod theme;
#[cfg(test)]
mod thinking_tests;
pub mod trust_prompt;
pub mod views;
#[cfg(test)]
mod waiting_tests;
pub mod width;
