//! The live event log: the latest [`GameEvent`]s from the core's event bus, newest on
//! top, in a strip under whichever tab is on show (`e` shows and hides it).
//!
//! The app subscribes once and drains the receiver with `try_recv` before each frame,
//! so the draw loop never waits on the bus. When the console falls more than the bus's
//! capacity behind, the events it lost are counted and the count shown.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::TryRecvError;

use crate::events::{EventBus, GameEvent};
use crate::tui::pane::Ui;
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;

/// Events kept for the log; older ones are forgotten.
pub(crate) const KEEP: usize = 200;

/// The tallest the strip gets, borders included.
const MAX_HEIGHT: u16 = 10;

/// Below this inner width the block column is left out.
const COLUMNS_WIDTH: u16 = 60;

/// The event log's state.
pub(crate) struct EventLog {
    receiver: Option<Receiver<GameEvent>>,
    /// The kept events, oldest first.
    events: VecDeque<GameEvent>,
    /// Events received since the console started (kept or not).
    received: u64,
    /// Events the bus dropped before the console read them.
    missed: u64,
    /// The source has no bus, or it closed.
    no_bus: bool,
    shown: bool,
}

impl EventLog {
    /// A log reading `bus` from now on; `None` for a source without one.
    pub fn new(bus: Option<EventBus>) -> EventLog {
        let receiver = bus.map(|b| b.subscribe());
        EventLog {
            no_bus: receiver.is_none(),
            receiver,
            events: VecDeque::with_capacity(KEEP),
            received: 0,
            missed: 0,
            shown: false,
        }
    }

    /// Takes every event that has arrived, without waiting. True when there was any.
    pub fn drain(&mut self) -> bool {
        let Some(receiver) = &mut self.receiver else {
            return false;
        };
        let mut any = false;
        loop {
            match receiver.try_recv() {
                Ok(event) => {
                    if self.events.len() == KEEP {
                        self.events.pop_front();
                    }
                    self.events.push_back(event);
                    self.received += 1;
                    any = true;
                }
                Err(TryRecvError::Lagged(missed)) => {
                    self.missed += missed;
                    any = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => {
                    self.receiver = None;
                    self.no_bus = true;
                    break;
                }
            }
        }
        any
    }

    pub fn toggle(&mut self) {
        self.shown = !self.shown;
    }

    /// The kept events, newest first.
    pub fn latest(&self) -> impl Iterator<Item = &GameEvent> {
        self.events.iter().rev()
    }

    /// How many events the bus dropped before the console read them.
    #[cfg(test)]
    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// The strip's height in a body `height` rows tall: a third of it, 3 to 10 rows;
    /// nothing when the body is too short to share.
    pub fn height_in(&self, height: u16) -> u16 {
        if !self.shown || height < 6 {
            return 0;
        }
        (height / 3).clamp(3, MAX_HEIGHT)
    }

    /// Draws the strip: `block  category  summary`, newest on top.
    pub fn render(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let theme = ui.theme;
        let mut title = format!(" Events · {} ", self.received);
        if self.missed > 0 {
            title = format!(" Events · {} · {} missed ", self.received, self.missed);
        }
        let block = area_block(ui, &title, false);
        let inner = block.inner(area);
        block.render(area, buf);
        if self.events.is_empty() {
            let text = if self.no_bus {
                "This source publishes no events."
            } else {
                "No events yet: actions publish what they change here as it happens."
            };
            Paragraph::new(Span::styled(text, theme.style(Role::Muted)))
                .wrap(Wrap { trim: true })
                .render(inner, buf);
            return;
        }
        let columns = inner.width >= COLUMNS_WIDTH;
        let category_width = self
            .latest()
            .take(usize::from(inner.height))
            .map(|e| e.category.len())
            .max()
            .unwrap_or(0);
        let block_width = self
            .latest()
            .take(usize::from(inner.height))
            .map(|e| e.block.to_string().len())
            .max()
            .unwrap_or(0);
        let lines: Vec<Line<'_>> = self
            .latest()
            .take(usize::from(inner.height))
            .map(|e| {
                let mut spans = Vec::new();
                if columns {
                    spans.push(Span::styled(
                        format!("{:>block_width$}  ", e.block),
                        theme.style(Role::Muted),
                    ));
                    spans.push(Span::styled(
                        format!("{:<category_width$}  ", e.category),
                        theme.style(Role::Field),
                    ));
                } else {
                    spans.push(Span::styled(
                        format!("{} ", e.category),
                        theme.style(Role::Field),
                    ));
                }
                spans.push(Span::styled(e.summary.clone(), theme.style(Role::Text)));
                Line::from(spans)
            })
            .collect();
        Paragraph::new(lines).render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::{EntityId, EntityKind};
    use serde_json::Value;

    fn event(n: u64) -> GameEvent {
        let id = EntityId::new(EntityKind::Struct, n);
        GameEvent {
            seq: 0,
            block: 100 + n,
            category: "struct_status",
            entity: id,
            changed: vec![id],
            summary: format!("{id} online"),
            detail: Value::Null,
            tx_hash: None,
            trace: None,
        }
    }

    #[test]
    fn keeps_the_latest_and_counts_what_the_bus_dropped() {
        let bus = EventBus::new();
        let mut log = EventLog::new(Some(bus.clone()));
        assert!(!log.drain());
        for n in 1..=(KEEP as u64 + 10) {
            bus.publish(event(n));
        }
        assert!(log.drain());
        assert_eq!(log.latest().count(), KEEP);
        assert_eq!(
            log.latest().next().map(|e| e.block),
            Some(100 + KEEP as u64 + 10)
        );
        assert_eq!(log.missed(), 0);

        for n in 0..(crate::events::CAPACITY as u64 + 3) {
            bus.publish(event(n));
        }
        log.drain();
        assert_eq!(log.missed(), 3);
    }

    #[test]
    fn shares_the_body_only_when_shown_and_tall_enough() {
        let mut log = EventLog::new(None);
        assert_eq!(log.height_in(26), 0);
        log.toggle();
        assert_eq!(log.height_in(26), 8);
        assert_eq!(log.height_in(8), 3);
        assert_eq!(log.height_in(5), 0);
        assert_eq!(log.height_in(60), MAX_HEIGHT);
    }
}
