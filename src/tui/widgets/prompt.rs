//! A one-line path prompt (the Plans and Replay tabs' `open`), and the character a key
//! types into a text field.

use crossterm::event::KeyEvent;

use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::Ctx;

/// The longest path a file prompt takes.
pub(crate) const MAX_PATH_LEN: usize = 4096;

/// What a key did to a one-line path prompt (Plans' and Replay's `open` prompts).
pub(crate) enum PromptKey {
    /// Enter: the text typed, trimmed.
    Accept(String),
    /// Esc: the prompt closes.
    Cancel,
    /// The text was edited (or the key did nothing there).
    Edited,
    /// Not a key of the prompt.
    NotMine,
}

/// Edits `text` with `key` as a path prompt in `scope` (Enter bound to the prompt's
/// open command, `OpenPlanFile` or `OpenLogFile`; `Close`, `EraseChar`, `ClearText`);
/// other plain characters are typed, up to [`MAX_PATH_LEN`] bytes.
pub(crate) fn path_prompt_key(
    text: &mut String,
    key: &KeyEvent,
    ctx: &mut Ctx<'_>,
    scope: Scope,
) -> PromptKey {
    match ctx.keymap.command(scope, key) {
        Some(Command::OpenPlanFile | Command::OpenLogFile) => {
            PromptKey::Accept(text.trim().to_string())
        }
        Some(Command::Close) => PromptKey::Cancel,
        Some(Command::EraseChar) => {
            text.pop();
            PromptKey::Edited
        }
        Some(Command::ClearText) => {
            text.clear();
            PromptKey::Edited
        }
        Some(_) => PromptKey::Edited,
        None => match typed_char(key) {
            Some(c) if text.len() < MAX_PATH_LEN => {
                text.push(c);
                PromptKey::Edited
            }
            Some(_) => {
                ctx.status
                    .info(format!("a path is at most {MAX_PATH_LEN} bytes here"));
                PromptKey::Edited
            }
            None => PromptKey::NotMine,
        },
    }
}

/// The character a key types into a text field: a plain one, without Ctrl or Alt.
pub(crate) fn typed_char(key: &KeyEvent) -> Option<char> {
    use crossterm::event::{KeyCode, KeyModifiers};
    match key.code {
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(c)
        }
        _ => None,
    }
}
