//! Unit tests of the Server tab: its state and transitions, and the pieces its drawing uses.

use super::render::{trail_rows, wrap};
use crate::tui::theme::Role;

#[test]
fn a_trail_keeps_the_newest_whole_events_in_the_room_it_has() {
    let event = |name: &str, rows: usize| -> Vec<(Role, String)> {
        (0..rows)
            .map(|k| (Role::Info, format!("{name}{k}")))
            .collect()
    };
    let events = vec![event("a", 2), event("b", 2), event("c", 2)];
    let text = |rows: Vec<(Role, String)>| rows.into_iter().map(|(_, r)| r).collect::<Vec<_>>();
    assert_eq!(
        text(trail_rows(&events, 6, 40)),
        ["a0", "a1", "b0", "b1", "c0", "c1"]
    );
    assert_eq!(
        text(trail_rows(&events, 3, 40)),
        ["… 2 earlier", "c0", "c1"]
    );
    assert_eq!(
        text(trail_rows(&events, 5, 40)),
        ["… 1 earlier", "b0", "b1", "c0", "c1"]
    );
    // The newest alone does not fit: its first rows, cut.
    assert_eq!(text(trail_rows(&[event("d", 4)], 3, 40)), ["d0", "d1 …"]);
    assert_eq!(text(trail_rows(&events, 2, 40)), ["… 2 earlier", "c0 …"]);
    assert!(trail_rows(&events, 0, 40).is_empty());
    for room in 0..8 {
        assert!(trail_rows(&events, room, 40).len() <= room, "room {room}");
    }
}

#[test]
fn wrapping_breaks_between_words_and_inside_long_ones() {
    assert_eq!(wrap("one two three", 7), ["one two", "three"]);
    assert_eq!(wrap("abcdefghij x", 4), ["abcd", "efgh", "ij x"]);
    assert_eq!(wrap("", 5), [""]);
    assert!(
        wrap("a b c d e f g", 3)
            .iter()
            .all(|l| l.chars().count() <= 3)
    );
}

#[test]
fn a_tool_is_called_from_its_form_and_answers() {
    use super::{Mode, ServerPane};
    use crate::tui::keymap::{Command, Scope};
    use crate::tui::pane::Pane;
    use crate::tui::tab::Tab;
    use crate::tui::testing::TestDesk;
    let desk = &mut TestDesk::new(Tab::Server);
    let mut pane = ServerPane::new(desk.core());
    assert_eq!(pane.scope(), Scope::ServerTools);
    let at = pane
        .tools
        .iter()
        .position(|t| t.name == "structs_query_player")
        .expect("the catalog's tools are listed");
    for _ in 0..at {
        desk.press(&mut pane, Command::Down);
    }
    desk.press(&mut pane, Command::OpenForm);
    assert_eq!(pane.scope(), Scope::ServerForm);
    let field = pane.fields.iter().position(|f| f.name == "player_id");
    pane.field = field.expect("a player_id field");
    for c in "1-1".chars() {
        pane.type_char(c, &mut desk.ctx());
    }
    desk.press(&mut pane, Command::CallTool);
    assert_eq!(pane.mode, Mode::Result);
    let call = pane.history.back().expect("the call is kept");
    assert_eq!(call.tool, "structs_query_player");
    assert!(matches!(call.answer, Some(Ok(_))), "{:?}", desk.status());
    assert_eq!(desk.status(), Some("structs_query_player answered"));

    desk.press(&mut pane, Command::EditCall);
    assert_eq!(
        pane.scope(),
        Scope::ServerForm,
        "the form keeps what was typed"
    );
    desk.press(&mut pane, Command::Back);
    assert_eq!(pane.scope(), Scope::ServerTools);
}
