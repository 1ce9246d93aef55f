//! Console themes: named styles by role, read from TOML.
//!
//! Widgets never pick a colour; they ask the theme for the style of a [`Role`]
//! (`theme.style(Role::Error)`). A theme file maps role names to styles:
//!
//! ```toml
//! name = "my-theme"      # optional; defaults to the file name
//! base = "dark"          # optional; the built-in theme unset roles come from
//!
//! [styles]
//! header = { fg = "black", bg = "cyan", modifiers = ["bold"] }
//! id_link = { fg = "#5fafff", modifiers = ["underlined"] }
//! ```
//!
//! Colours are ANSI names (`red`, `light blue`, `dark gray`, `reset`), a 256-colour index
//! (`"244"`) or `#rrggbb`. Modifiers are `bold`, `dim`, `italic`, `underlined`,
//! `reversed` and `crossed_out`. The built-in themes (`dark`, `light`, `mono`) live in
//! the top-level `themes/` folder and are compiled in, so they work from any directory.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// What a piece of the console is, as far as styling goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The whole screen's background and default text.
    Base,
    /// The header line.
    Header,
    /// The program name in the header.
    HeaderAccent,
    /// The "paused" marker next to the block height.
    Paused,
    /// A tab title.
    Tab,
    /// The title of the tab on show.
    TabActive,
    /// The border of an area without focus.
    Border,
    /// The border of the focused area.
    BorderFocused,
    /// An area's title.
    Title,
    /// Ordinary text.
    Text,
    /// Secondary text: summaries, empty values, explanations.
    Muted,
    /// A field name in the entity tree.
    Field,
    /// A scalar value in the entity tree.
    Value,
    /// A value that names another entity and can be opened.
    IdLink,
    /// A reference to an entity already open higher up the tree.
    Cycle,
    /// The selected row of the focused area.
    Selected,
    /// The selected row of an area without focus.
    SelectedInactive,
    /// Errors, on the status line and in the tree.
    Error,
    /// Informational messages on the status line.
    Info,
    /// The filter prompt.
    Prompt,
    /// A key in the hint bar.
    HintKey,
    /// A command label in the hint bar.
    HintText,
}

impl Role {
    /// Every role, in the order theme files list them.
    pub const ALL: [Role; 22] = [
        Role::Base,
        Role::Header,
        Role::HeaderAccent,
        Role::Paused,
        Role::Tab,
        Role::TabActive,
        Role::Border,
        Role::BorderFocused,
        Role::Title,
        Role::Text,
        Role::Muted,
        Role::Field,
        Role::Value,
        Role::IdLink,
        Role::Cycle,
        Role::Selected,
        Role::SelectedInactive,
        Role::Error,
        Role::Info,
        Role::Prompt,
        Role::HintKey,
        Role::HintText,
    ];

    /// The role's key in a theme file (`border_focused`, `id_link`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Role::Base => "base",
            Role::Header => "header",
            Role::HeaderAccent => "header_accent",
            Role::Paused => "paused",
            Role::Tab => "tab",
            Role::TabActive => "tab_active",
            Role::Border => "border",
            Role::BorderFocused => "border_focused",
            Role::Title => "title",
            Role::Text => "text",
            Role::Muted => "muted",
            Role::Field => "field",
            Role::Value => "value",
            Role::IdLink => "id_link",
            Role::Cycle => "cycle",
            Role::Selected => "selected",
            Role::SelectedInactive => "selected_inactive",
            Role::Error => "error",
            Role::Info => "info",
            Role::Prompt => "prompt",
            Role::HintKey => "hint_key",
            Role::HintText => "hint_text",
        }
    }

    fn from_key(key: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.key() == key)
    }
}

/// The built-in themes: name and TOML source.
const BUILTINS: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("mono", include_str!("../../themes/mono.toml")),
];

/// A set of styles by role. Cheap to clone.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    name: String,
    styles: [Style; Role::ALL.len()],
}

impl Default for Theme {
    /// The `dark` built-in.
    fn default() -> Theme {
        // The built-ins are checked by this module's tests; should one ever fail to
        // parse, the console still works, uncoloured.
        Theme::builtin("dark").unwrap_or_else(|| Theme::plain("dark"))
    }
}

impl Theme {
    /// The names of the built-in themes; the first is the default.
    pub const BUILTIN_NAMES: [&'static str; 3] = [BUILTINS[0].0, BUILTINS[1].0, BUILTINS[2].0];

    /// Loads a theme by built-in name (`dark`, `light`, `mono`) or from a path to a
    /// `.toml` file.
    ///
    /// # Errors
    ///
    /// A sentence meant for the person who typed the name: an unknown name (listing
    /// the built-ins), a file that cannot be read, or a file that is not a valid theme
    /// (bad TOML, an unknown role, colour or modifier).
    pub fn load(name_or_path: &str) -> Result<Theme, String> {
        if let Some(theme) = Theme::builtin(name_or_path) {
            return Ok(theme);
        }
        let path = Path::new(name_or_path);
        let looks_like_path = name_or_path.contains(['/', '\\'])
            || path.extension().is_some_and(|e| e == "toml")
            || path.is_file();
        if !looks_like_path {
            return Err(format!(
                "unknown theme {name_or_path:?}: the built-in themes are {}; or give the path \
                 of a .toml theme file",
                Theme::BUILTIN_NAMES.join(", ")
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read theme file {}: {e}", path.display()))?;
        let fallback_name = path.file_stem().map_or_else(
            || name_or_path.to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        Theme::from_toml(&text, &fallback_name)
            .map_err(|e| format!("theme file {}: {e}", path.display()))
    }

    /// A built-in theme by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, source) = BUILTINS.iter().find(|(n, _)| *n == name)?;
        parse(source, name, None).ok()
    }

    /// Parses a theme file's text. Roles it leaves out come from its `base` theme
    /// (`dark` unless it names another built-in). `fallback_name` names the theme
    /// when the file does not.
    ///
    /// # Errors
    ///
    /// Bad TOML, an unknown key, role, colour or modifier, or an unknown `base`.
    pub fn from_toml(text: &str, fallback_name: &str) -> Result<Theme, String> {
        let file: ThemeFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let base_name = file.base.as_deref().unwrap_or(BUILTINS[0].0);
        let base = Theme::builtin(base_name).ok_or_else(|| {
            format!(
                "base = {base_name:?} is not a built-in theme (built-ins: {})",
                Theme::BUILTIN_NAMES.join(", ")
            )
        })?;
        file.into_theme(fallback_name, Some(base))
    }

    /// The theme's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The style for `role`.
    pub fn style(&self, role: Role) -> Style {
        self.styles[role as usize]
    }

    /// A theme with no styling at all.
    fn plain(name: &str) -> Theme {
        Theme {
            name: name.to_string(),
            styles: [Style::new(); Role::ALL.len()],
        }
    }
}

/// Parses built-in theme text, which must set every role itself.
fn parse(text: &str, name: &str, base: Option<Theme>) -> Result<Theme, String> {
    let file: ThemeFile = toml::from_str(text).map_err(|e| e.to_string())?;
    file.into_theme(name, base)
}

/// A theme file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: Option<String>,
    base: Option<String>,
    #[serde(default)]
    styles: BTreeMap<String, StyleSpec>,
}

/// One role's style as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    modifiers: Vec<String>,
}

impl ThemeFile {
    /// Resolves the file against `base`; without a base every role must be set.
    fn into_theme(self, fallback_name: &str, base: Option<Theme>) -> Result<Theme, String> {
        let mut set = [false; Role::ALL.len()];
        let mut theme = base.clone().unwrap_or_else(|| Theme::plain(fallback_name));
        theme.name = self.name.unwrap_or_else(|| fallback_name.to_string());
        for (key, spec) in &self.styles {
            let role = Role::from_key(key).ok_or_else(|| {
                let mut known = String::new();
                for (i, r) in Role::ALL.iter().enumerate() {
                    let _ = write!(known, "{}{}", if i > 0 { ", " } else { "" }, r.key());
                }
                format!("unknown style role {key:?} in [styles] (roles: {known})")
            })?;
            theme.styles[role as usize] = spec.to_style(key)?;
            set[role as usize] = true;
        }
        if base.is_none()
            && let Some(missing) = Role::ALL.iter().find(|r| !set[**r as usize])
        {
            return Err(format!("[styles] does not set role {:?}", missing.key()));
        }
        Ok(theme)
    }
}

impl StyleSpec {
    fn to_style(&self, role: &str) -> Result<Style, String> {
        let color = |which: &str, text: &str| -> Result<Color, String> {
            text.parse::<Color>().map_err(|_| {
                format!(
                    "styles.{role}.{which} = {text:?} is not a colour (use a name such as \
                     \"light blue\", a 256-colour index such as \"244\", or \"#rrggbb\")"
                )
            })
        };
        let mut style = Style::new();
        if let Some(fg) = &self.fg {
            style = style.fg(color("fg", fg)?);
        }
        if let Some(bg) = &self.bg {
            style = style.bg(color("bg", bg)?);
        }
        for name in &self.modifiers {
            let modifier = match name.to_ascii_lowercase().as_str() {
                "bold" => Modifier::BOLD,
                "dim" => Modifier::DIM,
                "italic" => Modifier::ITALIC,
                "underlined" | "underline" => Modifier::UNDERLINED,
                "reversed" | "reverse" => Modifier::REVERSED,
                "crossed_out" | "strikethrough" => Modifier::CROSSED_OUT,
                _ => {
                    return Err(format!(
                        "styles.{role}.modifiers: {name:?} is not a modifier (use bold, dim, \
                         italic, underlined, reversed or crossed_out)"
                    ));
                }
            };
            style = style.add_modifier(modifier);
        }
        Ok(style)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_sets_every_role() {
        for (name, source) in BUILTINS {
            let theme = parse(source, name, None)
                .unwrap_or_else(|e| panic!("built-in theme {name} does not parse: {e}"));
            assert_eq!(theme.name(), name);
        }
    }

    #[test]
    fn partial_file_inherits_from_its_base() {
        let theme = Theme::from_toml(
            "base = \"light\"\n[styles]\nerror = { fg = \"#ff0000\" }\n",
            "mine",
        )
        .expect("valid theme");
        let light = Theme::builtin("light").expect("light");
        assert_eq!(theme.name(), "mine");
        assert_eq!(
            theme.style(Role::Error),
            Style::new().fg(Color::Rgb(255, 0, 0))
        );
        assert_eq!(theme.style(Role::Header), light.style(Role::Header));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Theme::from_toml("[styles]\nheadr = {}\n", "x").unwrap_err();
        assert!(e.contains("\"headr\"") && e.contains("header"), "{e}");
        let e = Theme::from_toml("[styles]\nerror = { fg = \"blu\" }\n", "x").unwrap_err();
        assert!(e.contains("styles.error.fg"), "{e}");
        let e =
            Theme::from_toml("[styles]\nerror = { modifiers = [\"shiny\"] }\n", "x").unwrap_err();
        assert!(e.contains("shiny"), "{e}");
        let e = Theme::from_toml("base = \"neon\"\n", "x").unwrap_err();
        assert!(e.contains("neon") && e.contains("dark"), "{e}");
    }
}
