//! A doc's Markdown as styled lines: pulldown-cmark's events turned into what a person
//! reads in a terminal.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::tui::theme::{Role, Theme};

/// Markdown as lines a person reads: headings bold (level 1 and 2 underlined by their
/// style), list items with bullets or numbers, code indented, quotes barred, table
/// rows with their cells separated, links underlined.
pub(super) fn markdown_lines(body: &str, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Writer::new(theme);
    for event in Parser::new_ext(body, crate::docs::markdown::options()) {
        out.event(event);
    }
    out.flush();
    out.lines
}

/// The lines written so far, and where the writing stands: the spans of the line
/// being written, the styles open, the lists and quotes it is in.
struct Writer<'t> {
    theme: &'t Theme,
    lines: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    style_stack: Vec<Style>,
    /// Each list open: the next item's number, or `None` for bullets.
    lists: Vec<Option<u64>>,
    quote: usize,
    in_code: bool,
    /// What goes before the line being written: a list item's marker, a quote's bars.
    prefix: String,
}

impl<'t> Writer<'t> {
    /// No lines yet, in the theme's text style.
    fn new(theme: &'t Theme) -> Writer<'t> {
        Writer {
            theme,
            lines: Vec::new(),
            spans: Vec::new(),
            style_stack: vec![theme.style(Role::Text)],
            lists: Vec::new(),
            quote: 0,
            in_code: false,
            prefix: String::new(),
        }
    }

    /// Takes in one of pulldown-cmark's events.
    fn event(&mut self, event: Event<'_>) {
        let theme = self.theme;
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(end) => self.end(end),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => self
                .spans
                .push(Span::styled(t.to_string(), theme.style(Role::Value))),
            Event::SoftBreak => self.spans.push(Span::raw(" ")),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.lines.push(Line::from(Span::styled(
                    "────────",
                    theme.style(Role::Muted),
                )));
            }
            Event::TaskListMarker(done) => {
                self.spans
                    .push(Span::raw(if done { "[x] " } else { "[ ] " }));
            }
            _ => {}
        }
    }

    /// A block or an inline style opens.
    fn start(&mut self, tag: Tag<'_>) {
        let theme = self.theme;
        match tag {
            Tag::Heading { level, .. } => {
                self.blank();
                let role = if level <= HeadingLevel::H2 {
                    Role::Title
                } else {
                    Role::Field
                };
                self.style_stack
                    .push(theme.style(role).add_modifier(Modifier::BOLD));
                if level == HeadingLevel::H1 {
                    self.style_stack.push(
                        theme
                            .style(role)
                            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                    );
                }
            }
            Tag::Paragraph if self.lists.is_empty() => self.blank(),
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.blank();
                }
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => self.start_item(),
            Tag::BlockQuote(_) => {
                self.blank();
                self.quote += 1;
            }
            Tag::CodeBlock(_) => {
                self.blank();
                self.in_code = true;
            }
            Tag::Emphasis => self.push_modifier(Modifier::ITALIC),
            Tag::Strong => self.push_modifier(Modifier::BOLD),
            Tag::Strikethrough => self.push_modifier(Modifier::CROSSED_OUT),
            Tag::Link { .. } => self
                .style_stack
                .push(theme.style(Role::IdLink).add_modifier(Modifier::UNDERLINED)),
            Tag::Table(_) => self.blank(),
            Tag::TableHead => self.push_modifier(Modifier::BOLD),
            _ => {}
        }
    }

    /// A block or an inline style closes.
    fn end(&mut self, end: TagEnd) {
        match end {
            TagEnd::Heading(level) => {
                self.style_stack.pop();
                if level == HeadingLevel::H1 {
                    self.style_stack.pop();
                }
                self.flush();
            }
            TagEnd::Paragraph | TagEnd::Item => self.flush(),
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
            }
            TagEnd::CodeBlock => {
                self.in_code = false;
                self.blank();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link => {
                self.style_stack.pop();
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if self.spans.last().is_some_and(|s| s.content == " │ ") {
                    self.spans.pop();
                }
                self.flush();
                if end == TagEnd::TableHead {
                    self.style_stack.pop();
                }
            }
            TagEnd::TableCell => {
                self.spans
                    .push(Span::styled(" │ ", self.theme.style(Role::Muted)));
            }
            _ => {}
        }
    }

    /// A list item starts: its marker (a bullet, or the list's next number), indented
    /// by the lists it is in and barred by the quotes.
    fn start_item(&mut self) {
        self.flush();
        let depth = self.lists.len().saturating_sub(1);
        let marker = match self.lists.last_mut() {
            Some(Some(n)) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => "• ".to_string(),
        };
        self.prefix = format!("{}{}{marker}", "│ ".repeat(self.quote), "  ".repeat(depth));
    }

    /// Text: in a code block, each of its lines indented; else a span in the style
    /// open, after the quotes' bars when it starts a quoted line.
    fn text(&mut self, t: &str) {
        let theme = self.theme;
        if self.in_code {
            for line in t.lines() {
                self.lines.push(Line::from(vec![
                    Span::styled(
                        format!("{}    ", "│ ".repeat(self.quote)),
                        theme.style(Role::Muted),
                    ),
                    Span::styled(line.to_string(), theme.style(Role::Value)),
                ]));
            }
        } else {
            if self.spans.is_empty() && self.quote > 0 && self.prefix.is_empty() {
                self.prefix = "│ ".repeat(self.quote);
            }
            self.spans.push(Span::styled(t.to_string(), self.current()));
        }
    }

    /// The style open.
    fn current(&self) -> Style {
        *self.style_stack.last().unwrap_or(&Style::default())
    }

    /// Opens the style open with `modifier` added.
    fn push_modifier(&mut self, modifier: Modifier) {
        self.style_stack.push(self.current().add_modifier(modifier));
    }

    /// Ends the line being written, after its prefix, when it has spans.
    fn flush(&mut self) {
        if !self.spans.is_empty() {
            let mut all = Vec::new();
            if !self.prefix.is_empty() {
                all.push(Span::styled(
                    self.prefix.clone(),
                    self.theme.style(Role::Muted),
                ));
            }
            all.append(&mut self.spans);
            self.lines.push(Line::from(all));
        }
        self.prefix.clear();
    }

    /// A blank line, unless there is one already (or no line yet).
    fn blank(&mut self) {
        if self.lines.last().is_some_and(|l| !l.spans.is_empty()) {
            self.lines.push(Line::default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn markdown_reads_as_text() {
        let theme = Theme::default();
        let md = "# Title\n\nSome *words* and `code`, a [link](x.md).\n\n- one\n- two\n  1. inner\n\n\
                  > quoted\n\n```\nlet x = 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let got = plain(&markdown_lines(md, &theme));
        assert_eq!(
            got,
            [
                "Title",
                "",
                "Some words and code, a link.",
                "",
                "• one",
                "• two",
                "  1. inner",
                "",
                "│ quoted",
                "",
                "    let x = 1;",
                "",
                "a │ b",
                "1 │ 2",
            ]
        );
    }
}
