//! What the rules' tests share: a ready world, signing as a player, the names of what
//! a refusal missed, and proofs solved at a test's difficulty.

use super::{Applied, Checked};
use crate::chain::{Msg, Signed, Signer};
use crate::pow::{self, Work};
use crate::source::sim::world::{World, WorldConfig};

pub const H: u64 = 120_000;

/// A world where players 1 and 2 have full charge, plenty of power, their fleet on
/// station and their command ship built and online.
pub fn ready() -> World {
    let mut w = World::generate(WorldConfig::with_players(8));
    for p in [1, 2] {
        make_ready(&mut w, p);
    }
    assert_eq!(w.check_integrity(), Vec::<String>::new());
    w
}

pub fn make_ready(w: &mut World, p: u64) {
    let fleet = w.players[(p - 1) as usize].fleet;
    let planet = w.players[(p - 1) as usize].planet;
    w.fleets[(fleet - 1) as usize].planet = Some(planet);
    let cmd = w.fleets[(fleet - 1) as usize].command_struct;
    let c = &mut w.structs[(cmd - 1) as usize];
    let before = c.draw();
    c.built = true;
    c.online = true;
    let after = c.draw();
    let g = &mut w.players[(p - 1) as usize].grid;
    g.structs_load = g.structs_load - before + after;
    g.capacity = g.load + g.structs_load + 1_000_000_000;
    g.last_action = 0;
}

pub fn signed(w: &World, player: u64, msg: Msg) -> Signed {
    Signed {
        msg,
        signer: Signer {
            creator: w.address_of(player).map(str::to_string),
            player: None,
        },
    }
}

pub fn missing(r: Result<Applied, Checked>) -> Vec<&'static str> {
    match r {
        Ok(a) => panic!("expected a refusal, got {:?}", a.result),
        Err(c) => c.missing().iter().map(|r| r.requirement).collect(),
    }
}

/// A nonce whose hash meets the difficulty of `work` at `height`.
pub fn solve(work: &Work, range: u64, height: u64) -> String {
    let need = pow::difficulty(height - work.block_start, range);
    if need > 5 {
        return "1".into(); // out of reach in a test: any nonce fails
    }
    (0u64..)
        .map(|n| n.to_string())
        .find(|n| {
            pow::achieved_difficulty(&pow::hash_hex(&format!("{}{n}", work.prefix()))) >= need
        })
        .unwrap()
}

pub fn free_planet_type(w: &World, player: u64) -> u8 {
    let planet = &w.planets[(w.players[(player - 1) as usize].planet - 1) as usize];
    let present: Vec<u8> = planet
        .slots
        .iter()
        .flatten()
        .flatten()
        .map(|s| w.structs[(*s - 1) as usize].type_id)
        .collect();
    [14u8, 15, 16, 20]
        .into_iter()
        .find(|t| !present.contains(t))
        .expect("some small planet type is free")
}
