//! The layering rule, enforced: every `crate::` path in `src/` points down the layers
//! (faces → assembly → call pipeline → tools → domain → leaves), or to a module listed
//! after it in its own layer. ARCHITECTURE.md states the same rule and order.
//!
//! Below the top level, two rooms rules hold: no console tab (`src/tui/panes/X`) uses
//! another tab, and none of the four MCP rooms (`src/mcp/{server,client,proxy,control}`)
//! uses another room's modules (only the items at a room's root, its public face);
//! `src/mcp/wire` uses no room at all. No two modules of one folder import each other,
//! directly or around a loop. And functions read in one screen: the count of those
//! over 100 lines may only fall.

use std::collections::BTreeSet;
use std::path::Path;

/// Top to bottom. Within a layer, a module may use the modules listed after it.
const LAYERS: &[(&str, &[&str])] = &[
    ("faces", &["tui", "mcp", "rest", "guard"]),
    (
        "assembly",
        &[
            "assembly",
            "config",
            "record",
            "nats",
            "briefing",
            "telemetry",
        ],
    ),
    ("call pipeline", &["core"]),
    ("tools", &["tools"]),
    (
        "domain",
        &[
            "plan",
            "trees",
            "handles",
            "store",
            "references",
            "docs",
            "source",
            "chain",
            "game",
            "events",
        ],
    ),
    (
        "leaves",
        &[
            "context", "error", "entity", "json", "text", "clock", "throttle", "pow", "random",
        ],
    ),
];

/// (layer, position in the layer) of a top-level module.
fn rank(module: &str) -> Option<(usize, usize)> {
    LAYERS
        .iter()
        .enumerate()
        .find_map(|(l, (_, mods))| mods.iter().position(|m| *m == module).map(|p| (l, p)))
}

fn ident_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The top-level modules `text` names through `crate::`: paths (`crate::plan::exec`)
/// and groups (`use crate::{plan, tools::Env}`). Line comments are left out.
fn modules_used(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Each item of the group at depth 0 starts with a module name.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_ascii_alphabetic() || c == '_') => {
                        out.insert(ident_at(&group[i..]).to_string());
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident_at(rest);
            if !name.is_empty() {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// What is wrong with `module` using what `text` names.
fn violations(module: &str, text: &str) -> Vec<String> {
    let Some(here) = rank(module) else {
        return vec![format!("{module} is in no layer: add it to LAYERS")];
    };
    let mut out = Vec::new();
    for used in modules_used(text) {
        if used == module || used == "self" {
            continue;
        }
        match rank(&used) {
            None => out.push(format!("{module} uses {used}, which is in no layer")),
            Some(there) if there.0 < here.0 || (there.0 == here.0 && there.1 <= here.1) => {
                out.push(format!(
                    "{module} ({}) uses {used} ({}), which is not below it",
                    LAYERS[here.0].0, LAYERS[there.0].0
                ));
            }
            Some(_) => {}
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_import_points_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in files {
        let rel = path.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a path");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // The crate root and the binary sit above every layer.
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read a source file");
        for v in violations(&module, &text) {
            problems.push(format!("{}: {v}", rel.display()));
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} files were read");
    assert!(
        problems.is_empty(),
        "imports against the layering rule:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_rule_catches_an_import_that_points_up() {
    let domain = "use crate::entity::EntityId;\nuse crate::core::Core;\n";
    assert_eq!(
        violations("plan", domain),
        vec!["plan (domain) uses core (call pipeline), which is not below it"]
    );
    let grouped = "use crate::{\n    error::ToolError,\n    tools::{Env, Registry},\n};";
    assert_eq!(
        violations("trees", grouped),
        vec!["trees (domain) uses tools (tools), which is not below it"]
    );
    // Within a layer, only what is listed after the module.
    assert_eq!(
        violations("events", "fn f() { crate::plan::exec::lock(x) }"),
        vec!["events (domain) uses plan (domain), which is not below it"]
    );
    // A comment is not an import; a module in no layer is named.
    assert!(violations("plan", "// crate::core::Core\nuse crate::source::World;").is_empty());
    assert_eq!(
        violations("plan", "use crate::newthing::X;"),
        vec!["plan uses newthing, which is in no layer"]
    );
}

/// The module path of a file under `src/` (`tui/panes/live/mod.rs` is
/// `["tui", "panes", "live"]`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// Every path `text` names through `crate::`, `super::` or `self::`, made absolute
/// from `here` (the naming file's module path). A group (`a::{b, c::d}`) gives one
/// path per item; line comments are left out, and so is a file's inline test module
/// (its `super` is not the file's).
fn paths_used(here: &[String], text: &str) -> Vec<Vec<String>> {
    let text = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or(text);
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| rest.starts_with(p));
        let boundary = at == 0
            || !(bytes[at - 1].is_ascii_alphanumeric()
                || bytes[at - 1] == b'_'
                || bytes[at - 1] == b':');
        if !(starts && boundary) {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        // The path's segments, up to a group or the end of the path.
        let mut segments = Vec::new();
        let mut i = 0;
        loop {
            let name = ident_at(&rest[i..]);
            if name.is_empty() {
                break;
            }
            segments.push(name.to_string());
            i += name.len();
            if rest[i..].starts_with("::") {
                i += 2;
            } else {
                break;
            }
        }
        let mut items: Vec<Vec<String>> = vec![Vec::new()];
        if rest[i..].starts_with('{') {
            items.clear();
            let group = &rest[i + 1..];
            let (mut depth, mut start) = (0, true);
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_ascii_alphabetic() || c == '_') => {
                        let item: Vec<String> = group[k..]
                            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                            .next()
                            .unwrap_or("")
                            .split("::")
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .collect();
                        items.push(item);
                        start = false;
                    }
                    _ => {}
                }
            }
        }
        for item in items {
            let mut full = segments.clone();
            full.extend(item);
            if let Some(path) = absolute(here, &full) {
                out.push(path);
            }
        }
        at += i.max(1);
    }
    out
}

/// `path` (starting with `crate`, `super` or `self`) made absolute from `here`.
fn absolute(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here[..here.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some((s, more)) = rest.split_first() {
        if s != "super" {
            break;
        }
        base.pop()?;
        rest = more;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The tab a module path is in, if any.
fn tab_of(path: &[String]) -> Option<&str> {
    match path {
        [tui, panes, tab, ..] if tui == "tui" && panes == "panes" => Some(tab.as_str()),
        _ => None,
    }
}

const ROOMS: [&str; 4] = ["server", "client", "proxy", "control"];

/// The MCP room (or `wire`) a module path is in, if any.
fn room_of(path: &[String]) -> Option<&str> {
    match path {
        [mcp, room, ..] if mcp == "mcp" && (ROOMS.contains(&room.as_str()) || room == "wire") => {
            Some(room.as_str())
        }
        _ => None,
    }
}

/// What is wrong with the file at module path `here` using what `text` names, below
/// the top level. `is_module(path)` says whether a path names a module (a file or a
/// folder under `src/`), not an item.
fn room_violations(
    here: &[String],
    text: &str,
    is_module: &dyn Fn(&[String]) -> bool,
) -> Vec<String> {
    let mut out = BTreeSet::new();
    for used in paths_used(here, text) {
        if let (Some(mine), Some(theirs)) = (tab_of(here), tab_of(&used))
            && mine != theirs
        {
            out.insert(format!("the {mine} tab uses the {theirs} tab"));
        }
        if let (Some(mine), Some(theirs)) = (room_of(here), room_of(&used))
            && mine != theirs
        {
            if mine == "wire" {
                out.insert(format!("wire uses the {theirs} room"));
            } else if theirs != "wire" && used.len() > 3 && is_module(&used[..3]) {
                out.insert(format!(
                    "the {mine} room uses {theirs}::{}, a module of the {theirs} room",
                    used[2]
                ));
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn no_tab_uses_another_and_no_mcp_room_reaches_into_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let is_module = |path: &[String]| {
        let dir = path.iter().fold(src.clone(), |p, s| p.join(s));
        dir.is_dir() || dir.with_extension("rs").is_file()
    };
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (mut problems, mut tabs, mut rooms) = (Vec::new(), 0, 0);
    for path in files {
        let rel = path.strip_prefix(&src).expect("under src");
        let here = module_path(rel);
        if tab_of(&here).is_some() {
            tabs += 1;
        }
        if room_of(&here).is_some() {
            rooms += 1;
        }
        let text = std::fs::read_to_string(&path).expect("read a source file");
        for v in room_violations(&here, &text, &is_module) {
            problems.push(format!("{}: {v}", rel.display()));
        }
    }
    assert!(
        tabs > 20 && rooms > 30,
        "only {tabs} tab files and {rooms} MCP files were read"
    );
    assert!(
        problems.is_empty(),
        "imports against the rooms rule:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_rooms_rule_catches_a_tab_using_a_tab_and_a_room_reaching_into_a_room() {
    let here = |p: &str| p.split('/').map(str::to_string).collect::<Vec<_>>();
    let modules = |path: &[String]| path.join("/") == "mcp/server/stdio";
    // A flat tab file reaching a sibling tab through `super`, and a folder tab's file
    // through `crate::` in a group.
    assert_eq!(
        room_violations(
            &here("tui/panes/handles"),
            "use super::plans::Steps;",
            &modules
        ),
        vec!["the handles tab uses the plans tab"]
    );
    assert_eq!(
        room_violations(
            &here("tui/panes/live/detail"),
            "use crate::tui::{panes::handles::Page, widgets::page::Page};",
            &modules
        ),
        vec!["the live tab uses the handles tab"]
    );
    // Within a tab, and the widgets every tab shares, are fine.
    assert!(
        room_violations(
            &here("tui/panes/live/detail"),
            "use super::super::live::feed::Watch;\nuse crate::tui::widgets::page::Page;",
            &modules
        )
        .is_empty()
    );
    // A room's root items are its public face; its modules are not.
    assert!(
        room_violations(
            &here("mcp/proxy/cli"),
            "use crate::mcp::server::McpServer;",
            &modules
        )
        .is_empty()
    );
    assert_eq!(
        room_violations(
            &here("mcp/proxy/mod"),
            "crate::mcp::server::stdio::serve(x)",
            &modules
        ),
        vec!["the proxy room uses server::stdio, a module of the server room"]
    );
    assert_eq!(
        room_violations(
            &here("mcp/wire/http"),
            "use crate::mcp::server::McpServer;",
            &modules
        ),
        vec!["wire uses the server room"]
    );
}

/// The import circles among sibling modules: for each folder, its modules (files and
/// subfolders) that reach each other through `crate::`, `super::` or `self::` paths,
/// directly or around a loop. Each circle is the folder and its modules, sorted.
fn sibling_circles(src: &Path) -> Vec<String> {
    use std::collections::BTreeMap;
    let is_module = |path: &[String]| {
        let dir = path.iter().fold(src.to_path_buf(), |p, s| p.join(s));
        dir.is_dir() || dir.with_extension("rs").is_file()
    };
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // folder -> module -> the sibling modules it uses
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(src).expect("under src");
        let mut here = module_path(rel);
        if here == ["lib"] || here == ["main"] {
            here.clear();
        }
        let text = std::fs::read_to_string(&path).expect("read a source file");
        for used in paths_used(&here, &text) {
            // The longest prefix that names a module.
            let Some(n) = (1..=used.len()).rev().find(|&n| is_module(&used[..n])) else {
                continue;
            };
            let target = &used[..n];
            let k = here.iter().zip(target).take_while(|(a, b)| a == b).count();
            if k < here.len() && k < target.len() {
                graphs
                    .entry(here[..k].to_vec())
                    .or_default()
                    .entry(here[k].clone())
                    .or_default()
                    .insert(target[k].clone());
            }
        }
    }
    let mut out = Vec::new();
    for (folder, graph) in graphs {
        // A module is in a circle when it reaches itself; the circle is every module
        // that it reaches and that reaches it.
        let reach = |from: &String| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from.clone()];
            while let Some(m) = todo.pop() {
                for next in graph.get(&m).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        todo.push(next.clone());
                    }
                }
            }
            seen
        };
        let mut circles = BTreeSet::new();
        for m in graph.keys() {
            let from_m = reach(m);
            if from_m.contains(m) {
                let circle: Vec<String> = from_m
                    .iter()
                    .filter(|o| reach(o).contains(m))
                    .cloned()
                    .collect();
                circles.insert(circle);
            }
        }
        for circle in circles {
            let folder = if folder.is_empty() {
                "crate".to_string()
            } else {
                folder.join("::")
            };
            out.push(format!("{folder}: {}", circle.join(" <-> ")));
        }
    }
    out
}

/// `LAYERS_SRC=DIR` counts the circles of another tree's `src` (an older checkout, to
/// compare), printing them; the assertion is about this one.
#[test]
fn no_two_sibling_modules_import_each_other() {
    if let Some(other) = std::env::var_os("LAYERS_SRC") {
        let circles = sibling_circles(Path::new(&other));
        println!(
            "{}: {} import circles\n{}",
            Path::new(&other).display(),
            circles.len(),
            circles.join("\n")
        );
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut circles = sibling_circles(&src);
    // The proof-of-work crate's modules too.
    let pow = Path::new(env!("CARGO_MANIFEST_DIR")).join("pow/src");
    circles.extend(
        sibling_circles(&pow)
            .into_iter()
            .map(|c| format!("structs-pow {c}")),
    );
    println!("import circles among sibling modules: {}", circles.len());
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_circle_rule_finds_a_circle() {
    let dir = std::env::temp_dir().join(format!("structs-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).expect("a folder");
    let write = |p: &str, text: &str| std::fs::write(dir.join(p), text).expect("a file");
    write("lib.rs", "mod a;");
    write("a/mod.rs", "mod x; mod y; mod z;");
    write("a/x.rs", "use super::y::Y;");
    write("a/y.rs", "use crate::a::{z::Z};");
    write("a/z.rs", "fn f() { super::x::f() }");
    assert_eq!(sibling_circles(&dir), vec!["a: x <-> y <-> z"]);
    write("a/z.rs", "");
    assert!(sibling_circles(&dir).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The words that mark a function as a declarative table (tool registrations, a
/// catalog, a table of rows) in its doc comment: it may run long.
const TABLE_MARK: &str = "A declarative table";

/// A function's lines, from its `fn` line to its closing brace.
struct Function {
    file: String,
    line: usize,
    name: String,
    lines: usize,
    /// Its doc comment marks it as a declarative table ([`TABLE_MARK`]).
    table: bool,
}

/// The most lines a function may run to before it no longer reads in one screen.
const SCREEN: usize = 100;

/// `text` with comments, strings and character literals blanked (newlines kept), so
/// braces in them are not counted.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if (b[i] == b'r' || (b[i] == b'b' && b.get(i + 1) == Some(&b'r')))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && {
                let start = if b[i] == b'b' { i + 2 } else { i + 1 };
                let hashes = b[start..].iter().take_while(|c| **c == b'#').count();
                b.get(start + hashes) == Some(&b'"')
            }
        {
            // A raw string: r"…", r#"…"#, br"…".
            let start = if b[i] == b'b' { i + 2 } else { i + 1 };
            let hashes = b[start..].iter().take_while(|c| **c == b'#').count();
            let mut end = vec![b'"'];
            end.extend(std::iter::repeat_n(b'#', hashes));
            let body = start + hashes + 1;
            let close = b[body..]
                .windows(end.len())
                .position(|w| w == end.as_slice())
                .map_or(b.len(), |p| body + p + end.len());
            for &c in &b[i..close] {
                blank(&mut out, c);
            }
            i = close;
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let len = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|c| *c == b'\'').map(|p| p + 3)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(3)
            } else {
                std::str::from_utf8(&b[i + 1..])
                    .ok()
                    .and_then(|s| s.chars().next())
                    .filter(|c| b.get(i + 1 + c.len_utf8()) == Some(&b'\''))
                    .map(|c| c.len_utf8() + 2)
            };
            match len {
                Some(n) => {
                    out.extend(std::iter::repeat_n(b' ', n));
                    i += n;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every function with a body in `text`, and its length in lines.
fn functions(file: &str, text: &str) -> Vec<Function> {
    let code = code_only(text);
    let lines: Vec<&str> = code.lines().collect();
    let source: Vec<&str> = text.lines().collect();
    // The doc comment and attributes right above line `n`.
    let marked = |n: usize| {
        source[..n]
            .iter()
            .rev()
            .take_while(|l| {
                let l = l.trim_start();
                l.starts_with("///") || l.starts_with("#[")
            })
            .any(|l| l.contains(TABLE_MARK))
    };
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let leading_ok = words[..at].iter().all(|w| {
            matches!(
                *w,
                "pub" | "const" | "async" | "unsafe" | "extern" | "\"C\""
            ) || w.starts_with("pub(")
        });
        let Some(name) = words.get(at + 1) else {
            continue;
        };
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !leading_ok || name.is_empty() {
            continue;
        }
        // From the `fn` to its body's opening brace (or a `;`: no body), then to the
        // brace that closes it.
        let mut depth = 0usize;
        let mut opened = false;
        let mut end = None;
        'scan: for (m, l) in lines.iter().enumerate().skip(n) {
            let from = if m == n {
                line.find("fn ").unwrap_or(0)
            } else {
                0
            };
            for c in l[from..].chars() {
                match c {
                    ';' if !opened => break 'scan,
                    '{' => {
                        opened = true;
                        depth += 1;
                    }
                    '}' if opened => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(m);
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(end) = end {
            out.push(Function {
                file: file.to_string(),
                line: n + 1,
                name,
                lines: end - n + 1,
                table: marked(n),
            });
        }
    }
    out
}

/// Functions read in one screen: none in `src/` or `pow/src/` runs over [`SCREEN`]
/// lines but a declarative table, marked as one. `cargo test --test layers --
/// --nocapture functions` lists any, longest first.
#[test]
fn functions_read_in_one_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("pow/src"), &mut files);
    let mut long: Vec<Function> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let rel = f.strip_prefix(root).unwrap().display().to_string();
            functions(&rel, &text)
        })
        .filter(|f| f.lines > SCREEN && !f.table)
        .collect();
    long.sort_by_key(|f| std::cmp::Reverse(f.lines));
    for f in &long {
        println!("{:>4} {}:{} {}", f.lines, f.file, f.line, f.name);
    }
    println!("{} functions over {SCREEN} lines", long.len());
    assert!(
        long.is_empty(),
        "{} functions run over {SCREEN} lines; split them by purpose (a declarative \
         table says so in its doc comment: {TABLE_MARK:?})",
        long.len()
    );
}

/// The most lines a source file may hold before it is split by purpose.
const FILE_LINES: usize = 1_000;

/// Files split by purpose: none in `src/` or `pow/src/` holds over [`FILE_LINES`] lines.
#[test]
fn files_are_split_before_they_run_long() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("pow/src"), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            let rel = f.strip_prefix(root).unwrap().display();
            (lines > FILE_LINES).then(|| format!("{rel}: {lines} lines"))
        })
        .collect();
    assert!(long.is_empty(), "split these files by purpose: {long:#?}");
}

#[test]
fn a_functions_length_is_counted_from_fn_to_its_closing_brace() {
    let text = "fn a() {\n    let s = \"}}\";\n    // }\n    if x {\n        y('}');\n    }\n}\n\
                pub(crate) async fn b(x: u8) -> u8;\nfn c<'a>(s: &'a str) -> &'a str { s }\n\
                /// Rows.\n///\n/// A declarative table: a row each.\nfn d() {\n    r#\"{\"#;\n}\n";
    let found = functions("x.rs", text);
    let got: Vec<(&str, usize, usize, bool)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines, f.table))
        .collect();
    assert_eq!(
        got,
        [("a", 1, 7, false), ("c", 9, 1, false), ("d", 13, 3, true)]
    );
}
