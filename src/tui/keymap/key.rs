//! A key as the keymap binds it, matched against terminal key events and written for
//! people in hints and help.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key, as bound in the keymap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBinding {
    code: KeyCode,
    control: bool,
}

impl KeyBinding {
    pub(crate) const fn key(code: KeyCode) -> KeyBinding {
        KeyBinding {
            code,
            control: false,
        }
    }

    pub(crate) const fn ch(c: char) -> KeyBinding {
        KeyBinding::key(KeyCode::Char(c))
    }

    pub(crate) const fn ctrl(c: char) -> KeyBinding {
        KeyBinding {
            code: KeyCode::Char(c),
            control: true,
        }
    }

    /// True when `key` is this binding. Shift is ignored, since it is already part of
    /// the character (`G`, `?`) or of the key (`BackTab`); Alt never matches.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        if key.modifiers.contains(KeyModifiers::ALT) {
            return false;
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let code = match key.code {
            KeyCode::Char(c) if control => KeyCode::Char(c.to_ascii_lowercase()),
            other => other,
        };
        code == self.code && control == self.control
    }

    /// True for a key that types a character into a text prompt.
    pub fn is_plain_char(&self) -> bool {
        matches!(self.code, KeyCode::Char(_)) && !self.control
    }

    /// How the key is written in hints and help (`↑`, `Enter`, `C-c`, `n`).
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Esc => "Esc".to_string(),
            KeyCode::Tab => "Tab".to_string(),
            KeyCode::BackTab => "S-Tab".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Home => "Home".to_string(),
            KeyCode::End => "End".to_string(),
            KeyCode::Backspace => "Bksp".to_string(),
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            other => format!("{other:?}"),
        };
        if self.control {
            format!("C-{name}")
        } else {
            name
        }
    }
}

#[cfg(test)]
impl KeyBinding {
    /// The key event this binding is for, as the terminal sends it.
    pub(crate) fn event(&self) -> KeyEvent {
        let modifiers = if self.control {
            KeyModifiers::CONTROL
        } else {
            KeyModifiers::NONE
        };
        KeyEvent::new(self.code, modifiers)
    }
}
