//! The keys on screen: the hint bar under the pane and the help overlay over it, both
//! drawn from the keymap and the commands the focused area offers now.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget};

use super::{App, Layer};
use crate::tui::keymap::{Command, Hint, Scope};
use crate::tui::tab::Tab;
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets;
use crate::tui::widgets::text::wrap_words;

impl App {
    /// The hints of the focused area, then the global keys. The help hint comes
    /// separately: it is always drawn, since help lists everything the bar leaves out.
    fn hints(&mut self) -> (Vec<Hint>, Vec<Hint>) {
        let keymap = &self.desk.keymap;
        if self.layers.last() == Some(&Layer::Help) {
            let mut hints = keymap.hints(Scope::Help, &[Command::Close], false);
            hints.extend(keymap.hints(Scope::Global, &[Command::Quit], true));
            return (hints, Vec::new());
        }
        if self.layers.last() == Some(&Layer::Logs) {
            let mut hints = keymap.hints(
                Scope::Logs,
                &[Command::Close, Command::Up, Command::Down],
                false,
            );
            hints.extend(keymap.hints(Scope::Global, &[Command::Quit], true));
            return (hints, Vec::new());
        }
        if self.layers.last() == Some(&Layer::Source) {
            let hints = keymap.hints(
                self.source.scope(),
                &self.source.commands(),
                self.source.captures_text(),
            );
            return (hints, Vec::new());
        }
        let needs_structs = self.needs_structs();
        let pane = self.panes.of(self.tab);
        let (scope, commands, text) = (pane.scope(), pane.commands(), pane.captures_text());
        let mut hints = if needs_structs {
            Vec::new()
        } else {
            self.desk.keymap.hints(scope, &commands, text)
        };
        let mut global: Vec<Command> = Tab::ALL.into_iter().map(Command::ShowTab).collect();
        global.extend([Command::Quit, Command::ToggleEvents]);
        hints.extend(self.desk.keymap.hints(Scope::Global, &global, text));
        let help = self
            .desk
            .keymap
            .hints(Scope::Global, &[Command::ToggleHelp], text);
        (hints, help)
    }

    /// The hint bar: as many whole hints as fit, and the help hint at the end.
    pub(super) fn render_hints(&mut self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let (hints, last) = self.hints();
        let theme = &self.theme;
        let chip = |hint: &Hint| {
            [
                Span::styled(format!(" {} ", hint.keys), theme.style(Role::HintKey)),
                Span::styled(format!(" {} ", hint.label), theme.style(Role::HintText)),
            ]
        };
        let width_of = |spans: &[Span<'_>]| spans.iter().map(Span::width).sum::<usize>();
        let last: Vec<Span<'_>> = last.iter().flat_map(chip).collect();
        let room = usize::from(area.width).saturating_sub(1 + width_of(&last));
        let mut spans = vec![Span::raw(" ")];
        let mut used = 0;
        for hint in &hints {
            let chip = chip(hint);
            let width = width_of(&chip);
            if used + width > room {
                break;
            }
            used += width;
            spans.extend(chip);
        }
        spans.extend(last);
        Line::from(spans).render(area, buf);
    }

    /// The keys of the focused area and the global keys, from the keymap, in a box
    /// over the pane.
    pub(super) fn render_help(&mut self, body: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let scope = self.panes.of(self.tab).scope();
        let mut sections = Vec::new();
        if scope != Scope::Global {
            sections.push((scope, self.desk.keymap.help(scope)));
        }
        sections.push((Scope::Global, self.desk.keymap.help(Scope::Global)));
        let key_width = sections
            .iter()
            .flat_map(|(_, lines)| lines.iter())
            .map(|l| Line::from(l.keys.as_str()).width())
            .max()
            .unwrap_or(0);
        let width = body.width.min(72);
        // The description column: what is left of the box after the borders, the
        // indent and the keys; a long description wraps under itself.
        let text_width = usize::from(width.saturating_sub(2))
            .saturating_sub(key_width + 4)
            .max(12);
        let mut lines = Vec::new();
        for (scope, entries) in &sections {
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            lines.push(Line::from(Span::styled(
                scope.title().to_string(),
                theme.style(Role::Title),
            )));
            if *scope == Scope::Filter {
                lines.extend(help_line(
                    theme,
                    key_width,
                    text_width,
                    "0-9 -",
                    "Type the id, or its start",
                ));
            }
            if *scope == Scope::ActionForm {
                lines.extend(help_line(
                    theme,
                    key_width,
                    text_width,
                    "0-9 -",
                    "Type the nonce, or the attacking struct's id",
                ));
            }
            for entry in entries {
                lines.extend(help_line(
                    theme,
                    key_width,
                    text_width,
                    &entry.keys,
                    &entry.description,
                ));
            }
        }
        // A box taller than the pane ends saying how much it leaves out.
        let room = usize::from(body.height).saturating_sub(2);
        if lines.len() > room && room > 0 {
            let left_out = lines.len() - (room - 1);
            lines.truncate(room - 1);
            lines.push(Line::from(Span::styled(
                format!("  … {left_out} more lines: a taller terminal shows them"),
                theme.style(Role::Muted),
            )));
        }
        let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let popup = widgets::popup(body, width, height.min(body.height), buf, theme);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(Role::BorderFocused))
            .title(Span::styled(" Keys ", theme.style(Role::Title)));
        Paragraph::new(lines).block(block).render(popup, buf);
    }
}
/// One command in the help box: its keys, then its description wrapped to
/// `text_width` columns, each further line indented under the first.
fn help_line(
    theme: &Theme,
    key_width: usize,
    text_width: usize,
    keys: &str,
    description: &str,
) -> Vec<Line<'static>> {
    let pad = key_width.saturating_sub(Line::from(keys).width());
    let mut out = Vec::new();
    for (i, text) in wrap_words(description, text_width).into_iter().enumerate() {
        let lead = if i == 0 {
            vec![
                Span::raw("  "),
                Span::styled(keys.to_string(), theme.style(Role::HintKey)),
                Span::raw(" ".repeat(pad + 2)),
            ]
        } else {
            vec![Span::raw(" ".repeat(key_width + 4))]
        };
        let mut spans = lead;
        spans.push(Span::styled(text, theme.style(Role::Text)));
        out.push(Line::from(spans));
    }
    out
}
