//! A text of several lines edited in place: the JSON of a held call's arguments, an
//! answer or an error. The cursor starts at the end of the text, as in any editor
//! opened on text to change; characters go in at the cursor; the arrows, Home and End
//! move it; Enter breaks the line; Backspace erases before the cursor (joining lines at
//! the start of one), Delete erases under it (joining the next line at the end of
//! one).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// The most bytes a text area holds.
pub const TEXT_MAX: usize = 1024 * 1024;

/// The text and the cursor (a line, and a character in it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextArea {
    lines: Vec<String>,
    row: usize,
    col: usize,
    /// The first line on show.
    top: usize,
}

impl TextArea {
    pub fn new(text: &str) -> TextArea {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.is_empty() {
            lines.push(String::new());
        }
        let row = lines.len() - 1;
        let col = lines[row].chars().count();
        TextArea {
            lines,
            row,
            col,
            top: 0,
        }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The cursor: (line, character), from 0.
    #[cfg(test)]
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    fn len(&self) -> usize {
        self.lines.iter().map(|l| l.len() + 1).sum()
    }

    fn byte_at(line: &str, col: usize) -> usize {
        line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
    }

    /// Types `c` at the cursor. False when the text is full.
    pub fn insert(&mut self, c: char) -> bool {
        if self.len() + c.len_utf8() > TEXT_MAX {
            return false;
        }
        let line = &mut self.lines[self.row];
        let at = Self::byte_at(line, self.col);
        line.insert(at, c);
        self.col += 1;
        true
    }

    /// Breaks the line at the cursor.
    pub fn newline(&mut self) {
        let line = &mut self.lines[self.row];
        let at = Self::byte_at(line, self.col);
        let rest = line.split_off(at);
        // The new line starts at the indentation of the one broken.
        let indent: String = line.chars().take_while(|c| *c == ' ').collect();
        self.row += 1;
        self.col = indent.chars().count();
        self.lines.insert(self.row, format!("{indent}{rest}"));
    }

    /// Erases the character before the cursor, or joins the line to the one above.
    pub fn backspace(&mut self) {
        if self.col > 0 {
            let line = &mut self.lines[self.row];
            let at = Self::byte_at(line, self.col - 1);
            line.remove(at);
            self.col -= 1;
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
            self.lines[self.row].push_str(&line);
        }
    }

    /// Erases the character under the cursor, or joins the next line to this one.
    pub fn delete(&mut self) {
        let line = &mut self.lines[self.row];
        if self.col < line.chars().count() {
            let at = Self::byte_at(line, self.col);
            line.remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
        }
    }

    pub fn right(&mut self) {
        if self.col < self.lines[self.row].chars().count() {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
        }
    }

    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
        }
    }

    pub fn home(&mut self) {
        self.col = 0;
    }

    pub fn end(&mut self) {
        self.col = self.lines[self.row].chars().count();
    }

    /// Draws the lines around the cursor, the cursor as a block in `cursor` style.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, text: Style, cursor: Style) {
        let rows = usize::from(area.height);
        if rows == 0 || area.width == 0 {
            return;
        }
        if self.row < self.top {
            self.top = self.row;
        } else if self.row >= self.top + rows {
            self.top = self.row + 1 - rows;
        }
        let width = usize::from(area.width);
        for (k, line) in self.lines.iter().skip(self.top).take(rows).enumerate() {
            let y = area.y + k as u16;
            // Keep the cursor's column on show in a long line.
            let skip = if self.top + k == self.row {
                self.col.saturating_sub(width.saturating_sub(1))
            } else {
                0
            };
            let shown: String = line.chars().skip(skip).take(width).collect();
            buf.set_stringn(area.x, y, &shown, width, text);
            if self.top + k == self.row {
                let x = area.x + (self.col - skip) as u16;
                if x < area.x + area.width {
                    let under = line.chars().nth(self.col).unwrap_or(' ');
                    buf.set_stringn(x, y, under.to_string(), 1, cursor);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_breaking_and_joining_lines() {
        let mut t = TextArea::new("{\n  \"a\": 1\n}");
        // The cursor starts at the end: Backspace erases the last character.
        assert_eq!(t.cursor(), (2, 1));
        t.backspace();
        assert_eq!(t.text(), "{\n  \"a\": 1\n");
        t.insert('}');
        t.up();
        t.end();
        t.insert(',');
        t.newline();
        for c in "\"b\": 2".chars() {
            t.insert(c);
        }
        assert_eq!(t.text(), "{\n  \"a\": 1,\n  \"b\": 2\n}");
        assert_eq!(t.cursor(), (2, 8));
        t.home();
        t.backspace();
        assert_eq!(t.text(), "{\n  \"a\": 1,  \"b\": 2\n}");
        t.left();
        t.right();
        t.right();
        assert_eq!(t.cursor(), (1, 10));
        t.up();
        assert_eq!(t.cursor(), (0, 1));
        t.insert('é');
        t.backspace();
        t.backspace();
        assert!(t.text().starts_with("\n"), "{:?}", t.text());
    }

    #[test]
    fn delete_erases_under_the_cursor_and_joins_the_next_line_at_the_end() {
        let mut t = TextArea::new("ab\ncd");
        t.up();
        t.home();
        t.delete();
        assert_eq!(t.text(), "b\ncd");
        assert_eq!(t.cursor(), (0, 0));
        t.end();
        t.delete();
        assert_eq!(t.text(), "bcd");
        assert_eq!(t.cursor(), (0, 1));
        // At the very end there is nothing under the cursor: nothing changes.
        t.end();
        t.delete();
        assert_eq!(t.text(), "bcd");
        let mut e = TextArea::new("é€x");
        e.home();
        e.delete();
        assert_eq!(e.text(), "€x");
    }
}
