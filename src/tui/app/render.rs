//! Drawing the console's frame: the header, the tab bar, the pane on show (or why a
//! Structs tab has nothing to show), the layers over it, the status line and the hint
//! bar (`help.rs`).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Tabs, Widget, Wrap};

use super::{App, Layer, MIN_HEIGHT, MIN_WIDTH};
use crate::events::FeedHealth;
use crate::source::SourceHealth;
use crate::tui::pane::{Level, Ui};
use crate::tui::tab::Tab;
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets::text::{fit, wrapped_lines};

impl App {
    /// What a Structs tab says attached to a server that is not a Structs one.
    fn render_needs_structs(&self, area: Rect, buf: &mut Buffer) {
        let info = self.core.status();
        let text = vec![
            Line::from(Span::styled(
                format!(" The {} tab needs a Structs server.", self.tab.title()),
                self.theme.style(Role::Title),
            )),
            Line::default(),
            Line::from(Span::styled(
                format!(
                    " {} is another kind of MCP server: it has no Structs tools \
                     (structs_list_entities and the rest), so there is nothing to show here.",
                    info.description
                ),
                self.theme.style(Role::Text),
            )),
            Line::from(Span::styled(
                " Its tools, resources, prompts, log, requests and traffic are in 7 Server.",
                self.theme.style(Role::Muted),
            )),
        ];
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .render(area, buf);
    }

    /// Draws the console into the frame.
    pub fn render(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        self.render_into(area, frame.buffer_mut());
    }

    /// Draws the console into `area` of `buf`. Any size is fine, down to nothing.
    pub fn render_into(&mut self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        buf.set_style(area, self.theme.style(Role::Base));
        if area.is_empty() {
            return;
        }
        if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
            self.render_too_small(area, buf);
            return;
        }
        let rows = Rows::split(area, self.status_lines(area.width));
        self.render_header(rows.header, buf);
        self.render_tabs(rows.tabs, buf);
        let ui = Ui {
            theme: &self.theme,
            keymap: &self.desk.keymap,
        };
        let [body, log] = Layout::vertical([
            Constraint::Min(0),
            Constraint::Length(self.events.height_in(rows.body.height)),
        ])
        .areas(rows.body);
        if self.needs_structs() {
            self.render_needs_structs(body, buf);
        } else {
            self.panes.of(self.tab).render(body, buf, &ui);
        }
        self.events.render(log, buf, &ui);
        let info = self.core.status();
        for at in 0..self.layers.len() {
            match self.layers[at] {
                Layer::Source => {
                    let ui = Ui {
                        theme: &self.theme,
                        keymap: &self.desk.keymap,
                    };
                    let current = format!("{} · {}", info.name, info.description);
                    self.source.render(rows.body, buf, &ui, &current);
                }
                Layer::Help => self.render_help(rows.body, buf),
                Layer::Logs => self.render_logs(rows.body, buf),
            }
        }
        self.render_status(rows.status, buf);
        self.render_hints(rows.hints, buf);
    }

    /// `structs-console  sim · seed 42, 24 players        block 120000 ⏸ paused`, and
    /// for a REST node its latency and errors and for a NATS feed its state:
    /// `structs-console  rest · http://127.0.0.1:1317   ● 21 ms · 2 errors  nats ● 14  block 120042`,
    /// shortened to fit.
    fn render_header(&self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let theme = &self.theme;
        buf.set_style(area, theme.style(Role::Header));
        let info = self.core.status();
        let health = self.core.source_health();
        let feed = self.core.feed_health();
        let name = Span::styled(" structs-console ", theme.style(Role::HeaderAccent));
        // A server that is not a Structs one has no chain, so no block height.
        let block = Span::styled(
            if self.structs {
                format!(" block {} ", info.block_height)
            } else {
                String::new()
            },
            theme.style(Role::Header),
        );
        let links = |long: bool| header_links(health.as_ref(), feed.as_ref(), long, theme);
        let width = usize::from(area.width);
        // The room left for the description with everything else on show. One too long
        // for it is cut rather than dropped while a useful part of it still fits (an
        // attached server's name and command, say).
        let room = {
            let mut right = links(true);
            right.push(block.clone());
            if info.paused {
                right.push(Span::raw("⏸ paused "));
            }
            let used = name.width()
                + Line::from(right).width()
                + Span::raw(format!(" {} ·  ", info.name)).width();
            width.saturating_sub(used)
        };
        let mut candidates = Vec::new();
        if room >= Span::raw(&info.description).width().min(16) {
            let described = format!(" {} · {} ", info.name, fit(&info.description, room));
            candidates.push((described, "⏸ paused ", links(true)));
        }
        candidates.extend([
            (format!(" {} ", info.name), "⏸ paused ", links(true)),
            (format!(" {} ", info.name), "⏸ ", links(false)),
            (format!(" {} ", info.name), "⏸ ", Vec::new()),
            (String::new(), "⏸ ", Vec::new()),
        ]);
        for (source, paused, links) in candidates {
            let left = Line::from(vec![
                name.clone(),
                Span::styled(source, theme.style(Role::Header)),
            ]);
            let mut right = links;
            right.push(block.clone());
            if info.paused {
                right.push(Span::styled(paused, theme.style(Role::Paused)));
            }
            let right = Line::from(right);
            if left.width() + right.width() <= width {
                left.render(area, buf);
                right.right_aligned().render(area, buf);
                return;
            }
        }
        // Narrower than even the shortest header: the block height matters most.
        let mut right = vec![block];
        if info.paused {
            right.push(Span::styled("⏸ ", theme.style(Role::Paused)));
        }
        Line::from(right).render(area, buf);
    }

    /// The tab bar; when the titles do not fit, tabs other than the one on show are
    /// reduced to their numbers.
    fn render_tabs(&self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let theme = &self.theme;
        let full = Tab::ALL.map(|t| format!("{} {}", t.number(), t.title()));
        // Each title is padded by a space on both sides; a divider sits between two.
        let full_width: usize = full.iter().map(|t| t.chars().count() + 3).sum::<usize>() - 1;
        let titles = if full_width <= usize::from(area.width) {
            full
        } else {
            Tab::ALL.map(|t| {
                if t == self.tab {
                    format!("{} {}", t.number(), t.title())
                } else {
                    t.number().to_string()
                }
            })
        };
        let selected = Tab::ALL.iter().position(|t| *t == self.tab);
        Tabs::new(titles)
            .select(selected)
            .style(theme.style(Role::Tab))
            .highlight_style(theme.style(Role::TabActive))
            .divider(Span::styled("│", theme.style(Role::Border)))
            .render(area, buf);
    }

    /// Below the smallest size the panes can use: what the console needs, as much of
    /// it as fits. Keys still work (`q` quits), and the next frame at a larger size is
    /// the whole console again.
    fn render_too_small(&self, area: Rect, buf: &mut Buffer) {
        let have = format!("have {}x{}", area.width, area.height);
        let lines: Vec<(String, Role)> = if area.width >= 20 {
            let lines = vec![
                ("structs-console".to_string(), Role::HeaderAccent),
                ("terminal too small".to_string(), Role::Error),
                (
                    format!("need {MIN_WIDTH}x{MIN_HEIGHT}, {have}"),
                    Role::Muted,
                ),
                ("q quits".to_string(), Role::Muted),
            ];
            // With fewer than three rows the warning goes first.
            if area.height < 3 {
                vec![lines[1].clone(), lines[2].clone()]
            } else {
                lines
            }
        } else {
            vec![
                ("too small".to_string(), Role::Error),
                (format!("need {MIN_WIDTH}x{MIN_HEIGHT}"), Role::Muted),
                (have, Role::Muted),
                ("q quits".to_string(), Role::Muted),
            ]
        };
        let width = usize::from(area.width);
        for (row, (text, role)) in lines.iter().take(usize::from(area.height)).enumerate() {
            let shown: String = text.chars().take(width).collect();
            buf.set_stringn(
                area.x,
                area.y + row as u16,
                shown,
                width,
                self.theme.style(*role),
            );
        }
    }

    /// The rows the status message takes at `width`, wrapped: up to
    /// [`STATUS_LINES_MAX`], so that a long message (a refusal with its reason, a
    /// path) is read whole rather than cut at the edge.
    fn status_lines(&self, width: u16) -> u16 {
        let Some((_, text)) = self.desk.status.message() else {
            return 1;
        };
        let lines = wrapped_lines(&format!(" {text}"), usize::from(width.max(1)));
        u16::try_from(lines.clamp(1, usize::from(STATUS_LINES_MAX))).unwrap_or(1)
    }

    fn render_status(&self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let theme = &self.theme;
        let line = match self.desk.status.message() {
            Some((Level::Error, text)) => {
                Line::from(Span::styled(format!(" {text}"), theme.style(Role::Error)))
            }
            Some((Level::Info, text)) => {
                Line::from(Span::styled(format!(" {text}"), theme.style(Role::Info)))
            }
            None if self.desk.dispatcher.loading() > 0 => {
                Line::from(Span::styled(" loading…", theme.style(Role::Muted)))
            }
            None => Line::default(),
        };
        Paragraph::new(line)
            .wrap(Wrap { trim: false })
            .render(area, buf);
    }
}

/// The rows of the frame. Small terminals lose the tab bar first, then the status
/// line, then the hint bar; the header stays as long as there is a row.
struct Rows {
    header: Rect,
    tabs: Rect,
    body: Rect,
    status: Rect,
    hints: Rect,
}

/// The most rows a status message wraps to.
const STATUS_LINES_MAX: u16 = 3;

impl Rows {
    /// The rows, the status line `status_lines` high where the body keeps at least
    /// half the frame.
    fn split(area: Rect, status_lines: u16) -> Rows {
        let h = area.height;
        let header_h = h.min(1);
        let hints_h = u16::from(h >= 2);
        let status_h = if h >= 3 {
            status_lines.clamp(1, STATUS_LINES_MAX.min((h / 2).saturating_sub(3).max(1)))
        } else {
            0
        };
        let tabs_h = u16::from(h >= 4);
        let body_h = h - header_h - hints_h - status_h - tabs_h;
        let row = |y: u16, height: u16| Rect::new(area.x, y, area.width, height);
        let header = row(area.y, header_h);
        let tabs = row(header.bottom(), tabs_h);
        let body = row(tabs.bottom(), body_h);
        let status = row(body.bottom(), status_h);
        let hints = row(status.bottom(), hints_h);
        Rows {
            header,
            tabs,
            body,
            status,
            hints,
        }
    }
}

/// The header's connections, long or short: what is connected, how fast, what failed.
fn header_links(
    health: Option<&SourceHealth>,
    feed: Option<&FeedHealth>,
    long: bool,
    theme: &Theme,
) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    if let Some(h) = &health {
        let (mark, role) = if h.connected {
            ("●", Role::Header)
        } else {
            ("✕", Role::Paused)
        };
        let mut text = if h.connected {
            format!(" {mark} {:.0} ms", h.latency_ms)
        } else {
            format!(" {mark} unreachable")
        };
        if h.errors > 0 {
            if long {
                text.push_str(&format!(
                    " · {} error{}",
                    h.errors,
                    if h.errors == 1 { "" } else { "s" }
                ));
            } else {
                text.push_str(&format!(" · {}✕", h.errors));
            }
        }
        text.push(' ');
        out.push(Span::styled(text, theme.style(role)));
    }
    if let Some(f) = &feed {
        let (mark, role) = if f.connected {
            ("●", Role::Header)
        } else {
            ("✕", Role::Paused)
        };
        let text = if long {
            format!(" nats {mark} {} ", f.events)
        } else {
            format!(" nats {mark} ")
        };
        out.push(Span::styled(text, theme.style(role)));
    }
    out
}
