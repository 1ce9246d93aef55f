//! The Live tab's timeline (`v`): the calls the filter lets through as bars on a time
//! axis, as the Replay tab draws a log's ([`crate::tui::widgets::timeline`]): calls at
//! the same time in lanes, each round of input and each task report a mark on its call,
//! failed calls in the error colour, answers from a rule hatched, a call held at a
//! breakpoint lit as the prompt is, a call still running drawn to the end of the view.
//! The selection is the list's, so the detail beside shows the selected bar's call.
//!
//! A call's time is its request line's; each is read once and kept by the call's key,
//! so a frame does not parse ten thousand timestamps again.

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};
use serde_json::Value;

use super::{CallKey, Focus, LivePane};
use crate::record::live::{LiveCall, Status};
use crate::tui::keymap::Command;
use crate::tui::pane::Ui;
use crate::tui::theme::Role;
use crate::tui::widgets::timeline::{self, Bar, View};

/// What the timeline keeps between frames.
#[derive(Default)]
pub(super) struct LiveTimeline {
    /// The window of time in view, once the keys moved it (else the whole).
    view: Option<View>,
    /// Each call's start, in milliseconds since the Unix epoch.
    starts: HashMap<CallKey, f64>,
    /// The whole of the calls, and the selected call's start, as last drawn.
    fit: Option<View>,
    at: Option<f64>,
}

/// Milliseconds since the Unix epoch of an RFC 3339 time.
fn epoch_ms(ts: &str) -> Option<f64> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| t.timestamp_micros() as f64 / 1e3)
}

impl LiveTimeline {
    /// The bars of `calls` (the rows on show, in order), with lanes; their times from
    /// the first one's.
    fn bars(&mut self, calls: &[&LiveCall]) -> (Vec<Bar>, u32) {
        if self.starts.len() > 4 * crate::record::live::LIVE_KEPT {
            self.starts.clear();
        }
        let starts: Vec<f64> = calls
            .iter()
            .map(|c| {
                *self
                    .starts
                    .entry((c.session, c.call))
                    .or_insert_with(|| epoch_ms(&c.ts).unwrap_or(0.0))
            })
            .collect();
        let origin = starts.iter().copied().fold(f64::INFINITY, f64::min);
        let origin = if origin.is_finite() { origin } else { 0.0 };
        let mut bars: Vec<Bar> = calls
            .iter()
            .zip(&starts)
            .map(|(c, &s)| {
                let start = s - origin;
                let marks = c
                    .rounds
                    .iter()
                    .filter_map(|r| r.get("at").and_then(Value::as_str).and_then(epoch_ms))
                    .map(|at| at - origin)
                    .collect();
                Bar {
                    start,
                    end: match c.status {
                        Status::Running => None,
                        _ => Some(start + c.duration_ms.unwrap_or(0.0)),
                    },
                    lane: 0,
                    error: matches!(c.status, Status::Failed(_)),
                    injected: c.injected.is_some(),
                    held: c.held.is_some(),
                    marks,
                }
            })
            .collect();
        let count = timeline::lay(&mut bars);
        (bars, count)
    }
}

impl LivePane {
    /// Zooms and pans the timeline around the selected call.
    pub(super) fn move_timeline(&mut self, command: Command) {
        let Some(tl) = &mut self.timeline else { return };
        let Some(fit) = tl.fit else { return };
        let at = tl.at;
        let view = tl.view.get_or_insert(fit);
        match command {
            Command::ZoomIn | Command::ZoomOut => {
                let at = at.unwrap_or(view.from + view.span / 2.0);
                view.zoom(at, command == Command::ZoomOut);
            }
            Command::PanLeft => view.pan(false),
            Command::PanRight => view.pan(true),
            _ => {}
        }
    }

    /// The timeline in the list's place.
    pub(super) fn render_timeline(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let calls: Vec<&LiveCall> = self
            .rows
            .iter()
            .filter_map(|&i| self.live.calls().get(i))
            .collect();
        let Some(tl) = &mut self.timeline else { return };
        let (bars, lanes) = tl.bars(&calls);
        let selected = self.cursor.selected.min(bars.len().saturating_sub(1));
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(if self.focus == Focus::Calls {
                Role::BorderFocused
            } else {
                Role::Border
            }));
        let inner = block.inner(area);
        let lanes_shown = u32::from(inner.height.saturating_sub(1));
        // Fitted to every call until the keys move it; then the selected call is kept
        // in view.
        tl.fit = Some(View::fit(&bars));
        tl.at = bars.get(selected).map(|b| b.start);
        let mut view = tl.view.unwrap_or(View::fit(&bars));
        if let Some(bar) = bars.get(selected) {
            view.show(bar, lanes_shown);
        }
        if tl.view.is_some() {
            tl.view = Some(view);
        }
        let filtered = if self.filter.is_empty() {
            String::new()
        } else {
            format!(" · filter {}", self.filter.trim())
        };
        let title = Line::from(vec![
            Span::styled(" Timeline ", theme.style(Role::Title)),
            Span::styled(
                format!(
                    "· {} call{} in {lanes} lane{}{filtered} · call {} ",
                    bars.len(),
                    if bars.len() == 1 { "" } else { "s" },
                    if lanes == 1 { "" } else { "s" },
                    if bars.is_empty() { 0 } else { selected + 1 }
                ),
                theme.style(Role::Muted),
            ),
        ]);
        block.title(title).render(area, buf);
        let chosen = (!bars.is_empty()).then_some(selected);
        timeline::draw(&bars, chosen, &view, inner, buf, theme);
    }
}
