//! The requirements every family of messages shares: who acts, whether the player is
//! online, has the charge and the power, whether a proof of work holds, and the lookups
//! they read through.

use super::{At, Reqs, fid, pid, sid};
use crate::chain::{Assume, Signed};
use crate::entity::EntityId;
use crate::pow::{self, Work};
use crate::source::sim::world::{Fleet, Planet, Struct, World};

impl World {
    pub(super) fn struct_at(&self, index: u64) -> Option<&Struct> {
        index
            .checked_sub(1)
            .and_then(|i| self.structs.get(i as usize))
    }

    pub(super) fn planet_at(&self, index: u64) -> Option<&Planet> {
        index
            .checked_sub(1)
            .and_then(|i| self.planets.get(i as usize))
    }

    /// The player an address belongs to.
    pub fn player_by_address(&self, address: &str) -> Option<u64> {
        self.addresses
            .iter()
            .find(|a| a.address == address)
            .map(|a| a.player)
    }

    /// The player's address (what `creator` holds in its messages).
    pub fn address_of(&self, player: u64) -> Option<&str> {
        let p = self.players.get((player.checked_sub(1)?) as usize)?;
        self.addresses
            .get((p.address - 1) as usize)
            .map(|a| a.address.as_str())
    }

    /// Who acts: the signer's address, else the message's player, else the owner of
    /// what it acts on.
    pub(super) fn actor(
        &self,
        signed: &Signed,
        owner: Option<u64>,
        reqs: &mut Reqs,
    ) -> Option<u64> {
        let by_address = match &signed.signer.creator {
            Some(addr) => match self.player_by_address(addr) {
                Some(p) => Some(p),
                None => {
                    reqs.need(
                        "validSigner",
                        false,
                        format!("creator {addr} is not the address of any player"),
                    );
                    return None;
                }
            },
            None => None,
        };
        let actor = by_address.or(signed.signer.player).or(owner)?;
        if let Some(owner) = owner {
            reqs.need(
                "ownership",
                actor == owner,
                if actor == owner {
                    format!("{} acts for its own {}", pid(actor), pid(owner))
                } else {
                    format!("{} cannot act for what {} owns", pid(actor), pid(owner))
                },
            );
        }
        Some(actor)
    }

    pub(super) fn check_online(&self, player: u64, assume: &Assume, reqs: &mut Reqs) -> bool {
        let available = assume
            .available_capacity
            .unwrap_or_else(|| self.available_capacity(player));
        let online = assume.player_online.unwrap_or(available >= 0);
        let g = &self.players[(player - 1) as usize].grid;
        reqs.need(
            "playerOnline",
            online,
            if online {
                format!("{} is online", pid(player))
            } else if assume.player_online.is_some() {
                format!("{} is offline, as assumed", pid(player))
            } else if assume.available_capacity.is_some() {
                format!(
                    "{} is offline: {available} mW available, as assumed",
                    pid(player)
                )
            } else {
                format!(
                    "{} is offline: load {} + structs load {} mW exceeds capacity {} mW",
                    pid(player),
                    g.load,
                    g.structs_load,
                    g.capacity
                )
            },
        )
    }

    pub(super) fn check_charge(
        &self,
        player: u64,
        cost: u64,
        height: u64,
        assume: &Assume,
        reqs: &mut Reqs,
    ) -> bool {
        let charge = assume.charge.unwrap_or_else(|| self.charge(player, height));
        reqs.need(
            "sufficientCharge",
            charge >= cost,
            if charge >= cost {
                format!("charge {charge} covers the cost {cost}")
            } else {
                format!(
                    "required charge {cost} but {} had {charge}; it refills one per block, ready in {} blocks",
                    pid(player),
                    cost - charge
                )
            },
        )
    }

    pub(super) fn check_power(
        &self,
        player: u64,
        draw: u64,
        assume: &Assume,
        reqs: &mut Reqs,
    ) -> bool {
        let available = assume
            .available_capacity
            .unwrap_or_else(|| self.available_capacity(player));
        let ok = available >= i128::from(draw);
        reqs.need(
            "sufficientPower",
            ok,
            if ok {
                format!("{available} mW available covers the {draw} mW draw")
            } else {
                format!(
                    "insufficient power: the struct draws {draw} mW but {} has {available} mW available",
                    pid(player)
                )
            },
        )
    }

    pub(super) fn check_proof(
        &self,
        work: Work,
        range: u64,
        nonce: &str,
        proof: Option<&str>,
        height: u64,
        reqs: &mut Reqs,
    ) -> bool {
        let input = format!("{}{nonce}", work.prefix());
        let age = height.saturating_sub(work.block_start);
        let required = pow::difficulty(age, range);
        let hash = pow::hash_hex(&input);
        let check = pow::check(&input, proof.unwrap_or(&hash), required);
        let detail = if check.valid() {
            format!(
                "{input} hashes to {} leading zeros; {required} needed at age {age}",
                check.achieved
            )
        } else if !check.hash_matches {
            format!(
                "proof invalid: the proof is not the SHA-256 of {input} (that is {})",
                check.hash
            )
        } else {
            format!(
                "proof invalid: {input} hashes to {} leading zeros but {required} are needed at age {age} (range {range})",
                check.achieved
            )
        };
        reqs.need("proofOfWork", check.valid(), detail)
    }

    pub(super) fn command_ship_online(&self, player: u64, assume: &Assume) -> bool {
        assume.command_ship_online.unwrap_or_else(|| {
            let fleet = &self.fleets[(self.players[(player - 1) as usize].fleet - 1) as usize];
            fleet.command_struct != 0
                && self
                    .struct_at(fleet.command_struct)
                    .is_some_and(|c| c.online && !c.destroyed)
        })
    }

    pub(super) fn fleet_on_station(&self, player: u64, assume: &Assume) -> bool {
        assume.fleet_on_station.unwrap_or_else(|| {
            let p = &self.players[(player - 1) as usize];
            self.fleets[(p.fleet - 1) as usize].planet == Some(p.planet)
        })
    }

    /// That the player's fleet is on station; `away` says why not, given the fleet.
    pub(super) fn check_on_station(
        &self,
        player: u64,
        assume: &Assume,
        reqs: &mut Reqs,
        away: impl FnOnce(EntityId) -> String,
    ) -> bool {
        let on_station = self.fleet_on_station(player, assume);
        let fleet = fid(self.players[(player - 1) as usize].fleet);
        reqs.need(
            "fleetOnStation",
            on_station,
            if on_station {
                format!("{fleet} is on station")
            } else {
                away(fleet)
            },
        )
    }

    /// The opening of a plan on a struct: one that exists and is not destroyed, and
    /// who acts for it.
    pub(super) fn open_struct(
        &self,
        at: At,
        index: u64,
        reqs: &mut Reqs,
    ) -> Option<(&Struct, Option<u64>)> {
        let Some(s) = self.struct_at(index) else {
            reqs.need(
                "structExists",
                false,
                format!("{} does not exist", sid(index)),
            );
            return None;
        };
        if !reqs.need(
            "structNotDestroyed",
            !s.destroyed,
            if s.destroyed {
                format!("{} was destroyed", sid(index))
            } else {
                format!("{} exists", sid(index))
            },
        ) {
            return None;
        }
        let actor = self.actor(at.signed, Some(s.owner), reqs);
        Some((s, actor))
    }

    /// The opening of a plan on a fleet: one that exists, and who acts for it.
    pub(super) fn open_fleet(
        &self,
        at: At,
        index: u64,
        reqs: &mut Reqs,
    ) -> Option<(&Fleet, Option<u64>)> {
        let Some(f) = index
            .checked_sub(1)
            .and_then(|i| self.fleets.get(i as usize))
        else {
            reqs.need(
                "fleetExists",
                false,
                format!("{} does not exist", fid(index)),
            );
            return None;
        };
        let actor = self.actor(at.signed, Some(f.owner), reqs);
        Some((f, actor))
    }
}
