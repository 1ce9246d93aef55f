//! Reference docs through the tools, on docs roots written by each test: front matter,
//! types, relations, traversal, write-through, sync, precedence, suggestions, paths that
//! try to leave the root, and missing targets.

#[path = "../support/mod.rs"]
mod support;

mod links;
mod processes;
mod reading;
mod search;

use serde_json::{Value, json};
use structs_console::Core;
use support::calls::ok;
use support::docs::TempDocs;

async fn err(core: &Core, tool: &str, args: Value) -> Value {
    let e = core
        .call_json(tool, args.clone())
        .await
        .expect_err(&format!("{tool} {args} should fail"));
    e["error"].clone()
}

fn ids(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|v| v[key].as_str().unwrap().to_string())
        .collect()
}

/// A small world of docs: mining depends on power, power and combat link each other
/// (a cycle), and lore has no front matter.
fn world() -> TempDocs {
    TempDocs::new(&[
        (
            "knowledge/mechanics/mining.md",
            "---\ntitle: Mining ore\nsummary: How extractors pull ore from a planet.\ntags: [ore, mining]\n\
             links:\n  - doc: knowledge/mechanics/power\n    relation: depends_on\n\
             struct_types: [14]\n---\n# Mining ore\n\nAn extractor mines ore every block it is online.\n\
             Refining is in [refining](refining.md).\n",
        ),
        (
            "knowledge/mechanics/refining.md",
            "---\ntitle: Refining\nsummary: Ore becomes alpha matter.\ntags: [ore]\n---\n\
             Refineries turn ore into alpha matter. Back to [mining](mining.md).\n",
        ),
        (
            "knowledge/mechanics/power.md",
            "---\ntitle: Power\nsummary: Capacity, load and going offline.\ntags: [energy]\n\
             links: [knowledge/mechanics/combat]\nentity_kinds: [substation]\n---\n\
             Reactors give capacity; every struct draws load.\n",
        ),
        (
            "knowledge/mechanics/combat.md",
            "---\ntitle: Combat\nsummary: Attacks and defence.\nlinks:\n  - doc: knowledge/mechanics/power\n    relation: see-also\n---\n\
             Weapons reach ambits. Power matters: see [power](power.md).\n",
        ),
        (
            "lore/origins.md",
            "# Where structs came from\n\nLong ago the machines woke up and mined the first ore.\n",
        ),
        (
            "schemas/player.md",
            "---\ntitle: Player schema\n---\nFields of a player.\n",
        ),
        (
            "api/queries.md",
            "---\ntitle: Queries\ntype: Reference\n---\nGET paths.\n",
        ),
    ])
}
