//! A timeline: calls as bars on a time axis, calls at the same time in lanes, the
//! moments a call asked for input or its task reported as marks on its bar, errors and
//! calls answered by a rule or a breakpoint drawn apart (every other call shaded, so calls
//! one after another stay told apart), the selected call highlighted.
//!
//! The view is a window of time (`from`, `span`) the keys zoom and pan; a frame looks
//! at every bar once, so 100,000 calls draw in a few milliseconds.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::tui::theme::{Role, Theme};

/// One call on the timeline, in milliseconds from the first call.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub start: f64,
    /// Its end; a call not answered yet is drawn to the end of the view.
    pub end: Option<f64>,
    pub lane: u32,
    pub error: bool,
    /// Answered by a rule or a breakpoint, not by its server.
    pub injected: bool,
    /// Held at a breakpoint now (a live call).
    pub held: bool,
    /// When it asked for input, or its task reported.
    pub marks: Vec<f64>,
}

/// The window of time shown, and the first lane at the top.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    pub from: f64,
    pub span: f64,
    pub lane_top: u32,
}

impl View {
    /// The whole of `bars`.
    pub fn fit(bars: &[Bar]) -> View {
        let end = bars
            .iter()
            .map(|b| b.end.unwrap_or(b.start))
            .fold(0.0_f64, f64::max);
        View {
            from: 0.0,
            span: end.max(1.0) * 1.02,
            lane_top: 0,
        }
    }

    /// Half the span (or twice it, `out`), around `at`.
    pub fn zoom(&mut self, at: f64, out: bool) {
        let span = if out {
            self.span * 2.0
        } else {
            self.span / 2.0
        };
        let span = span.clamp(0.01, 1e12);
        let left = (at - self.from) / self.span;
        self.from = (at - left * span).max(0.0);
        self.span = span;
    }

    /// A quarter of the span to the right (`forward`) or left.
    pub fn pan(&mut self, forward: bool) {
        let step = self.span / 4.0;
        self.from = if forward {
            self.from + step
        } else {
            (self.from - step).max(0.0)
        };
    }

    /// Moves the window so that `bar` is in it (its start, and its lane).
    pub fn show(&mut self, bar: &Bar, lanes: u32) {
        if bar.start < self.from || bar.start > self.from + self.span {
            self.from = (bar.start - self.span / 4.0).max(0.0);
        }
        if bar.lane < self.lane_top {
            self.lane_top = bar.lane;
        } else if lanes > 0 && bar.lane >= self.lane_top + lanes {
            self.lane_top = bar.lane + 1 - lanes;
        }
    }
}

/// Lays `bars` in lanes (each bar the first lane free at its start; a bar with no end
/// holds its lane to the end); returns how many lanes they take.
pub fn lay(bars: &mut [Bar]) -> u32 {
    let mut order: Vec<usize> = (0..bars.len()).collect();
    order.sort_by(|&a, &b| bars[a].start.total_cmp(&bars[b].start));
    let taken = lanes(
        order
            .iter()
            .map(|&i| (bars[i].start, bars[i].end.unwrap_or(f64::INFINITY))),
    );
    for (&i, &lane) in order.iter().zip(&taken) {
        bars[i].lane = lane;
    }
    taken.iter().max().map_or(0, |m| m + 1)
}

/// Lanes for `spans` (start, end) in start order: each the first lane free at its start.
pub fn lanes(spans: impl Iterator<Item = (f64, f64)>) -> Vec<u32> {
    let mut ends: Vec<f64> = Vec::new();
    spans
        .map(|(start, end)| match ends.iter().position(|&e| e <= start) {
            Some(i) => {
                ends[i] = end;
                i as u32
            }
            None => {
                ends.push(end);
                (ends.len() - 1) as u32
            }
        })
        .collect()
}

/// `ms` for an axis: `0`, `250 ms`, `1.5 s`, `2 m`.
fn label(ms: f64) -> String {
    if ms < 1_000.0 {
        format!("{ms:.0} ms")
    } else if ms < 120_000.0 {
        format!("{:.1} s", ms / 1e3)
    } else {
        format!("{:.1} m", ms / 60e3)
    }
}

/// Draws `bars` in `area`: the axis on the first line, a lane a line under it.
pub fn draw(
    bars: &[Bar],
    selected: Option<usize>,
    view: &View,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    if area.height < 2 || area.width < 12 {
        return;
    }
    let width = f64::from(area.width);
    let per_cell = view.span / width;
    axis(view, area, buf, theme);
    let lanes = u32::from(area.height - 1);
    let column = |t: f64| ((t - view.from) / per_cell).floor();
    let view_end = view.from + view.span;
    for (i, bar) in bars.iter().enumerate() {
        if bar.lane < view.lane_top || bar.lane >= view.lane_top + lanes {
            continue;
        }
        let end = bar.end.unwrap_or(view_end);
        if end < view.from || bar.start > view_end {
            continue;
        }
        let (x0, x1) = (column(bar.start).max(0.0), column(end).min(width - 1.0));
        let y = area.y + 1 + (bar.lane - view.lane_top) as u16;
        let role = if Some(i) == selected {
            Role::Selected
        } else if bar.held {
            Role::Prompt
        } else if bar.error {
            Role::Error
        } else if bar.injected {
            Role::Cycle
        } else {
            Role::IdLink
        };
        let fill = if bar.held {
            "░"
        } else if bar.end.is_none() {
            "▒"
        } else if bar.injected {
            "▚"
        } else if i % 2 == 1 {
            // Calls one after another in a lane stay told apart.
            "▓"
        } else {
            "█"
        };
        let style = theme.style(role);
        for x in (x0 as u16)..=(x1.max(x0) as u16) {
            if let Some(cell) = buf.cell_mut((area.x + x, y)) {
                cell.set_symbol(fill).set_style(style);
            }
        }
        for &m in &bar.marks {
            let x = column(m);
            if (x0..=x1.max(x0)).contains(&x)
                && let Some(cell) = buf.cell_mut((area.x + x as u16, y))
            {
                cell.set_symbol("┃").set_style(theme.style(Role::Paused));
            }
        }
    }
}

/// The axis line: a label at every fifth of the width.
fn axis(view: &View, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let style = theme.style(Role::Muted);
    let width = usize::from(area.width);
    let mut line = vec![' '; width];
    // Each label where it fits whole, after the one before it.
    let mut free = 0;
    for k in 0..5 {
        let at = k * width / 5;
        let ms = view.from + view.span * (at as f64) / width as f64;
        let text: Vec<char> = format!("┆{}", label(ms)).chars().collect();
        if at < free || at + text.len() > width {
            continue;
        }
        line[at..at + text.len()].copy_from_slice(&text);
        free = at + text.len() + 1;
    }
    let text: String = line.into_iter().collect();
    buf.set_stringn(area.x, area.y, text, width, style);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(start: f64, end: f64, lane: u32) -> Bar {
        Bar {
            start,
            end: Some(end),
            lane,
            error: false,
            injected: false,
            held: false,
            marks: Vec::new(),
        }
    }

    #[test]
    fn overlapping_calls_take_lanes_and_a_free_lane_is_taken_again() {
        let spans = [
            (0.0, 10.0),
            (5.0, 20.0),
            (12.0, 15.0),
            (16.0, 30.0),
            (18.0, 19.0),
        ];
        assert_eq!(lanes(spans.into_iter()), [0, 1, 0, 0, 2]);
    }

    #[test]
    fn zooming_keeps_the_point_under_it_and_panning_stops_at_zero() {
        let mut v = View {
            from: 0.0,
            span: 1000.0,
            lane_top: 0,
        };
        v.zoom(500.0, false);
        assert_eq!((v.from, v.span), (250.0, 500.0));
        v.zoom(500.0, true);
        assert_eq!((v.from, v.span), (0.0, 1000.0));
        v.pan(false);
        assert_eq!(v.from, 0.0);
        v.pan(true);
        assert_eq!(v.from, 250.0);
        v.show(&bar(5000.0, 5100.0, 7), 3);
        assert!(v.from <= 5000.0 && 5000.0 <= v.from + v.span);
        assert_eq!(v.lane_top, 5);
    }

    #[test]
    fn bars_fill_their_time_and_the_selected_one_stands_out() {
        let theme = Theme::default();
        let mut bars = vec![bar(0.0, 500.0, 0), bar(250.0, 1000.0, 1)];
        bars[1].error = true;
        bars[0].marks = vec![400.0];
        let area = Rect::new(0, 0, 20, 3);
        let mut buf = Buffer::empty(area);
        let view = View {
            from: 0.0,
            span: 1000.0,
            lane_top: 0,
        };
        draw(&bars, Some(0), &view, area, &mut buf, &theme);
        let row =
            |y: u16| -> String { (0..20).map(|x| buf[(x, y)].symbol().to_string()).collect() };
        assert!(row(0).starts_with("┆0 ms"), "{}", row(0));
        assert_eq!(row(1), "████████┃██         ");
        assert_eq!(row(2), "     ▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓", "every other call shaded");
        let colours = |x: u16, y: u16| (buf[(x, y)].fg, buf[(x, y)].bg);
        let of = |role: Role| {
            let s = theme.style(role);
            (s.fg.unwrap_or_default(), s.bg.unwrap_or_default())
        };
        assert_eq!(colours(0, 1), of(Role::Selected));
        assert_eq!(colours(19, 2), of(Role::Error));
    }
}
