//! The stderr lines (`L`): what was written to fd 2 while the console owned the
//! terminal (its own logs, a native library's warnings), kept off the screen by
//! [`crate::tui::stderr::Capture`] and shown here on demand, newest at the bottom.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget};

use super::{App, Layer};
use crate::tui::keymap::{Command, Scope};
use crate::tui::theme::Role;
use crate::tui::widgets;
use crate::tui::widgets::text::fit;

impl App {
    /// Opens the lines at the newest.
    pub(super) fn open_logs(&mut self) {
        self.logs_back = 0;
        self.layers.push(Layer::Logs);
    }

    /// A key while the lines are up: scroll, close, or quit.
    pub(super) fn logs_key(&mut self, key: &crossterm::event::KeyEvent) {
        let kept = self.stderr_kept().len();
        match self.desk.keymap.command(Scope::Logs, key) {
            Some(Command::Close) => {
                self.layers.pop();
            }
            Some(Command::Up) => self.logs_back = (self.logs_back + 1).min(kept),
            Some(Command::Down) => self.logs_back = self.logs_back.saturating_sub(1),
            Some(Command::Top) => self.logs_back = kept,
            Some(Command::Bottom) => self.logs_back = 0,
            _ => {
                if self.desk.keymap.command(Scope::Global, key) == Some(Command::Quit) {
                    self.quit = true;
                }
            }
        }
    }

    /// The kept lines, oldest first, and how many arrived in all.
    fn stderr_kept(&self) -> Vec<String> {
        match &self.stderr {
            Some((lines, _)) => {
                let lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                lines.kept.iter().cloned().collect()
            }
            None => Vec::new(),
        }
    }

    fn stderr_total(&self) -> u64 {
        self.stderr.as_ref().map_or(0, |(lines, _)| {
            lines.lock().unwrap_or_else(|e| e.into_inner()).total
        })
    }

    /// The lines in a box over the pane: as many of the newest as fit (fewer when
    /// scrolled back), each cut with `…` to the box's width.
    pub(super) fn render_logs(&mut self, body: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let kept = self.stderr_kept();
        let total = self.stderr_total();
        let width = body.width;
        let popup = widgets::popup(body, width, body.height, buf, theme);
        let inner = usize::from(popup.width.saturating_sub(2));
        let rows = usize::from(popup.height.saturating_sub(2));
        let title = if self.stderr.is_none() {
            " Stderr · not captured: this console does not own a terminal ".to_string()
        } else if total > kept.len() as u64 {
            format!(" Stderr · {total} lines, the last {} kept ", kept.len())
        } else {
            format!(
                " Stderr · {total} line{} ",
                if total == 1 { "" } else { "s" }
            )
        };
        let mut lines: Vec<Line<'_>> = Vec::new();
        if kept.is_empty() {
            lines.push(Line::from(Span::styled(
                fit(" nothing was written to stderr", inner),
                theme.style(Role::Muted),
            )));
        } else {
            self.logs_back = self.logs_back.min(kept.len().saturating_sub(rows));
            let end = kept.len() - self.logs_back;
            let start = end.saturating_sub(rows);
            for line in &kept[start..end] {
                lines.push(Line::from(Span::styled(
                    fit(line, inner),
                    theme.style(Role::Text),
                )));
            }
        }
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(Role::BorderFocused))
            .title(Span::styled(fit(&title, inner), theme.style(Role::Title)));
        Paragraph::new(lines).block(block).render(popup, buf);
    }
}
