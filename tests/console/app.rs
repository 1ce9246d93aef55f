//! The console as a whole: help, quitting, the clock keys, and drawing at any size.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use structs_console::tui::App;

use crate::support::console::{assert_drawn_whole, draw, press, type_text};
use crate::{console, open_player_and_planet, plans_console, snapshot};

#[test]
fn help_lists_the_keys_of_the_focused_area() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('?'));
    snapshot(
        "help_list_100x30",
        "The help overlay over the focused entity list: its keys and the global keys",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Esc);
    assert!(!draw(&mut app, 100, 30).contains("Everywhere"));
}

/// The help box wraps a long description under itself rather than cutting it.
#[test]
fn the_help_box_wraps_long_descriptions() {
    let (_rt, mut app) = plans_console();
    press(&mut app, KeyCode::Char('?'));
    for (width, height) in [(100u16, 44u16), (64, 50)] {
        let frame = draw(&mut app, width, height);
        assert!(!frame.contains("else t…"), "{frame}");
        assert!(frame.contains("Run one step"), "{frame}");
        snapshot(
            &format!("help_plans_{width}x{height}"),
            "? on the Plans tab: every key with its description, long ones wrapped under themselves",
            &mut app,
            width,
            height,
        );
    }
}

#[test]
fn quit_keys_and_key_releases() {
    let (_rt, mut app) = console();
    // A release is not a press.
    let mut release = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    app.handle_key(release);
    assert!(!app.should_quit());
    // In the filter prompt q is text, Ctrl-C still quits.
    press(&mut app, KeyCode::Char('/'));
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.should_quit());
    app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.should_quit());

    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('q'));
    assert!(app.should_quit());
}

#[test]
fn clock_keys_step_and_toggle_the_sim_clock() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('+'));
    let screen = draw(&mut app, 100, 30);
    assert!(screen.contains("block 120001"), "{screen}");
    assert_eq!(app.status_text(), Some("block 120001, clock paused"));
    press(&mut app, KeyCode::Char('P'));
    assert_eq!(app.status_text(), Some("block 120001, clock running"));
    press(&mut app, KeyCode::Char('P'));
    assert!(
        app.status_text()
            .is_some_and(|t| t.ends_with("clock paused")),
        "{:?}",
        app.status_text()
    );
}

#[test]
fn any_size_renders_without_panicking() {
    let (_rt, mut app) = console();
    let sizes = [
        (0, 0),
        (1, 1),
        (20, 5),
        (0, 30),
        (100, 0),
        (2, 2),
        (5, 3),
        (40, 12),
        (59, 20),
        (60, 20),
        (61, 4),
        (100, 1),
        (100, 30),
        (300, 80),
    ];
    let check = |app: &mut App, state: &str| {
        for (width, height) in sizes {
            assert_drawn_whole(app, width, height, state);
        }
    };
    check(&mut app, "startup");
    open_player_and_planet(&mut app);
    check(&mut app, "tree open");
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('d'));
    check(&mut app, "references focused");
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "2-1");
    check(&mut app, "filter prompt");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('?'));
    check(&mut app, "help");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('4'));
    check(&mut app, "placeholder");
}

#[test]
fn tiny_terminals_say_they_are_too_small() {
    let (_rt, mut app) = console();
    let sizes = [(1, 1), (5, 2), (10, 3), (20, 5)];
    let mut frames = Vec::new();
    for (width, height) in sizes {
        snapshot(
            &format!("too_small_{width}x{height}"),
            "A terminal below 30x8: what the console needs, as much of it as fits",
            &mut app,
            width,
            height,
        );
        frames.push(draw(&mut app, width, height));
    }
    // Whatever the console shows, the tiny frame is the same.
    press(&mut app, KeyCode::Char('7'));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('?'));
    for ((width, height), before) in sizes.into_iter().zip(&frames) {
        assert_eq!(&draw(&mut app, width, height), before, "{width}x{height}");
    }
    // At the smallest size the panes use, the console is whole again.
    let frame = draw(&mut app, 30, 8);
    assert!(!frame.contains("too small"), "{frame}");
    assert!(frame.contains("Tools (59)"), "{frame}");
    // Keys still work while it is too small.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    draw(&mut app, 10, 3);
    press(&mut app, KeyCode::Char('q'));
    assert!(app.should_quit());
}

#[test]
fn a_resize_storm_never_panics() {
    let (_rt, mut app) = console();
    // Sizes from a fixed sequence (a small LCG), with keys between frames that move
    // through every tab and open what each offers.
    let mut seed: u32 = 12345;
    let mut next = |below: u32| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (seed >> 16) % below
    };
    let keys = [
        KeyCode::Enter,
        KeyCode::Down,
        KeyCode::Tab,
        KeyCode::Char('?'),
        KeyCode::Esc,
        KeyCode::Right,
        KeyCode::Char('e'),
    ];
    for round in 0..700u32 {
        if round % 100 == 0 {
            let tab = char::from_digit(round / 100 + 1, 10).unwrap();
            press(&mut app, KeyCode::Char(tab));
        }
        if round % 7 == 0 {
            press(&mut app, keys[next(keys.len() as u32) as usize]);
        }
        let (width, height) = (next(220) as u16, next(70) as u16);
        assert_drawn_whole(&mut app, width, height, &format!("round {round}"));
    }
    assert!(!app.should_quit());
}

/// A path prompt takes 4,096 bytes at most and says so, in Plans and in Replay alike;
/// Esc closes it without opening anything.
#[test]
fn a_path_prompt_stops_at_its_limit_and_says_so() {
    for (tab, key) in [('3', 'o'), ('6', 'f')] {
        let (_rt, mut app) = console();
        press(&mut app, KeyCode::Char(tab));
        press(&mut app, KeyCode::Char(key));
        type_text(&mut app, &"a".repeat(4_096));
        let status = app.status_text().unwrap_or_default().to_string();
        assert!(!status.contains("at most"), "{tab}: {status}");
        press(&mut app, KeyCode::Char('b'));
        let status = app.status_text().unwrap_or_default().to_string();
        assert!(
            status.contains("a path is at most 4096 bytes"),
            "{tab}: {status}"
        );
        press(&mut app, KeyCode::Esc);
        let status = app.status_text().unwrap_or_default().to_string();
        assert!(!status.contains("cannot open"), "{tab}: {status}");
    }
}

/// What arrives on stderr while the console runs is told on the status line and shown,
/// newest last, by `L`; scrolling back reaches the older lines, and `Esc` closes.
#[test]
fn the_stderr_lines_are_told_and_shown_on_demand() {
    use std::sync::{Arc, Mutex};
    use structs_console::tui::stderr::Lines;
    let (_rt, app) = console();
    let lines = Arc::new(Mutex::new(Lines::default()));
    let mut app = app.with_stderr(lines.clone());
    assert!(!app.update() || !draw(&mut app, 100, 24).contains("on stderr"));
    {
        let mut l = lines.lock().unwrap();
        for i in 1..=30 {
            l.kept.push_back(format!("line {i}: a driver's warning"));
        }
        l.kept.push_back(format!(
            "error: XDG_RUNTIME_DIR is invalid or not set in the environment. {}",
            "x".repeat(200)
        ));
        l.total = 31;
    }
    assert!(app.update(), "a new stderr line is news");
    let frame = draw(&mut app, 100, 24);
    assert!(
        frame.contains(
            "on stderr, kept off the screen (31 lines, L shows them): error: XDG_RUNTIME_DIR"
        ),
        "{frame}"
    );
    press(&mut app, KeyCode::Char('L'));
    snapshot(
        "stderr_lines_100x24",
        "L: the lines written to stderr while the console ran, newest at the bottom, each cut with … to the box",
        &mut app,
        100,
        24,
    );
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("line 30: a driver"), "{frame}");
    assert!(!frame.contains("line 1: a driver"), "{frame}");
    press(&mut app, KeyCode::Char('g'));
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("line 1: a driver"), "{frame}");
    assert!(!frame.contains("XDG_RUNTIME_DIR is invalid"), "{frame}");
    press(&mut app, KeyCode::Esc);
    assert!(!draw(&mut app, 100, 24).contains("Stderr ·"));
}
