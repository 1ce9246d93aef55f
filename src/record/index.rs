//! An index of a session log's calls, built by streaming the file once on a thread of
//! its own, so a log of any size opens at once: the first calls are there as soon as
//! their lines are read, the rest arrive while the reader goes on.
//!
//! The index keeps, per call, where its request and response lines are (offset and
//! length), the tool, the session, the duration and whether it failed: about 80 bytes,
//! never the arguments or the results. A call's lines are read back from the file when
//! it is looked at ([`LogIndex::entry`]).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::{Entry, Kind, Problem};

/// Problems kept (all are counted).
const PROBLEMS_KEPT: usize = 100;

/// Where one line is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub offset: u64,
    pub len: u32,
    /// The line's number, from 1.
    pub line: u64,
}

/// One call of the log: its request and, once read, its response.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Call {
    /// Index into [`Snapshot::sessions`].
    pub session: u32,
    /// The call's number within its session.
    pub call: u64,
    /// Index into [`Snapshot::tools`].
    pub tool: u16,
    pub request: Span,
    pub response: Option<Span>,
    /// Milliseconds since the log's first line, when the request's time reads.
    pub at_ms: Option<f64>,
    pub duration_ms: Option<f64>,
    /// The response is an error.
    pub failed: bool,
    /// The response came from a rule or a breakpoint, not the server.
    pub injected: bool,
}

/// A call's time as the timeline draws it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub at_ms: Option<f64>,
    /// None while it has no response.
    pub duration_ms: Option<f64>,
    pub failed: bool,
    pub injected: bool,
}

/// What the index holds so far.
#[derive(Debug, Default)]
struct State {
    calls: Vec<Call>,
    sessions: Vec<String>,
    tools: Vec<String>,
    notifications: u64,
    orphans: u64,
    problems: Vec<Problem>,
    problem_count: u64,
    /// When a call asked for input or its task reported (ms since the first line), by row.
    marks: HashMap<usize, Vec<f64>>,
    bytes_read: u64,
    done: bool,
    error: Option<String>,
}

/// A session log's index, filled by a background reader.
#[derive(Clone)]
pub struct LogIndex {
    path: PathBuf,
    total_bytes: u64,
    state: Arc<RwLock<State>>,
    stop: Arc<AtomicBool>,
}

/// The figures of the index at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub calls: usize,
    pub sessions: usize,
    pub notifications: u64,
    pub orphans: u64,
    pub problems: u64,
    pub bytes_read: u64,
    pub total_bytes: u64,
    pub done: bool,
    pub error: Option<String>,
}

/// The head of a line: everything but the arguments and the result, which are skipped
/// without being kept.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type")]
    kind: Kind,
    #[serde(default, borrow)]
    session: std::borrow::Cow<'a, str>,
    #[serde(default)]
    call: Option<u64>,
    #[serde(default, borrow)]
    tool: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    ts: std::borrow::Cow<'a, str>,
    #[serde(default)]
    duration_ms: Option<f64>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(default)]
    injected: Option<IgnoredAny>,
}

impl LogIndex {
    /// Opens `path` and starts indexing it on a thread; returns at once.
    pub fn open(path: &Path) -> std::io::Result<LogIndex> {
        let (index, file) = LogIndex::empty(path)?;
        let worker = index.clone();
        std::thread::Builder::new()
            .name("log-index".into())
            .spawn(move || worker.build(file))?;
        Ok(index)
    }

    /// Opens and indexes `path` on this thread (for tests and tools).
    pub fn open_blocking(path: &Path) -> std::io::Result<LogIndex> {
        let (index, file) = LogIndex::empty(path)?;
        index.build(file);
        Ok(index)
    }

    /// An index of nothing yet over `path`, and the file to read it from.
    fn empty(path: &Path) -> std::io::Result<(LogIndex, std::fs::File)> {
        let file = std::fs::File::open(path)?;
        let index = LogIndex {
            path: path.to_path_buf(),
            total_bytes: file.metadata()?.len(),
            state: Arc::default(),
            stop: Arc::default(),
        };
        Ok((index, file))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops the reader (the console closed the log).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn progress(&self) -> Progress {
        let s = self.read();
        Progress {
            calls: s.calls.len(),
            sessions: s.sessions.len(),
            notifications: s.notifications,
            orphans: s.orphans,
            problems: s.problem_count,
            bytes_read: s.bytes_read,
            total_bytes: self.total_bytes,
            done: s.done,
            error: s.error.clone(),
        }
    }

    /// The number of calls indexed so far.
    pub fn len(&self) -> usize {
        self.read().calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `from..from + n` (fewer at the end), with their tool and session names.
    pub fn window(&self, from: usize, n: usize) -> Vec<(Call, String, String)> {
        let s = self.read();
        let end = from.saturating_add(n).min(s.calls.len());
        s.calls
            .get(from..end)
            .unwrap_or_default()
            .iter()
            .map(|c| {
                (
                    *c,
                    s.tools[c.tool as usize].clone(),
                    s.sessions[c.session as usize].clone(),
                )
            })
            .collect()
    }

    /// Every call's time and end as the timeline draws it: (start, duration, failed,
    /// injected) from row `from` on, with the marks of each (rounds, task reports).
    pub fn timings(&self, from: usize) -> (Vec<Timing>, HashMap<usize, Vec<f64>>) {
        let s = self.read();
        let rows = s
            .calls
            .get(from..)
            .unwrap_or_default()
            .iter()
            .map(|c| Timing {
                at_ms: c.at_ms,
                duration_ms: c.duration_ms.filter(|_| c.response.is_some()),
                failed: c.failed,
                injected: c.injected,
            })
            .collect();
        let marks = s
            .marks
            .iter()
            .filter(|(row, _)| **row >= from)
            .map(|(row, m)| (*row, m.clone()))
            .collect();
        (rows, marks)
    }

    pub fn call(&self, i: usize) -> Option<(Call, String, String)> {
        self.window(i, 1).pop()
    }

    /// The problems found so far (the first hundred).
    pub fn problems(&self) -> Vec<Problem> {
        self.read().problems.clone()
    }

    /// The first call at or after `from` (wrapping) whose tool is `tool`.
    pub fn next_of_tool(&self, from: usize, tool: &str) -> Option<usize> {
        let s = self.read();
        let t = s.tools.iter().position(|n| n == tool)? as u16;
        let n = s.calls.len();
        (0..n)
            .map(|k| (from + k) % n)
            .find(|&i| s.calls[i].tool == t)
    }

    /// Reads one line of the log back as an entry.
    pub fn entry(&self, span: Span) -> std::io::Result<Entry> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(&self.path)?;
        file.seek(SeekFrom::Start(span.offset))?;
        let mut buf = vec![0; span.len as usize];
        file.read_exact(&mut buf)?;
        serde_json::from_slice(&buf).map_err(std::io::Error::other)
    }

    /// What the agent answered in each round of `call` (the `input_responses` of its
    /// `round` lines, in order; a round never answered is left out): the lines
    /// between its request and its response, read back from the file. A call with no
    /// response yet has none.
    ///
    /// # Errors
    ///
    /// When the file cannot be read back.
    pub fn answers_of(
        &self,
        call: &Call,
        session: &str,
    ) -> std::io::Result<Vec<serde_json::Value>> {
        use std::io::{BufRead, Read, Seek, SeekFrom};
        let Some(response) = call.response else {
            return Ok(Vec::new());
        };
        let start = call.request.offset + u64::from(call.request.len);
        let Some(between) = response.offset.checked_sub(start) else {
            return Ok(Vec::new());
        };
        let mut file = std::fs::File::open(&self.path)?;
        file.seek(SeekFrom::Start(start))?;
        let lines = std::io::BufReader::new(file.take(between));
        let mut answers = Vec::new();
        for line in lines.split(b'\n') {
            let line = line?;
            // Only round lines are parsed whole.
            const ROUND: &[u8] = b"\"type\":\"round\"";
            if memchr::memmem::find(&line, ROUND).is_none() {
                continue;
            }
            let Ok(entry) = serde_json::from_slice::<Entry>(&line) else {
                continue;
            };
            if entry.kind == super::Kind::Round
                && entry.session == session
                && entry.call == Some(call.call)
                && let Some(given) = entry.input_responses.filter(|v| !v.is_null())
            {
                answers.push(given);
            }
        }
        Ok(answers)
    }

    /// Reads the file line by line into the index, publishing as it goes, until its end,
    /// a read error or [`LogIndex::stop`].
    fn build(&self, file: std::fs::File) {
        let mut input = std::io::BufReader::with_capacity(1 << 16, file);
        let mut buf = Vec::new();
        let mut offset = 0u64;
        let mut line = 0u64;
        let mut reader = Reader::default();
        let mut error = None;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            buf.clear();
            let n = match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            };
            let start = offset;
            offset += n as u64;
            line += 1;
            reader.line(&buf, start, line);
            // Publish often at first (the first screen), then in larger batches.
            let due = if reader.published < 1000 { 64 } else { 4096 };
            if reader.batch.len() + reader.answered.len() + reader.problems.len() >= due {
                reader.published += reader.batch.len();
                self.publish(&mut reader, offset, false, None);
            }
        }
        self.publish(&mut reader, offset, true, error);
    }

    /// Moves what `reader` gathered into the index, with the bytes read so far; `done`
    /// marks the end of the file (or of reading it, with `error`).
    fn publish(&self, reader: &mut Reader, bytes_read: u64, done: bool, error: Option<String>) {
        let mut s = self.state.write().unwrap_or_else(|e| e.into_inner());
        s.sessions.append(&mut reader.new_names.0);
        s.tools.append(&mut reader.new_names.1);
        s.calls.append(&mut reader.batch);
        for (row, span, duration, (failed, injected)) in reader.answered.drain(..) {
            if let Some(c) = s.calls.get_mut(row) {
                c.response = Some(span);
                c.duration_ms = duration;
                c.failed = failed;
                c.injected = injected;
            }
        }
        for (row, at) in reader.marks.drain(..) {
            s.marks.entry(row).or_default().push(at);
        }
        s.problem_count += reader.problems.len() as u64;
        let room = PROBLEMS_KEPT.saturating_sub(s.problems.len());
        s.problems.extend(reader.problems.drain(..).take(room));
        s.notifications = reader.counts.0;
        s.orphans = reader.counts.1;
        s.bytes_read = bytes_read;
        if done {
            s.done = true;
            s.error = error;
        }
    }
}

/// A response to a call already published: its row, its line, its duration, and
/// whether it failed and was injected.
type Answered = (usize, Span, Option<f64>, (bool, bool));

/// The reader's side of the index: what it has gathered since it last published, and
/// what it keeps to name sessions and tools and to pair responses with their requests.
/// Calls are published in batches, so the console's reads of the index are not held up
/// by a lock taken per line.
#[derive(Default)]
struct Reader {
    first_ts: Option<chrono::DateTime<chrono::FixedOffset>>,
    sessions: HashMap<String, u32>,
    tools: HashMap<String, u16>,
    /// (session, call) → row of a request not answered yet.
    waiting: HashMap<(u32, u64), usize>,
    /// Calls not published yet.
    batch: Vec<Call>,
    /// Responses to calls already published: (row, span, duration, failed).
    answered: Vec<Answered>,
    /// Rounds and task reports not published yet: (row, ms since the first line).
    marks: Vec<(usize, f64)>,
    /// Session and tool names not published yet.
    new_names: (Vec<String>, Vec<String>),
    /// Notifications, orphans.
    counts: (u64, u64),
    problems: Vec<Problem>,
    /// Calls published so far.
    published: usize,
}

impl Reader {
    /// Takes in line number `line`, read at `start` (`buf`, with its newline when it has
    /// one); a blank line is skipped.
    fn line(&mut self, buf: &[u8], start: u64, line: u64) {
        let whole = buf.last() == Some(&b'\n');
        let text = buf.trim_ascii();
        if text.is_empty() {
            return;
        }
        let lead = buf.len() - buf.trim_ascii_start().len();
        let span = Span {
            offset: start + lead as u64,
            len: text.len() as u32,
            line,
        };
        match serde_json::from_slice::<Head>(text) {
            Err(e) => self.problems.push(if whole {
                Problem::BadLine {
                    line,
                    bytes: text.len(),
                    error: e.to_string(),
                }
            } else {
                Problem::TornLastLine {
                    line,
                    bytes: text.len(),
                }
            }),
            Ok(head) => {
                let session = self.session(&head.session);
                match head.kind {
                    Kind::Notification => self.counts.0 += 1,
                    // A round belongs to its call, whose lines are the request and the
                    // response.
                    Kind::Round | Kind::Task => self.mark(&head, session),
                    Kind::Request => self.request(&head, session, span),
                    Kind::Response => self.response(&head, session, span),
                }
            }
        }
    }

    /// The number of session `name`, given when first seen.
    fn session(&mut self, name: &str) -> u32 {
        let next_session = self.sessions.len() as u32;
        *self.sessions.entry(name.to_string()).or_insert_with(|| {
            self.new_names.0.push(name.to_string());
            next_session
        })
    }

    /// The number of tool `name`, given when first seen.
    fn tool(&mut self, name: &str) -> u16 {
        let next_tool = self.tools.len() as u16;
        *self.tools.entry(name.to_string()).or_insert_with(|| {
            self.new_names.1.push(name.to_string());
            next_tool
        })
    }

    /// A request: a new call, waiting for its response.
    fn request(&mut self, head: &Head<'_>, session: u32, span: Span) {
        let tool = self.tool(head.tool.as_deref().unwrap_or("?"));
        let at = chrono::DateTime::parse_from_rfc3339(&head.ts).ok();
        if self.first_ts.is_none() {
            self.first_ts = at;
        }
        let at_ms = match (at, self.first_ts) {
            (Some(at), Some(first)) => {
                Some((at - first).num_microseconds().unwrap_or(0) as f64 / 1e3)
            }
            _ => None,
        };
        let row = self.published + self.batch.len();
        if let Some(call) = head.call {
            self.waiting.insert((session, call), row);
        }
        self.batch.push(Call {
            session,
            call: head.call.unwrap_or(0),
            tool,
            request: span,
            response: None,
            at_ms,
            duration_ms: None,
            failed: false,
            injected: false,
        });
    }

    /// A round or a task's report: a mark on its call, at its time.
    fn mark(&mut self, head: &Head<'_>, session: u32) {
        let Some(&row) = head.call.and_then(|c| self.waiting.get(&(session, c))) else {
            return;
        };
        let at = chrono::DateTime::parse_from_rfc3339(&head.ts).ok();
        if let (Some(at), Some(first)) = (at, self.first_ts) {
            let ms = (at - first).num_microseconds().unwrap_or(0) as f64 / 1e3;
            self.marks.push((row, ms));
        }
    }

    /// A response: its call's, whether that call is published yet or not; one no call
    /// waits for is an orphan.
    fn response(&mut self, head: &Head<'_>, session: u32, span: Span) {
        match head.call.and_then(|c| self.waiting.remove(&(session, c))) {
            Some(row) if row >= self.published => {
                let c = &mut self.batch[row - self.published];
                c.response = Some(span);
                c.duration_ms = head.duration_ms;
                c.failed = head.error.is_some();
                c.injected = head.injected.is_some();
            }
            Some(row) => self.answered.push((
                row,
                span,
                head.duration_ms,
                (head.error.is_some(), head.injected.is_some()),
            )),
            None => self.counts.1 += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("structs-index-{name}-{}", std::process::id()))
    }

    #[test]
    fn calls_pair_with_their_responses_across_sessions() {
        let path = temp("pairs");
        let mut f = std::fs::File::create(&path).unwrap();
        let lines = [
            r#"{"v":1,"ts":"2026-01-01T00:00:00Z","session":"a","seq":1,"type":"request","call":1,"tool":"t1","arguments":{"x":[1,2,3]}}"#,
            r#"{"v":1,"ts":"2026-01-01T00:00:00.5Z","session":"b","seq":1,"type":"request","call":1,"tool":"t2","arguments":{}}"#,
            r#"{"v":1,"ts":"2026-01-01T00:00:01Z","session":"b","seq":2,"type":"response","call":1,"tool":"t2","duration_ms":2.5,"error":{"error":{"code":"X"}}}"#,
            r#"{"v":1,"ts":"2026-01-01T00:00:01Z","session":"a","seq":2,"type":"notification","method":"notifications/progress","params":{}}"#,
            r#"{"v":1,"ts":"2026-01-01T00:00:02Z","session":"a","seq":3,"type":"response","call":1,"tool":"t1","duration_ms":1.0,"result":{"big":"yes"}}"#,
            r#"{"v":1,"ts":"2026-01-01T00:00:02Z","session":"c","seq":1,"type":"response","call":9,"tool":"t1","result":{}}"#,
            r#"not json at all"#,
        ];
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
        write!(
            f,
            r#"{{"v":1,"ts":"2026-01-01T00:00:03Z","session":"a","type":"req"#
        )
        .unwrap();
        drop(f);

        let index = LogIndex::open_blocking(&path).unwrap();
        let p = index.progress();
        assert!(p.done);
        assert_eq!(
            (p.calls, p.sessions, p.notifications, p.orphans),
            (2, 3, 1, 1)
        );
        assert_eq!(p.problems, 2);
        assert_eq!(p.bytes_read, p.total_bytes);
        let calls = index.window(0, 10);
        let (a, tool, session) = &calls[0];
        assert_eq!((tool.as_str(), session.as_str()), ("t1", "a"));
        assert_eq!(a.duration_ms, Some(1.0));
        assert!(!a.failed);
        assert_eq!(a.at_ms, Some(0.0));
        let (b, tool, _) = &calls[1];
        assert_eq!(tool, "t2");
        assert!(b.failed);
        assert_eq!(b.at_ms, Some(500.0));
        // The lines read back whole from their spans.
        let req = index.entry(a.request).unwrap();
        assert_eq!(req.arguments, Some(serde_json::json!({"x": [1, 2, 3]})));
        let resp = index.entry(a.response.unwrap()).unwrap();
        assert_eq!(resp.result, Some(serde_json::json!({"big": "yes"})));
        assert_eq!(a.response.unwrap().line, 5);
        let problems = index.problems();
        assert!(matches!(problems[0], Problem::BadLine { line: 7, .. }));
        assert!(matches!(problems[1], Problem::TornLastLine { line: 8, .. }));
        assert_eq!(index.next_of_tool(1, "t1"), Some(0));
        assert_eq!(index.next_of_tool(0, "t2"), Some(1));
        assert_eq!(index.next_of_tool(0, "none"), None);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn responses_answer_calls_already_published() {
        // More requests than one batch before their responses come.
        let path = temp("batches");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for call in 1..=300 {
            writeln!(
                f,
                r#"{{"session":"s","type":"request","call":{call},"tool":"t"}}"#
            )
            .unwrap();
        }
        for call in (1..=300).rev() {
            writeln!(
                f,
                r#"{{"session":"s","type":"response","call":{call},"tool":"t","duration_ms":{call}}}"#
            )
            .unwrap();
        }
        drop(f);
        let index = LogIndex::open(&path).unwrap();
        while !index.progress().done {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let calls = index.window(0, 400);
        assert_eq!(calls.len(), 300);
        for (i, (c, _, _)) in calls.iter().enumerate() {
            assert_eq!(c.call, i as u64 + 1);
            assert_eq!(c.duration_ms, Some(i as f64 + 1.0));
            assert!(c.response.is_some());
        }
        let _ = std::fs::remove_file(&path);
    }
}
