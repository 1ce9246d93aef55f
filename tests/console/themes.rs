//! Themes: built in or from a file, and how they style the frame.

use ratatui::style::Color;
use structs_console::tui::Theme;

use crate::support::console::draw_buffer;
use crate::{console, console_with};

#[test]
fn themes_style_the_frame() {
    let (_rt, mut dark) = console();
    let (_rt_light, mut light) = console_with(Theme::load("light").expect("light"));
    let dark_frame = draw_buffer(&mut dark, 100, 30);
    let light_frame = draw_buffer(&mut light, 100, 30);
    assert_eq!(dark_frame[(1, 0)].bg, Color::Indexed(236), "dark header");
    assert_eq!(light_frame[(1, 0)].bg, Color::Indexed(252), "light header");
    assert_eq!(
        light_frame[(50, 15)].bg,
        Color::Indexed(255),
        "light background"
    );
    assert_eq!(
        dark_frame[(50, 15)].bg,
        Color::Reset,
        "dark keeps the terminal's"
    );
}

#[test]
fn builtin_themes_load_by_name() {
    for name in Theme::BUILTIN_NAMES {
        let theme = Theme::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(theme.name(), name);
    }
    assert_eq!(Theme::default(), Theme::load("dark").expect("dark"));
    assert_ne!(
        Theme::load("dark").expect("dark"),
        Theme::load("light").expect("light")
    );
}

#[test]
fn unknown_theme_names_list_the_builtins() {
    let e = Theme::load("solarized").expect_err("not a built-in");
    assert!(e.contains("\"solarized\""), "{e}");
    for name in Theme::BUILTIN_NAMES {
        assert!(e.contains(name), "{e}");
    }
}

#[test]
fn theme_files_load_and_bad_ones_say_why() {
    let dir = std::env::temp_dir().join(format!("structs-console-themes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");

    let good = dir.join("ocean.toml");
    std::fs::write(
        &good,
        "base = \"light\"\n[styles]\nid_link = { fg = \"#0077cc\", modifiers = [\"underlined\"] }\n",
    )
    .expect("write theme");
    let theme = Theme::load(good.to_str().expect("utf-8 path")).expect("valid theme file");
    assert_eq!(theme.name(), "ocean");

    let bad_toml = dir.join("broken.toml");
    std::fs::write(&bad_toml, "[styles\nheader = {").expect("write theme");
    let e = Theme::load(bad_toml.to_str().expect("utf-8 path")).expect_err("bad TOML");
    assert!(e.contains("broken.toml"), "{e}");

    let bad_colour = dir.join("colour.toml");
    std::fs::write(&bad_colour, "[styles]\nerror = { fg = \"reddish\" }\n").expect("write");
    let e = Theme::load(bad_colour.to_str().expect("utf-8 path")).expect_err("bad colour");
    assert!(
        e.contains("styles.error.fg") && e.contains("reddish"),
        "{e}"
    );

    let missing = dir.join("missing.toml");
    let e = Theme::load(missing.to_str().expect("utf-8 path")).expect_err("no such file");
    assert!(e.contains("cannot read theme file"), "{e}");

    let _ = std::fs::remove_dir_all(&dir);
}
