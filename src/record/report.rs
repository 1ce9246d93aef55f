//! `structs-console report FILE [B] -o report.html`: one self-contained HTML page a team
//! can share: a timeline of the calls, the table per tool, every call's request and
//! answer (searchable), the diff against a second run, and the `check` verdict. It
//! needs no server and no network: its style and its one small script are in the page.
//!
//! A page stays a size a browser opens at once: the timeline draws at most
//! [`TIMELINE_MAX`] calls, the list holds at most [`LISTED_MAX`] calls, and each request
//! and answer is cut at [`TEXT_MAX`] bytes; the page says what it left out.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::calls::{CallRecord, Run};
use super::compare::{self, Comparison, Op};
use super::expect::Verdict;
use super::{Kind, LogReader, Redaction};
use crate::text::escape_markup as esc;

/// Calls the timeline draws at most.
pub const TIMELINE_MAX: usize = 20_000;
/// Calls the list holds at most.
pub const LISTED_MAX: usize = 2_000;
/// Bytes of one request or answer the list keeps.
pub const TEXT_MAX: usize = 4_096;

/// What one report shows.
pub struct Report<'a> {
    pub log: &'a str,
    pub run: &'a Run,
    /// The log's requests and answers as text, by (session, call) ([`texts`]).
    pub texts: &'a HashMap<(String, u64), (String, String)>,
    /// A second run and the comparison with it.
    pub other: Option<(&'a str, &'a Run, &'a Comparison)>,
    pub verdicts: Option<&'a [Verdict]>,
}

/// Reads the requests and answers of the first [`LISTED_MAX`] calls of the log at
/// `path`, each cut at [`TEXT_MAX`] bytes, with what `rules` find hidden.
///
/// # Errors
///
/// When the log cannot be read.
pub fn texts(
    path: &Path,
    rules: &Redaction,
) -> std::io::Result<HashMap<(String, u64), (String, String)>> {
    let mut out: HashMap<(String, u64), (String, String)> = HashMap::new();
    let mut requests = 0;
    for item in LogReader::open(path)? {
        let Ok(entry) = item? else { continue };
        let Some(call) = entry.call else { continue };
        let at = (entry.session.clone(), call);
        match entry.kind {
            Kind::Request if requests < LISTED_MAX => {
                requests += 1;
                let asked = entry
                    .arguments
                    .as_ref()
                    .or(entry.params.as_ref())
                    .map_or_else(String::new, |v| pretty(&rules.applied(v)));
                out.insert(at, (asked, String::new()));
            }
            Kind::Response => {
                if let Some((_, answer)) = out.get_mut(&at) {
                    *answer = pretty(&rules.applied_answer(&entry.answer()));
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// `v` as indented JSON, cut at [`TEXT_MAX`] bytes.
fn pretty(v: &Value) -> String {
    let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
    if text.len() > TEXT_MAX {
        let mut end = TEXT_MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let whole = text.len();
        text.truncate(end);
        let _ = write!(text, "\n… cut here: {whole} bytes in all");
    }
    text
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330}\
h1{font-size:20px}h2{font-size:16px;margin-top:28px}\
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #dde;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
.err{color:#b3261e}.ok{color:#1e7a3c}.fail{background:#fde7e9}.pass{background:#e6f4ea}\
.op-removed{background:#fde7e9}.op-added{background:#e6f4ea}.op-changed{background:#fff4d6}\
pre{background:#f5f6fa;padding:8px;overflow:auto;max-height:320px;font-size:12px}\
svg{background:#fafbfd;border:1px solid #dde}rect.call{fill:#5b7bd5}rect.call.error{fill:#d93b3b}\
rect.call.rounds{stroke:#e0a100;stroke-width:2}text.tick{font-size:11px;fill:#667}#search{font-size:14px;padding:4px 8px;width:320px}\
.note{color:#667}";

/// Shows only the calls whose text holds the search box's words (all of them, any case);
/// the words may come in the page's address after `#q=`.
const SCRIPT: &str = "(function(){var box=document.getElementById('search');\
var rows=[].slice.call(document.querySelectorAll('#calls .call'));\
function apply(){var words=box.value.toLowerCase().split(/\\s+/).filter(Boolean);var shown=0;\
rows.forEach(function(r){var t=r.textContent.toLowerCase();\
var hit=words.every(function(w){return t.indexOf(w)>=0;});r.hidden=!hit;if(hit)shown++;});\
document.getElementById('shown').textContent=shown;}\
box.addEventListener('input',apply);\
var m=/[#&]q=([^&]*)/.exec(location.hash);if(m){box.value=decodeURIComponent(m[1]);}apply();})();";

/// The page.
pub fn render(r: &Report<'_>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let calls = &r.run.calls;
    let errors = calls.iter().filter(|c| c.outcome.is_error()).count();
    let bytes: u64 = calls.iter().map(|c| c.bytes).sum();
    let span_ms = calls
        .iter()
        .filter_map(|c| Some(c.at_ms? + c.duration_ms.unwrap_or(0.0)))
        .fold(0.0, f64::max);
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>structs-console report: {log}</title><style>{STYLE}</style></head><body>\
         <h1>Session report: {log}</h1>\
         <p id=\"summary\">{n} call{ns}, {errors} error{es}, {size}, over {time}.</p>",
        log = esc(r.log),
        n = calls.len(),
        ns = if calls.len() == 1 { "" } else { "s" },
        es = if errors == 1 { "" } else { "s" },
        size = compare::size(bytes),
        time = compare::millis(span_ms),
    );
    if let Some(verdicts) = r.verdicts {
        verdict_section(&mut out, verdicts);
    }
    timeline(&mut out, calls);
    tools_section(&mut out, r);
    if let Some((name, other, cmp)) = r.other {
        diff_section(&mut out, r, name, other, cmp);
    }
    calls_section(&mut out, r);
    let _ = writeln!(out, "<script>{SCRIPT}</script></body></html>");
    out
}

fn verdict_section(out: &mut String, verdicts: &[Verdict]) {
    let broken = verdicts.iter().filter(|v| !v.passed).count();
    let _ = write!(
        out,
        "<h2>Expectations</h2><p id=\"verdict\" class=\"{}\">{} of {} expectations held</p>\
         <table id=\"expectations\"><tr><th></th><th>expectation</th><th>found</th><th>log lines</th></tr>",
        if broken == 0 { "pass" } else { "fail" },
        verdicts.len() - broken,
        verdicts.len()
    );
    for v in verdicts {
        let lines: Vec<String> = v.lines.iter().map(u64::to_string).collect();
        let _ = write!(
            out,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if v.passed { "pass" } else { "fail" },
            if v.passed { "ok" } else { "FAIL" },
            esc(&v.name),
            esc(&v.message),
            lines.join(", ")
        );
    }
    out.push_str("</table>");
}

/// Lanes for calls that overlap: each call the first lane free at its start.
fn lanes(calls: &[&CallRecord]) -> Vec<usize> {
    let mut ends: Vec<f64> = Vec::new();
    calls
        .iter()
        .map(|c| {
            let start = c.at_ms.unwrap_or(0.0);
            let end = start + c.duration_ms.unwrap_or(0.0);
            match ends.iter().position(|&e| e <= start) {
                Some(i) => {
                    ends[i] = end;
                    i
                }
                None => {
                    ends.push(end);
                    ends.len() - 1
                }
            }
        })
        .collect()
}

fn timeline(out: &mut String, calls: &[CallRecord]) {
    let mut drawn: Vec<&CallRecord> = calls
        .iter()
        .filter(|c| c.at_ms.is_some())
        .take(TIMELINE_MAX)
        .collect();
    drawn.sort_by(|a, b| a.at_ms.unwrap_or(0.0).total_cmp(&b.at_ms.unwrap_or(0.0)));
    let lane = lanes(&drawn);
    let end = drawn
        .iter()
        .map(|c| c.at_ms.unwrap_or(0.0) + c.duration_ms.unwrap_or(0.0))
        .fold(1.0, f64::max);
    let (width, row) = (1200.0, 14.0);
    let height = (lane.iter().max().map_or(1, |m| m + 1) as f64 * row).max(row);
    let _ = write!(
        out,
        "<h2>Timeline</h2><p class=\"note\">Each call a bar from its start to its end; calls at \
         the same time in lanes; errors in red, calls that asked for input outlined.{}</p>\
         <svg id=\"timeline\" width=\"{width}\" height=\"{h}\" viewBox=\"0 0 {width} {h}\">",
        if calls.len() > drawn.len() {
            format!(
                " The first {} of {} calls are drawn.",
                drawn.len(),
                calls.len()
            )
        } else {
            String::new()
        },
        h = height + 22.0,
    );
    for (c, lane) in drawn.iter().zip(&lane) {
        let x = c.at_ms.unwrap_or(0.0) / end * width;
        let w = (c.duration_ms.unwrap_or(0.0) / end * width).max(1.0);
        let mut class = String::from("call");
        if c.outcome.is_error() {
            class.push_str(" error");
        }
        if c.rounds > 0 {
            class.push_str(" rounds");
        }
        let _ = write!(
            out,
            "<rect class=\"{class}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{hh:.1}\">\
             <title>{tool} #{call}: {outcome}, {took}</title></rect>",
            y = *lane as f64 * row + 2.0,
            hh = row - 3.0,
            tool = esc(&c.tool),
            call = c.call,
            outcome = esc(&c.outcome.label()),
            took = c.duration_ms.map(compare::millis).unwrap_or_default(),
        );
    }
    // A time axis: five marks under the bars.
    for i in 0..=4 {
        let x = f64::from(i) / 4.0 * width;
        let anchor = match i {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\">{}</text>",
            compare::millis(end * f64::from(i) / 4.0),
            y = height + 16.0,
        );
    }
    out.push_str("</svg>");
}

fn tools_section(out: &mut String, r: &Report<'_>) {
    out.push_str("<h2>Per tool</h2><table id=\"tools\"><tr><th>tool</th><th>calls</th><th>errors</th><th>bytes</th><th>time</th></tr>");
    let mut per: std::collections::BTreeMap<&str, compare::Figures> =
        std::collections::BTreeMap::new();
    let figures = match r.other {
        Some((_, _, cmp)) => cmp
            .tools
            .iter()
            .map(|(t, (a, b))| (t.as_str(), Some(*a), Some(*b)))
            .collect::<Vec<_>>(),
        None => {
            for c in &r.run.calls {
                per.entry(&c.tool).or_default().add(c);
            }
            per.iter().map(|(t, f)| (*t, Some(*f), None)).collect()
        }
    };
    for (tool, a, b) in figures {
        let cell = |f: fn(&compare::Figures) -> String| match (a, b) {
            (Some(a), Some(b)) => format!("{}→{}", f(&a), f(&b)),
            (Some(a), None) => f(&a),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(tool),
            cell(|f| f.calls.to_string()),
            cell(|f| f.errors.to_string()),
            cell(|f| compare::size(f.bytes)),
            cell(|f| compare::millis(f.time_ms)),
        );
    }
    out.push_str("</table>");
}

fn diff_section(out: &mut String, r: &Report<'_>, name: &str, other: &Run, cmp: &Comparison) {
    let [same, changed, removed, added] = cmp.counts();
    let _ = write!(
        out,
        "<h2>Against {}</h2><p id=\"diff-summary\">{same} same, {changed} changed, {removed} only in \
         this run, {added} only in {}</p><table id=\"diff\"><tr><th></th><th>#</th><th>#</th>\
         <th>tool</th><th>arguments</th><th>this run</th><th>{}</th></tr>",
        esc(name),
        esc(name),
        esc(name)
    );
    let did = |c: &CallRecord| {
        format!(
            "{} {} {}",
            c.outcome.label(),
            compare::size(c.bytes),
            c.duration_ms.map(compare::millis).unwrap_or_default()
        )
    };
    for p in cmp.pairs.iter().filter(|p| p.op != Op::Same) {
        let a = p.a.map(|i| &r.run.calls[i]);
        let b = p.b.map(|i| &other.calls[i]);
        let c = a.or(b).expect("a side");
        let _ = write!(
            out,
            "<tr class=\"op-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            p.op.name(),
            p.op.mark(),
            a.map(|c| c.call.to_string()).unwrap_or_default(),
            b.map(|c| c.call.to_string()).unwrap_or_default(),
            esc(&c.tool),
            esc(&c.arguments_text()),
            a.map(did).unwrap_or_default(),
            b.map(did).unwrap_or_default(),
        );
    }
    out.push_str("</table>");
}

fn calls_section(out: &mut String, r: &Report<'_>) {
    let listed = r.run.calls.len().min(LISTED_MAX);
    let _ = write!(
        out,
        "<h2>Calls</h2><p><input id=\"search\" type=\"search\" placeholder=\"words in a call's request or answer\"> \
         <span id=\"shown\">{listed}</span> of {listed} shown{}</p><div id=\"calls\">",
        if r.run.calls.len() > listed {
            format!(" (the first {listed} of {} calls)", r.run.calls.len())
        } else {
            String::new()
        }
    );
    for c in r.run.calls.iter().take(LISTED_MAX) {
        let session = r
            .run
            .sessions
            .get(c.session as usize)
            .cloned()
            .unwrap_or_default();
        let (asked, answered) = r.texts.get(&(session, c.call)).cloned().unwrap_or_default();
        let _ = write!(
            out,
            "<details class=\"call\"><summary>#{} <b>{}</b> <span class=\"{}\">{}</span> {} {}</summary>\
             <pre class=\"request\">{}</pre><pre class=\"answer\">{}</pre></details>",
            c.call,
            esc(&c.tool),
            if c.outcome.is_error() { "err" } else { "ok" },
            esc(&c.outcome.label()),
            compare::size(c.bytes),
            c.duration_ms.map(compare::millis).unwrap_or_default(),
            esc(&asked),
            esc(&answered),
        );
    }
    out.push_str("</div>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::calls::read_from;

    const LOG: &str = r#"{"v":5,"ts":"2026-12-01T10:00:00.000Z","session":"s","seq":1,"type":"request","call":1,"tool":"q","arguments":{"id":"<1-1>"}}
{"v":5,"ts":"2026-12-01T10:00:00.100Z","session":"s","seq":2,"type":"request","call":2,"tool":"p","arguments":{"id":"2-1"}}
{"v":5,"ts":"2026-12-01T10:00:00.300Z","session":"s","seq":3,"type":"response","call":1,"tool":"q","duration_ms":300,"result":{"name":"Alice"}}
{"v":5,"ts":"2026-12-01T10:00:00.400Z","session":"s","seq":4,"type":"response","call":2,"tool":"p","duration_ms":300,"error":{"error":{"code":"NOT_FOUND"}}}
"#;

    #[test]
    fn the_page_holds_the_timeline_in_lanes_the_tools_and_every_call_escaped() {
        let run = read_from(LOG.as_bytes(), &[]).unwrap();
        let mut texts = HashMap::new();
        texts.insert(
            ("s".to_string(), 1),
            (
                "{\"id\": \"<1-1>\"}".to_string(),
                "{\"name\": \"Alice\"}".to_string(),
            ),
        );
        let page = render(&Report {
            log: "a<b>.jsonl",
            run: &run,
            texts: &texts,
            other: None,
            verdicts: None,
        });
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("Session report: a&lt;b&gt;.jsonl"));
        assert_eq!(page.matches("<rect class=\"call").count(), 2);
        assert!(page.contains("<rect class=\"call error\""));
        // The calls overlap (0-300 ms and 100-400 ms): two lanes.
        assert!(page.contains("y=\"16.0\""), "{page}");
        assert!(page.contains("&lt;1-1&gt;") && !page.contains("<1-1>"));
        assert_eq!(page.matches("<details class=\"call\"").count(), 2);
        assert!(
            !page.contains("http://") && !page.contains("https://"),
            "nothing from the network"
        );
        assert_eq!(lanes(&run.calls.iter().collect::<Vec<_>>()), [0, 1]);
    }
}
