//! The Docs tab over the project's own (embedded) docs.

use crossterm::event::KeyCode;
use structs_console::tui::Tab;

use crate::support::console::{draw, press, press_n, type_text};
use crate::{console, hint_bar, snapshot};

/// The Docs tab over the project's own (embedded) docs: `/` and words give live
/// results, Enter opens one as readable text with its links, a link is followed and
/// Backspace comes back; the docs linked to the entity selected in Entities are listed.
#[test]
fn docs_search_open_follow_and_back() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('5'));
    assert_eq!(app.tab(), Tab::Docs);
    // The first entity listed (player 1-1) is selected in Entities.
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("Docs for 1-1"), "{frame}");
    press(&mut app, KeyCode::Char('/'));
    assert!(
        hint_bar(&mut app).contains("results"),
        "{}",
        hint_bar(&mut app)
    );
    type_text(&mut app, "refine ore");
    // The digits and letters went into the search, not to the tabs.
    assert_eq!(app.tab(), Tab::Docs);
    snapshot(
        "docs_live_results_120x36",
        "Docs: `/` then \"refine ore\": results with snippets follow the keys typed",
        &mut app,
        120,
        36,
    );
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("Mining and refining"), "{frame}");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 120, 36);
    assert!(
        frame.contains("knowledge/mechanics/mining-and-refining · mechanics"),
        "{frame}"
    );
    snapshot(
        "docs_open_doc_120x36",
        "Docs: the first result opened, its Markdown as text, its links out and in below",
        &mut app,
        120,
        36,
    );
    // Tab to the links, follow the first, then come back.
    press(&mut app, KeyCode::Tab);
    let before = draw(&mut app, 120, 36);
    press(&mut app, KeyCode::Enter);
    let after = draw(&mut app, 120, 36);
    assert_ne!(before, after);
    assert!(after.contains("back: 1"), "{after}");
    assert!(
        !after.contains("knowledge/mechanics/mining-and-refining · mechanics"),
        "{after}"
    );
    press(&mut app, KeyCode::Backspace);
    let back = draw(&mut app, 120, 36);
    assert!(
        back.contains("knowledge/mechanics/mining-and-refining · mechanics"),
        "{back}"
    );
    assert!(!back.contains("back: 1"), "{back}");
    // The keys move the results.
    press(&mut app, KeyCode::BackTab);
    press_n(&mut app, KeyCode::Down, 5);
    assert_ne!(draw(&mut app, 120, 36), back);
    // In the doc, a page is the lines the view showed: PageDown goes as far as Down
    // pressed once for each of them.
    press(&mut app, KeyCode::Tab);
    assert!(
        hint_bar(&mut app).contains("scroll"),
        "{}",
        hint_bar(&mut app)
    );
    press(&mut app, KeyCode::Home);
    let home = draw(&mut app, 120, 36);
    press(&mut app, KeyCode::PageDown);
    let paged = draw(&mut app, 120, 36);
    assert_ne!(home, paged);
    press(&mut app, KeyCode::Home);
    let mut downs = 0;
    while draw(&mut app, 120, 36) != paged {
        assert!(downs < 100, "PageDown went further than 100 lines");
        press(&mut app, KeyCode::Down);
        downs += 1;
    }
    assert!(
        downs > 10,
        "a page is the view's {downs} lines, more than a fixed 10"
    );
}

/// A struct selected in Entities: the Docs tab lists the docs linked to its kind and to
/// its struct type, and opens one.
#[test]
fn docs_linked_to_the_selected_entity() {
    let (_rt, mut app) = console();
    // Open struct 5-1 through the id filter.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "5-1");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('5'));
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("Docs for 5-1"), "{frame}");
    // Struct 5-1 is a Command Ship (type 1): its type's docs first, its kind's last.
    assert!(frame.contains("› type 1 "), "{frame}");
    snapshot(
        "docs_for_selected_struct_120x36",
        "Docs: struct 5-1 selected in Entities; the docs for its kind and its type",
        &mut app,
        120,
        36,
    );
    // Tab from the results: doc, links, then the entity's docs; the last is a kind's.
    press_n(&mut app, KeyCode::Tab, 3);
    press(&mut app, KeyCode::End);
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("› kind "), "{frame}");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 120, 36);
    assert!(!frame.contains("Open a result with Enter"), "{frame}");
}

#[test]
fn docs_narrow_shows_the_focused_area() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('5'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "proof of work");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    snapshot(
        "docs_narrow_60x20",
        "Docs at 60x20: the search box and the open doc only",
        &mut app,
        60,
        20,
    );
}

/// A doc that informs many entities (every struct type) names a few in its header and
/// counts the rest, so its text shows at once.
#[test]
fn a_doc_informing_many_entities_folds_its_header() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('5'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "the 22 struct types");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("knowledge/struct-types"), "{frame}");
    assert!(frame.contains("more"), "{frame}");
    assert!(!frame.contains("struct type 22"), "{frame}");
    // The doc's own text starts within the first lines of its pane.
    assert!(frame.contains("Struct types are plain integers"), "{frame}");
    snapshot(
        "docs_struct_types_folded_120x36",
        "The struct types doc: its header names a few of the 23 things it informs and counts the rest; the text follows",
        &mut app,
        120,
        36,
    );
}
