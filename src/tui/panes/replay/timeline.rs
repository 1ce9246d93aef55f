//! The Replay pane's timeline (`v`): the log's calls as bars on a time axis, in lanes
//! when they overlap, the selected call's bar highlighted and its answers in the detail
//! beside it. The bars are rebuilt from the index while it grows, and kept once it is
//! whole; a frame draws them from memory.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use super::{Focus, ReplayPane};
use crate::record::index::LogIndex;
use crate::tui::keymap::Command;
use crate::tui::pane::Ui;
use crate::tui::theme::Role;
use crate::tui::widgets::timeline::{self, Bar, View};

/// The bars of an open log, and the window of time in view.
pub(super) struct Timeline {
    bars: Vec<Bar>,
    lanes: u32,
    view: Option<View>,
    /// The index's (calls, bytes read, done) when the bars were built.
    seen: (usize, u64, bool),
    /// The filter's calls alone, in lanes of their own: for which making of the
    /// filter's rows, the bars, and their lanes.
    filtered: Option<(u64, Vec<Bar>, u32)>,
}

impl Timeline {
    pub(super) fn new() -> Timeline {
        Timeline {
            bars: Vec::new(),
            lanes: 0,
            view: None,
            seen: (usize::MAX, 0, false),
            filtered: None,
        }
    }

    /// Rebuilds the bars when the index has grown since.
    fn refresh(&mut self, index: &LogIndex) {
        let p = index.progress();
        let seen = (p.calls, p.bytes_read, p.done);
        if seen == self.seen {
            return;
        }
        self.seen = seen;
        self.filtered = None;
        let (timings, marks) = index.timings(0);
        let start = |i: usize| timings[i].at_ms.unwrap_or(0.0);
        // A call not answered yet holds its lane to the end.
        let mut bars: Vec<Bar> = timings
            .iter()
            .enumerate()
            .map(|(i, t)| Bar {
                start: start(i),
                end: t.duration_ms.map(|d| start(i) + d),
                lane: 0,
                error: t.failed,
                injected: t.injected,
                held: false,
                marks: marks.get(&i).cloned().unwrap_or_default(),
            })
            .collect();
        self.lanes = timeline::lay(&mut bars);
        if self.view.is_none() || !p.done {
            self.view = Some(View::fit(&bars));
        }
        self.bars = bars;
    }

    /// The bars of `rows` alone (the filter's), laid in lanes again; kept while the
    /// rows and the index stay as they are.
    fn filter_to(&mut self, rows: &[usize], key: u64) {
        if self.filtered.as_ref().is_some_and(|(k, _, _)| *k == key) {
            return;
        }
        let mut bars: Vec<Bar> = rows
            .iter()
            .filter_map(|&r| self.bars.get(r).cloned())
            .collect();
        let lanes = timeline::lay(&mut bars);
        self.filtered = Some((key, bars, lanes));
    }

    /// Zooms and pans; true when the command was the timeline's.
    pub(super) fn run(&mut self, command: Command, selected: usize) -> bool {
        let at = self.bars.get(selected).map(|b| b.start);
        let Some(view) = &mut self.view else {
            return false;
        };
        match command {
            Command::ZoomIn | Command::ZoomOut => view.zoom(
                at.unwrap_or(view.from + view.span / 2.0),
                command == Command::ZoomOut,
            ),
            Command::PanLeft => view.pan(false),
            Command::PanRight => view.pan(true),
            _ => return false,
        }
        true
    }
}

impl ReplayPane {
    /// The timeline in the list's place.
    pub(super) fn render_timeline(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let (Some(log), Some(tl)) = (&self.log, &mut self.timeline) else {
            return;
        };
        tl.refresh(&log.index);
        // With a filter in force, its calls alone; the selection is the list's.
        let (bars, lanes, selected) = match &self.filter.rows {
            Some(rows) => {
                tl.filter_to(rows, self.filter.generation);
                let at = rows.partition_point(|&r| r < self.cursor.selected);
                let (_, bars, lanes) = tl.filtered.as_ref().expect("just made");
                (bars, *lanes, at)
            }
            None => (&tl.bars, tl.lanes, self.cursor.selected),
        };
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(if self.focus == Focus::Calls {
                Role::BorderFocused
            } else {
                Role::Border
            }));
        let inner = block.inner(area);
        let lanes_shown = u32::from(inner.height.saturating_sub(1));
        if let (Some(view), Some(bar)) = (&mut tl.view, bars.get(selected)) {
            view.show(bar, lanes_shown);
        }
        let view = tl.view.unwrap_or(View::fit(bars));
        let title = Line::from(vec![
            Span::styled(" Timeline ", theme.style(Role::Title)),
            Span::styled(
                format!(
                    "· {} calls in {} lane{}{} · call {} ",
                    bars.len(),
                    lanes,
                    if lanes == 1 { "" } else { "s" },
                    if self.filter.active() {
                        format!(" · filter {}", self.filter.text.trim())
                    } else {
                        String::new()
                    },
                    self.cursor.selected + 1
                ),
                theme.style(Role::Muted),
            ),
        ]);
        let hidden = lanes.saturating_sub(view.lane_top + lanes_shown);
        let footer = if view.lane_top > 0 || hidden > 0 {
            format!(
                " lanes {}–{} of {} ",
                view.lane_top + 1,
                view.lane_top + lanes_shown.min(lanes),
                lanes
            )
        } else {
            String::new()
        };
        block
            .title(title)
            .title_bottom(
                Line::from(Span::styled(footer, theme.style(Role::Muted))).right_aligned(),
            )
            .render(area, buf);
        timeline::draw(bars, Some(selected), &view, inner, buf, theme);
    }
}
