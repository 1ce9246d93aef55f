//! The layering rule, enforced: every `crate::` path in `src/` points down the layers
//! (faces → assembly → call pipeline → tools → domain → leaves), or to a module listed
//! after it in its own layer. ARCHITECTURE.md states the same rule and order.

use std::collections::BTreeSet;
use std::path::Path;

/// Top to bottom. Within a layer, a module may use the modules listed after it.
const LAYERS: &[(&str, &[&str])] = &[
    ("faces", &["tui", "mcp", "rest", "guard"]),
    ("assembly", &["assembly", "config", "record", "nats"]),
    ("call pipeline", &["core"]),
    ("tools", &["tools"]),
    (
        "domain",
        &[
            "plan",
            "trees",
            "handles",
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
            "context", "error", "entity", "json", "text", "clock", "throttle", "pow",
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
