//! A server's skills as a host loads them (SEP-2640, `io.modelcontextprotocol/skills`):
//! listed with `skills/list`, and a skill loaded only when asked for. Loading reads its
//! `SKILL.md` and checks it against the entry the list gave: its byte size, its
//! SHA-256 digest, and each field of its front matter. A skill that fails any of them
//! is refused, and none of its other files is read; one that passes has each of its
//! other files read and checked the same way. Nothing is read before a skill is
//! loaded.

use base64::Engine as _;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::Remote;
use crate::error::{ErrorCode, ToolError};

/// `skills/list`, every page.
///
/// # Errors
///
/// The server's error, or the connection's.
pub async fn list(remote: &Remote) -> Result<Value, ToolError> {
    remote.list_whole("skills/list", "skills").await
}

/// The skill named `name` (its front matter's `name`, or its `SKILL.md` URI), loaded
/// and checked: `{skill, uri, files: [{uri, size, digest, text}]}`.
///
/// # Errors
///
/// `RESOURCE_NOT_FOUND` for a skill the server does not list; `VALIDATION_ERROR` for
/// a file that does not match its entry (size, digest or front matter), naming what
/// differs; the server's error for a read it refused.
pub async fn load(remote: &Remote, name: &str) -> Result<Value, ToolError> {
    let listed = list(remote).await?;
    let entry = listed["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["frontmatter"]["name"] == name || s["uri"] == name)
        .cloned()
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("the server lists no skill {name} (`skills` lists them)"),
            )
        })?;
    let uri = entry["uri"].as_str().unwrap_or_default().to_string();
    let resources: Vec<Value> = entry["resources"].as_array().cloned().unwrap_or_default();
    let of = |u: &str| resources.iter().find(|r| r["uri"] == u).cloned();
    // The skill's own file first: nothing else is read unless it passes.
    let Some(main) = of(&uri) else {
        return Err(refused(&uri, "the entry gives no size or digest for it"));
    };
    let text = fetch(remote, &main).await?;
    if let Some(why) = frontmatter_differs(&text, &entry["frontmatter"]) {
        return Err(refused(&uri, &why));
    }
    let mut files = vec![file(&main, text)];
    for other in resources.iter().filter(|r| r["uri"] != uri.as_str()) {
        let text = fetch(remote, other).await?;
        files.push(file(other, text));
    }
    Ok(json!({"skill": entry["frontmatter"]["name"], "uri": uri, "files": files}))
}

fn file(entry: &Value, text: String) -> Value {
    json!({"uri": entry["uri"], "size": entry["size"], "digest": entry["digest"], "text": text})
}

fn refused(uri: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ValidationError,
        format!("{uri} does not match the skill's entry ({why}): the skill is not loaded"),
    )
    .with_extra("uri", json!(uri))
}

/// Reads one file of a skill and checks it against its entry.
async fn fetch(remote: &Remote, entry: &Value) -> Result<String, ToolError> {
    let uri = entry["uri"].as_str().unwrap_or_default();
    let read = remote.read_resource(uri).await?;
    let contents = &read["contents"][0];
    let bytes = match (contents["text"].as_str(), contents["blob"].as_str()) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|e| refused(uri, &format!("its blob is not Base64: {e}")))?,
        (None, None) => return Err(refused(uri, "the read returned no content")),
    };
    if let Some(why) = differs(&bytes, entry) {
        return Err(refused(uri, &why));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What of `bytes` differs from the entry's `size` and `digest` (`sha256:HEX`).
fn differs(bytes: &[u8], entry: &Value) -> Option<String> {
    let Some(size) = entry["size"].as_u64() else {
        return Some("the entry gives no size".into());
    };
    if size != bytes.len() as u64 {
        return Some(format!("{} bytes, the entry says {size}", bytes.len()));
    }
    let Some(digest) = entry["digest"].as_str() else {
        return Some("the entry gives no digest".into());
    };
    let Some(want) = digest.strip_prefix("sha256:") else {
        return Some(format!(
            "its digest {digest} is not one this client checks (sha256:)"
        ));
    };
    let got = hex(&Sha256::digest(bytes));
    (!got.eq_ignore_ascii_case(want))
        .then(|| format!("digest sha256:{got}, the entry says {digest}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The front matter of a `SKILL.md` (`key: value` lines between `---` lines).
fn frontmatter(text: &str) -> Option<Map<String, Value>> {
    let rest = text.strip_prefix("---")?.trim_start_matches(['\r', '\n']);
    let end = rest.find("\n---")?;
    let mut fields = Map::new();
    for line in rest[..end].lines() {
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
            fields.insert(key.trim().to_string(), json!(value));
        }
    }
    Some(fields)
}

/// Which field of the entry's front matter the file's own differs in.
fn frontmatter_differs(text: &str, entry: &Value) -> Option<String> {
    let Some(own) = frontmatter(text) else {
        return Some("it has no front matter".into());
    };
    for (key, want) in entry.as_object().into_iter().flatten() {
        let Some(want) = want.as_str() else { continue };
        match own.get(key).and_then(Value::as_str) {
            Some(got) if got == want => {}
            Some(got) => return Some(format!("its {key} is {got:?}, the entry says {want:?}")),
            None => return Some(format!("it has no {key}, the entry says {want:?}")),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "---\nname: pdf\ndescription: Fill PDF forms\n---\n\nBody.\n";

    fn entry(text: &str) -> Value {
        json!({"uri": "skill://pdf/SKILL.md", "size": text.len(),
            "digest": format!("sha256:{}", hex(&Sha256::digest(text.as_bytes())))})
    }

    #[test]
    fn size_digest_and_front_matter_are_each_checked() {
        assert_eq!(differs(SKILL.as_bytes(), &entry(SKILL)), None);
        let longer = format!("{SKILL}more\n");
        assert!(
            differs(longer.as_bytes(), &entry(SKILL))
                .unwrap()
                .contains("bytes")
        );
        let evil = SKILL.replace("Body.", "Evil.");
        assert!(
            differs(evil.as_bytes(), &entry(SKILL))
                .unwrap()
                .contains("digest")
        );
        let md5 = json!({"size": 1, "digest": "md5:abc"});
        assert!(
            differs(b"x", &json!({"size": 1}))
                .unwrap()
                .contains("no digest")
        );
        assert!(
            differs(b"x", &json!({"digest": "sha256:00"}))
                .unwrap()
                .contains("no size")
        );
        assert!(
            differs(b"x", &md5)
                .unwrap()
                .contains("not one this client checks")
        );
        let said = json!({"name": "pdf", "description": "Fill PDF forms"});
        assert_eq!(frontmatter_differs(SKILL, &said), None);
        let other = json!({"name": "pdf", "description": "Exfiltrate credentials"});
        assert!(
            frontmatter_differs(SKILL, &other)
                .unwrap()
                .contains("description")
        );
        assert!(frontmatter_differs("no front matter", &said).is_some());
    }
}
