//! A box drawn over a pane: the action dialog, the source dialog and the help overlay.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Clear, Widget};

use crate::tui::theme::{Role, Theme};

/// The `width` by `height` rectangle centred in `area` (each cut to fit), cleared of
/// what the pane drew there and painted in the base style, so the box hides the pane
/// under it.
pub(crate) fn popup(area: Rect, width: u16, height: u16, buf: &mut Buffer, theme: &Theme) -> Rect {
    let [_, column, _] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(width),
        Constraint::Fill(1),
    ])
    .areas(area);
    let [_, popup, _] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(height),
        Constraint::Fill(1),
    ])
    .areas(column);
    Clear.render(popup, buf);
    buf.set_style(popup, theme.style(Role::Base));
    popup
}
