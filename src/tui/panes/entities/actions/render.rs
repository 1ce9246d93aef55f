//! Drawing the action dialog: the box over the pane, and each stage (the menu of
//! actions, the struct types, the form with the call it sends, the answer).

use super::*;

impl ActionDialog {
    /// Draws the dialog over `area` (the pane), centred, as wide as reads well.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let width = area.width.min(MAX_WIDTH);
        let height = area
            .height
            .min(self.wanted_height(ui, width.saturating_sub(2)));
        let popup = widgets::popup(area, width, height, buf, ui.theme);
        let block = area_block(ui, &self.title(), true);
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() {
            return;
        }
        match self.stage {
            Stage::Menu => self.render_menu(inner, buf, ui),
            Stage::Types => self.render_types(inner, buf, ui),
            Stage::Form => self.render_form(inner, buf, ui),
            Stage::Sending | Stage::Result => self.render_result(inner, buf, ui),
        }
    }

    /// Rows the stage would like at an inner `width`, borders included.
    fn wanted_height(&self, ui: &Ui<'_>, width: u16) -> u16 {
        let rows = match self.stage {
            Stage::Menu => 2 + self.offered.len(),
            Stage::Types => {
                1 + struct_types().len() + wrap_rows(&self.call_rows(ui), width, ui).len()
            }
            Stage::Form => self.form_lines(ui, width).len(),
            Stage::Sending | Stage::Result => wrap_rows(&self.result_rows(ui), width, ui).len(),
        };
        u16::try_from(rows + 2).unwrap_or(u16::MAX)
    }

    fn render_menu(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let [about, list] =
            Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(area);
        Paragraph::new(Span::styled(self.about.clone(), theme.style(Role::Muted)))
            .render(about, buf);
        let items: Vec<ListItem<'_>> = self
            .offered
            .iter()
            .map(|a| {
                ListItem::new(Line::from(vec![
                    Span::styled(format!("{:<16}", a.label()), theme.style(Role::Text)),
                    Span::styled(a.tool(), theme.style(Role::Muted)),
                ]))
            })
            .collect();
        StatefulWidget::render(
            List::new(items)
                .highlight_style(theme.style(Role::Selected))
                .highlight_symbol(SELECTED_MARK)
                .highlight_spacing(HighlightSpacing::Always),
            list,
            buf,
            &mut self.menu,
        );
    }

    fn render_types(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let call = wrap_rows(&self.call_rows(ui), area.width, ui);
        // A short dialog keeps the list and the call; the line about the player goes.
        let head_height = u16::from(area.height >= 10);
        let call_height = (call.len() as u16).min(area.height.saturating_sub(head_height + 2));
        let [head, list, foot] = Layout::vertical([
            Constraint::Length(head_height),
            Constraint::Min(1),
            Constraint::Length(call_height),
        ])
        .areas(area);
        Paragraph::new(Span::styled(self.about.clone(), theme.style(Role::Muted)))
            .render(head, buf);
        let name_width = struct_types()
            .iter()
            .map(|t| t.name.chars().count())
            .max()
            .unwrap_or(0);
        let items: Vec<ListItem<'_>> = struct_types()
            .iter()
            .map(|t| {
                ListItem::new(Line::from(vec![
                    Span::styled(format!("{:>2} ", t.id), theme.style(Role::Muted)),
                    Span::styled(
                        format!("{:<name_width$}  ", t.name),
                        theme.style(Role::Text),
                    ),
                    Span::styled(t.category.clone(), theme.style(Role::Field)),
                ]))
            })
            .collect();
        StatefulWidget::render(
            List::new(items)
                .highlight_style(theme.style(Role::Selected))
                .highlight_symbol(SELECTED_MARK)
                .highlight_spacing(HighlightSpacing::Always),
            list,
            buf,
            &mut self.types,
        );
        Paragraph::new(call).render(foot, buf);
    }

    fn render_form(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        Paragraph::new(self.form_lines(ui, area.width)).render(area, buf);
    }

    /// The form: what the target is, the field, the weapon or a note on the nonce, and
    /// the call.
    fn form_lines(&self, ui: &Ui<'_>, width: u16) -> Vec<Line<'static>> {
        let theme = ui.theme;
        let field = |name: &str, value: Vec<Span<'static>>| {
            let mut spans = vec![Span::styled(
                format!("{name:<10}"),
                theme.style(Role::Field),
            )];
            spans.extend(value);
            Line::from(spans)
        };
        let input = vec![
            Span::styled(self.field.clone(), theme.style(Role::Prompt)),
            Span::styled("█", theme.style(Role::Prompt)),
        ];
        let mut lines = wrap_rows(&[(Role::Muted, self.about.clone(), 0)], width, ui);
        match self.action {
            Action::Attack => {
                lines.push(field("attacker", input));
                let switch = ui
                    .keymap
                    .key_label(Scope::ActionForm, Command::CycleWeapon)
                    .unwrap_or_default();
                lines.push(field(
                    "weapon",
                    vec![
                        Span::styled(
                            if self.secondary {
                                "secondary"
                            } else {
                                "primary"
                            },
                            theme.style(Role::Value),
                        ),
                        Span::styled(format!("  ({switch} switches)"), theme.style(Role::Muted)),
                    ],
                ));
                lines.push(field(
                    "target",
                    vec![Span::styled(
                        self.target.to_string(),
                        theme.style(Role::Value),
                    )],
                ));
            }
            Action::Mine | Action::CompleteBuild | Action::Build => {
                lines.push(field("nonce", input));
                let note = match (self.proof_job, self.action) {
                    (Some(job), _) => format!("found by PoW job {job}"),
                    (None, Action::Mine) => {
                        "optional: without one the tool says where the cycle stands".into()
                    }
                    _ => "the build proof's nonce: a PoW job finds it (w on the struct)".into(),
                };
                lines.extend(wrap_rows(
                    &[(Role::Muted, format!("{:10}{note}", ""), 10)],
                    width,
                    ui,
                ));
            }
        }
        lines.push(Line::default());
        lines.extend(wrap_rows(&self.call_rows(ui), width, ui));
        lines
    }

    /// `tool call · Enter sends`, the tool's name, and its arguments.
    fn call_rows(&self, ui: &Ui<'_>) -> Vec<(Role, String, usize)> {
        let (tool, args) = self.call();
        let send = ui
            .keymap
            .key_label(self.scope(), Command::SendAction)
            .unwrap_or_default();
        vec![
            (Role::Muted, format!("tool call · {send} sends"), 0),
            (Role::Field, tool.to_string(), 0),
            (Role::Value, one_line(&args), 1),
        ]
    }

    fn render_result(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let lines = wrap_rows(&self.result_rows(ui), area.width, ui);
        let top = self
            .scroll
            .shown_filled(usize::from(area.height), lines.len());
        Paragraph::new(lines)
            .scroll((u16::try_from(top).unwrap_or(u16::MAX), 0))
            .render(area, buf);
    }

    /// The call sent, then the answer: the outcome, its figures, the events and the
    /// next step; or the error with each missing requirement.
    fn result_rows(&self, ui: &Ui<'_>) -> Vec<(Role, String, usize)> {
        let mut rows = Vec::new();
        if let Some((tool, args)) = &self.sent {
            rows.push((Role::Field, (*tool).to_string(), 0));
            rows.push((Role::Value, one_line(args), 1));
            rows.push((Role::Text, String::new(), 0));
        }
        match &self.answer {
            None => rows.push((Role::Muted, "sending…".into(), 0)),
            Some(Ok(v)) => {
                rows.extend(ok_rows(v));
                if self.pow_job().is_some() {
                    let w = ui
                        .keymap
                        .key_label(Scope::ActionResult, Command::PowJob)
                        .unwrap_or_default();
                    rows.push((
                        Role::Info,
                        format!("{w} starts that proof-of-work job in the PoW tab"),
                        0,
                    ));
                }
            }
            Some(Err(e)) => rows.extend(error_rows(e)),
        }
        rows
    }
}

/// Rows of text, each wrapped at spaces to `width` with its continuation lines indented
/// by its `indent`.
fn wrap_rows(rows: &[(Role, String, usize)], width: u16, ui: &Ui<'_>) -> Vec<Line<'static>> {
    let width = usize::from(width).max(1);
    let mut lines = Vec::new();
    for (role, text, indent) in rows {
        let style = ui.theme.style(*role);
        for piece in wrap(text, width, *indent) {
            lines.push(Line::from(Span::styled(piece, style)));
        }
    }
    lines
}

/// Greedy word wrap: lines at most `width` characters, continuation lines starting
/// with `indent` spaces (at most half the width); a word longer than a line is cut.
pub(super) fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let width = width.max(1);
    let indent = indent.min(width / 2);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    // True while the line holds no word yet, only its indent.
    let mut fresh = true;
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            if !fresh {
                if len + 1 + word.len() <= width {
                    line.push(' ');
                    line.extend(&word);
                    len += 1 + word.len();
                    break;
                }
                // A word too long for any line (a hash) starts here rather than below.
                if indent + word.len() > width && len + 2 <= width {
                    let rest = word.split_off(width - len - 1);
                    line.push(' ');
                    line.extend(&word);
                    out.push(std::mem::replace(&mut line, " ".repeat(indent)));
                    len = indent;
                    fresh = true;
                    word = rest;
                    continue;
                }
                out.push(std::mem::replace(&mut line, " ".repeat(indent)));
                len = indent;
                fresh = true;
                continue;
            }
            if len + word.len() <= width {
                line.extend(&word);
                len += word.len();
                fresh = false;
                break;
            }
            let rest = word.split_off(width.saturating_sub(len).max(1).min(word.len()));
            line.extend(&word);
            out.push(std::mem::replace(&mut line, " ".repeat(indent)));
            len = indent;
            word = rest;
            if word.is_empty() {
                break;
            }
        }
    }
    if !fresh || out.is_empty() {
        out.push(line);
    }
    out
}
