//! The action dialog of the Entities pane: what can be done to the selected entity,
//! the exact tool call it makes, and the answer.
//!
//! - A player or a planet: **build here** (`structs_action_build_struct`), choosing one
//!   of the 22 struct types; the player is the player, or the planet's owner (a planet
//!   type is built on that planet, a fleet type in the owner's fleet).
//! - A struct still being built: **complete build** with a nonce (typed, or the one a
//!   finished PoW job found for it).
//! - An Ore Extractor: **mine** (`structs_action_mine_resources`); without a nonce the
//!   tool says where the cycle stands and `w` starts its proof-of-work job.
//! - Any struct: **attack this** (`structs_action_attack`) with a typed attacker id and
//!   the primary or secondary weapon.
//!
//! Every stage shows the tool name and JSON arguments that Enter sends; the answer (or
//! the structured error, with each missing requirement on its own line) replaces them.

mod render;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    HighlightSpacing, List, ListItem, ListState, Paragraph, StatefulWidget, Widget,
};
use serde_json::{Map, Value, json};

use crate::entity::struct_types::{struct_type, struct_types};
use crate::entity::{EntityId, EntityKind};
use crate::error::ToolError;
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::FoundProof;
use crate::tui::pane::{Ctx, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::cursor::{ROWS, Scroll, moved};
use crate::tui::widgets::text::SELECTED_MARK;
use crate::tui::widgets::{self, area_block};

const BUILD_TOOL: &str = "structs_action_build_struct";
const MINE_TOOL: &str = "structs_action_mine_resources";
const ATTACK_TOOL: &str = "structs_action_attack";

/// The longest text the form's field takes (a nonce is at most 40 digits).
const MAX_FIELD_LEN: usize = 40;

/// The widest the dialog is drawn.
const MAX_WIDTH: u16 = 76;

/// What the dialog can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Build,
    CompleteBuild,
    Mine,
    Attack,
}

impl Action {
    fn label(self) -> &'static str {
        match self {
            Action::Build => "build here",
            Action::CompleteBuild => "complete build",
            Action::Mine => "mine",
            Action::Attack => "attack this",
        }
    }

    fn tool(self) -> &'static str {
        match self {
            Action::Build | Action::CompleteBuild => BUILD_TOOL,
            Action::Mine => MINE_TOOL,
            Action::Attack => ATTACK_TOOL,
        }
    }

    /// The PoW tool's action type whose nonce this action takes.
    fn proof_action(self) -> Option<&'static str> {
        match self {
            Action::CompleteBuild => Some("struct_build_complete"),
            Action::Mine => Some("ore_miner_complete"),
            _ => None,
        }
    }

    /// The stage that follows choosing it.
    fn stage(self) -> Stage {
        match self {
            Action::Build => Stage::Types,
            _ => Stage::Form,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Menu,
    Types,
    Form,
    Sending,
    Result,
}

/// What happened on a command, for the pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    None,
    Close,
}

/// The dialog's state.
pub(crate) struct ActionDialog {
    target: EntityId,
    /// A few words about the target: `Ore Extractor of 1-3, online`.
    about: String,
    /// Who acts: the player, the planet's owner, the struct's owner.
    player: Option<EntityId>,
    /// The planet a build on a planet goes to.
    planet: Option<EntityId>,
    /// Nonces finished PoW jobs found, for the action chosen from the menu.
    proofs: Vec<FoundProof>,
    offered: Vec<Action>,
    menu: ListState,
    action: Action,
    stage: Stage,
    /// Where the struct type list stands (index into the 22).
    types: ListState,
    /// The form's text: the nonce, or the attacker's id.
    field: String,
    /// The job whose proof filled the field, if one did.
    proof_job: Option<usize>,
    secondary: bool,
    request: Option<RequestId>,
    /// The call sent last, and its answer once in.
    sent: Option<(&'static str, Value)>,
    answer: Option<Result<Value, ToolError>>,
    scroll: Scroll,
}

impl ActionDialog {
    /// The dialog for `id`, whose data is `entity` (the chain's shape), with the proofs
    /// finished PoW jobs found; an error says why nothing can be done to it.
    pub fn open(id: EntityId, entity: &Value, proofs: &[FoundProof]) -> Result<Self, String> {
        let core = id.kind.core_object(entity).unwrap_or(&Value::Null);
        let text = |key: &str| core.get(key).and_then(Value::as_str).unwrap_or("");
        let owner = || EntityId::parse(text("owner")).ok();
        let mut dialog = ActionDialog {
            target: id,
            about: String::new(),
            player: None,
            planet: None,
            proofs: proofs.to_vec(),
            offered: Vec::new(),
            menu: ListState::default().with_selected(Some(0)),
            action: Action::Build,
            stage: Stage::Menu,
            types: ListState::default().with_selected(Some(0)),
            field: String::new(),
            proof_job: None,
            secondary: false,
            request: None,
            sent: None,
            answer: None,
            scroll: Scroll::default(),
        };
        match id.kind {
            EntityKind::Player => {
                dialog.player = Some(id);
                dialog.about = format!(
                    "for {id} ({}): planet types on {}, fleet types in its fleet",
                    text("name"),
                    text("planetId")
                );
                dialog.offered.push(Action::Build);
            }
            EntityKind::Planet => {
                let Some(owner) = owner() else {
                    return Err(format!("{id} has no owner to build for"));
                };
                dialog.player = Some(owner);
                dialog.planet = Some(id);
                dialog.about = format!(
                    "for its owner {owner}: planet types on {id}, fleet types in {owner}'s fleet"
                );
                // Building on a planet: start at the first planet type.
                let first = struct_types().iter().position(|t| !t.is_fleet());
                dialog.types.select(first.or(Some(0)));
                dialog.offered.push(Action::Build);
            }
            EntityKind::Struct => {
                let attributes = &entity["structAttributes"];
                let type_id = text("type").parse::<u8>().ok();
                let kind = type_id.and_then(struct_type);
                dialog.player = owner();
                let state = crate::entity::records::StructStatus::of(attributes)
                    .map_or_else(|| "status unknown".to_string(), |s| s.describe());
                dialog.about = format!(
                    "{} of {}, {state}",
                    kind.map_or("struct", |t| t.name.as_str()),
                    text("owner")
                );
                let built = crate::entity::records::StructStatus::of(attributes)
                    .is_some_and(|s| s.has(crate::entity::records::StructStatus::BUILT));
                if !built {
                    dialog.offered.push(Action::CompleteBuild);
                }
                let extractor =
                    kind.is_some_and(|t| t.raw["oreMiningDifficulty"].as_u64().unwrap_or(0) > 0);
                if extractor && built {
                    dialog.offered.push(Action::Mine);
                }
                dialog.offered.push(Action::Attack);
            }
            kind => {
                return Err(format!(
                    "nothing to do to a {kind} here: actions are for players, planets and structs"
                ));
            }
        }
        if let [only] = dialog.offered[..] {
            dialog.choose(only);
        }
        Ok(dialog)
    }

    /// Moves on to `action`'s stage; a nonce a PoW job found for it fills the field.
    fn choose(&mut self, action: Action) {
        self.action = action;
        self.stage = action.stage();
        self.field.clear();
        self.proof_job = None;
        if let Some(wanted) = action.proof_action()
            && let Some(proof) = self
                .proofs
                .iter()
                .rev()
                .find(|p| p.entity == self.target && p.action == wanted)
        {
            self.field = proof.nonce.clone();
            self.proof_job = Some(proof.job);
        }
    }

    /// The keymap scope of the stage.
    pub fn scope(&self) -> Scope {
        match self.stage {
            Stage::Menu => Scope::ActionMenu,
            Stage::Types => Scope::ActionTypes,
            Stage::Form => Scope::ActionForm,
            Stage::Sending | Stage::Result => Scope::ActionResult,
        }
    }

    /// True while the form's field takes typed characters.
    pub fn captures_text(&self) -> bool {
        self.stage == Stage::Form
    }

    /// The commands the stage offers, in hint order.
    pub fn commands(&self) -> Vec<Command> {
        match self.stage {
            Stage::Menu => vec![
                Command::Up,
                Command::Down,
                Command::Top,
                Command::Bottom,
                Command::TakeAction,
                Command::Close,
            ],
            Stage::Types => vec![
                Command::Up,
                Command::Down,
                Command::Top,
                Command::Bottom,
                Command::SendAction,
                Command::Close,
            ],
            Stage::Form => {
                let mut out = vec![Command::SendAction];
                if self.action == Action::Attack {
                    out.push(Command::CycleWeapon);
                }
                if !self.field.is_empty() {
                    out.push(Command::EraseChar);
                }
                out.push(Command::Close);
                out
            }
            Stage::Sending => vec![Command::Close],
            Stage::Result => {
                let mut out = vec![Command::Up, Command::Down];
                if self.pow_job().is_some() {
                    out.push(Command::PowJob);
                }
                out.extend([Command::EditAction, Command::Close]);
                out
            }
        }
    }

    /// Runs an offered command.
    pub fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) -> Outcome {
        match (self.stage, command) {
            (_, Command::Close) => return Outcome::Close,
            (Stage::Menu, command) if ROWS.contains(&command) => {
                move_in(&mut self.menu, self.offered.len(), command);
            }
            (Stage::Menu, Command::TakeAction) => {
                let at = self.menu.selected().unwrap_or(0);
                if let Some(action) = self.offered.get(at).copied() {
                    self.choose(action);
                }
            }
            (Stage::Types, command) if ROWS.contains(&command) => {
                move_in(&mut self.types, struct_types().len(), command);
            }
            (Stage::Types | Stage::Form, Command::SendAction) => self.send(ctx),
            (Stage::Form, Command::CycleWeapon) => self.secondary = !self.secondary,
            (Stage::Form, Command::EraseChar) => {
                self.field.pop();
                self.proof_job = None;
            }
            (Stage::Result, Command::Up | Command::Down) => {
                self.scroll.on(command);
            }
            (Stage::Result, Command::EditAction) => {
                self.stage = self.action.stage();
                self.answer = None;
                self.scroll.reset();
            }
            _ => {}
        }
        Outcome::None
    }

    /// A typed character, while the form takes text: the digits of a nonce, or an
    /// entity id's digits and dash.
    pub fn type_char(&mut self, c: char, ctx: &mut Ctx<'_>) {
        let fits = match self.action {
            Action::Attack => c.is_ascii_digit() || c == '-',
            _ => c.is_ascii_digit(),
        };
        if !fits {
            ctx.status.info(match self.action {
                Action::Attack => "the attacker is a struct id: digits and a dash, e.g. 5-12",
                _ => "a nonce is a whole number: digits only",
            });
        } else if self.field.len() >= MAX_FIELD_LEN {
            ctx.status.info(format!(
                "the field takes at most {MAX_FIELD_LEN} characters"
            ));
        } else {
            self.field.push(c);
            self.proof_job = None;
        }
    }

    /// The tool and arguments Enter sends now.
    fn call(&self) -> (&'static str, Value) {
        let mut args = Map::new();
        let id =
            |id: Option<EntityId>| Value::String(id.map(|i| i.to_string()).unwrap_or_default());
        match self.action {
            Action::Build => {
                args.insert("player_id".into(), id(self.player));
                let t = &struct_types()[self.types.selected().unwrap_or(0).min(21)];
                args.insert("struct_type".into(), json!(t.id));
                if let Some(planet) = self.planet
                    && !t.is_fleet()
                {
                    args.insert("location_id".into(), json!(planet.to_string()));
                }
            }
            Action::CompleteBuild => {
                args.insert("player_id".into(), id(self.player));
                args.insert("struct_id".into(), json!(self.target.to_string()));
                if !self.field.is_empty() {
                    args.insert("nonce".into(), json!(self.field));
                }
            }
            Action::Mine => {
                args.insert("extractor_id".into(), json!(self.target.to_string()));
                if !self.field.is_empty() {
                    args.insert("nonce".into(), json!(self.field));
                }
            }
            Action::Attack => {
                args.insert("attacker_id".into(), json!(self.field));
                args.insert("target_id".into(), json!(self.target.to_string()));
                args.insert(
                    "weapon_type".into(),
                    json!(if self.secondary {
                        "secondary"
                    } else {
                        "primary"
                    }),
                );
            }
        }
        (self.action.tool(), Value::Object(args))
    }

    fn send(&mut self, ctx: &mut Ctx<'_>) {
        if self.action == Action::Attack && EntityId::parse(&self.field).is_err() {
            ctx.status
                .info("type the attacking struct's id first, e.g. 5-12");
            return;
        }
        let (tool, args) = self.call();
        self.request = Some(ctx.dispatcher.call(tool, args.clone()));
        self.sent = Some((tool, args));
        self.answer = None;
        self.scroll.reset();
        self.stage = Stage::Sending;
    }

    /// Takes the answer to the call sent. `Some(true)` when it applied a transaction (the
    /// pane refreshes what it shows), `Some(false)` otherwise (an error, a report),
    /// `None` when it is not this dialog's.
    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> Option<bool> {
        if self.request != Some(reply.id) {
            return None;
        }
        self.request = None;
        self.stage = Stage::Result;
        self.answer = Some(reply.result.clone());
        let tool = self.action.tool();
        match &reply.result {
            Ok(v) => ctx.status.info(format!(
                "{tool}: {}",
                v["message"].as_str().unwrap_or("done")
            )),
            Err(e) => ctx.status.tool_error(tool, e),
        }
        // A mining cycle only reported changes nothing.
        Some(self.changed_the_game())
    }

    /// True while the call sent has not answered.
    pub fn waiting(&self) -> bool {
        self.request.is_some()
    }

    /// True when the answer is in and applied a transaction.
    pub fn changed_the_game(&self) -> bool {
        matches!(&self.answer, Some(Ok(v)) if !v["transaction_hash"].is_null())
    }

    /// The proof-of-work job the answer calls for, in the PoW prompt's words
    /// (`5-43 build`, `5-7 mine`).
    pub fn pow_job(&self) -> Option<String> {
        let Some(Ok(v)) = &self.answer else {
            return None;
        };
        let args = &v["next_step"]["arguments"];
        if v["next_step"]["tool"] != "structs_calculate_proof_of_work" {
            return None;
        }
        let entity = EntityId::parse(args["entity_id"].as_str()?).ok()?;
        let word = match args["action_type"].as_str()? {
            "struct_build_complete" => "build",
            "ore_miner_complete" => "mine",
            "ore_refinery_complete" => "refine",
            _ => return None,
        };
        Some(format!("{entity} {word}"))
    }

    fn title(&self) -> String {
        let target = format!("{} {}", self.target.kind, self.target);
        match self.stage {
            Stage::Menu => format!(" Actions · {target} "),
            _ => format!(" {} · {target} ", capitalise(self.action.label())),
        }
    }
}

/// Moves a list's selection by a command.
fn move_in(state: &mut ListState, len: usize, command: Command) {
    if let Some(to) = moved(command, state.selected().unwrap_or(0), len, 1) {
        state.select(Some(to));
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A flat JSON object on one line, spaced for reading: `{"a": "1-1", "b": 14}`.
pub(crate) fn one_line(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), one_line(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// A JSON value as text: strings without quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The rows of a successful answer: (role, text, continuation indent).
fn ok_rows(v: &Value) -> Vec<(Role, String, usize)> {
    let mut out = Vec::new();
    let status = v["status"].as_str().unwrap_or("done");
    out.push((
        Role::Info,
        format!("✓ {status}: {}", v["message"].as_str().unwrap_or("")),
        2,
    ));
    let row = |name: &str, value: String| (Role::Text, format!("{name:<14}{value}"), 14);
    for (key, name) in [
        ("struct_id", "struct"),
        ("online", "online"),
        ("ore_mined", "ore mined"),
        ("planet_ore_remaining", "planet ore"),
        ("player_stored_ore", "stored ore"),
        ("damage_to_target", "damage"),
        ("target_health_after", "target health"),
        ("target_destroyed", "destroyed"),
        ("damage_to_attacker", "damage taken"),
        ("attacker_health_after", "own health"),
        ("transaction_hash", "transaction"),
    ] {
        match v.get(key) {
            None | Some(Value::Null) => {}
            Some(value) => out.push(row(name, plain(value))),
        }
    }
    if let Some(estimate) = v.get("estimated_completion").filter(|e| e.is_object()) {
        out.push(row(
            "difficulty",
            format!(
                "{} now (age {} blocks, range {})",
                estimate["difficulty_now"], estimate["age_blocks"], estimate["difficulty_range"]
            ),
        ));
    }
    let events = v["events"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if !events.is_empty() {
        out.push((Role::Muted, "events".into(), 0));
        for e in events {
            out.push((
                Role::Text,
                format!("  {}  {}", plain(&e["category"]), plain(&e["summary"])),
                4,
            ));
        }
    }
    let next = &v["next_step"];
    match next {
        Value::Null => {}
        Value::String(s) => out.push(row("next step", s.clone())),
        _ => {
            let what = next["description"]
                .as_str()
                .or_else(|| next["step"].as_str())
                .unwrap_or("");
            out.push(row("next step", what.to_string()));
            if let Some(tool) = next["tool"].as_str() {
                let args = next.get("arguments").map(one_line).unwrap_or_default();
                out.push((Role::Muted, format!("{:14}{tool} {args}", ""), 15));
            }
        }
    }
    out
}

/// The rows of an error: its code and message, the field at fault, and every missing
/// requirement on its own row.
fn error_rows(e: &ToolError) -> Vec<(Role, String, usize)> {
    let mut out = vec![(Role::Error, format!("✗ {}", e.code.as_str()), 2)];
    let missing = e
        .extra
        .get("missing_requirements")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty());
    match missing {
        Some(missing) => {
            let what = e
                .extra
                .get("message_type")
                .and_then(Value::as_str)
                .map_or_else(|| e.message.clone(), |m| format!("{m} refused"));
            out.push((Role::Text, what, 2));
            out.push((Role::Muted, "missing requirements".into(), 0));
            for r in missing {
                out.push((
                    Role::Text,
                    format!("  • {}: {}", plain(&r["requirement"]), plain(&r["detail"])),
                    4,
                ));
            }
        }
        None => {
            out.push((Role::Text, e.message.clone(), 2));
            if let (Some(field), Some(reason)) = (&e.field, &e.reason) {
                out.push((Role::Muted, format!("field {field}: {reason}"), 2));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render::wrap;
    use super::*;

    #[test]
    fn wrapping_indents_continuations_and_cuts_long_words() {
        assert_eq!(wrap("", 10, 2), [""]);
        assert_eq!(wrap("a bb ccc", 10, 2), ["a bb ccc"]);
        assert_eq!(wrap("aaaa bbbb cccc", 9, 2), ["aaaa bbbb", "  cccc"]);
        assert_eq!(
            wrap("  • x: long words", 9, 4),
            ["  • x:", "    long", "    words"]
        );
        assert_eq!(wrap("abcdefghij", 4, 1), ["abcd", " efg", " hij"]);
        assert_eq!(
            wrap("hash 0123456789", 8, 4),
            ["hash 012", "    3456", "    789"]
        );
        for width in 1..12 {
            for line in wrap("{\"player_id\": \"1-1\", \"struct_type\": 14}", width, 1) {
                assert!(line.chars().count() <= width, "{line:?} at {width}");
            }
        }
    }

    #[test]
    fn one_line_spaces_a_flat_object() {
        let v = json!({"player_id": "1-1", "struct_type": 14});
        assert_eq!(one_line(&v), r#"{"player_id": "1-1", "struct_type": 14}"#);
    }
}
