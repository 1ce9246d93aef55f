//! Paging a stored result so that every page stays under the size limit, and so that
//! the pages, merged in order, give back exactly the stored result.
//!
//! A result (a JSON object) is cut into *rows*, in its own order: each item of a
//! top-level array, each entry of a top-level map of records (the `references` map),
//! and each other top-level field whole. A page holds consecutive rows, at most
//! `page_size` of them and never more bytes than the budget; its `data` is an object
//! with the page's rows under their keys (array items as an array, map entries as a
//! map). Merging pages (arrays extended, maps merged, fields set) rebuilds the result.

use serde_json::{Map, Value};

use super::shape::{is_record_map, sample_arrays, truncate_strings};

/// One row of a result.
#[derive(Debug, Clone, PartialEq)]
enum Row<'a> {
    /// An item of the array under `key`.
    Item(&'a str, &'a Value),
    /// An entry of the map of records under `key`.
    Entry(&'a str, &'a str, &'a Value),
    /// A whole top-level field.
    Field(&'a str, &'a Value),
}

fn rows(result: &Value) -> Vec<Row<'_>> {
    let Value::Object(obj) = result else {
        return vec![Row::Field("data", result)];
    };
    let mut out = Vec::new();
    for (k, v) in obj {
        match v {
            Value::Array(items) if !items.is_empty() => {
                out.extend(items.iter().map(|item| Row::Item(k, item)));
            }
            Value::Object(map) if is_record_map(map) => {
                out.extend(map.iter().map(|(id, entry)| Row::Entry(k, id, entry)));
            }
            _ => out.push(Row::Field(k, v)),
        }
    }
    out
}

/// How many rows `result` pages over.
pub fn row_count(result: &Value) -> usize {
    rows(result).len()
}

fn row_size(row: &Row<'_>) -> usize {
    let (key, extra, v) = match row {
        Row::Item(k, v) | Row::Field(k, v) => (*k, 0, *v),
        Row::Entry(k, id, v) => (*k, id.len() + 3, *v),
    };
    // The value, its key and the punctuation around it.
    crate::json::encoded_len(v) + key.len() + extra + 6
}

/// One page of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct PageOut {
    pub data: Value,
    /// 1-based.
    pub page: usize,
    pub total_pages: usize,
    pub total_rows: usize,
    /// The rows this page holds.
    pub rows: std::ops::Range<usize>,
    /// True when a row alone was over the budget and had to be cut to fit (strings
    /// truncated, arrays sampled, both marked); such a page is not an exact copy.
    pub cut: bool,
}

/// Splits rows into pages: (start, end) ranges.
fn bounds(sizes: &[usize], page_size: usize, budget: usize) -> Vec<(usize, usize)> {
    let mut pages = Vec::new();
    let mut start = 0;
    while start < sizes.len() {
        let mut end = start;
        let mut bytes = 2;
        while end < sizes.len() && end - start < page_size {
            if end > start && bytes + sizes[end] > budget {
                break;
            }
            bytes += sizes[end];
            end += 1;
        }
        pages.push((start, end));
        start = end;
    }
    if pages.is_empty() {
        pages.push((0, 0));
    }
    pages
}

/// Page `page` (1-based) of `result`, with at most `page_size` rows and `budget` bytes
/// of data; `None` when there is no such page.
pub fn page(result: &Value, page: usize, page_size: usize, budget: usize) -> Option<PageOut> {
    let rows = rows(result);
    let sizes: Vec<usize> = rows.iter().map(row_size).collect();
    let pages = bounds(&sizes, page_size.max(1), budget);
    let &(start, end) = pages.get(page.checked_sub(1)?)?;
    let mut data = Map::new();
    for row in &rows[start..end] {
        match row {
            Row::Item(k, v) => {
                let slot = data
                    .entry(k.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = slot {
                    items.push((*v).clone());
                }
            }
            Row::Entry(k, id, v) => {
                let slot = data
                    .entry(k.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = slot {
                    map.insert(id.to_string(), (*v).clone());
                }
            }
            Row::Field(k, v) => {
                data.insert(k.to_string(), (*v).clone());
            }
        }
    }
    let mut data = Value::Object(data);
    let mut cut = false;
    // A single row too big for a page: cut it down until it fits, and say so.
    let mut text = 2000;
    let mut items = 50;
    while crate::json::encoded_len(&data) > budget && text > 8 {
        truncate_strings(&mut data, text);
        sample_arrays(&mut data, items);
        text /= 2;
        items = (items / 2).max(1);
        cut = true;
    }
    Some(PageOut {
        data,
        page,
        total_pages: pages.len(),
        total_rows: rows.len(),
        rows: start..end,
        cut,
    })
}

/// Merges a page's data into what earlier pages rebuilt.
pub fn merge(into: &mut Map<String, Value>, data: &Value) {
    let Value::Object(page) = data else { return };
    for (k, v) in page {
        match (into.get_mut(k), v) {
            (Some(Value::Array(have)), Value::Array(more)) => have.extend(more.iter().cloned()),
            (Some(Value::Object(have)), Value::Object(more)) if is_record_map(more) => {
                have.extend(more.iter().map(|(a, b)| (a.clone(), b.clone())));
            }
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reassemble(result: &Value, page_size: usize, budget: usize) -> (Value, usize) {
        let mut out = Map::new();
        let mut n = 1;
        while let Some(p) = page(result, n, page_size, budget) {
            assert!(!p.cut);
            assert!(
                serde_json::to_vec(&p.data).unwrap().len() <= budget,
                "page {n}"
            );
            merge(&mut out, &p.data);
            n += 1;
        }
        (Value::Object(out), n - 1)
    }

    #[test]
    fn pages_merge_back_into_the_result_exactly() {
        let players: Vec<Value> = (1..=45)
            .map(|i| json!({"Player": {"id": format!("1-{i}"), "name": "x".repeat(i * 10)}}))
            .collect();
        let refs: Map<String, Value> = (1..=7)
            .map(|i| (format!("2-{i}"), json!({"reference_type": "planet", "id": format!("2-{i}"), "Planet": {"id": format!("2-{i}")}})))
            .collect();
        let result = json!({"entity_type": "player", "players": players, "empty": [],
                            "pagination": {"total": 45}, "references": refs, "timestamp": "t"});
        assert_eq!(row_count(&result), 1 + 45 + 1 + 1 + 7 + 1);
        for (size, budget) in [(20, 25_000), (7, 25_000), (100, 3000), (1, 600)] {
            let (back, pages) = reassemble(&result, size, budget);
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                serde_json::to_string(&result).unwrap(),
                "{size} {budget}"
            );
            assert!(pages >= row_count(&result).div_ceil(size));
        }
        assert!(page(&result, 0, 20, 25_000).is_none());
        assert!(page(&result, 99, 20, 25_000).is_none());
    }

    #[test]
    fn a_row_too_big_for_any_page_is_cut_and_marked() {
        let result = json!({"blob": "z".repeat(50_000)});
        let p = page(&result, 1, 20, 25_000).unwrap();
        assert!(p.cut);
        assert!(serde_json::to_vec(&p.data).unwrap().len() <= 25_000);
        assert_eq!(p.total_pages, 1);
    }
}
