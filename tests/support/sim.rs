//! Making a player of the sim world able to act, for the action and workflow tests.

use structs_console::source::sim::world::World;

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
