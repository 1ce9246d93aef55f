//! The frame every area of the console is drawn in.

use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType};

use crate::tui::pane::Ui;
use crate::tui::theme::Role;

/// A bordered area, its border brighter when focused.
pub(crate) fn area_block<'a>(ui: &Ui<'_>, title: &str, focused: bool) -> Block<'a> {
    let theme = ui.theme;
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(if focused {
            Role::BorderFocused
        } else {
            Role::Border
        }));
    if title.is_empty() {
        block
    } else {
        block.title(Span::styled(title.to_string(), theme.style(Role::Title)))
    }
}
