//! The Replay tab's filter (`/`): the filter language of `diff`, `check` and `watch
//! --filter` ([`crate::record::filter`]) over the open log's calls, with the count that
//! match.
//!
//! The calls are read as `diff` reads them ([`crate::record::calls`]: a call's outcome,
//! code, bytes, rounds, and the words a `text:` term looks for), on a thread of its own,
//! once per set of words: a filter typed without new words is applied to what was read,
//! at once. Each matching call is found in the list by its session and number; the list
//! then shows those rows alone, and moves among them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, TryRecvError};

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::ReplayPane;
use crate::record::calls::{self, CallRecord};
use crate::record::filter::Filter;
use crate::record::index::LogIndex;
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, EventState, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::cursor::Cursor;

/// The longest filter, in bytes.
pub(super) const FILTER_MAX: usize = 200;

/// The calls as the filter read them.
struct Read {
    needles: Vec<String>,
    calls: Vec<CallRecord>,
    sessions: Vec<String>,
    /// The index had read the whole log when this read began: nothing came after.
    whole: bool,
}

/// A read under way: the words it looks for, and where it sends what it read.
type Reading = (Vec<String>, Receiver<Result<Read, String>>);

/// The filter of an open log.
#[derive(Default)]
pub(super) struct RowFilter {
    /// What is typed.
    pub text: String,
    /// The prompt is open.
    pub typing: bool,
    read: Option<Read>,
    reading: Option<Reading>,
    /// The rows that match (indexes into the log's calls), when a filter is in force.
    pub rows: Option<Vec<usize>>,
    /// The selection among [`RowFilter::rows`].
    pub cursor: Cursor,
    /// Why the text does not read as a filter, or the log could not be read.
    pub error: Option<String>,
    /// The index's length when the rows were made.
    made_at: usize,
    /// Each call's row by its session and number, and the index's length it was made
    /// at: made once per length, not once per key typed.
    row_of: (usize, HashMap<(String, u64), usize>),
    /// Counts the times the rows were made (what was drawn of them stays while it
    /// does not change).
    pub generation: u64,
}

impl RowFilter {
    /// True when a filter is in force.
    pub(super) fn active(&self) -> bool {
        self.rows.is_some()
    }

    /// True while the calls are being read.
    pub(super) fn reading(&self) -> bool {
        self.reading.is_some()
    }

    /// Clears the filter.
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.rows = None;
        self.error = None;
    }

    /// The filter typed into (`c` added, or the last erased, or all), applied.
    pub(super) fn edit(&mut self, command: Option<Command>, c: Option<char>, index: &LogIndex) {
        match (command, c) {
            (Some(Command::EraseChar), _) => {
                self.text.pop();
            }
            (Some(Command::ClearText), _) => self.text.clear(),
            (None, Some(c)) if self.text.len() < FILTER_MAX => self.text.push(c),
            _ => return,
        }
        self.apply(index);
    }

    /// Makes the rows again from the text: at once from what was read, or once the
    /// read its words need is in.
    pub(super) fn apply(&mut self, index: &LogIndex) {
        let text = self.text.trim();
        if text.is_empty() {
            self.rows = None;
            self.error = None;
            return;
        }
        let filter = match Filter::parse(text) {
            Ok(f) => f,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        self.error = None;
        let fits = self
            .read
            .as_ref()
            .is_some_and(|r| r.needles == filter.needles && (r.whole || !index_done(index)));
        if !fits {
            let asked = self.reading.as_ref().map(|(n, _)| n);
            if asked != Some(&filter.needles) {
                self.start_read(index.path().to_path_buf(), filter.needles.clone(), index);
            }
            return;
        }
        if self.row_of.0 != index.len() || self.row_of.1.is_empty() {
            let rows = index
                .window(0, index.len())
                .into_iter()
                .enumerate()
                .map(|(row, (call, _, session))| ((session, call.call), row))
                .collect();
            self.row_of = (index.len(), rows);
        }
        self.rows = Some(self.matching(&filter));
        self.generation += 1;
        self.made_at = index.len();
        self.keep_selection_in_rows();
    }

    /// Takes in a read that has ended, and makes the rows again when the index has
    /// grown; true when anything changed.
    pub(super) fn poll(&mut self, index: &LogIndex) -> bool {
        if let Some((_, rx)) = &self.reading {
            match rx.try_recv() {
                Ok(Ok(read)) => {
                    self.reading = None;
                    self.read = Some(read);
                    self.apply(index);
                    return true;
                }
                Ok(Err(e)) => {
                    self.reading = None;
                    self.error = Some(e);
                    return true;
                }
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => {
                    self.reading = None;
                    self.error = Some("the reader stopped".into());
                    return true;
                }
            }
        }
        if self.active() && index.len() != self.made_at {
            self.apply(index);
            return true;
        }
        false
    }

    fn start_read(&mut self, path: PathBuf, needles: Vec<String>, index: &LogIndex) {
        let (tx, rx) = std::sync::mpsc::channel();
        let whole = index_done(index);
        let words = needles.clone();
        std::thread::spawn(move || {
            let read = calls::read(&path, &words)
                .map(|mut run| {
                    // The filter needs no arguments: the list shows them from the log.
                    for c in &mut run.calls {
                        c.arguments = serde_json::Value::Null;
                    }
                    Read {
                        needles: words,
                        calls: run.calls,
                        sessions: run.sessions,
                        whole,
                    }
                })
                .map_err(|e| format!("cannot read {}: {e}", path.display()));
            let _ = tx.send(read);
        });
        self.reading = Some((needles, rx));
    }

    /// The rows of the calls `filter` matches, in the list's order.
    fn matching(&self, filter: &Filter) -> Vec<usize> {
        let Some(read) = &self.read else {
            return Vec::new();
        };
        let rows = &self.row_of.1;
        let mut out: Vec<usize> = read
            .calls
            .iter()
            .filter(|c| filter.matches(*c))
            .filter_map(|c| {
                let session = read.sessions.get(c.session as usize)?;
                rows.get(&(session.clone(), c.call)).copied()
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The selection among the rows: where it was when it still matches, else the
    /// first.
    fn keep_selection_in_rows(&mut self) {
        let Some(rows) = &self.rows else { return };
        let at = self.cursor.selected.min(rows.len().saturating_sub(1));
        self.cursor.selected = at;
    }

    /// The row a scrolling command moves to among the rows matched, from `selected`.
    pub(super) fn target(&mut self, command: Command, selected: usize) -> Option<usize> {
        let rows = self.rows.as_ref()?;
        self.cursor.selected = rows.partition_point(|&r| r < selected);
        let at = self.cursor.target(command, rows.len())?;
        self.cursor.selected = at;
        rows.get(at).copied()
    }

    /// "3 of 120 match", or what stands in the way.
    pub(super) fn count(&self, calls: usize) -> String {
        if let Some(e) = &self.error {
            return e.clone();
        }
        if self.reading() {
            return "reading the calls…".into();
        }
        match &self.rows {
            Some(rows) => format!(
                "{} of {} match",
                crate::tui::widgets::text::grouped(rows.len()),
                crate::tui::widgets::text::grouped(calls)
            ),
            None => "every call".into(),
        }
    }
}

impl ReplayPane {
    /// True when the filter waits for no read (one that ended is taken in).
    pub(crate) fn filter_settled(&mut self) -> bool {
        if let Some(log) = &self.log {
            self.filter.poll(&log.index);
        }
        !self.filter.reading()
    }

    /// Keys while the filter is typed: each edit applies at once.
    pub(super) fn filter_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let Some(log) = &self.log else {
            self.filter.typing = false;
            return EventState::NotConsumed;
        };
        match ctx.keymap.command(Scope::ReplayFilter, key) {
            Some(Command::KeepFilter) => self.filter.typing = false,
            Some(Command::DropFilter) => {
                self.filter.typing = false;
                self.filter.clear();
            }
            Some(c @ (Command::EraseChar | Command::ClearText)) => {
                self.filter.edit(Some(c), None, &log.index);
            }
            Some(_) => {}
            None => {
                if let Some(c) = crate::tui::widgets::prompt::typed_char(key) {
                    self.filter.edit(None, Some(c), &log.index);
                }
            }
        }
        // The selection goes to the first call that matches when it no longer does.
        let rows = self.filter.rows.as_ref();
        if let Some(&row) = rows.and_then(|r| r.first())
            && rows.is_some_and(|r| r.binary_search(&self.cursor.selected).is_err())
        {
            self.select(row);
        }
        EventState::Consumed
    }

    /// The line the filter is typed on, with the count that match.
    pub(super) fn render_filter_prompt(&self, line: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let calls = self.log.as_ref().map_or(0, |l| l.index.len());
        let keep = ui
            .keymap
            .key_label(Scope::ReplayFilter, Command::KeepFilter)
            .unwrap_or_default();
        let drop = ui
            .keymap
            .key_label(Scope::ReplayFilter, Command::DropFilter)
            .unwrap_or_default();
        let role = if self.filter.error.is_some() {
            Role::Error
        } else {
            Role::Info
        };
        Line::from(vec![
            Span::styled(" filter › ", theme.style(Role::Prompt)),
            Span::styled(self.filter.text.clone(), theme.style(Role::Text)),
            Span::styled("█", theme.style(Role::Prompt)),
            Span::styled(
                format!("   {}", self.filter.count(calls)),
                theme.style(role),
            ),
            Span::styled(
                format!("   {keep} keeps it, {drop} clears it"),
                theme.style(Role::Muted),
            ),
        ])
        .render(line, buf);
    }
}

fn index_done(index: &LogIndex) -> bool {
    index.progress().done
}
