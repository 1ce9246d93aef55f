//! Lists as tables: a page's records as columns (each field's name once) and rows
//! (each record's values), the smallest form for scans.

use serde_json::Value;

use super::Request;
use super::shape::kind_of_record;
use super::shape::{leaves, shape};

/// The key a tabulated list is answered under ([`tabulate`]).
pub const TABLE_KEY: &str = "table";

/// The JSON Schema of a tabulated list ([`tabulate`]).
pub fn table_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "description": "format table: the page's entities as columns (field names, once) and rows (one entity's values each).",
        "required": ["of", "columns", "rows"],
        "properties": {
            "of": {"type": "string"},
            "columns": {"type": "array", "items": {"type": "string"}},
            "rows": {"type": "array", "items": {"type": "array"}}
        },
        "additionalProperties": false
    })
}

/// Turns each top-level array of records in `value` into a table: the array's key is
/// replaced by `table`, `{"of": key, "columns": [...], "rows": [[...], ...]}`. The
/// columns are the records' field names (dotted, the chain's wrapper left out, as
/// `fields` names them), in the order first met; each row holds one record's values in
/// the columns' order, `null` where it has no such field. An array of anything else is
/// left as it is.
pub fn tabulate(value: &mut Value) {
    let Value::Object(obj) = value else { return };
    let arrays = obj.values().filter(|v| v.is_array()).count();
    let key = obj.iter().find_map(|(k, v)| {
        let items = v.as_array()?;
        // An empty page is a table too, when it is the answer's only list.
        let records = if items.is_empty() {
            arrays == 1
        } else {
            items
                .iter()
                .all(|item| item.as_object().and_then(kind_of_record).is_some())
        };
        records.then(|| k.clone())
    });
    let Some(key) = key else { return };
    let Some(Value::Array(items)) = obj.remove(&key) else {
        return;
    };
    let mut columns: Vec<String> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut cells: Vec<Vec<(usize, Value)>> = Vec::with_capacity(items.len());
    for item in items {
        let Value::Object(record) = item else {
            continue;
        };
        let Some(kind) = kind_of_record(&record) else {
            continue;
        };
        let wrapper = kind.rest_key().filter(|k| record.contains_key(*k));
        let names = leaves(&record, wrapper);
        let whole = Value::Object(record);
        let mut row = Vec::with_capacity(names.len());
        for (name, json_path) in names {
            let column = *at.entry(name.clone()).or_insert_with(|| {
                columns.push(name);
                columns.len() - 1
            });
            let cell = json_path
                .iter()
                .try_fold(&whole, |v, k| v.get(k))
                .cloned()
                .unwrap_or(Value::Null);
            row.push((column, cell));
        }
        cells.push(row);
    }
    let rows: Vec<Value> = cells
        .into_iter()
        .map(|row| {
            let mut values = vec![Value::Null; columns.len()];
            for (column, cell) in row {
                values[column] = cell;
            }
            Value::Array(values)
        })
        .collect();
    obj.insert(
        TABLE_KEY.into(),
        serde_json::json!({"of": key, "columns": columns, "rows": rows}),
    );
}

/// How many of a list's `items`, shaped as `request` asks (its `fields` or verbosity,
/// as records or as table rows), fit in `budget` bytes; at least one.
pub fn rows_that_fit(items: &[Value], request: &Request, budget: usize) -> usize {
    let mut used = 0;
    for (n, item) in items.iter().enumerate() {
        let mut row = item.clone();
        if let Some(selection) = &request.selection {
            shape(&mut row, selection);
        }
        let bytes = if request.table {
            // One value per column, a comma after each, the row's brackets.
            let Value::Object(record) = &row else {
                return n.max(1);
            };
            let wrapper = kind_of_record(record)
                .and_then(|kind| kind.rest_key())
                .filter(|k| record.contains_key(*k));
            leaves(record, wrapper)
                .iter()
                .map(|(_, path)| {
                    path.iter()
                        .try_fold(&row, |v, k| v.get(k))
                        .map_or(4, |v| crate::json::encoded_len(v) + 1)
                })
                .sum::<usize>()
                + 2
        } else {
            crate::json::encoded_len(&row) + 1
        };
        used += bytes;
        if used > budget {
            return n.max(1);
        }
    }
    items.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_becomes_a_table_of_columns_and_rows() {
        let mut v = json!({"entity_type": "struct", "structs": [
            {"Struct": {"id": "5-1", "type": "14", "owner": "1-1"}},
            {"Struct": {"id": "5-2", "type": "1"}, "structAttributes": {"health": "3"}}
        ], "pagination": {"total": 2}});
        tabulate(&mut v);
        assert_eq!(
            v,
            json!({"entity_type": "struct", "pagination": {"total": 2}, "table": {
                "of": "structs",
                "columns": ["id", "type", "owner", "structAttributes.health"],
                "rows": [["5-1", "14", "1-1", null], ["5-2", "1", null, "3"]]
            }})
        );
        // An empty page is an empty table.
        let mut empty = json!({"entity_type": "struct", "structs": [], "pagination": {"total": 0}});
        tabulate(&mut empty);
        assert_eq!(
            empty["table"],
            json!({"of": "structs", "columns": [], "rows": []})
        );
        assert!(empty.get("structs").is_none());
        // Nothing that is not a list of records changes.
        let mut plain = json!({"height": 5, "ids": ["1-1", "1-2"]});
        tabulate(&mut plain);
        assert_eq!(plain, json!({"height": 5, "ids": ["1-1", "1-2"]}));
    }

    #[test]
    fn rows_fit_the_budget_in_the_form_asked() {
        let items: Vec<Value> = (1..=50)
            .map(|i| {
                json!({"Struct": {"id": format!("5-{i}"), "type": "14", "owner": "1-1",
                                       "creator": "structs1abcdefghijklmnopqrstuvwxyz"}})
            })
            .collect();
        let whole = Request::default();
        let lean = Request {
            selection: Some(crate::handles::shape::Selection::fields("id,type")),
            verbosity: None,
            table: true,
        };
        // Whole records take about 100 bytes each; table rows of two fields 13 or 14
        // (`["5-1","14"],`).
        assert_eq!(rows_that_fit(&items, &whole, 1_000), 10);
        assert_eq!(rows_that_fit(&items, &lean, 300), 22);
        assert_eq!(rows_that_fit(&items, &lean, 100_000), 50);
        assert_eq!(rows_that_fit(&items, &whole, 1), 1, "at least one row");
    }
}
