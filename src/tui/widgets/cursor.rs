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

/// The commands that move a selection a row or to an end, where paging means
/// something else (the Entities list's next page is another page of the chain's).
pub(crate) const ROWS: [Command; 4] = [Command::Up, Command::Down, Command::Top, Command::Bottom];

/// The row a scrolling command ([`SCROLLING`]) moves a selection at `at` to, in a
/// list of `len` rows showing `page` at a time; `None` for any other command, or an
/// empty list. Lists drawn with ratatui's own state (which keeps the first row on
/// show itself) move with this; the others keep a [`Cursor`].
pub(crate) fn moved(command: Command, at: usize, len: usize, page: usize) -> Option<usize> {
    let page = isize::try_from(page.max(1)).unwrap_or(isize::MAX);
    let delta = match command {
        Command::Up => -1,
        Command::Down => 1,
        Command::PrevPage => -page,
        Command::NextPage => page,
        Command::Top => isize::MIN,
        Command::Bottom => isize::MAX,
        _ => return None,
    };
    (len > 0).then(|| step(at, delta, len))
}

/// A selection `at` moved by `delta` rows in a list of `len`, kept inside it (0 in an
/// empty list). The lists whose moves come as a number of rows (the Server tab's forms
/// and sections) take it directly.
pub(crate) fn step(at: usize, delta: isize, len: usize) -> usize {
    if len == 0 {
        0
    } else {
        at.saturating_add_signed(delta).min(len - 1)
    }
}

/// A selection in a list of rows and the first row on show. Every list the console
/// scrolls keeps one, so the scrolling keys move every list the same way: one row,
/// a page (the rows the list showed last frame), or to either end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// The selected row.
    pub selected: usize,
    /// The first row on show.
    pub top: usize,
    /// The rows the list showed last frame.
    pub page: usize,
}

impl Cursor {
    /// The row a scrolling command ([`SCROLLING`]) moves the selection to in a list of
    /// `len` rows; `None` for any other command, or an empty list.
    pub fn target(&self, command: Command, len: usize) -> Option<usize> {
        moved(command, self.selected, len, self.page)
    }

    /// Moves the selection by a scrolling command; false when `command` is not one
    /// (or the list is empty), and nothing moved.
    pub fn on(&mut self, command: Command, len: usize) -> bool {
        match self.target(command, len) {
            Some(row) => {
                self.selected = row;
                true
            }
            None => false,
        }
    }

    /// Before drawing `rows` rows: the first row on show, moved as little as keeps
    /// the selection in view.
    pub fn scroll(&mut self, rows: usize) -> usize {
        self.page = rows;
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + rows {
            self.top = self.selected + 1 - rows;
        }
        self.top
    }

    /// [`Cursor::scroll`] for a list of `len` rows that also never leaves rows empty
    /// below its end while there are rows above (a list that shrinks, or a taller
    /// frame, fills to the bottom).
    pub fn scroll_filled(&mut self, rows: usize, len: usize) -> usize {
        self.scroll(rows);
        self.top = self.top.min(len.saturating_sub(rows));
        self.top
    }
}

/// A text that scrolls rather than selects (a doc, an answer): its first line on show,
/// moved by the scrolling keys as a list's selection is (a page being the lines it
/// showed last frame), and kept within the text as it was last drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Scroll {
    top: usize,
    /// The lines shown last frame.
    page: usize,
    /// The text's lines when last drawn.
    len: usize,
}

impl Scroll {
    /// Back to the text's first line (another text is shown).
    pub fn reset(&mut self) {
        self.top = 0;
    }

    /// Moves by a scrolling command ([`SCROLLING`]) within the text as last drawn;
    /// false for any other command.
    pub fn on(&mut self, command: Command) -> bool {
        match moved(command, self.top, self.len.max(1), self.page) {
            Some(top) => {
                self.top = top;
                true
            }
            None => false,
        }
    }

    /// Before drawing `rows` lines of a text of `len`: the first line on show, within
    /// the text.
    pub fn shown(&mut self, rows: usize, len: usize) -> usize {
        self.page = rows;
        self.len = len;
        self.top = self.top.min(len.saturating_sub(1));
        self.top
    }

    /// [`Scroll::shown`] for a text that never leaves rows empty below its end while
    /// there are lines above: its last line on show goes no higher than the bottom.
    pub fn shown_filled(&mut self, rows: usize, len: usize) -> usize {
        let last_top = len.saturating_sub(rows);
        self.page = rows;
        self.len = last_top + 1;
        self.top = self.top.min(last_top);
        self.top
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_scrolls_by_the_lines_it_showed_and_stays_within_itself() {
        let mut s = Scroll::default();
        // Before the first frame a page is a line, and there is one line.
        assert!(s.on(Command::NextPage));
        assert_eq!(s.top, 0);
        assert_eq!(s.shown(10, 35), 0);
        assert!(s.on(Command::NextPage));
        assert!(s.on(Command::NextPage));
        assert_eq!(s.top, 20);
        assert!(s.on(Command::Bottom));
        assert_eq!(s.top, 34);
        // Down at the end stays there: one Up is one line back.
        assert!(s.on(Command::Down));
        assert!(s.on(Command::Up));
        assert_eq!(s.top, 33);
        assert!(s.on(Command::PrevPage));
        assert_eq!(s.top, 23);
        // A shorter text keeps the first line on show within it.
        assert_eq!(s.shown(10, 5), 4);
        assert!(s.on(Command::Top));
        assert_eq!(s.top, 0);
        assert!(!s.on(Command::Close));
        s.on(Command::Bottom);
        s.reset();
        assert_eq!(s.top, 0);
        // Filled: the last line stays at the bottom.
        assert_eq!(s.shown_filled(10, 35), 0);
        assert!(s.on(Command::Bottom));
        assert_eq!(s.top, 25);
        assert!(s.on(Command::Down));
        assert_eq!(s.top, 25);
        assert_eq!(s.shown_filled(10, 8), 0);
    }

    #[test]
    fn the_keys_move_within_the_list_and_a_page_is_what_was_shown() {
        let mut c = Cursor {
            page: 10,
            ..Cursor::default()
        };
        assert!(c.on(Command::Up, 5));
        assert_eq!(c.selected, 0);
        assert!(c.on(Command::NextPage, 25));
        assert_eq!(c.selected, 10);
        assert!(c.on(Command::Bottom, 25));
        assert_eq!(c.selected, 24);
        assert!(c.on(Command::Down, 25));
        assert_eq!(c.selected, 24);
        assert!(c.on(Command::PrevPage, 25));
        assert_eq!(c.selected, 14);
        assert!(c.on(Command::Top, 25));
        assert_eq!(c.selected, 0);
        assert!(!c.on(Command::Close, 25));
        assert!(!c.on(Command::Down, 0));
        assert_eq!(c.target(Command::Bottom, 0), None);
    }

    #[test]
    fn scrolling_keeps_the_selection_in_view_and_fills_the_rows() {
        let mut c = Cursor {
            selected: 12,
            ..Cursor::default()
        };
        assert_eq!(c.scroll(5), 8);
        c.selected = 9;
        assert_eq!(c.scroll(5), 8, "still in view: the top stays");
        c.selected = 3;
        assert_eq!(c.scroll(5), 3);
        // A taller frame: the plain scroll keeps its top, the filled one fills.
        c.top = 20;
        c.selected = 22;
        assert_eq!(c.scroll(5), 20);
        assert_eq!(c.scroll_filled(5, 23), 18);
        assert_eq!(c.page, 5);
    }
}
