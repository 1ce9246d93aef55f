//! Drawing the Plans pane: the steps, the chosen step, its result, the list of plans in
//! a file and the problems of a plan that cannot run.

use super::*;

impl PlansPane {
    pub(super) fn render_plan(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let steps = self.step_count() as u16;
        let (list, detail) = if area.width >= SIDE_BY_SIDE {
            let w = self.list_width().clamp(30, area.width / 2);
            let [l, d] =
                Layout::horizontal([Constraint::Length(w), Constraint::Min(0)]).areas(area);
            (l, d)
        } else if area.height >= 16 {
            let h = (steps + 2).clamp(4, area.height * 2 / 5);
            let [l, d] = Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(area);
            (l, d)
        } else if self.area() != Area::Result {
            (area, Rect::default())
        } else {
            (Rect::default(), area)
        };
        // The tasks MCP servers run go under the steps, when there are any and room.
        let tasks_height = self.tasks.height();
        let list = if !self.tasks.is_empty() && list.height >= tasks_height + 3 {
            let [steps, tasks] =
                Layout::vertical([Constraint::Min(3), Constraint::Length(tasks_height)])
                    .areas(list);
            let focused = self.area() == Area::Tasks && self.pick.is_none();
            self.tasks.render_list(tasks, buf, ui, focused);
            steps
        } else {
            list
        };
        self.render_steps(list, buf, ui);
        if self.area() == Area::Tasks && !detail.is_empty() {
            self.tasks.render_detail(detail, buf, ui);
        } else {
            self.render_detail(detail, buf, ui);
        }
    }

    /// The steps' names, indented by level, and their tools without `structs_`.
    pub(super) fn step_columns(o: &Opened, run: &Run) -> (Vec<String>, Vec<String>) {
        let names = run
            .plan
            .steps
            .iter()
            .map(|s| {
                let indent = "  ".repeat(o.levels[s.index].min(MAX_INDENT));
                match &s.id {
                    Some(id) => format!("{indent}{} {id}", s.index),
                    None => format!("{indent}{}", s.index),
                }
            })
            .collect();
        let tools = run
            .plan
            .steps
            .iter()
            .map(|s| s.tool.trim_start_matches("structs_").to_string())
            .collect();
        (names, tools)
    }

    /// The width the steps list wants: its widest row, borders and selection mark.
    pub(super) fn list_width(&self) -> u16 {
        let Some(o) = self.opened() else {
            return 0;
        };
        let run = o.run();
        let (names, tools) = Self::step_columns(o, &run);
        let name_w = names.iter().map(|n| width(n)).max().unwrap_or(0);
        let tool_w = tools.iter().map(|t| width(t)).max().unwrap_or(0);
        let tail = run
            .plan
            .steps
            .iter()
            .map(|s| {
                let needs: Vec<String> = s.needs().iter().map(usize::to_string).collect();
                let mut w = 0;
                if !needs.is_empty() {
                    w += 4 + width(&needs.join(", "));
                }
                if s.optional {
                    w += 10;
                }
                if !self.pinned_timing {
                    // Room for a duration once it ran.
                    w += 8;
                }
                w
            })
            .max()
            .unwrap_or(0);
        // Borders, the selection mark, the breakpoint and status columns, and a space
        // before the right border.
        let total = 2 + 2 + 2 + 2 + name_w + 2 + tool_w + tail + 1;
        u16::try_from(total).unwrap_or(u16::MAX)
    }

    pub(super) fn render_steps(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let Doc::Plan(o) = &self.doc else {
            return;
        };
        let theme = ui.theme;
        let run = o.run();
        let bps = o.breakpoints().clone();
        let steps = &run.plan.steps;
        let (names, tools) = Self::step_columns(o, &run);
        let name_w = names.iter().map(|n| width(n)).max().unwrap_or(0);
        let tail_w = tail_width(steps);
        // When the pane is narrow the tool names give way, not what a step waits for.
        let room = usize::from(area.width).saturating_sub(2 + 2 + 2 + 2 + name_w + 2 + tail_w);
        let tool_w = tools
            .iter()
            .map(|t| width(t))
            .max()
            .unwrap_or(0)
            .min(room.max(8));
        let tools: Vec<String> = tools.iter().map(|t| fit(t, tool_w)).collect();
        let items: Vec<ListItem> = steps
            .iter()
            .map(|s| {
                let state = &run.steps[s.index];
                let (g, role) = glyph(state.status);
                let mut spans = vec![
                    if bps.contains(&s.index) {
                        Span::styled("● ", theme.style(Role::Error))
                    } else {
                        Span::raw("  ")
                    },
                    Span::styled(format!("{g} "), theme.style(role)),
                    Span::styled(
                        format!("{:<name_w$}  ", names[s.index]),
                        theme.style(Role::Text),
                    ),
                    Span::styled(
                        format!("{:<tool_w$}", tools[s.index]),
                        theme.style(Role::Muted),
                    ),
                ];
                let needs: Vec<String> = s.needs().iter().map(usize::to_string).collect();
                if !needs.is_empty() {
                    spans.push(Span::styled(
                        format!("  ← {}", needs.join(", ")),
                        theme.style(Role::Field),
                    ));
                }
                if s.optional {
                    spans.push(Span::styled("  optional", theme.style(Role::Muted)));
                }
                if let Some(d) = state.duration.filter(|_| !self.pinned_timing) {
                    spans.push(Span::styled(
                        format!("  {}", millis(d)),
                        theme.style(Role::Muted),
                    ));
                }
                ListItem::new(Line::from(spans))
            })
            .collect();
        let counts = count_spans(&run.counts(), theme);
        let n = steps.len();
        drop(run);
        let focused = self.focus == Area::Steps && self.pick.is_none();
        let title = format!(
            " Plan · {} · {n} step{} ",
            o.label,
            if n == 1 { "" } else { "s" }
        );
        let block =
            area_block(ui, &title, focused).title_bottom(Line::from(counts).right_aligned());
        let highlight = if focused {
            Role::Selected
        } else {
            Role::SelectedInactive
        };
        StatefulWidget::render(
            List::new(items)
                .block(block)
                .highlight_symbol(SELECTED_MARK)
                .highlight_spacing(ratatui::widgets::HighlightSpacing::Always)
                .highlight_style(theme.style(highlight)),
            area,
            buf,
            &mut self.list,
        );
    }

    /// The selected step: its facts and params, and its result under them.
    pub(super) fn render_detail(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let (Some(o), Some(i)) = (self.opened(), self.list.selected()) else {
            return;
        };
        let run = o.run();
        let Some(step) = run.plan.steps.get(i).cloned() else {
            return;
        };
        let state = without_data(&run.steps[i]);
        let selected = Selected {
            opened: o,
            run: &run,
            step: &step,
            state: &state,
            index: i,
        };
        let info = selected.info(self.pinned_timing);
        let resolution = selected.resolution();
        let rows = param_rows(&step, &run.plan.steps, &resolution);
        drop(run);
        let heading = match &resolution {
            Resolution::Resolved { preview: true, .. } => "resolved (preview)",
            Resolution::Resolved { .. } => "resolved",
            _ => "resolved",
        };

        let title = format!(" Step {} · {} ", step.label(), step.tool);
        let block = area_block(ui, &title, false);
        let inner_w = block.inner(area).width;
        let mut lines: Vec<Line<'static>> = Vec::new();
        for l in info {
            for w in wrap(&l, usize::from(inner_w)) {
                lines.push(line_of(w, ui));
            }
        }
        lines.push(Line::default());
        lines.extend(param_lines(&rows, heading, inner_w, ui));

        // The detail takes what its lines need, leaving the result at least 6 rows;
        // on a short area only the focused part shows.
        let wanted = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let (top, bottom) = if area.height >= 14 {
            let h = wanted.min(area.height - 6).max(area.height.min(6));
            let [t, b] = Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(area);
            (t, b)
        } else if self.focus == Area::Result {
            (Rect::default(), area)
        } else {
            (area, Rect::default())
        };
        if !top.is_empty() {
            Paragraph::new(lines).block(block).render(top, buf);
        }
        if bottom.is_empty() {
            return;
        }
        self.render_result(state.status, bottom, buf, ui);
    }

    /// The selected step's result as a tree, or what stands in for it while there is
    /// none.
    fn render_result(&mut self, status: Status, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let focused = self.focus == Area::Result && self.pick.is_none();
        let what = self.result_value().map(|(_, what)| what);
        let block = area_block(
            ui,
            &match what {
                Some(w) => format!(" Result · {w} "),
                None => " Result ".to_string(),
            },
            focused,
        );
        if what.is_none() {
            let text = match status {
                Status::Pending => "not run yet",
                Status::Running => "running…",
                Status::Skipped => "skipped: no result",
                _ => "no result",
            };
            Paragraph::new(Span::styled(text, ui.theme.style(Role::Muted)))
                .block(block)
                .render(area, buf);
            return;
        }
        self.view.render(area, buf, ui, block, focused);
    }

    pub(super) fn render_prompt(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let text = self.prompt.clone().unwrap_or_default();
        let accept = ui
            .keymap
            .key_label(Scope::PlanPrompt, Command::OpenPlanFile)
            .unwrap_or_default();
        let note = if text.is_empty() && !self.last_path.is_empty() {
            format!("   {accept} opens {} again", self.last_path)
        } else {
            format!(
                "   {accept} opens: a plan, a recorded structs_plan_execute call, or JSON Lines"
            )
        };
        Line::from(vec![
            Span::styled(" open › ", theme.style(Role::Prompt)),
            Span::styled(text, theme.style(Role::Text)),
            Span::styled("█", theme.style(Role::Prompt)),
            Span::styled(note, theme.style(Role::Muted)),
        ])
        .render(area, buf);
    }
}

/// The selected step as its detail reads it: the run it is in, the step and its state.
struct Selected<'a> {
    opened: &'a Opened,
    run: &'a Run,
    step: &'a Step,
    state: &'a exec::StepState,
    index: usize,
}

impl Selected<'_> {
    /// Whether the step failed on a reference that found nothing: that error is shown
    /// where it happened, in the params.
    fn unresolved_failure(&self) -> bool {
        self.state
            .error
            .as_ref()
            .is_some_and(|e| e["code"] == ErrorCode::ValidationUnresolvedReference.as_str())
    }

    /// The rows above the params: status, what the step waits for, what it is about,
    /// its settings, why it was skipped, its errors and its progress.
    fn info(&self, pinned_timing: bool) -> Vec<Vec<(Role, String)>> {
        let (step, state) = (self.step, self.state);
        let unresolved_failure = self.unresolved_failure();
        let mut info = vec![
            field("status", self.status(unresolved_failure, pinned_timing)),
            field("waits for", self.waits()),
        ];
        if let Some(about) = &step.description {
            info.push(field("about", vec![(Role::Text, about.clone())]));
        }
        let flags = settings(step);
        if !flags.is_empty() {
            info.push(field("settings", vec![(Role::Muted, flags.join(" · "))]));
        }
        if let Some(why) = &state.skipped_reason {
            info.push(field("skipped", vec![(Role::Text, why.clone())]));
        }
        if let Some(e) = state.error.as_ref().filter(|_| !unresolved_failure) {
            info.push(field(
                "error",
                vec![(
                    Role::Error,
                    format!(
                        "{}: {}",
                        e["code"].as_str().unwrap_or("ERROR"),
                        e["message"].as_str().unwrap_or("")
                    ),
                )],
            ));
        }
        for e in &state.attempt_errors {
            info.push(field(
                &format!("attempt {}", e["attempt"]),
                vec![(
                    Role::Muted,
                    format!(
                        "{}: {} (tried again after {} ms)",
                        e["code"].as_str().unwrap_or(""),
                        e["message"].as_str().unwrap_or(""),
                        e["retry_in_ms"]
                    ),
                )],
            ));
        }
        if let (Status::Running, Some(p)) = (state.status, &state.progress) {
            info.push(field("progress", vec![(Role::Text, p.message.clone())]));
        }
        info
    }

    /// The status row: the state, attempts, time, readiness and breakpoint.
    fn status(&self, unresolved_failure: bool, pinned_timing: bool) -> Vec<(Role, String)> {
        let (step, state, i) = (self.step, self.state, self.index);
        let (g, role) = glyph(state.status);
        let mut status = vec![(role, format!("{g} {}", state.status.as_str()))];
        if unresolved_failure {
            status.push((Role::Error, " · a reference found nothing".into()));
        }
        if state.status == Status::Failed && step.optional {
            status.push((Role::Muted, " (optional: what needs it still runs)".into()));
        }
        if state.attempts > 0 {
            status.push((
                Role::Text,
                format!(
                    " · {} attempt{}",
                    state.attempts,
                    if state.attempts == 1 { "" } else { "s" }
                ),
            ));
        }
        if let Some(d) = state.duration.filter(|_| !pinned_timing) {
            status.push((Role::Text, format!(" · {}", millis(d))));
        }
        let ready = self.run.ready().contains(&i);
        if state.status == Status::Pending {
            status.push((
                Role::Muted,
                if ready { " · ready" } else { " · waiting" }.into(),
            ));
        }
        if self.opened.breakpoints().contains(&i) {
            status.push((Role::Error, " · ● breakpoint".into()));
        }
        status
    }

    /// The row of what the step waits for: the steps it needs, its level, and whether
    /// it runs alone.
    fn waits(&self) -> Vec<(Role, String)> {
        let steps = &self.run.plan.steps;
        let needs: Vec<String> = self
            .step
            .needs()
            .iter()
            .map(|&n| steps[n].label())
            .collect();
        let mut waits = vec![(
            Role::Text,
            if needs.is_empty() {
                "nothing".to_string()
            } else {
                needs.join(", ")
            },
        )];
        waits.push((
            Role::Muted,
            format!(" · level {}", self.opened.levels[self.index]),
        ));
        if !self.step.parallel {
            waits.push((Role::Muted, " · runs alone".into()));
        }
        waits
    }

    /// Where the step's resolved params stand: resolved when it started, never (it was
    /// skipped), waiting on steps still to end, or a preview against those that ended.
    fn resolution(&self) -> Resolution {
        let (run, step, state) = (self.run, self.step, self.state);
        let reads_ended = step.reads.iter().all(|&r| run.steps[r].status.is_done());
        match (&state.resolved, state.status) {
            (Some(params), _) => Resolution::Resolved {
                params: params.clone(),
                subs: state.substitutions.clone(),
                preview: false,
            },
            (None, Status::Skipped) => Resolution::Never,
            (None, _) if !reads_ended => Resolution::Waiting(
                step.reads
                    .iter()
                    .filter(|&&r| !run.steps[r].status.is_done())
                    .map(|&r| run.plan.steps[r].label())
                    .collect(),
            ),
            (None, _) => match run.resolve(self.index) {
                Ok((params, subs)) => Resolution::Resolved {
                    params,
                    subs,
                    preview: true,
                },
                Err(u) => Resolution::Unresolved(u),
            },
        }
    }
}

/// A row of the step's detail: its name in a column, then its spans.
fn field(name: &str, spans: Vec<(Role, String)>) -> Vec<(Role, String)> {
    let mut all = vec![(Role::Field, format!("{name:<11}"))];
    all.extend(spans);
    all
}

/// The step's settings that differ from the defaults: optional, retries, timeout.
fn settings(step: &Step) -> Vec<String> {
    let mut flags = Vec::new();
    if step.optional {
        flags.push("optional".to_string());
    }
    if step.retry_count > 0 {
        flags.push(format!("{} retries", step.retry_count));
    }
    if step.timeout_ms != plan::DEFAULT_TIMEOUT_MS {
        flags.push(format!(
            "timeout {}",
            millis(Duration::from_millis(step.timeout_ms))
        ));
    }
    flags
}

pub(super) fn render_pick(pick: &mut Pick, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
    let theme = ui.theme;
    let title = format!(
        " {} · {} plan calls · choose one ",
        pick.label,
        pick.plans.len()
    );
    let items: Vec<ListItem> = pick
        .plans
        .iter()
        .map(|p| ListItem::new(Span::styled(p.label.clone(), theme.style(Role::Text))))
        .collect();
    StatefulWidget::render(
        List::new(items)
            .block(area_block(ui, &title, true))
            .highlight_symbol(SELECTED_MARK)
            .highlight_spacing(ratatui::widgets::HighlightSpacing::Always)
            .highlight_style(theme.style(Role::Selected)),
        area,
        buf,
        &mut pick.list,
    );
}

pub(super) fn render_problems(
    label: &str,
    problems: &[Problem],
    area: Rect,
    buf: &mut Buffer,
    ui: &Ui<'_>,
) {
    let theme = ui.theme;
    let n = problems.len();
    let title = format!(
        " Plan · {label} · {n} problem{} ",
        if n == 1 { "" } else { "s" }
    );
    let open = ui
        .keymap
        .key_label(Scope::Plans, Command::OpenPlan)
        .unwrap_or_default();
    let block = area_block(ui, &title, true);
    let inner = block.inner(area).width;
    let mut lines = vec![
        Line::from(Span::styled(
            format!("This plan cannot run. Fix it and open it again with {open}."),
            theme.style(Role::Text),
        )),
        Line::default(),
    ];
    for p in problems {
        let mut head = vec![Span::styled("✗ ", theme.style(Role::Error))];
        match p.step {
            Some(s) => {
                let mut w = format!("step {s}");
                if let Some(id) = &p.step_id {
                    w.push_str(&format!(" ({id})"));
                }
                head.push(Span::styled(w, theme.style(Role::Title)));
                if let Some(param) = &p.param {
                    head.push(Span::styled(" · ", theme.style(Role::Muted)));
                    head.push(Span::styled(param.clone(), theme.style(Role::Field)));
                }
            }
            None => head.push(Span::styled("plan", theme.style(Role::Title))),
        }
        head.push(Span::styled(
            format!("  {}", p.kind),
            theme.style(Role::Muted),
        ));
        lines.push(Line::from(head));
        // Continuation lines keep the indent, so each problem reads as one block.
        let indented = |role: Role, text: String, lines: &mut Vec<Line<'static>>| {
            for l in wrap(&[(role, text)], usize::from(inner.saturating_sub(2))) {
                let mut spans = vec![(Role::Text, "  ".to_string())];
                spans.extend(l);
                lines.push(line_of(spans, ui));
            }
        };
        indented(Role::Error, p.message.clone(), &mut lines);
        if let Some(available) = &p.available {
            let list = if available.is_empty() {
                "none".to_string()
            } else {
                available.join(", ")
            };
            indented(Role::Muted, format!("available: {list}"), &mut lines);
        }
    }
    Paragraph::new(lines).block(block).render(area, buf);
}

/// What the steps' rows need after the tool: their dependencies and the optional mark.
fn tail_width(steps: &[crate::plan::Step]) -> usize {
    steps
        .iter()
        .map(|s| {
            let needs: Vec<String> = s.needs().iter().map(usize::to_string).collect();
            let deps = if needs.is_empty() {
                0
            } else {
                4 + width(&needs.join(", "))
            };
            deps + if s.optional { 10 } else { 0 }
        })
        .max()
        .unwrap_or(0)
}

/// A run's counts by state, for the steps' bottom border (`✓3 ✗1 ○2`).
fn count_spans(
    c: &crate::plan::exec::Counts,
    theme: &crate::tui::theme::Theme,
) -> Vec<Span<'static>> {
    let mut counts = Vec::new();
    for (n, status) in [
        (c.succeeded, Status::Succeeded),
        (c.failed + c.optional_failed, Status::Failed),
        (c.skipped, Status::Skipped),
        (c.running, Status::Running),
        (c.pending, Status::Pending),
    ] {
        let (g, role) = glyph(status);
        if n > 0 {
            counts.push(Span::styled(format!(" {g}{n}"), theme.style(role)));
        }
    }
    counts.push(Span::raw(" "));
    counts
}
