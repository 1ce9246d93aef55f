//! The sim world as the tool tests set it up: paused at genesis under a fixed wall
//! clock; and making a player of it able to act, for the action and workflow tests.

use std::sync::Arc;

use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::source::sim::world::World;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

/// The wall clock of the tool tests: 2026-11-21 12:00 UTC, always.
pub const NOW: &str = "2026-11-21T12:00:00Z";

/// A wall clock stopped at [`NOW`].
pub fn fixed_clock() -> WallClock {
    WallClock::Fixed(NOW.parse().unwrap())
}

/// The world of `config`, its block clock paused at genesis.
pub fn paused(config: WorldConfig) -> SimSource {
    SimSource::new(config, BlockClock::paused(config.genesis_height))
}

/// A core over the paused world of `config` at [`fixed_clock`], and the world (to
/// arrange it or move its clock).
pub fn paused_core(config: WorldConfig) -> (Core, Arc<SimSource>) {
    let source = Arc::new(paused(config));
    let core = structs_console::assembly::build_with_clock(source.clone(), fixed_clock());
    (core, source)
}

/// Player `p` with charge, ample power, its fleet home and its command ship online.
pub fn make_ready(w: &mut World, p: u64) {
    let i = (p - 1) as usize;
    let (fleet, planet) = (w.players[i].fleet, w.players[i].planet);
    w.fleets[(fleet - 1) as usize].planet = Some(planet);
    w.fleets[(fleet - 1) as usize].away_at = None;
    let cmd = w.fleets[(fleet - 1) as usize].command_struct;
    let c = &mut w.structs[(cmd - 1) as usize];
    let before = c.draw();
    c.built = true;
    c.online = true;
    let after = c.draw();
    let g = &mut w.players[i].grid;
    g.structs_load = g.structs_load - before + after;
    g.capacity = g.load + g.structs_load + 1_000_000_000;
    g.last_action = 0;
}
