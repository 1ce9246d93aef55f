//! `diff` and `check`: two session logs compared, and one checked against expectations.
//! Both read the logs only (no world, no network) and exit 0 when all is well, 1 when the
//! runs differ or an expectation is broken, 2 when something does not read.

use std::path::Path;
use std::process::ExitCode;

use crate::args::{Cli, Command};
use structs_console::record::calls::{self, CallRecord, Run};
use structs_console::record::{Redaction, compare, expect, filter::Filter};

/// `diff`, `check` and `report`, when the command is one of them. Each hides what the
/// `[redact]` rules of `--config` find in what it shows, as the recorder does.
pub fn run(cli: &Cli) -> Option<ExitCode> {
    let command = cli.command.as_ref();
    if !matches!(
        command,
        Some(Command::Diff { .. } | Command::Report { .. } | Command::Check { .. })
    ) {
        return None;
    }
    let rules = match crate::redaction(cli) {
        Ok(rules) => rules,
        Err(e) => return Some(failed(format!("{e:#}"))),
    };
    let rules = &*rules;
    if let Some(Command::Diff {
        a,
        b,
        json,
        filter,
        context,
        all,
    }) = command
    {
        let context = (!*all).then_some(*context);
        return Some(diff(rules, a, b, *json, filter.as_deref(), context));
    }
    if let Some(Command::Report {
        file,
        other,
        output,
        expect,
    }) = command
    {
        return Some(report(
            rules,
            file,
            other.as_deref(),
            output,
            expect.as_deref(),
        ));
    }
    if let Some(Command::Check {
        file,
        expect,
        junit,
        filter,
        follow,
    }) = command
    {
        return Some(check(
            rules,
            file,
            expect,
            junit.as_deref(),
            filter.as_deref(),
            *follow,
        ));
    }
    None
}

/// Says `message` on stderr and gives exit code 2.
fn failed(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// Reads `path` as a run, keeping the calls `filter` matches, with what `rules` find
/// in their arguments hidden.
fn read(rules: &Redaction, path: &Path, filter: &Filter) -> Result<Run, String> {
    let mut run = calls::read(path, &filter.needles)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !filter.is_empty() {
        run.calls.retain(|c| filter.matches(c));
    }
    for c in &mut run.calls {
        hide(rules, c);
    }
    if run.problem_count > 0 {
        eprintln!(
            "{}: {} lines did not read and are left out ({})",
            path.display(),
            run.problem_count,
            run.problems
                .first()
                .map(ToString::to_string)
                .unwrap_or_default()
        );
    }
    Ok(run)
}

/// A call's arguments with what `rules` find hidden.
fn hide(rules: &Redaction, call: &mut CallRecord) {
    if !call.arguments.is_null() {
        rules.apply(&mut call.arguments, "", &mut Vec::new());
    }
}

fn parse_filter(filter: Option<&str>) -> Result<Filter, String> {
    Filter::parse(filter.unwrap_or_default()).map_err(|e| format!("--filter: {e}"))
}

/// `diff A B`.
pub fn diff(
    rules: &Redaction,
    a: &Path,
    b: &Path,
    json: bool,
    filter: Option<&str>,
    context: Option<usize>,
) -> ExitCode {
    let filter = match parse_filter(filter) {
        Ok(f) => f,
        Err(e) => return failed(e),
    };
    // The two logs are read side by side.
    let (ra, rb) = std::thread::scope(|s| {
        let ra = s.spawn(|| read(rules, a, &filter));
        let rb = read(rules, b, &filter);
        (
            ra.join()
                .unwrap_or_else(|_| Err("the reader stopped".into())),
            rb,
        )
    });
    let (ra, rb) = match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(e), _) | (_, Err(e)) => return failed(e),
    };
    let cmp = compare::compare(&ra.calls, &rb.calls);
    let (na, nb) = (a.display().to_string(), b.display().to_string());
    let sides: [(&str, &[CallRecord]); 2] = [(&na, &ra.calls), (&nb, &rb.calls)];
    if json {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        if let Err(e) = compare::write_json(&cmp, sides[0], sides[1], &mut out)
            .and_then(|()| std::io::Write::flush(&mut out))
        {
            return failed(format!("cannot write the comparison: {e}"));
        }
    } else {
        print!("{}", compare::render(&cmp, sides[0], sides[1], context));
    }
    if cmp.same() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `check FILE --expect EXPECT.toml`.
/// (`--follow`: FILE is a live feed.)
pub fn check(
    rules_of_redaction: &Redaction,
    file: &Path,
    expect: &Path,
    junit: Option<&Path>,
    filter: Option<&str>,
    follow: bool,
) -> ExitCode {
    let text = match std::fs::read_to_string(expect) {
        Ok(t) => t,
        Err(e) => return failed(format!("cannot read {}: {e}", expect.display())),
    };
    let (expectations, rules) = match expect::Expectations::parse(&text) {
        Ok(parsed) => parsed,
        Err(e) => return failed(format!("{}: {e}", expect.display())),
    };
    let filter = match parse_filter(filter) {
        Ok(f) => f,
        Err(e) => return failed(e),
    };
    // One reader looks for the words of the rules and of the filter alike.
    let mut words = expect::Expectations::needles(&rules);
    for w in &filter.needles {
        if !words.contains(w) {
            words.push(w.clone());
        }
    }
    let (mut rules, mut filter) = (rules, filter);
    for f in rules.iter_mut().chain(std::iter::once(&mut filter)) {
        f.rebase(&words);
    }
    let run = if follow {
        match followed(
            rules_of_redaction,
            file,
            &filter,
            &expectations,
            &rules,
            &words,
        ) {
            Ok(run) => run,
            Err(e) => return failed(e),
        }
    } else {
        match read(rules_of_redaction, file, &filter) {
            Ok(run) => run,
            Err(e) => return failed(e),
        }
    };
    let verdicts = expectations.check(&run, &rules);
    let log = file.display().to_string();
    print!("{}", expect::render(&verdicts, &log));
    if let Some(path) = junit {
        let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S").to_string();
        if let Err(e) = std::fs::write(path, expect::junit(&verdicts, &log, &now)) {
            return failed(format!("cannot write {}: {e}", path.display()));
        }
    }
    if verdicts.iter().all(|v| v.passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Reads an expectations file and checks `run` against it.
fn verdicts(
    rules_of_redaction: &Redaction,
    expect: &Path,
    file: &Path,
) -> Result<Vec<expect::Verdict>, String> {
    let text = std::fs::read_to_string(expect)
        .map_err(|e| format!("cannot read {}: {e}", expect.display()))?;
    let (expectations, rules) =
        expect::Expectations::parse(&text).map_err(|e| format!("{}: {e}", expect.display()))?;
    let words = expect::Expectations::needles(&rules);
    let mut run =
        calls::read(file, &words).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    for c in &mut run.calls {
        hide(rules_of_redaction, c);
    }
    Ok(expectations.check(&run, &rules))
}

/// `report FILE [OTHER] -o PATH [--expect EXPECT.toml]`.
pub fn report(
    rules: &Redaction,
    file: &Path,
    other: Option<&Path>,
    output: &Path,
    expect: Option<&Path>,
) -> ExitCode {
    use structs_console::record::report;
    let none = Filter::default();
    let run = match read(rules, file, &none) {
        Ok(run) => run,
        Err(e) => return failed(e),
    };
    let texts = match report::texts(file, rules) {
        Ok(t) => t,
        Err(e) => return failed(format!("cannot read {}: {e}", file.display())),
    };
    let other_run = match other.map(|o| read(rules, o, &none)).transpose() {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    let cmp = other_run
        .as_ref()
        .map(|o| compare::compare(&run.calls, &o.calls));
    let checked = match expect.map(|e| verdicts(rules, e, file)).transpose() {
        Ok(v) => v,
        Err(e) => return failed(e),
    };
    let other_name = other.map(|o| o.display().to_string()).unwrap_or_default();
    let log = file.display().to_string();
    let page = report::render(&report::Report {
        log: &log,
        run: &run,
        texts: &texts,
        other: other_run
            .as_ref()
            .zip(cmp.as_ref())
            .map(|(o, c)| (other_name.as_str(), o, c)),
        verdicts: checked.as_deref(),
    });
    if let Err(e) = std::fs::write(output, page) {
        return failed(format!("cannot write {}: {e}", output.display()));
    }
    println!("wrote {}", output.display());
    ExitCode::SUCCESS
}

/// Whether a broken verdict stays broken however the run goes on: a limit passed, a
/// forbidden tool, an argument, the order, a refused confirmation. (A minimum, a
/// required tool and a percentile can still come right.)
fn broken_for_good(v: &expect::Verdict) -> bool {
    !v.passed
        && !v.name.ends_with(".min")
        && !v.name.starts_with("tools.required")
        && !v.name.starts_with("duration.p")
}

/// Reads the live feed at `what` call by call until it ends, or until an expectation
/// is broken for good; returns the run so far.
fn followed(
    redaction: &Redaction,
    what: &Path,
    filter: &Filter,
    expectations: &expect::Expectations,
    rules: &[Filter],
    words: &[String],
) -> Result<Run, String> {
    use structs_console::record::calls::{Followed, Follower};
    use structs_console::record::live::Fed;
    let (tx, rx) = std::sync::mpsc::channel();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _reading = structs_console::mcp::control::open_feed(what, tx, stop.clone())
        .map_err(|e| format!("cannot follow {}: {e:#}", what.display()))?;
    let mut follower = Follower::new(words);
    let mut run = Run::default();
    let mut fed = rx.recv().ok();
    while let Some(item) = fed {
        let line = match item {
            Fed::Line(line) => line,
            Fed::Ended(why) => {
                eprintln!("{why}");
                break;
            }
        };
        let before = run.calls.len();
        for out in follower.push(&line) {
            if let Followed::Call(mut call, _) = out
                && (filter.is_empty() || filter.matches(&*call))
            {
                hide(redaction, &mut call);
                run.calls.push(*call);
            }
        }
        // Judged once what has come is in, not line by line.
        fed = rx.try_recv().ok();
        if fed.is_none() {
            if run.calls.len() > before
                && expectations.check(&run, rules).iter().any(broken_for_good)
            {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                return Ok(run);
            }
            fed = rx.recv().ok();
        }
    }
    Ok(run)
}
