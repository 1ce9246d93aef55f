//! The Replay tab's comparison (`d`): the open log and another side by side, aligned as
//! `structs-console diff` aligns them ([`crate::record::compare`]: by each step's method,
//! tool and arguments, with insertions and deletions as in a text diff). Each row is a
//! pair, marked `=` (the same step, ended the same way), `~` (ended differently), `-`
//! (only in the open log) or `+` (only in the other), with each side's tool, outcome,
//! size and time; under them, the selected pair's arguments and outcomes, and the totals.
//!
//! Both logs are read on a thread of their own, as `diff` reads them (results skipped),
//! with the redaction rules (`[redact]` of `--config`) applied to the arguments shown.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Receiver;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget};

use crate::record::Redaction;
use crate::record::calls::{self, CallRecord};
use crate::record::compare::{self as cmp, Comparison, Op, Pair};
use crate::tui::keymap::Command;
use crate::tui::pane::Ui;
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets::cursor::Cursor;
use crate::tui::widgets::text::{fit_pad as fit, grouped};

/// The two runs, aligned.
struct Aligned {
    a: Vec<CallRecord>,
    b: Vec<CallRecord>,
    cmp: Comparison,
}

/// Where the comparison stands.
enum State {
    Reading(Receiver<Result<Aligned, String>>),
    Ready(Box<Aligned>),
    Failed(String),
}

/// The comparison of the open log (A) with another (B).
pub(super) struct CompareView {
    names: (String, String),
    state: State,
    pub cursor: Cursor,
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Reads a log's calls with what `rules` find in their arguments hidden.
fn read(path: &Path, rules: &Redaction) -> Result<Vec<CallRecord>, String> {
    let mut run =
        calls::read(path, &[]).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    for c in &mut run.calls {
        rules.apply(&mut c.arguments, "", &mut Vec::new());
    }
    Ok(run.calls)
}

impl CompareView {
    /// Starts reading `a` and `b` and aligning them.
    pub(super) fn open(a: PathBuf, b: PathBuf, rules: Arc<Redaction>) -> CompareView {
        let names = (name_of(&a), name_of(&b));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let aligned = read(&a, &rules).and_then(|ra| {
                let rb = read(&b, &rules)?;
                let cmp = cmp::compare(&ra, &rb);
                Ok(Aligned { a: ra, b: rb, cmp })
            });
            let _ = tx.send(aligned);
        });
        CompareView {
            names,
            state: State::Reading(rx),
            cursor: Cursor {
                page: 10,
                ..Cursor::default()
            },
        }
    }

    /// Takes in the alignment once it is made; true when it came.
    pub(super) fn poll(&mut self) -> bool {
        let State::Reading(rx) = &self.state else {
            return false;
        };
        match rx.try_recv() {
            Ok(Ok(aligned)) => self.state = State::Ready(Box::new(aligned)),
            Ok(Err(e)) => self.state = State::Failed(e),
            Err(std::sync::mpsc::TryRecvError::Empty) => return false,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.state = State::Failed("the reader stopped".into());
            }
        }
        true
    }

    /// True once the logs are read (or could not be).
    pub(super) fn settled(&mut self) -> bool {
        self.poll();
        !matches!(self.state, State::Reading(_))
    }

    fn pairs(&self) -> &[Pair] {
        match &self.state {
            State::Ready(r) => &r.cmp.pairs,
            _ => &[],
        }
    }

    /// Moves the selection; true when the command was the comparison's.
    pub(super) fn run(&mut self, command: Command) -> bool {
        let n = self.pairs().len();
        let target = match command {
            Command::NextDifference | Command::PrevDifference => {
                let forward = command == Command::NextDifference;
                let at = self.cursor.selected;
                let differs = |i: &usize| self.pairs()[*i].op != Op::Same;
                if forward {
                    (at + 1..n).find(differs)
                } else {
                    (0..at).rev().find(differs)
                }
            }
            c if crate::tui::widgets::cursor::SCROLLING.contains(&c) => self.cursor.target(c, n),
            _ => return false,
        };
        if let Some(t) = target {
            self.cursor.selected = t;
        }
        true
    }

    /// Draws the pairs, the selected pair's facts and the totals in `area`.
    pub(super) fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        self.poll();
        let title = self.title(theme);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(Role::BorderFocused))
            .title(title);
        let inner = block.inner(area);
        block.render(area, buf);
        let aligned = match &self.state {
            State::Ready(r) => r,
            State::Reading(_) => {
                buf.set_stringn(
                    inner.x + 1,
                    inner.y,
                    "reading both logs…",
                    usize::from(inner.width),
                    theme.style(Role::Muted),
                );
                return;
            }
            State::Failed(e) => {
                Paragraph::new(e.clone())
                    .style(theme.style(Role::Error))
                    .wrap(ratatui::widgets::Wrap { trim: true })
                    .render(inner, buf);
                return;
            }
        };
        if inner.height < 4 || inner.width < 40 {
            return;
        }
        let facts = if inner.height >= 16 { 6 } else { 0 };
        let [list, detail] =
            Layout::vertical([Constraint::Min(2), Constraint::Length(facts)]).areas(inner);
        let rows = usize::from(list.height - 1);
        self.cursor.scroll(rows);
        let half = usize::from(list.width.saturating_sub(4)) / 2;
        let head = format!(
            "  {}│ {}",
            fit(&format!("{:>5} {}", "#", self.names.0), half + 1),
            fit(&format!("{:>5} {}", "#", self.names.1), half)
        );
        buf.set_stringn(
            list.x,
            list.y,
            head,
            usize::from(list.width),
            theme.style(Role::Muted),
        );
        let pairs = &aligned.cmp.pairs;
        for (k, p) in pairs.iter().enumerate().skip(self.cursor.top).take(rows) {
            let chosen = k == self.cursor.selected;
            let side = |i: Option<usize>, calls: &[CallRecord]| match i.and_then(|i| calls.get(i)) {
                Some(c) => fit(&cell(i.unwrap_or(0), c), half),
                None => fit("", half),
            };
            let text = format!(
                "{} {} │ {}",
                p.op.mark(),
                side(p.a, &aligned.a),
                side(p.b, &aligned.b)
            );
            let role = if chosen {
                Role::Selected
            } else {
                role_of(p.op)
            };
            let y = list.y + 1 + (k - self.cursor.top) as u16;
            buf.set_style(Rect::new(list.x, y, list.width, 1), theme.style(role));
            buf.set_stringn(list.x, y, text, usize::from(list.width), theme.style(role));
        }
        if facts > 0
            && let Some(p) = pairs.get(self.cursor.selected)
        {
            self.render_facts(aligned, p, detail, buf, theme);
        }
    }

    fn title(&self, theme: &Theme) -> Line<'static> {
        let mut spans = vec![Span::styled(
            format!(" {} ⟷ {} ", self.names.0, self.names.1),
            theme.style(Role::Title),
        )];
        if let State::Ready(r) = &self.state {
            let [same, changed, removed, added] = r.cmp.counts();
            spans.push(Span::styled(
                format!(
                    "· {} / {} calls · {same} same, {changed} changed, {removed} only in {}, {added} only in {} ",
                    grouped(r.a.len()),
                    grouped(r.b.len()),
                    self.names.0,
                    self.names.1
                ),
                theme.style(Role::Muted),
            ));
        }
        Line::from(spans)
    }

    /// The selected pair: each side's arguments and outcome; then the totals.
    fn render_facts(
        &self,
        aligned: &Aligned,
        p: &Pair,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        let width = usize::from(area.width);
        let side = |name: &str, i: Option<usize>, calls: &[CallRecord]| -> Vec<String> {
            match i.and_then(|i| calls.get(i)) {
                Some(c) => vec![
                    format!(
                        "{name} call {} · {} · {}",
                        i.unwrap_or(0) + 1,
                        c.tool,
                        cmp::did(c)
                    ),
                    format!("  {}", c.arguments_text()),
                ],
                None => vec![format!("{name}: no such step"), String::new()],
            }
        };
        let (ta, tb) = &aligned.cmp.total;
        let mut lines = vec![format!("{} · the pair", p.op.name())];
        lines.extend(side(&self.names.0, p.a, &aligned.a));
        lines.extend(side(&self.names.1, p.b, &aligned.b));
        let sum = |f: &cmp::Figures| {
            format!(
                "{} call{}, {} error{}, {}, {}",
                f.calls,
                if f.calls == 1 { "" } else { "s" },
                f.errors,
                if f.errors == 1 { "" } else { "s" },
                cmp::size(f.bytes),
                cmp::millis(f.time_ms)
            )
        };
        lines.push(format!("all: {} · against {}", sum(ta), sum(tb)));
        for (k, line) in lines.iter().take(usize::from(area.height)).enumerate() {
            let role = if k == 0 { role_of(p.op) } else { Role::Text };
            buf.set_stringn(
                area.x,
                area.y + k as u16,
                fit(line, width),
                width,
                theme.style(if k + 1 == lines.len() {
                    Role::Muted
                } else {
                    role
                }),
            );
        }
    }
}

/// One side of a row: its number, tool, outcome, size and time.
fn cell(i: usize, c: &CallRecord) -> String {
    format!(
        "{:>5} {} {}",
        grouped(i + 1),
        c.tool.trim_start_matches("structs_"),
        cmp::did(c)
    )
}

fn role_of(op: Op) -> Role {
    match op {
        Op::Same => Role::Text,
        Op::Changed => Role::Prompt,
        Op::Removed => Role::Error,
        Op::Added => Role::Info,
    }
}
