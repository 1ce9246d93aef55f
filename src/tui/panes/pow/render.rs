//! Drawing the PoW pane: the list of jobs and the selected job's plan, progress
//! figures, gauge and sparkline.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, List, ListItem, Paragraph, Sparkline, StatefulWidget, Widget, Wrap};
use serde_json::Value;

use super::{Job, Live, PowPane, Schedule, State, rate, span};
use crate::pow::{self, schedule::WEB_CLIENT_START};
use crate::tui::pane::Ui;
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets::area_block;
use crate::tui::widgets::text::{SELECTED_MARK, fit, fit_pad, fit_spans};

impl PowPane {
    pub(super) fn render_list(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let title = format!(" Jobs · {} ", self.jobs.len());
        let block = area_block(ui, &title, !self.tasks_focused());
        if let Some(text) = &self.prompt {
            let inner = block.inner(area);
            block.render(area, buf);
            Paragraph::new(
                vec![
                    Line::from(Span::styled("new job:", theme.style(Role::Muted))),
                    Line::from(vec![
                        Span::styled(text.clone(), theme.style(Role::Prompt)),
                        Span::styled("▏", theme.style(Role::Prompt)),
                    ]),
                    Line::default(),
                    Line::from(Span::styled(
                        "ENTITY [build|mine|refine|raid] [block_start= age= difficulty= threads=]",
                        theme.style(Role::Muted),
                    )),
                ]
                .into_iter()
                .chain(
                    self.example_lines()
                        .into_iter()
                        .map(|l| Line::from(Span::styled(l, theme.style(Role::Muted)))),
                )
                .collect::<Vec<_>>(),
            )
            .wrap(Wrap { trim: true })
            .render(inner, buf);
            return;
        }
        if self.jobs.is_empty() {
            Paragraph::new(Span::styled(
                "No jobs yet. n starts one; w on a struct in Entities does too.",
                theme.style(Role::Muted),
            ))
            .wrap(Wrap { trim: true })
            .block(block)
            .render(area, buf);
            return;
        }
        let items: Vec<ListItem> = self
            .jobs
            .iter()
            .map(|j| {
                let role = match j.state {
                    State::Found(_) => Role::Info,
                    State::Failed(_) => Role::Error,
                    State::Cancelled => Role::Muted,
                    _ => Role::Text,
                };
                ListItem::new(Line::from(vec![
                    Span::styled(
                        format!("{} {} ", j.number, j.label),
                        theme.style(Role::Text),
                    ),
                    Span::styled(j.status_word(), theme.style(role)),
                ]))
            })
            .collect();
        StatefulWidget::render(
            List::new(items)
                .block(block)
                .highlight_symbol(SELECTED_MARK)
                .highlight_style(theme.style(Role::Selected)),
            area,
            buf,
            &mut self.list,
        );
    }

    /// The prompt's examples, one a line: the world's own work when it is known (the
    /// first of each kind), else the syntax's.
    fn example_lines(&self) -> Vec<String> {
        let examples = self.offers.examples();
        if !examples.is_empty() {
            let mut out = vec!["e.g. (↑↓ fill in one):".to_string()];
            out.extend(examples.iter().map(|e| format!("· {e}")));
            return out;
        }
        let known = self.offers.error.is_none()
            && self.offers.asked_at.is_some()
            && self.offers.request.is_none();
        let mut out = Vec::new();
        if known {
            out.push("no work to prove on this world now".to_string());
        }
        out.push("e.g. 5-N · 5-N mine · 9-N@2-N raid".to_string());
        out
    }

    /// The work the world offers to prove, easiest first: shown while the prompt is
    /// open or no job is selected.
    fn render_offers(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let offers = &self.offers;
        let title = if offers.total > offers.items.len() as u64 {
            format!(
                " Work to prove now · the easiest {} of {} ",
                offers.items.len(),
                offers.total
            )
        } else if offers.items.is_empty() && (offers.asked_at.is_none() || offers.request.is_some())
        {
            " Work to prove now ".to_string()
        } else {
            format!(" Work to prove now · {} ", offers.items.len())
        };
        let block = area_block(ui, &title, false);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut lines = Vec::new();
        if let Some(error) = &offers.error {
            lines.push(Line::from(Span::styled(
                fit(&format!("no list of the work: {error}"), width),
                theme.style(Role::Error),
            )));
        } else if offers.items.is_empty() {
            let text = if offers.request.is_some() || offers.asked_at.is_none() {
                "reading the world…"
            } else {
                "Nothing on this world needs a proof now: no struct is being built, \
                 mining or refining, and no raid is under way."
            };
            lines.push(Line::from(Span::styled(text, theme.style(Role::Muted))));
        }
        let text_width = offers
            .items
            .iter()
            .map(|o| o.text.chars().count())
            .max()
            .unwrap_or(0)
            .min(width / 2);
        let skip = offers.at.map_or(0, |at| {
            (at + 1).saturating_sub(usize::from(inner.height).saturating_sub(2))
        });
        for (i, offer) in offers.items.iter().enumerate().skip(skip) {
            let chosen = self.prompt.is_some() && offers.at == Some(i);
            let lead = if chosen { SELECTED_MARK } else { "  " };
            let used = 2 + text_width + 2;
            let tail = format!("{} · needs {} now", offer.about, zeros(offer.difficulty));
            lines.push(Line::from(vec![
                Span::styled(lead, theme.style(Role::Prompt)),
                Span::styled(
                    fit_pad(&offer.text, text_width),
                    theme.style(if chosen { Role::Selected } else { Role::Value }),
                ),
                Span::raw("  "),
                Span::styled(
                    fit(&tail, width.saturating_sub(used)),
                    theme.style(Role::Text),
                ),
            ]));
        }
        if !offers.items.is_empty() {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                if self.prompt.is_some() {
                    "↑↓ fill in the prompt from this list; Enter plans the job"
                } else {
                    "n opens the prompt; ↑↓ there fill it in from this list"
                },
                theme.style(Role::Muted),
            )));
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    /// The selected job: its plan, how the search goes (figures, gauge, sparkline) or
    /// how it ended, and the coming steps; the work on offer when no job is selected.
    pub(super) fn render_job(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let job = self.selected().filter(|_| self.prompt.is_none());
        let Some(job) = job else {
            self.render_offers(area, buf, ui);
            return;
        };
        let block = area_block(ui, &format!(" Job {} · {} ", job.number, job.label), false);
        let inner = block.inner(area);
        block.render(area, buf);
        let mut lines = vec![field(
            theme,
            "action",
            job.args["action_type"].as_str().unwrap_or("").to_string(),
        )];
        let Some(plan) = &job.plan else {
            lines.push(Line::from(unplanned(&job.state, theme)));
            Paragraph::new(lines)
                .wrap(Wrap { trim: true })
                .render(inner, buf);
            return;
        };
        let required = job.required_now().unwrap_or(64);
        lines.extend(schedule_lines(job, plan, required, theme));
        let live = job.live();
        let gauge = match &job.state {
            State::Waiting => {
                lines.extend(self.waiting_lines(job, plan, required, theme));
                None
            }
            State::Running | State::Found(_) | State::Failed(_) | State::Cancelled => {
                let running = matches!(job.state, State::Running);
                let (search, ratio) = search_lines(&live, running, required, inner.width, theme);
                lines.extend(search);
                ratio
            }
            State::Planning => None,
        };
        lines.extend(outcome_lines(&job.state, inner.width, theme));
        let text_height = lines.len() as u16;
        let [text_area, gauge_area, spark_area, steps_area] = Layout::vertical([
            Constraint::Length(text_height),
            Constraint::Length(if gauge.is_some() { 1 } else { 0 }),
            Constraint::Length(if live.rates.is_empty() { 0 } else { 3 }),
            Constraint::Min(0),
        ])
        .areas(inner);
        // Each line cut with … at the pane's edge.
        let width = usize::from(text_area.width);
        let lines: Vec<Line<'_>> = lines
            .into_iter()
            .map(|l| Line::from(fit_spans(l.spans, width)))
            .collect();
        Paragraph::new(lines).render(text_area, buf);
        if let Some(ratio) = gauge {
            render_gauge(ratio, gauge_area, buf, theme);
        }
        if !live.rates.is_empty() {
            Sparkline::default()
                .data(&live.rates)
                .style(theme.style(Role::Value))
                .render(spark_area, buf);
        }
        render_steps(plan, required, steps_area, buf, theme);
    }

    /// A waiting job's lines: when its difficulty falls low enough to start, and the
    /// best block to start at.
    fn waiting_lines(
        &self,
        job: &Job,
        plan: &Schedule,
        required: u32,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let starts = plan.web_client_start_block;
        let waiting = match starts {
            // A paused clock brings no block: say so rather than a time.
            Some(b) if job.age.is_none() && self.clock_paused => {
                format!("until difficulty ≤ {WEB_CLIENT_START}, at block {b} (clock paused)")
            }
            Some(b) if job.age.is_none() => format!(
                "until difficulty ≤ {WEB_CLIENT_START}, at block {b} (in {})",
                span(b.saturating_sub(job.block_now) as f64 * pow::schedule::BLOCK_SECONDS)
            ),
            _ => {
                format!("difficulty {required} never falls to {WEB_CLIENT_START} here")
            }
        };
        let d = plan
            .steps
            .iter()
            .find(|(_, b)| *b == plan.recommended_start_block)
            .map_or(0, |(d, _)| *d);
        let best_start = if self.clock_paused && job.age.is_none() {
            format!(
                "block {} (difficulty {d}); the clock is paused",
                plan.recommended_start_block
            )
        } else {
            format!(
                "block {} (difficulty {d}): a proof about {} from now at {}",
                plan.recommended_start_block,
                span(plan.expected_seconds_to_proof),
                rate(plan.hashrate)
            )
        };
        vec![
            field(theme, "waiting", waiting),
            field(theme, "best start", best_start),
        ]
    }
}

/// A job's field as a line: its name in a column, then its value.
fn field(theme: &Theme, name: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{name:<14}"), theme.style(Role::Field)),
        Span::styled(value, theme.style(Role::Value)),
    ])
}

/// What a job without a plan yet says of itself: why it stopped, or that it is being
/// planned.
fn unplanned(state: &State, theme: &Theme) -> Span<'static> {
    match state {
        State::Failed(m) => Span::styled(m.clone(), theme.style(Role::Error)),
        State::Cancelled => Span::styled("cancelled", theme.style(Role::Muted)),
        _ => Span::styled("planning…", theme.style(Role::Muted)),
    }
}

/// The plan's lines: where the work started and its range, and where it stands now.
fn schedule_lines(job: &Job, plan: &Schedule, required: u32, theme: &Theme) -> Vec<Line<'static>> {
    let age = job
        .age
        .unwrap_or_else(|| job.block_now.saturating_sub(plan.block_start));
    vec![
        field(
            theme,
            "work",
            format!(
                "started at block {} · range {} ({})",
                plan.block_start, plan.range, plan.range_source
            ),
        ),
        field(
            theme,
            "now",
            format!(
                "{} · age {age} · difficulty {required}",
                if job.age.is_some() {
                    "age given".to_string()
                } else {
                    format!("block {}", job.block_now)
                }
            ),
        ),
    ]
}

/// A search's lines from its latest report: hashes tried, what ran it, the best
/// found, and while it runs the time a proof is expected to take; with the share of
/// the expected hashes tried, for the gauge, while it runs.
fn search_lines(
    live: &Live,
    running: bool,
    required: u32,
    width: u16,
    theme: &Theme,
) -> (Vec<Line<'static>>, Option<f64>) {
    let last = live.last.clone().unwrap_or(Value::Null);
    let mut lines = Vec::new();
    let iterations = last["iterations"].as_u64().unwrap_or(0);
    let d = last["required_difficulty"]
        .as_u64()
        .or_else(|| last["difficulty"].as_u64())
        .unwrap_or(u64::from(required)) as u32;
    let best = last["best_achieved_difficulty"]
        .as_u64()
        .or_else(|| last["achieved_difficulty"].as_u64())
        .unwrap_or(0);
    let elapsed = last["elapsed_ms"]
        .as_u64()
        .or_else(|| last["computation_time_ms"].as_u64())
        .unwrap_or(0);
    let r = last["hashrate"].as_f64().unwrap_or(0.0);
    lines.push(field(
        theme,
        "hashing",
        format!(
            "{iterations} iterations · {} · {}",
            rate(r),
            span(elapsed as f64 / 1000.0),
        ),
    ));
    // The server names what ran the search: a GPU adapter, or the CPU
    // kernel on as many threads.
    let kernel = last["kernel"].as_str().unwrap_or("?");
    match kernel.strip_prefix("gpu: ") {
        Some(adapter) => lines.push(field(theme, "engine", format!("GPU {adapter}"))),
        None => lines.push(field(
            theme,
            "threads",
            format!("{} × {kernel}", last["threads"].as_u64().unwrap_or(0)),
        )),
    }
    if let Some(note) = &live.engine_note {
        lines.push(Line::from(Span::styled(
            fit(&format!("note: {note}"), usize::from(width)),
            theme.style(Role::Paused),
        )));
    }
    lines.push(field(
        theme,
        "best so far",
        format!("{best} of {d} leading zeros"),
    ));
    if !running {
        return (lines, None);
    }
    let gauge = iterations as f64 / pow::expected_hashes(d);
    // The rate over the samples kept, so the figure does not jump
    // with each report. A search has no memory: from any moment, a
    // proof takes 16^d hashes on average, however many were tried.
    let steady = if live.rates.is_empty() {
        r
    } else {
        live.rates.iter().sum::<u64>() as f64 / live.rates.len() as f64
    };
    lines.push(field(
        theme,
        "expected",
        format!(
            "{} on average from now (a search has no memory)",
            span(pow::expected_hashes(d) / steady.max(1.0))
        ),
    ));
    (lines, Some(gauge))
}

/// How a search ended: the proof found, why it failed, or that it was cancelled.
fn outcome_lines(state: &State, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match state {
        State::Found(v) => {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                format!("proof found (c copies it) · valid {}", v["valid"]),
                theme.style(Role::Info),
            )));
            lines.push(field(theme, "nonce", v["nonce"].to_string()));
            lines.push(field(
                theme,
                "input",
                v["input"].as_str().unwrap_or("").to_string(),
            ));
            let hash = v["hash"].as_str().unwrap_or("").to_string();
            if usize::from(width) >= 14 + hash.len() {
                lines.push(field(theme, "hash", hash));
            } else {
                lines.push(field(theme, "hash", String::new()));
                lines.push(Line::from(Span::styled(hash, theme.style(Role::Value))));
            }
        }
        State::Failed(m) => lines.push(Line::from(Span::styled(
            m.clone(),
            theme.style(Role::Error),
        ))),
        State::Cancelled => lines.push(Line::from(Span::styled(
            "cancelled",
            theme.style(Role::Muted),
        ))),
        _ => {}
    }
    lines
}

/// The gauge of the hashes tried against those a proof takes on average.
fn render_gauge(ratio: f64, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Gauge::default()
        .ratio(ratio.clamp(0.0, 1.0))
        .label(if ratio < 0.01 {
            format!(
                "tried {:.3}% of the hashes a proof takes on average",
                ratio * 100.0
            )
        } else {
            format!(
                "tried {:.0}% of the hashes a proof takes on average",
                (ratio * 100.0).min(999.0)
            )
        })
        .gauge_style(theme.style(Role::Info))
        .render(area, buf);
}

/// The coming steps: the difficulty by block, and the time a proof takes at each.
fn render_steps(plan: &Schedule, required: u32, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let mut rows = vec![Line::from(Span::styled(
        "difficulty  from block  expected time",
        theme.style(Role::Muted),
    ))];
    // The step of now, then the steps that matter: difficulty 16 and below.
    let now_at = plan
        .steps
        .iter()
        .position(|(d, _)| *d <= required)
        .unwrap_or(0);
    let mut last_shown: Option<usize> = None;
    for (i, (d, from)) in plan.steps.iter().enumerate().skip(now_at) {
        if i != now_at && *d > 16 {
            continue;
        }
        if rows.len() + 1 >= usize::from(area.height) {
            break;
        }
        if last_shown.is_some_and(|l| l + 1 != i) {
            rows.push(Line::from(Span::styled(
                "        …",
                theme.style(Role::Muted),
            )));
        }
        last_shown = Some(i);
        let mark = if *d == required { "›" } else { " " };
        rows.push(Line::from(vec![
            Span::styled(format!("{mark}{d:>9}  "), theme.style(Role::Value)),
            Span::styled(format!("{from:>10}  "), theme.style(Role::Text)),
            Span::styled(
                span(pow::expected_hashes(*d) / plan.hashrate.max(1.0)),
                theme.style(Role::Muted),
            ),
        ]));
    }
    Paragraph::new(rows).render(area, buf);
}

/// Leading zeros in words: `1 zero`, `8 zeros`.
fn zeros(n: u64) -> String {
    format!("{n} zero{}", if n == 1 { "" } else { "s" })
}
