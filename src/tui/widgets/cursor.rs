//! The one cursor every list scrolls with.

use crate::tui::keymap::Command;

/// The commands of an area that scrolls or pages through rows.
pub(crate) const SCROLLING: [Command; 6] = [
    Command::Up,
    Command::Down,
    Command::NextPage,
    Command::PrevPage,
    Command::Top,
    Command::Bottom,
];
