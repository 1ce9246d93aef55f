//! `structs_calculate_trade_value`.

use super::*;

pub(super) fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_calculate_trade_value",
            description: "What an amount of Alpha Matter (grams), ore or energy (watts) is worth \
                in the other units: alpha to energy at the reactor rate (1 g = 1 kW), ore to \
                alpha at the refining rate (1 ore = 1 g); or, with market set to a provider \
                id (10-N), at that provider's rate (its price per milliwatt of capacity per \
                block). Returns the values, market_rate, the formula and a timestamp.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "resource": {"enum": ["alpha_matter", "ore", "energy", "watts"],
                        "description": "What the amount is: alpha_matter (grams), ore (units of 1 g), energy or watts (W of capacity)."},
                    "amount": {"type": "number", "minimum": 0, "maximum": 1_000_000_000_000_000u64,
                        "description": "How much: grams of alpha or ore (6 decimals at most), watts of energy (3 decimals at most)."},
                    "market": {"type": "string", "maxLength": 48,
                        "description": "reactor (default), or a provider id (10-N) to price energy at its rate."}
                },
                "required": ["resource", "amount"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Trade value of alpha, ore or energy",
            hints: Hints::READ,
            output_schema: output::compute::trade_value(),
        },
        calculate_trade_value,
    );
}

async fn calculate_trade_value(env: Env, args: Value) -> Result<Value, ToolError> {
    let resource = opt_str(&args, "resource").unwrap_or_default();
    let amount = &args["amount"];
    let (ualpha, mw, unit) = exact_amount(resource, amount)?;
    let mut values = json!({
        "alpha_matter_grams": decimal(ualpha, 6),
        "alpha_matter_ualpha": int(ualpha),
        "ore": decimal(ualpha, 6),
        "energy_mw": int(mw),
        "energy_w": decimal(mw, 3),
        "energy_kw": decimal(mw, 6),
    });
    let market = opt_str(&args, "market").unwrap_or("reactor");
    let mut pricing = if market == "reactor" {
        reactor_pricing(resource, &values)
    } else {
        let provider = Provider::read(&env, market).await?;
        provider.add_costs(&mut values, resource, ualpha, mw)?;
        provider.pricing(resource, &values)
    };
    pricing
        .explanation
        .push_str(" Energy is capacity per block: it is not stored.");
    Ok(json!({
        "resource": resource,
        "amount": amount,
        "unit": unit,
        "value": values,
        "market_rate": pricing.market_rate,
        "formula": pricing.formula,
        "timestamp": env.timestamp(),
        "explanation": pricing.explanation,
    }))
}

/// The amount, exactly, in ualpha-equivalent (alpha, ore) and milliwatts (energy),
/// with the unit it was given in.
fn exact_amount(resource: &str, amount: &Value) -> Result<(u128, u128, &'static str), ToolError> {
    Ok(match resource {
        "alpha_matter" => {
            let u = scaled(amount, 6, "amount", "microgram (ualpha)")?;
            (
                u,
                u * u128::from(REACTOR_MW_PER_UALPHA),
                "grams of Alpha Matter",
            )
        }
        "ore" => {
            let micro_ore = scaled(amount, 6, "amount", "millionth of an ore")?;
            let u = micro_ore * u128::from(UALPHA_PER_REFINED_ORE) / 1_000_000;
            (u, u * u128::from(REACTOR_MW_PER_UALPHA), "ore (1 g each)")
        }
        _ => {
            let m = scaled(amount, 3, "amount", "milliwatt")?;
            (
                m / u128::from(REACTOR_MW_PER_UALPHA),
                m,
                "watts of capacity",
            )
        }
    })
}

/// What a market makes of the amount: its rate, the formula and an explanation.
struct Pricing {
    market_rate: Value,
    formula: String,
    explanation: String,
}

/// The amount priced at the reactor and refining rates.
fn reactor_pricing(resource: &str, values: &Value) -> Pricing {
    Pricing {
        market_rate: json!({
            "market": "reactor",
            "mw_per_ualpha": REACTOR_MW_PER_UALPHA,
            "kw_per_gram": REACTOR_MW_PER_UALPHA,
            "ualpha_per_ore": UALPHA_PER_REFINED_ORE,
            "default_commission_percent": DEFAULT_REACTOR_COMMISSION_PERCENT,
        }),
        formula:
            "energy_mw = alpha_ualpha × 1 (reactor); alpha_ualpha = ore × 1,000,000 (refining); \
             1 g = 1,000,000 ualpha; 1 kW = 1,000,000 mW"
                .to_string(),
        explanation: match resource {
            "alpha_matter" => format!(
                "{} g of Alpha Matter infused into a reactor is {} kW of capacity (every block, while infused).",
                values["alpha_matter_grams"], values["energy_kw"]
            ),
            "ore" => format!(
                "{} ore refines into {} g of Alpha Matter, which a reactor turns into {} kW of capacity.",
                values["ore"], values["alpha_matter_grams"], values["energy_kw"]
            ),
            _ => format!(
                "{} W of capacity takes {} g of Alpha Matter infused into a reactor (before its commission).",
                values["energy_w"], values["alpha_matter_grams"]
            ),
        },
    }
}

/// An energy provider used as the market, with its rate.
struct Provider {
    id: EntityId,
    /// The provider as the source has it.
    v: Value,
    /// Its price per milliwatt of capacity per block, in `denom`.
    rate: u64,
    denom: String,
    /// The shortest agreement it makes, in blocks (at least 1).
    duration_min: u64,
}

impl Provider {
    /// The provider `market` names, with its rate set.
    async fn read(env: &Env, market: &str) -> Result<Provider, ToolError> {
        let id = parse_id(market, "market", None).map_err(|_| {
            invalid(
                "market",
                format!("{market:?} is not a market: use reactor or a provider id (10-N)"),
            )
        })?;
        if id.kind != EntityKind::Provider {
            return Err(wrong_kind("market", id, EntityKind::Provider));
        }
        let v = fetch(env, id, "market").await?;
        let rate = chain_u64(&v, &["Provider", "rate", "amount"]).unwrap_or(0);
        let denom = chain_str(&v, &["Provider", "rate", "denom"])
            .unwrap_or("")
            .to_string();
        if rate == 0 {
            return Err(invalid("market", format!("provider {id} has no rate set")));
        }
        let duration_min = chain_u64(&v, &["Provider", "durationMinimum"])
            .unwrap_or(1)
            .max(1);
        Ok(Provider {
            id,
            v,
            rate,
            denom,
            duration_min,
        })
    }

    /// Adds to `values` what the amount costs or buys at this provider; alpha and ore
    /// have no value at a provider that does not price in ualpha.
    fn add_costs(
        &self,
        values: &mut Value,
        resource: &str,
        ualpha: u128,
        mw: u128,
    ) -> Result<(), ToolError> {
        let (id, denom, duration_min) = (self.id, &self.denom, self.duration_min);
        let rate128 = u128::from(self.rate);
        let v = values.as_object_mut().expect("object");
        // An agreement costs capacity × rate × duration, paid up front.
        v.insert("market_cost_per_block".into(), int(mw * rate128));
        v.insert(
            "market_cost_for_minimum_duration".into(),
            int(mw * rate128 * u128::from(duration_min)),
        );
        if denom == "ualpha" {
            v.insert(
                "market_capacity_mw_for_one_block".into(),
                int(ualpha / rate128),
            );
            v.insert(
                "market_capacity_mw_for_minimum_duration".into(),
                int(ualpha / (rate128 * u128::from(duration_min))),
            );
        } else if resource != "energy" && resource != "watts" {
            return Err(invalid(
                "market",
                format!(
                    "provider {id} prices capacity in {denom}, not ualpha: Alpha Matter and ore have no value there; ask with resource energy"
                ),
            ));
        }
        Ok(())
    }

    /// The amount priced at this provider's rate, from the `values` with its costs.
    fn pricing(&self, resource: &str, values: &Value) -> Pricing {
        let (id, rate, denom, duration_min) = (self.id, self.rate, &self.denom, self.duration_min);
        let p = &self.v;
        Pricing {
            market_rate: json!({
                "market": id.to_string(),
                "denom": denom,
                "amount": rate,
                "unit": format!("{denom} per milliwatt of capacity per block"),
                "duration_minimum": duration_min,
                "duration_maximum": chain_u64(p, &["Provider", "durationMaximum"]),
                "capacity_minimum_mw": chain_u64(p, &["Provider", "capacityMinimum"]),
                "capacity_maximum_mw": chain_u64(p, &["Provider", "capacityMaximum"]),
                "reactor_break_even_blocks": rate / REACTOR_MW_PER_UALPHA,
            }),
            formula: format!(
                "agreement cost = capacity_mw × {rate} {denom} × blocks (paid up front); \
                 capacity for one block = ualpha / {rate}; reactor: 1 ualpha = 1 mW every block"
            ),
            explanation: if resource == "energy" || resource == "watts" {
                format!(
                    "Provider {id} sells capacity at {rate} {denom} per mW per block: {} W for one block costs {} {denom}, \
                     {} {denom} for its {duration_min}-block minimum. After {rate} blocks buying has cost as much as \
                     infusing a reactor, which keeps giving 1 mW per ualpha.",
                    values["energy_w"],
                    values["market_cost_per_block"],
                    values["market_cost_for_minimum_duration"]
                )
            } else {
                format!(
                    "At {rate} {denom} per mW per block, {} g of Alpha Matter buys {} mW from provider {id} for one \
                     block ({} mW for its {duration_min}-block minimum); infused into a reactor it gives {} mW every block.",
                    values["alpha_matter_grams"],
                    values["market_capacity_mw_for_one_block"],
                    values["market_capacity_mw_for_minimum_duration"],
                    values["energy_mw"]
                )
            },
        }
    }
}
