//! Sending a live call to the Replay tab. Replay reads session logs, so the call goes
//! as one: the log the calls come from when there is one (a followed log, or the file a
//! proxy records to when its hello names it), else the calls the tab holds written to
//! a session log of their own, in the `--record` format.
//!
//! Such a log is a file of this console's, in the temporary folder, made anew (never
//! followed through a link) and readable by its user alone: it holds what the feed
//! held, which never holds a secret. The last one is removed when the next is written
//! and when the console closes.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::LivePane;
use crate::record::live::{Live, Status};
use crate::tui::pane::{Ctx, Event, ReplayRequest};

impl LivePane {
    /// Asks the Replay pane to show the selected call: in the log the calls come from
    /// when there is one, else among the calls seen so far, written to a log for it.
    pub(super) fn open_in_replay(&mut self, ctx: &mut Ctx<'_>) {
        let Some((_, call)) = self.selected() else {
            return;
        };
        let number = call.call;
        let label = format!("#{} call {}", call.session, call.call);
        let session = self
            .live
            .sessions()
            .get(call.session.wrapping_sub(1))
            .cloned()
            .unwrap_or_default();
        let (path, said) = match self.source_log() {
            Some(log) => {
                let said = format!("{label} in Replay, in {}", log.display());
                (log, said)
            }
            None => match self.exports.write(&self.live) {
                Ok((path, n)) => {
                    let said = format!(
                        "{label} in Replay, among the {n} calls seen so far, written to {}",
                        path.display()
                    );
                    (path, said)
                }
                Err(e) => {
                    ctx.status.error(format!(
                        "cannot write the calls to a session log for Replay: {e}"
                    ));
                    return;
                }
            },
        };
        ctx.push(Event::OpenInReplay(ReplayRequest {
            path,
            session,
            call: number,
            said,
        }));
    }

    /// The session log the calls come from: the log followed, or the file the server
    /// records to when its hello names it (`"record"`, an absolute path).
    fn source_log(&self) -> Option<PathBuf> {
        let feed = self.watch.feed.as_ref()?;
        if feed.commands.is_none() {
            return Some(feed.what.clone());
        }
        let named = self.live.about.as_ref()?.get("record")?.as_str()?;
        let path = PathBuf::from(named);
        (path.is_absolute() && path.is_file()).then_some(path)
    }
}

/// The session logs this console wrote for Replay.
#[derive(Debug, Default)]
pub(super) struct Exports {
    last: Option<PathBuf>,
    written: u64,
}

impl Exports {
    /// Writes every call `live` holds to a new session log; its path and how many
    /// calls it holds.
    pub fn write(&mut self, live: &Live) -> std::io::Result<(PathBuf, usize)> {
        let (path, file) = self.create()?;
        let mut out = std::io::BufWriter::new(file);
        let calls = write_calls(live, &mut out).and_then(|n| {
            out.flush()?;
            Ok(n)
        });
        match calls {
            Ok(n) => {
                if let Some(old) = self.last.replace(path.clone()) {
                    let _ = std::fs::remove_file(old);
                }
                Ok((path, n))
            }
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                Err(e)
            }
        }
    }

    /// A file of our own to write to: created new, so an existing file (or a link
    /// someone left under the name) is never written through; `0600`.
    fn create(&mut self) -> std::io::Result<(PathBuf, std::fs::File)> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = std::env::temp_dir();
        loop {
            self.written += 1;
            let path = dir.join(format!(
                "structs-console-live-{}-{}.jsonl",
                std::process::id(),
                self.written
            ));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => return Ok((path, file)),
                // Left by an earlier console with the same process id: the next name.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && self.written < 1000 => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The log written last, while it is there.
    #[cfg(test)]
    pub fn last(&self) -> Option<&std::path::Path> {
        self.last.as_deref()
    }
}

impl Drop for Exports {
    fn drop(&mut self) {
        if let Some(path) = self.last.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Writes the calls as the recorder writes them: each call's request, then its
/// response once it has one, numbered within its session. Lines carry what the feed
/// said; the time of a response is its request's plus its duration.
fn write_calls(live: &Live, out: &mut impl Write) -> std::io::Result<usize> {
    let mut seq = vec![0u64; live.sessions().len() + 1];
    let mut next = |session: usize| {
        let slot = &mut seq[session.min(live.sessions().len())];
        *slot += 1;
        *slot
    };
    for call in live.calls() {
        let session = live
            .sessions()
            .get(call.session.wrapping_sub(1))
            .cloned()
            .unwrap_or_default();
        let head = |kind: &str, ts: &str, seq: u64| {
            let mut line = Map::new();
            line.insert("v".into(), json!(crate::record::VERSION));
            line.insert("ts".into(), json!(ts));
            line.insert("session".into(), json!(session));
            line.insert("seq".into(), json!(seq));
            line.insert("type".into(), json!(kind));
            line.insert("call".into(), json!(call.call));
            line.insert("tool".into(), json!(call.tool));
            line
        };
        let mut request = head("request", &call.ts, next(call.session));
        match &call.method {
            Some(method) => {
                request.insert("method".into(), json!(method));
                request.insert("params".into(), call.arguments.clone());
            }
            None => {
                request.insert("arguments".into(), call.arguments.clone());
            }
        }
        writeln!(out, "{}", Value::Object(request))?;
        let Some(answer) = &call.answer else {
            continue;
        };
        let ts = answered_at(&call.ts, call.duration_ms).unwrap_or_else(|| call.ts.clone());
        let mut response = head("response", &ts, next(call.session));
        if let Some(what) = &call.injected {
            response.insert("injected".into(), json!(what));
        }
        if let Some(ms) = call.duration_ms {
            response.insert("duration_ms".into(), json!(ms));
        }
        let key = match call.status {
            Status::Answered | Status::Running => "result",
            Status::Failed(_) | Status::Cancelled => "error",
        };
        response.insert(key.into(), answer.clone());
        writeln!(out, "{}", Value::Object(response))?;
    }
    Ok(live.calls().len())
}

/// `ts` plus `ms`, written as the recorder writes times; `None` when `ts` does not
/// read.
fn answered_at(ts: &str, ms: Option<f64>) -> Option<String> {
    let sent = chrono::DateTime::parse_from_rfc3339(ts).ok()?;
    let took = chrono::Duration::microseconds((ms? * 1e3).round() as i64);
    Some(
        (sent + took)
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Entry;

    #[test]
    fn the_calls_are_written_as_a_session_log_reads() {
        let mut live = Live::new();
        for line in [
            r#"{"v":1,"ts":"2026-11-26T09:00:01.000000Z","session":"s-a","seq":1,"type":"request","call":1,"tool":"structs_query_player","arguments":{"player_id":"1-1"}}"#,
            r#"{"v":1,"session":"s-b","seq":1,"type":"request","call":1,"tool":"structs_query_planet","arguments":{"planet_id":"2-1"}}"#,
            r#"{"v":1,"session":"s-a","seq":2,"type":"response","call":1,"tool":"structs_query_player","duration_ms":1.5,"result":{"ok":true}}"#,
            r#"{"v":1,"session":"s-b","seq":2,"type":"response","call":1,"tool":"structs_query_planet","duration_ms":2,"injected":"error RATE_LIMIT_EXCEEDED (rule 1)","error":{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down"}}}"#,
            r#"{"v":1,"session":"s-a","seq":3,"type":"request","call":2,"tool":"structs_query_guild","arguments":{}}"#,
        ] {
            assert!(live.line(line.as_bytes()));
        }
        let mut out = Vec::new();
        assert_eq!(write_calls(&live, &mut out).unwrap(), 3);
        let entries: Vec<Entry> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // Request and response of each call, the running one's request alone.
        let shape: Vec<(&str, Option<u64>, u64)> = entries
            .iter()
            .map(|e| (e.session.as_str(), e.call, e.seq))
            .collect();
        assert_eq!(
            shape,
            [
                ("s-a", Some(1), 1),
                ("s-a", Some(1), 2),
                ("s-b", Some(1), 1),
                ("s-b", Some(1), 2),
                ("s-a", Some(2), 3)
            ]
        );
        assert_eq!(entries[0].arguments, Some(json!({"player_id": "1-1"})));
        assert_eq!(entries[1].result, Some(json!({"ok": true})));
        assert_eq!(entries[1].ts, "2026-11-26T09:00:01.001500Z");
        assert_eq!(entries[1].duration_ms, Some(1.5));
        assert_eq!(
            entries[3].error.as_ref().unwrap()["error"]["code"],
            "RATE_LIMIT_EXCEEDED"
        );
        assert_eq!(
            entries[3].injected.as_deref(),
            Some("error RATE_LIMIT_EXCEEDED (rule 1)")
        );
        assert_eq!(entries[4].tool.as_deref(), Some("structs_query_guild"));
    }

    #[test]
    fn a_new_log_replaces_the_last_one_and_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let mut live = Live::new();
        live.line(br#"{"session":"s","type":"request","call":1,"tool":"t","arguments":{}}"#);
        let mut exports = Exports::default();
        let (first, n) = exports.write(&live).unwrap();
        assert_eq!(n, 1);
        let mode = std::fs::metadata(&first).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let (second, _) = exports.write(&live).unwrap();
        assert_ne!(first, second);
        assert!(
            !first.exists(),
            "the last log is removed when the next is written"
        );
        assert_eq!(exports.last(), Some(second.as_path()));
        drop(exports);
        assert!(!second.exists(), "and the last one when the console closes");
    }
}
