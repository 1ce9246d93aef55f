//! The source dialog (`S`): switch the console between the embedded world and a REST
//! node at run time. Connecting runs in the background; the console keeps its source
//! when the node cannot be reached, and the dialog says why.

use std::sync::{Arc, Mutex};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use serde_json::json;

use super::super::dispatch::{Reply, RequestId};
use super::super::keymap::{Command, Scope};
use super::super::theme::Role;
use crate::source::GameSource;
use crate::source::switch::Switcher;
use crate::tui::pane::{Ctx, Event, EventState, Ui, dispatch};
use crate::tui::widgets::text::SELECTED_MARK;
use crate::tui::widgets::{self, area_block};

/// Where a connection attempt leaves its source until the dialog takes it.
type Connected = Arc<Mutex<Option<Arc<dyn GameSource>>>>;

const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:1317";
const MAX_ENDPOINT_LEN: usize = 200;

pub(crate) struct SourceDialog {
    switcher: Option<Arc<Switcher>>,
    open: bool,
    /// 0: the embedded world, 1: a REST node.
    choice: usize,
    endpoint: String,
    /// The connection attempt running, and where it leaves its source.
    pending: Option<(RequestId, Connected)>,
    error: Option<String>,
}

impl SourceDialog {
    pub(crate) fn new(switcher: Option<Arc<Switcher>>) -> SourceDialog {
        let endpoint = switcher
            .as_ref()
            .and_then(|s| s.endpoint.clone())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        SourceDialog {
            switcher,
            open: false,
            choice: 0,
            endpoint,
            pending: None,
            error: None,
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// Opens the dialog on the kind of source in use now.
    pub(crate) fn open(&mut self, current: &str) {
        self.open = true;
        self.error = None;
        self.choice = usize::from(current == "rest");
    }

    pub(crate) fn scope(&self) -> Scope {
        Scope::SourceDialog
    }

    pub(crate) fn captures_text(&self) -> bool {
        self.choice == 1
    }

    pub(crate) fn commands(&self) -> Vec<Command> {
        let mut out = vec![Command::Up, Command::Down];
        if self.pending.is_none() && self.switcher.is_some() {
            out.push(Command::Connect);
        }
        out.push(Command::Close);
        if self.choice == 1 {
            out.extend([Command::EraseChar, Command::ClearText]);
        }
        out
    }

    pub(crate) fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        // On the endpoint every character types (j and k too); elsewhere j and k move.
        if self.choice == 1
            && plain
            && let KeyCode::Char(c) = key.code
        {
            if self.endpoint.chars().count() < MAX_ENDPOINT_LEN {
                self.endpoint.push(c);
            }
            return EventState::Consumed;
        }
        let offered = self.commands();
        dispatch(
            key,
            ctx,
            Scope::SourceDialog,
            &offered,
            |command, ctx| match command {
                Command::Up => self.choice = 0,
                Command::Down => self.choice = 1,
                Command::EraseChar => {
                    self.endpoint.pop();
                }
                Command::ClearText => self.endpoint.clear(),
                // Closing gives up a connection on its way: the console keeps its source.
                Command::Close => {
                    self.open = false;
                    self.pending = None;
                }
                Command::Connect => self.connect(ctx),
                _ => {}
            },
        );
        // The dialog is modal: keys it does not use do nothing.
        EventState::Consumed
    }

    fn connect(&mut self, ctx: &mut Ctx<'_>) {
        let Some(switcher) = self.switcher.clone() else {
            return;
        };
        self.error = None;
        if self.choice == 0 {
            // The embedded world already in use: nothing to switch, nothing to reset.
            if switcher.switch.current().info().name == "sim" {
                self.open = false;
                ctx.status
                    .info("already using the embedded world; nothing changed");
                return;
            }
            let info = switcher.to_sim();
            self.open = false;
            ctx.push(Event::SourceSwitched(format!(
                "{} · {}",
                info.name, info.description
            )));
            return;
        }
        let endpoint = self.endpoint.trim().to_string();
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            self.error = Some("the endpoint is an http:// or https:// address".into());
            return;
        }
        let slot: Connected = Arc::new(Mutex::new(None));
        let to = slot.clone();
        let id = ctx.dispatcher.spawn_task(async move {
            let source = switcher.connect_rest(&endpoint).await?;
            *to.lock().unwrap_or_else(|e| e.into_inner()) = Some(source);
            Ok(json!({}))
        });
        self.pending = Some((id, slot));
    }

    /// The answer of a connection attempt: switches when it is the attempt still
    /// wanted (not closed with Esc meanwhile).
    pub(crate) fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.pending.as_ref().map(|(id, _)| *id) != Some(reply.id) {
            return false;
        }
        let Some((_, slot)) = self.pending.take() else {
            return false;
        };
        let connected = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        match (&reply.result, connected, &self.switcher) {
            (Ok(_), Some(source), Some(switcher)) => {
                let info = switcher.use_source(source);
                self.open = false;
                ctx.push(Event::SourceSwitched(format!(
                    "{} · {} at block {}",
                    info.name, info.description, info.block_height
                )));
            }
            (Err(e), _, _) => self.error = Some(e.message.clone()),
            _ => self.error = Some("the connection ended without a source".into()),
        }
        true
    }

    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>, current: &str) {
        if !self.open || area.is_empty() {
            return;
        }
        let width = area.width.min(64);
        // Six rows of text, one more when an error wraps, and the borders.
        let height = area.height.min(9);
        let popup = widgets::popup(area, width, height, buf, ui.theme);
        let block = area_block(ui, " Source ", true);
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() {
            return;
        }
        let theme = ui.theme;
        let mark = |i: usize| {
            if self.choice == i {
                SELECTED_MARK
            } else {
                "  "
            }
        };
        let row = |i: usize| {
            if self.choice == i {
                theme.style(Role::Selected)
            } else {
                theme.style(Role::Text)
            }
        };
        let mut lines = vec![
            Line::from(vec![
                Span::styled("Now: ", theme.style(Role::Muted)),
                Span::styled(current.to_string(), theme.style(Role::Value)),
            ]),
            Line::raw(""),
            Line::from(vec![
                Span::styled(format!("{}sim   ", mark(0)), row(0)),
                Span::styled("the embedded world", theme.style(Role::Muted)),
            ]),
            Line::from(vec![
                Span::styled(format!("{}rest  ", mark(1)), row(1)),
                Span::styled(
                    format!(
                        "{}{}",
                        self.endpoint,
                        if self.choice == 1 { "▏" } else { "" }
                    ),
                    theme.style(Role::Prompt),
                ),
            ]),
            Line::raw(""),
        ];
        if self.switcher.is_none() {
            lines.push(Line::styled(
                "this console was started without a switchable source",
                theme.style(Role::Error),
            ));
        } else if self.pending.is_some() {
            lines.push(Line::styled(
                format!("connecting to {} …", self.endpoint.trim()),
                theme.style(Role::Info),
            ));
        } else if let Some(e) = &self.error {
            lines.push(Line::styled(e.clone(), theme.style(Role::Error)));
        } else {
            lines.push(Line::styled(
                "↑↓ choose · Enter connect · Esc close",
                theme.style(Role::Muted),
            ));
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}
