//! The panes of tabs that later work fills in: an honest line saying so.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget, Wrap};

use crate::tui::app::Tab;
use crate::tui::component::{Ctx, EventState, Pane, Ui};
use crate::tui::keymap::{Command, Context};
use crate::tui::theme::Role;

/// A tab whose pane is not in this build. Holds no state.
pub(crate) struct Placeholder {
    tab: Tab,
}

impl Placeholder {
    pub fn new(tab: Tab) -> Placeholder {
        Placeholder { tab }
    }
}

impl Pane for Placeholder {
    fn handle_key(&mut self, _key: &KeyEvent, _ctx: &mut Ctx<'_>) -> EventState {
        EventState::NotConsumed
    }

    fn context(&self) -> Context {
        Context::Global
    }

    fn commands(&self) -> Vec<Command> {
        Vec::new()
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let title = self.tab.title();
        let mut lines = vec![Line::from(Span::styled(
            format!("The {title} pane is not available in this build yet."),
            theme.style(Role::Text),
        ))];
        if let Some(key) = ui
            .keymap
            .key_label(Context::Global, Command::ShowTab(Tab::Entities))
        {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                format!("Press {key} to go back to {}.", Tab::Entities.title()),
                theme.style(Role::Muted),
            )));
        }
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(Role::Border))
            .title(Span::styled(format!(" {title} "), theme.style(Role::Title)));
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block)
            .render(area, buf);
    }
}
