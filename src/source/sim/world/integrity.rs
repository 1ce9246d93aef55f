//! The integrity check of a world: every id it holds points at something, and the
//! figures kept twice agree.

use super::*;

impl World {
    /// Checks that every reference points at an existing entity and that back
    /// references agree (a struct's slot holds it, a player's planet is owned by it).
    /// Returns one line per problem; empty when the world is whole.
    pub fn check_integrity(&self) -> Vec<String> {
        let mut problems = Vec::new();
        self.check_references(&mut problems);
        for (i, s) in self.structs.iter().enumerate() {
            self.check_struct(i as u64 + 1, s, &mut problems);
        }
        let loads = self.structs_loads();
        for (i, p) in self.players.iter().enumerate() {
            self.check_player(i as u64 + 1, p, loads[i], &mut problems);
        }
        for (i, planet) in self.planets.iter().enumerate() {
            self.check_planet(i as u64 + 1, planet, &mut problems);
        }
        for (i, fleet) in self.fleets.iter().enumerate() {
            self.check_fleet(i as u64 + 1, fleet, &mut problems);
        }
        problems
    }

    /// Every reference of every entity points at one that exists.
    fn check_references(&self, problems: &mut Vec<String>) {
        for kind in EntityKind::ALL {
            for index in 1..=self.count(kind) {
                let id = EntityId::new(kind, index);
                for (field, target) in self.references_of(id) {
                    if !self.exists(target) {
                        problems.push(format!("{id}.{field} -> {target} does not exist"));
                    }
                }
            }
        }
    }

    /// What each player's structs draw, by player (from 0).
    fn structs_loads(&self) -> Vec<u64> {
        let mut loads = vec![0u64; self.players.len()];
        for s in &self.structs {
            if let Some(load) = loads.get_mut((s.owner - 1) as usize) {
                *load += s.draw();
            }
        }
        loads
    }

    /// Struct `index`: health within its type's, a state that fits, and (unless
    /// destroyed) held by its own slot in a place and ambit its type can use.
    fn check_struct(&self, index: u64, s: &Struct, problems: &mut Vec<String>) {
        if s.health > s.kind().max_health {
            problems.push(format!("5-{index} has more health than its type allows"));
        }
        if s.destroyed {
            if s.online || s.health != 0 {
                problems.push(format!("5-{index} is destroyed but online or alive"));
            }
            return;
        }
        if s.online && !s.built {
            problems.push(format!("5-{index} is online but not built"));
        }
        let slots = match s.location {
            Location::Planet(p) => self.planets.get((p - 1) as usize).map(|x| &x.slots),
            Location::Fleet(f) => self.fleets.get((f - 1) as usize).map(|x| &x.slots),
        };
        let held = slots
            .and_then(|sl| sl[s.ambit.slot_row()][usize::from(s.slot)])
            .is_some_and(|held| held == index);
        if !held {
            problems.push(format!("5-{index} is not in its own slot"));
        }
        let t = struct_type(s.type_id);
        match (t, s.location) {
            (Some(t), Location::Fleet(_)) if t.is_fleet() => {}
            (Some(t), Location::Planet(_)) if !t.is_fleet() => {}
            _ => problems.push(format!("5-{index} has a type that cannot be there")),
        }
        if t.is_some_and(|t| t.possible_ambit & s.ambit.bit() == 0) {
            problems.push(format!("5-{index} is in an ambit its type cannot use"));
        }
    }

    /// Player `index`: no negative resource, a structs load that is what its structs
    /// draw (`load`), and its own planet and fleet.
    fn check_player(&self, index: u64, p: &Player, load: u64, problems: &mut Vec<String>) {
        // Resources are unsigned; a subtraction that went below zero would wrap to
        // an enormous value, so anything past 2^62 is a negative resource.
        for (name, v) in [
            ("ore", p.grid.ore),
            ("capacity", p.grid.capacity),
            ("load", p.grid.load),
            ("structs load", p.grid.structs_load),
            ("alpha", p.alpha),
        ] {
            if v > 1 << 62 {
                problems.push(format!("1-{index} has a negative {name} (wrapped to {v})"));
            }
        }
        if p.grid.structs_load != load {
            problems.push(format!(
                "1-{index} has a structs load of {} but its structs draw {load}",
                p.grid.structs_load
            ));
        }
        if self.planets.get((p.planet - 1) as usize).map(|x| x.owner) != Some(index) {
            problems.push(format!("1-{index}'s planet is not owned by it"));
        }
        if self.fleets.get((p.fleet - 1) as usize).map(|x| x.owner) != Some(index) {
            problems.push(format!("1-{index}'s fleet is not owned by it"));
        }
    }

    /// Planet `index`: ore within its maximum, and every struct its slots hold live
    /// and in that slot.
    fn check_planet(&self, index: u64, planet: &Planet, problems: &mut Vec<String>) {
        if planet.grid.ore > planet.max_ore {
            problems.push(format!("2-{index} holds more ore than its maximum"));
        }
        for (row, ambit) in
            planet
                .slots
                .iter()
                .zip([Ambit::Space, Ambit::Air, Ambit::Land, Ambit::Water])
        {
            for (slot, held) in row.iter().enumerate() {
                let Some(held) = held else { continue };
                let ok = self.structs.get((*held - 1) as usize).is_some_and(|s| {
                    !s.destroyed
                        && s.location == Location::Planet(index)
                        && s.ambit == ambit
                        && usize::from(s.slot) == slot
                });
                if !ok {
                    problems.push(format!(
                        "2-{index} slot {} {slot} holds 5-{held}, which is not there",
                        ambit.name()
                    ));
                }
            }
        }
    }

    /// Fleet `index`: its command struct a live command ship in it, and not both on
    /// station and away.
    fn check_fleet(&self, index: u64, fleet: &Fleet, problems: &mut Vec<String>) {
        if fleet.command_struct != 0 {
            let ok = self
                .structs
                .get((fleet.command_struct - 1) as usize)
                .is_some_and(|s| {
                    s.type_id == 1 && !s.destroyed && s.location == Location::Fleet(index)
                });
            if !ok {
                problems.push(format!(
                    "9-{index}'s command struct is not a live command ship in it"
                ));
            }
        }
        if fleet.planet.is_some() && fleet.away_at.is_some() {
            problems.push(format!("9-{index} is both on station and away"));
        }
    }
}
