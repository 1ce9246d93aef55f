//! A fetched page of a handle's data, as `structs_handle_fetch` answers it: the Handles
//! tab pages through one, and the Live tab shows one of a call's answer.

use serde_json::{Map, Value};

/// The tool that fetches a page of a handle's data.
pub(crate) const FETCH_TOOL: &str = "structs_handle_fetch";

/// `handle` with its random part cut to its first 8 digits and `…`; a handle whose
/// random part is that short already is shown whole.
pub(crate) fn cut_handle(handle: &str) -> String {
    match handle.rsplit_once(':') {
        Some((head, random)) if random.chars().count() > 8 => {
            format!("{head}:{}…", random.chars().take(8).collect::<String>())
        }
        _ => handle.to_string(),
    }
}

/// A fetched page of a handle's data (the Live tab shows one too).
#[derive(Debug)]
pub(crate) struct Page {
    pub handle: String,
    pub data: Value,
    pub current: u64,
    pub total_pages: u64,
    pub total_rows: u64,
    pub first_row: u64,
    pub last_row: u64,
    /// The page holds part of a row too large for one page.
    pub cut: bool,
    /// `raw`, `compact`, ... or `fields`.
    pub verbosity: String,
    /// Bytes of the page's data as JSON, and of the whole stored result.
    pub bytes: usize,
    pub whole_bytes: u64,
}

impl Page {
    /// Reads a `structs_handle_fetch` answer.
    pub(crate) fn parse(v: &Value) -> Page {
        let info = &v["page_info"];
        let data = v["data"].clone();
        let bytes = serde_json::to_vec(&data).map_or(0, |b| b.len());
        Page {
            handle: v["handle"].as_str().unwrap_or("").to_string(),
            current: info["current_page"].as_u64().unwrap_or(1),
            total_pages: info["total_pages"].as_u64().unwrap_or(1),
            total_rows: info["total"].as_u64().unwrap_or(0),
            first_row: info["rows"][0].as_u64().unwrap_or(0),
            last_row: info["rows"][1].as_u64().unwrap_or(0),
            cut: info["cut"].as_bool().unwrap_or(false),
            verbosity: v["metadata"]["verbosity"]
                .as_str()
                .unwrap_or("raw")
                .to_string(),
            bytes,
            whole_bytes: v["metadata"]["size_bytes"].as_u64().unwrap_or(0),
            data,
        }
    }
}

/// The first key of a page's data holding a list or a map of records.
pub(crate) fn first_collection(map: &Map<String, Value>) -> Option<&str> {
    map.iter()
        .find(|(_, v)| match v {
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => o.len() > 1,
            _ => false,
        })
        .map(|(k, _)| k.as_str())
}
