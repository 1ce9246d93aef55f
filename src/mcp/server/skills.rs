//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): the `SKILL.md`
//! skills of a `--docs` folder, served as skills beside the prompts that stand for them
//! for hosts without the extension.
//!
//! A skill is a folder of the docs holding a `SKILL.md` whose front matter names it
//! (`name`, equal to the folder's name, and `description`). Its files are the docs
//! under that folder, each at `skill://{name}/{path}`, with its digest and size; they
//! are read with `resources/read` and listed a folder at a time with
//! `resources/directory/read`. A `SKILL.md` whose front matter does not name its
//! folder, or names it against the naming rule, is not served as a skill (it stays a
//! doc and a prompt).
//!
//! The catalog is made from the docs' snapshot and made again when a sync replaces it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ListResourcesResult, Resource, Skill, SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::Value;

use crate::docs::Snapshot;

/// Where skills' files live as resources.
pub const SKILL_SCHEME: &str = "skill://";

/// The MIME type of a skill's Markdown files.
const MARKDOWN: &str = "text/markdown";

/// One skill: its entry and its files' text by URI.
pub struct SkillDir {
    pub skill: Skill,
    pub files: BTreeMap<String, Arc<str>>,
}

/// The skills of one docs snapshot.
#[derive(Default)]
pub struct Catalog {
    pub skills: Vec<SkillDir>,
}

impl Catalog {
    /// The skills in `snapshot`.
    pub fn of(snapshot: &Snapshot) -> Catalog {
        let docs = snapshot.docs();
        let mut skills = Vec::new();
        for doc in docs.values() {
            let Some(folder) = doc.path.strip_suffix(rmcp::model::SKILL_MD) else {
                continue;
            };
            if !(folder.is_empty() || folder.ends_with('/')) {
                continue;
            }
            let name = folder
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            let text = doc.text();
            let Some(frontmatter) = frontmatter(&text).filter(|f| f.name == name) else {
                continue;
            };
            if !valid_name(name) {
                continue;
            }
            let uri = |path: &str| format!("{SKILL_SCHEME}{name}/{path}");
            let mut files = BTreeMap::new();
            for other in docs.values() {
                if let Some(rest) = other.path.strip_prefix(folder) {
                    files.insert(uri(rest), Arc::<str>::from(other.text()));
                }
            }
            let manifest = files
                .iter()
                .map(|(u, t)| SkillResource::from_bytes(u.clone(), t.as_bytes()))
                .collect();
            let skill = Skill::new(
                uri(rmcp::model::SKILL_MD),
                frontmatter,
                SkillResources::Files(manifest),
            );
            skills.push(SkillDir { skill, files });
        }
        skills.sort_by(|a, b| a.skill.uri.cmp(&b.skill.uri));
        Catalog { skills }
    }

    /// The entry of the skill whose `SKILL.md` is at `uri`.
    pub fn get(&self, uri: &str) -> Option<&Skill> {
        self.skills.iter().map(|s| &s.skill).find(|s| s.uri == uri)
    }

    /// A skill file's text.
    pub fn file(&self, uri: &str) -> Option<&Arc<str>> {
        self.skills.iter().find_map(|s| s.files.get(uri))
    }

    /// Each skill's `SKILL.md` as `resources/list` shows it.
    pub fn resources(&self) -> Vec<Resource> {
        self.skills
            .iter()
            .map(|s| {
                let size = s.files.get(&s.skill.uri).map_or(0, |t| t.len());
                Resource::new(s.skill.uri.clone(), s.skill.frontmatter.name.clone())
                    .with_mime_type(MARKDOWN)
                    .with_size(size as u64)
                    .with_description(s.skill.frontmatter.description.clone())
            })
            .collect()
    }

    /// `resources/directory/read`: the direct children of a skill's folder (`uri`
    /// ends with `/`), files with their size and folders as `inode/directory`.
    pub fn directory(&self, uri: &str) -> Result<ListResourcesResult, McpError> {
        let not_a_folder = || {
            McpError::invalid_params(
                format!(
                    "{} is not a skill's folder; a folder is {SKILL_SCHEME}{{name}}/ or a folder under it",
                    crate::error::quote(uri)
                ),
                Some(serde_json::json!({"uri": uri})),
            )
        };
        let prefix = if uri.ends_with('/') {
            uri.to_string()
        } else {
            format!("{uri}/")
        };
        let mut children: BTreeMap<String, Resource> = BTreeMap::new();
        for s in &self.skills {
            for (file, text) in &s.files {
                let Some(rest) = file.strip_prefix(&prefix) else {
                    continue;
                };
                let child = match rest.split_once('/') {
                    Some((folder, _)) => {
                        let dir = format!("{prefix}{folder}/");
                        Resource::new(dir.clone(), folder.to_string())
                            .with_mime_type(rmcp::model::DIRECTORY_MIME_TYPE)
                    }
                    None => Resource::new(file.clone(), rest.to_string())
                        .with_mime_type(MARKDOWN)
                        .with_size(text.len() as u64),
                };
                children.insert(child.uri.clone(), child);
            }
        }
        if children.is_empty() {
            return Err(not_a_folder());
        }
        Ok(ListResourcesResult::with_all_items(
            children.into_values().collect(),
        ))
    }
}

/// The front matter of a `SKILL.md` as the extension reads it: `name`, `description`
/// and the rest, as written.
fn frontmatter(text: &str) -> Option<SkillFrontmatter> {
    let yaml = crate::docs::front::split(text).yaml?;
    let value: Value = serde_norway::from_str(yaml).ok()?;
    let Value::Object(map) = value else {
        return None;
    };
    if !map.get("name").is_some_and(Value::is_string)
        || !map.get("description").is_some_and(Value::is_string)
    {
        return None;
    }
    serde_json::from_value(Value::Object(map)).ok()
}

/// The extension's naming rule: 1 to 64 of `a-z`, `0-9` and `-`, starting and ending
/// with a letter or a digit, with no `--`.
fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
        && !name.contains("--")
}

/// The catalog of the docs' current snapshot, made again only when it changes.
#[derive(Default)]
pub struct Skills {
    cached: Mutex<Option<(Arc<Snapshot>, Arc<Catalog>)>>,
}

impl Skills {
    pub fn of(&self, snapshot: Arc<Snapshot>) -> Arc<Catalog> {
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((snap, catalog)) = cached.as_ref()
            && Arc::ptr_eq(snap, &snapshot)
        {
            return catalog.clone();
        }
        let catalog = Arc::new(Catalog::of(&snapshot));
        *cached = Some((snapshot, catalog.clone()));
        catalog
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_extensions_rule() {
        for good in ["a", "structs-combat", "x1", &"a".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_front_matter_needs_a_name_and_a_description() {
        let f = frontmatter("---\nname: x\ndescription: does x\nlevel: core\n---\nbody").unwrap();
        assert_eq!(f.name, "x");
        assert_eq!(f.description, "does x");
        assert!(frontmatter("---\nname: x\n---\nbody").is_none());
        assert!(frontmatter("no front matter").is_none());
    }
}
