//! How a step and its params are written out: statuses, written values with their
//! references picked out, resolutions, and the wrapping that fits them to the pane.

use super::*;

/// `3 succeeded · 1 failed · 1 skipped`.
pub(super) fn summary(c: Counts) -> String {
    let parts: Vec<String> = [
        (c.succeeded, "succeeded"),
        (c.failed, "failed"),
        (c.optional_failed, "optional failed"),
        (c.skipped, "skipped"),
        (c.running, "running"),
        (c.pending, "pending"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, w)| format!("{n} {w}"))
    .collect();
    if parts.is_empty() {
        "no steps".into()
    } else {
        parts.join(" · ")
    }
}

/// The glyph and role of a step's status.
pub(super) fn glyph(status: Status) -> (&'static str, Role) {
    match status {
        Status::Pending => ("○", Role::Muted),
        Status::Running => ("◐", Role::Prompt),
        Status::Succeeded => ("✓", Role::Info),
        Status::Failed => ("✗", Role::Error),
        Status::Skipped => ("⊘", Role::Muted),
    }
}

/// `3 ms`, `1.2 s`.
pub(super) fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// Compact JSON for a cell.
pub(super) fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Every leaf of a params object with its place: scalars, and empty arrays and objects.
pub(super) fn leaves(v: &Value, at: ParamPath, out: &mut Vec<(ParamPath, Value)>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, item) in map {
                let mut p = at.clone();
                p.0.push(ParamSeg::Key(k.clone()));
                leaves(item, p, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                let mut p = at.clone();
                p.0.push(ParamSeg::Index(i));
                leaves(item, p, out);
            }
        }
        other => {
            if !at.0.is_empty() {
                out.push((at, other.clone()));
            }
        }
    }
}

/// A value as written, its references picked out.
pub(super) fn written_spans(v: &Value) -> Vec<(Role, String)> {
    let Value::String(s) = v else {
        return vec![(Role::Value, compact(v))];
    };
    let Ok(Some(template)) = Template::parse(s) else {
        return vec![(Role::Value, compact(v))];
    };
    let quoted = compact(v);
    let inner = &quoted[1..quoted.len() - 1];
    let mut out = vec![(Role::Value, "\"".to_string())];
    let mut rest = inner;
    for r in template.references() {
        let written = format!("${{{}}}", r.text);
        // The reference as the JSON string shows it (quotes inside it escaped).
        let shown = compact(&Value::String(written));
        let shown = &shown[1..shown.len() - 1];
        if let Some(at) = rest.find(shown) {
            if at > 0 {
                out.push((Role::Value, rest[..at].to_string()));
            }
            out.push((Role::Info, shown.to_string()));
            rest = &rest[at + shown.len()..];
        }
    }
    if !rest.is_empty() {
        out.push((Role::Value, rest.to_string()));
    }
    out.push((Role::Value, "\"".to_string()));
    out
}

/// Where a step's resolved params come from, for the detail.
pub(super) enum Resolution {
    /// Resolved when it started, or a preview that resolved.
    Resolved {
        params: Value,
        subs: Vec<Substitution>,
        preview: bool,
    },
    /// A reference that finds nothing (now, or when it started).
    Unresolved(Unresolved),
    /// Steps it reads have not ended.
    Waiting(Vec<String>),
    /// It never started (skipped).
    Never,
}

/// One param's row: its place, as written, and its resolved lines.
pub(super) struct ParamRow {
    name: String,
    written: Vec<(Role, String)>,
    resolved: Vec<Vec<(Role, String)>>,
}

pub(super) fn step_word(from: Option<usize>, steps: &[Step]) -> String {
    match from {
        Some(n) => format!("step {}", steps.get(n).map_or(n.to_string(), Step::label)),
        None => "the plan's inputs".into(),
    }
}

pub(super) fn param_rows(step: &Step, steps: &[Step], resolution: &Resolution) -> Vec<ParamRow> {
    let mut out = Vec::new();
    let mut all = Vec::new();
    leaves(&step.params, ParamPath::default(), &mut all);
    for (path, written) in all {
        let name = path.to_string();
        let is_slot = step.slots.iter().any(|s| s.at == path);
        let plain = || vec![vec![(Role::Value, compact(&written))]];
        let resolved = match resolution {
            Resolution::Resolved { params, subs, .. } => {
                let here: Vec<&Substitution> = subs.iter().filter(|s| s.param == path).collect();
                let value = path.get(params).cloned().unwrap_or(Value::Null);
                match here.as_slice() {
                    [] => vec![vec![(Role::Value, compact(&value))]],
                    [one] => vec![vec![
                        (Role::Info, compact(&value)),
                        (
                            Role::Muted,
                            format!("  ← {}", step_word(one.from_step, steps)),
                        ),
                    ]],
                    many => {
                        let mut lines = vec![vec![(Role::Info, compact(&value))]];
                        for s in many {
                            lines.push(vec![
                                (Role::Muted, format!("← ${{{}}} = ", s.reference)),
                                (Role::Info, compact(&s.value)),
                                (Role::Muted, format!(" ({})", step_word(s.from_step, steps))),
                            ]);
                        }
                        lines
                    }
                }
            }
            Resolution::Unresolved(u) if u.param == name => vec![
                vec![(Role::Error, format!("nothing at {}", u.missing.at))],
                vec![(Role::Error, u.missing.reason.clone())],
            ],
            Resolution::Unresolved(_) if is_slot => vec![vec![(Role::Muted, "…".into())]],
            Resolution::Waiting(labels) if is_slot => vec![vec![(
                Role::Muted,
                format!("once step {} has run", labels.join(", ")),
            )]],
            Resolution::Never if is_slot => vec![vec![(Role::Muted, "—".into())]],
            _ => plain(),
        };
        out.push(ParamRow {
            name,
            written: written_spans(&written),
            resolved,
        });
    }
    out
}

/// The width of a text on screen.
pub(super) fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// Cuts styled text into lines of at most `max` columns: after the last space that
/// fits, or inside a word with no space to break at (a reference, an address).
pub(super) fn wrap(spans: &[(Role, String)], max: usize) -> Vec<Vec<(Role, String)>> {
    let max = max.max(1);
    let char_width = |c: char| width(c.encode_utf8(&mut [0; 4]));
    let mut lines: Vec<Vec<(Role, char)>> = vec![Vec::new()];
    let mut used = 0;
    for (role, text) in spans {
        for c in text.chars() {
            let w = char_width(c);
            let line = lines.last_mut().expect("never empty");
            if used + w > max && used > 0 {
                // Move the word being cut to the next line when a space comes before it.
                let carry = match line.iter().rposition(|(_, ch)| *ch == ' ') {
                    Some(at) if at > 0 => {
                        let carry = line.split_off(at + 1);
                        line.pop();
                        carry
                    }
                    _ => Vec::new(),
                };
                used = carry.iter().map(|(_, ch)| char_width(*ch)).sum();
                lines.push(carry);
                if c == ' ' && used == 0 {
                    continue;
                }
            }
            lines.last_mut().expect("never empty").push((*role, c));
            used += w;
        }
    }
    lines
        .into_iter()
        .map(|line| {
            let mut spans: Vec<(Role, String)> = Vec::new();
            for (role, c) in line {
                match spans.last_mut() {
                    Some((r, text)) if *r == role => text.push(c),
                    _ => spans.push((role, c.to_string())),
                }
            }
            spans
        })
        .collect()
}

pub(super) fn line_of(spans: Vec<(Role, String)>, ui: &Ui<'_>) -> Line<'static> {
    Line::from(
        spans
            .into_iter()
            .map(|(role, text)| Span::styled(text, ui.theme.style(role)))
            .collect::<Vec<_>>(),
    )
}

pub(super) fn spans_width(spans: &[(Role, String)]) -> usize {
    spans.iter().map(|(_, t)| width(t)).sum()
}

/// The params as lines: in columns (name, as written, resolved) when there is room,
/// else each param's written value with its resolved value under it.
pub(super) fn param_lines(
    rows: &[ParamRow],
    heading: &str,
    inner: u16,
    ui: &Ui<'_>,
) -> Vec<Line<'static>> {
    let inner = usize::from(inner);
    let mut out = Vec::new();
    if rows.is_empty() {
        out.push(line_of(vec![(Role::Muted, "no params".into())], ui));
        return out;
    }
    if inner >= usize::from(PARAM_COLUMNS) {
        let name_w = rows
            .iter()
            .map(|r| width(&r.name))
            .max()
            .unwrap_or(0)
            .clamp(5, inner / 4);
        let col = (inner - name_w - 4) / 2;
        let pad = |s: &mut Vec<(Role, String)>, to: usize| {
            let w = spans_width(s);
            if w < to {
                s.push((Role::Text, " ".repeat(to - w)));
            }
        };
        let mut head = vec![(Role::Muted, "param".to_string())];
        pad(&mut head, name_w + 2);
        head.push((Role::Muted, "as written".into()));
        pad(&mut head, name_w + 2 + col + 2);
        head.push((Role::Muted, heading.to_string()));
        out.push(line_of(head, ui));
        for row in rows {
            let written = wrap(&row.written, col);
            let resolved: Vec<Vec<(Role, String)>> =
                row.resolved.iter().flat_map(|l| wrap(l, col)).collect();
            let name: String = if width(&row.name) > name_w {
                row.name
                    .chars()
                    .take(name_w.saturating_sub(1))
                    .collect::<String>()
                    + "…"
            } else {
                row.name.clone()
            };
            for k in 0..written.len().max(resolved.len()) {
                let mut line = Vec::new();
                if k == 0 {
                    line.push((Role::Field, name.clone()));
                }
                pad(&mut line, name_w + 2);
                if let Some(w) = written.get(k) {
                    line.extend(w.iter().cloned());
                }
                pad(&mut line, name_w + 2 + col + 2);
                if let Some(r) = resolved.get(k) {
                    line.extend(r.iter().cloned());
                }
                out.push(line_of(line, ui));
            }
        }
    } else {
        out.push(line_of(
            vec![(Role::Muted, format!("param: as written → {heading}"))],
            ui,
        ));
        for row in rows {
            let mut first = vec![(Role::Field, row.name.clone()), (Role::Muted, ": ".into())];
            first.extend(row.written.iter().cloned());
            for l in wrap(&first, inner) {
                out.push(line_of(l, ui));
            }
            for (k, r) in row.resolved.iter().enumerate() {
                let mut l = vec![(
                    Role::Muted,
                    if k == 0 { "  → " } else { "    " }.to_string(),
                )];
                l.extend(r.iter().cloned());
                for l in wrap(&l, inner) {
                    out.push(line_of(l, ui));
                }
            }
        }
    }
    out
}
