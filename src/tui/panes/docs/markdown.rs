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
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut style_stack: Vec<Style> = vec![theme.style(Role::Text)];
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut quote = 0usize;
    let mut in_code = false;
    let mut prefix = String::new();
    let flush =
        |lines: &mut Vec<Line<'static>>, spans: &mut Vec<Span<'static>>, prefix: &mut String| {
            if !spans.is_empty() {
                let mut all = Vec::new();
                if !prefix.is_empty() {
                    all.push(Span::styled(prefix.clone(), theme.style(Role::Muted)));
                }
                all.append(spans);
                lines.push(Line::from(all));
            }
            prefix.clear();
        };
    let blank = |lines: &mut Vec<Line<'static>>| {
        if lines.last().is_some_and(|l| !l.spans.is_empty()) {
            lines.push(Line::default());
        }
    };
    let current = |stack: &Vec<Style>| *stack.last().unwrap_or(&Style::default());
    for event in Parser::new_ext(body, crate::docs::markdown::options()) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                blank(&mut lines);
                let role = if level <= HeadingLevel::H2 {
                    Role::Title
                } else {
                    Role::Field
                };
                style_stack.push(theme.style(role).add_modifier(Modifier::BOLD));
                if level == HeadingLevel::H1 {
                    style_stack.push(
                        theme
                            .style(role)
                            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                    );
                }
            }
            Event::End(TagEnd::Heading(level)) => {
                style_stack.pop();
                if level == HeadingLevel::H1 {
                    style_stack.pop();
                }
                flush(&mut lines, &mut spans, &mut prefix);
            }
            Event::Start(Tag::Paragraph) if lists.is_empty() => blank(&mut lines),
            Event::End(TagEnd::Paragraph) => flush(&mut lines, &mut spans, &mut prefix),
            Event::Start(Tag::List(start)) => {
                if lists.is_empty() {
                    blank(&mut lines);
                }
                flush(&mut lines, &mut spans, &mut prefix);
                lists.push(start);
            }
            Event::End(TagEnd::List(_)) => {
                flush(&mut lines, &mut spans, &mut prefix);
                lists.pop();
            }
            Event::Start(Tag::Item) => {
                flush(&mut lines, &mut spans, &mut prefix);
                let depth = lists.len().saturating_sub(1);
                let marker = match lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                prefix = format!("{}{}{marker}", "│ ".repeat(quote), "  ".repeat(depth));
            }
            Event::End(TagEnd::Item) => flush(&mut lines, &mut spans, &mut prefix),
            Event::Start(Tag::BlockQuote(_)) => {
                blank(&mut lines);
                quote += 1;
            }
            Event::End(TagEnd::BlockQuote(_)) => {
                flush(&mut lines, &mut spans, &mut prefix);
                quote = quote.saturating_sub(1);
            }
            Event::Start(Tag::CodeBlock(_)) => {
                blank(&mut lines);
                in_code = true;
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                blank(&mut lines);
            }
            Event::Start(Tag::Emphasis) => {
                style_stack.push(current(&style_stack).add_modifier(Modifier::ITALIC))
            }
            Event::Start(Tag::Strong) => {
                style_stack.push(current(&style_stack).add_modifier(Modifier::BOLD))
            }
            Event::Start(Tag::Strikethrough) => {
                style_stack.push(current(&style_stack).add_modifier(Modifier::CROSSED_OUT))
            }
            Event::Start(Tag::Link { .. }) => {
                style_stack.push(theme.style(Role::IdLink).add_modifier(Modifier::UNDERLINED))
            }
            Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link,
            ) => {
                style_stack.pop();
            }
            Event::Start(Tag::Table(_)) => blank(&mut lines),
            Event::End(end @ (TagEnd::TableHead | TagEnd::TableRow)) => {
                if spans.last().is_some_and(|s| s.content == " │ ") {
                    spans.pop();
                }
                flush(&mut lines, &mut spans, &mut prefix);
                if end == TagEnd::TableHead {
                    style_stack.pop();
                }
            }
            Event::Start(Tag::TableHead) => {
                style_stack.push(current(&style_stack).add_modifier(Modifier::BOLD))
            }
            Event::End(TagEnd::Table) => {}
            Event::End(TagEnd::TableCell) => {
                spans.push(Span::styled(" │ ", theme.style(Role::Muted)));
            }
            Event::Text(t) => {
                if in_code {
                    for line in t.lines() {
                        lines.push(Line::from(vec![
                            Span::styled(
                                format!("{}    ", "│ ".repeat(quote)),
                                theme.style(Role::Muted),
                            ),
                            Span::styled(line.to_string(), theme.style(Role::Value)),
                        ]));
                    }
                } else {
                    if spans.is_empty() && quote > 0 && prefix.is_empty() {
                        prefix = "│ ".repeat(quote);
                    }
                    spans.push(Span::styled(t.to_string(), current(&style_stack)));
                }
            }
            Event::Code(t) => spans.push(Span::styled(t.to_string(), theme.style(Role::Value))),
            Event::SoftBreak => spans.push(Span::raw(" ")),
            Event::HardBreak => flush(&mut lines, &mut spans, &mut prefix),
            Event::Rule => {
                flush(&mut lines, &mut spans, &mut prefix);
                lines.push(Line::from(Span::styled(
                    "────────",
                    theme.style(Role::Muted),
                )));
            }
            Event::TaskListMarker(done) => {
                spans.push(Span::raw(if done { "[x] " } else { "[ ] " }));
            }
            _ => {}
        }
    }
    flush(&mut lines, &mut spans, &mut prefix);
    lines
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
