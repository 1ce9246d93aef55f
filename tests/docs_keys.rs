//! The console guide (docs/guides/console.md) is checked against the keymap the
//! console runs: each `## N Name` section names tab N, the tab row lists every tab,
//! and every key a table names is bound in that tab (or everywhere). A doc that names
//! a key or tab that does not exist fails here.

use structs_console::tui::Tab;
use structs_console::tui::keymap::{Keymap, Scope};

fn guide() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guides/console.md"
    ))
    .unwrap()
}

/// A key as the guide writes it, as the keymap labels it (`Backspace` is `Bksp`,
/// `Ctrl-C` is `C-c`).
fn label(written: &str) -> String {
    let w = written.trim();
    if let Some(c) = w.strip_prefix("Ctrl-").or_else(|| w.strip_prefix("C-")) {
        return format!("C-{}", c.to_lowercase());
    }
    match w {
        "Backspace" => "Bksp".into(),
        "PageDown" => "PgDn".into(),
        "PageUp" => "PgUp".into(),
        "Shift-Tab" => "S-Tab".into(),
        other => other.to_string(),
    }
}

/// The keys a table's first cell names: each `code` span, `↑↓` split in two, and
/// `1`–`7` as the digits between.
fn keys_of(cell: &str) -> Vec<String> {
    let spans: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
    let mut out = Vec::new();
    if cell.contains('–')
        && spans.len() == 2
        && let (Ok(a), Ok(b)) = (spans[0].parse::<u8>(), spans[1].parse::<u8>())
    {
        return (a..=b).map(|n| n.to_string()).collect();
    }
    for span in spans {
        if span == "↑↓" {
            out.extend(["↑".to_string(), "↓".to_string()]);
        } else {
            out.push(label(span));
        }
    }
    out
}

#[test]
fn the_console_guide_names_only_tabs_and_keys_that_exist() {
    let keymap = Keymap::standard();
    let scopes = keymap.scopes();
    let in_tab = |tab: Option<Tab>, key: &str| {
        scopes.iter().any(|&c| {
            let own = c.tab();
            (own.is_none() || own == tab) && keymap.binds(c, key)
        })
    };
    // A key of one tab is bound there or everywhere; a key the guide lists for every
    // tab is bound everywhere, or in every tab.
    let bound_in = |tab: Option<Tab>, key: &str| match tab {
        Some(_) => in_tab(tab, key),
        None => in_tab(None, key) || Tab::ALL.iter().all(|&t| in_tab(Some(t), key)),
    };
    let text = guide();
    let mut section: Option<Option<Tab>> = None;
    let mut tabs_seen = Vec::new();
    let mut checked = 0;
    let mut problems = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = n + 1;
        if let Some(heading) = line.strip_prefix("## ") {
            section = if heading == "Everywhere" {
                Some(None)
            } else if let Some((num, name)) = heading.split_once(' ')
                && let Ok(num) = num.parse::<u8>()
            {
                match Tab::ALL.iter().find(|t| t.number() == num) {
                    Some(&tab) if tab.title() == name => {
                        tabs_seen.push(tab);
                        Some(Some(tab))
                    }
                    Some(&tab) => {
                        problems.push(format!(
                            "line {at}: \"## {num} {name}\", but tab {num} is {}",
                            tab.title()
                        ));
                        None
                    }
                    None => {
                        problems.push(format!("line {at}: there is no tab {num}"));
                        None
                    }
                }
            } else {
                None
            };
            continue;
        }
        let Some(tab) = section else { continue };
        let Some(row) = line.strip_prefix('|') else {
            continue;
        };
        let cells: Vec<&str> = row.split('|').collect();
        let (Some(first), Some(second)) = (cells.first(), cells.get(1)) else {
            continue;
        };
        if first.trim() == "key" || first.trim().starts_with("---") {
            continue;
        }
        // The tab row names every tab, in order.
        if second.trim().starts_with("tabs:") {
            let names: Vec<&str> = second
                .trim()
                .trim_start_matches("tabs:")
                .split(',')
                .map(str::trim)
                .collect();
            let want: Vec<&str> = Tab::ALL.iter().map(|t| t.title()).collect();
            if names != want {
                problems.push(format!(
                    "line {at}: the tabs are {want:?}, the guide says {names:?}"
                ));
            }
        }
        for key in keys_of(first) {
            checked += 1;
            if !bound_in(tab, &key) {
                problems.push(format!(
                    "line {at}: `{key}` is not a key of {}",
                    tab.map_or("every tab", |t| t.title())
                ));
            }
        }
    }
    let missing: Vec<&str> = Tab::ALL
        .iter()
        .filter(|t| !tabs_seen.contains(t))
        .map(|t| t.title())
        .collect();
    if !missing.is_empty() {
        problems.push(format!("no section for the tabs {missing:?}"));
    }
    assert!(checked >= 40, "only {checked} keys found in the guide");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_context_belongs_to_a_tab_or_to_all() {
    // A scope of the keymap a tab does not own would be a key the guide cannot place.
    let keymap = Keymap::standard();
    for scope in keymap.scopes() {
        if scope.tab().is_none() {
            assert!(
                matches!(
                    scope,
                    Scope::Global | Scope::Help | Scope::Logs | Scope::SourceDialog
                ),
                "{scope:?}"
            );
        }
    }
}

#[test]
fn keys_are_read_as_the_keymap_writes_them() {
    assert_eq!(keys_of("`1`–`7`"), ["1", "2", "3", "4", "5", "6", "7"]);
    assert_eq!(keys_of("`q`, `Ctrl-C`"), ["q", "C-c"]);
    assert_eq!(keys_of("`Backspace`, `b`"), ["Bksp", "b"]);
    assert_eq!(keys_of("`↑↓`, `PgDn`/`PgUp`"), ["↑", "↓", "PgDn", "PgUp"]);
}
