//! Writing links through to the files: a line edit of the doc's front matter or its
//! sidecar, written atomically, before the snapshot is replaced.

use super::*;

impl Docs {
    /// Creates or updates explicit links from `source` to each target, written through
    /// to the source's file (a doc's front matter, or the source's sidecar) before the
    /// snapshot changes. Every target must be an existing doc; a doc cannot link to
    /// itself. Blocking (file I/O).
    pub fn upsert(
        &self,
        source: &Source,
        changes: &[(String, Relation)],
    ) -> Result<(String, Vec<Upserted>), ToolError> {
        let _w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let snap = self.snapshot_locked();
        let Root::Dir(root) = &self.root else {
            return Err(ToolError::new(
                ErrorCode::ResourceReadOnly,
                "the embedded docs are read-only: start the server with --docs DIR (for \
                 example the project's docs/ folder) to write links to files",
            ));
        };
        check_link_ends(&snap, source, changes)?;
        let rel = snap
            .link_file(source)
            .expect("every source kind has a link file once its doc exists");
        refuse_symlinks(root, &rel)?;
        // Another process serving the same folder may write this file too: hold the
        // folder's lock from reading the file to writing it, so that neither write is
        // lost (the file is read again under the lock, and merged).
        let _lock = RootLock::take(root, LOCK_WAIT)?;
        let path = root.join(&rel);
        let old_text = match std::fs::read_to_string(&path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(&rel, "read", &e)),
        };
        let mut list = links_in_file(old_text.as_deref(), source, &rel)?;
        keep_relations_in_use(&snap, source, &rel, &mut list);
        let outcomes = apply_changes(&snap, source, changes, &mut list);
        let new_text = match source.kind {
            SourceKind::Doc => {
                front::write_links(old_text.as_deref().unwrap_or(""), &source.id, &list).map_err(
                    |e| {
                        ToolError::new(
                            ErrorCode::ToolExecutionFailed,
                            format!("cannot write the links of {rel}: {e}"),
                        )
                    },
                )?
            }
            _ => front::sidecar_text(source, &list),
        };
        if old_text.as_deref() != Some(new_text.as_str()) {
            write_atomically(&path, &new_text).map_err(|e| io_error(&rel, "write", &e))?;
        }
        self.replace(Arc::new(snap.with_file(&rel, &new_text)));
        Ok((rel, outcomes))
    }
}

/// Refuses links to a doc that does not exist, a doc's link to itself, and links from
/// a doc that does not exist.
fn check_link_ends(
    snap: &Snapshot,
    source: &Source,
    changes: &[(String, Relation)],
) -> Result<(), ToolError> {
    for (target, _) in changes {
        if snap.doc(target).is_none() {
            return Err(doc_not_found(snap, target, "target_doc_id"));
        }
        if source.kind == SourceKind::Doc && &source.id == target {
            return Err(ToolError::field(
                ErrorCode::ValidationInvalidValue,
                "target_doc_id",
                "a doc cannot link to itself",
            ));
        }
    }
    if source.kind == SourceKind::Doc && snap.doc(&source.id).is_none() {
        return Err(doc_not_found(snap, &source.id, "source_id"));
    }
    Ok(())
}

/// The links of `source` its file (`rel`, holding `text` when it exists) declares now,
/// the first of each target. A doc's file must exist; a sidecar may not yet.
fn links_in_file(
    text: Option<&str>,
    source: &Source,
    rel: &str,
) -> Result<Vec<(String, Relation)>, ToolError> {
    let declared = match (text, source.kind) {
        (None, SourceKind::Doc) => {
            return Err(ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("{rel} is gone from the docs root; run structs_docs_sync"),
            ));
        }
        (None, _) => Vec::new(),
        (Some(text), SourceKind::Doc) => front_matter_links(text, source, rel)?,
        (Some(text), _) => sidecar_links(text, source, rel)?,
    };
    let mut list: Vec<(String, Relation)> = Vec::new();
    for d in declared {
        if !list.iter().any(|(t, _)| *t == d.target) {
            list.push((d.target, d.relation));
        }
    }
    Ok(list)
}

/// The links of `source` a doc's front matter declares; refused when the front matter
/// does not parse, or a rewrite would lose or change some of its link entries.
fn front_matter_links(
    text: &str,
    source: &Source,
    rel: &str,
) -> Result<Vec<front::Declared>, ToolError> {
    let Some(yaml) = front::split(text).yaml else {
        return Ok(Vec::new());
    };
    let meta = front::parse(yaml, &source.id).map_err(|e| {
        ToolError::new(
            ErrorCode::ValidationError,
            format!(
                "the front matter of {rel} is not valid YAML ({e}); fix it before writing links"
            ),
        )
    })?;
    if !meta.link_trouble.is_empty() {
        return Err(rewrite_would_lose(rel, &meta.link_trouble));
    }
    Ok(meta
        .links
        .into_iter()
        .filter(|d| &d.source == source)
        .collect())
}

/// The links a sidecar declares; refused when it does not parse, holds another
/// source's links, or has entries a rewrite would lose.
fn sidecar_links(
    text: &str,
    source: &Source,
    rel: &str,
) -> Result<Vec<front::Declared>, ToolError> {
    let sidecar = front::parse_sidecar(text).map_err(|e| {
        ToolError::new(
            ErrorCode::ValidationError,
            format!("{rel} cannot be read ({e}); fix it before writing links"),
        )
    })?;
    if &sidecar.source != source {
        return Err(ToolError::new(
            ErrorCode::ValidationError,
            format!(
                "{rel} holds the links of {}, not {}; fix the file first",
                sidecar.source.label(),
                source.label()
            ),
        ));
    }
    if !sidecar.problems.is_empty() {
        return Err(rewrite_would_lose(rel, &sidecar.problems));
    }
    Ok(sidecar.links)
}

/// A pair declared twice in the file `rel` (a legacy field and `links`) keeps the
/// relation the index uses, so a rewrite never flips it.
fn keep_relations_in_use(
    snap: &Snapshot,
    source: &Source,
    rel: &str,
    list: &mut [(String, Relation)],
) {
    for (target, relation) in list {
        if let Some(l) = snap.graph.between(source, target)
            && l.org == Origin::Explicit
            && l.declared_in == rel
        {
            *relation = l.rel;
        }
    }
}

/// Sets each asked-for link in `list` (replacing its relation, or adding it), and says
/// what each did to the link the index had.
fn apply_changes(
    snap: &Snapshot,
    source: &Source,
    changes: &[(String, Relation)],
    list: &mut Vec<(String, Relation)>,
) -> Vec<Upserted> {
    let mut outcomes = Vec::new();
    for (target, relation) in changes {
        let before = snap.graph.between(source, target);
        match list.iter_mut().find(|(t, _)| t == target) {
            Some(entry) => entry.1 = *relation,
            None => list.push((target.clone(), *relation)),
        }
        let outcome = match before {
            None => "created",
            Some(l) if l.rel == *relation && l.org == Origin::Explicit => "unchanged",
            Some(_) => "updated",
        };
        outcomes.push(Upserted {
            target_doc_id: target.clone(),
            relation: relation.as_str(),
            outcome,
            previous_relation: before.map(|l| l.relation),
            previous_origin: before.map(|l| l.origin),
        });
    }
    outcomes
}

/// The file in a docs folder that writers lock (an advisory `flock`), so that processes
/// serving the same folder take turns.
pub const LOCK_FILE: &str = ".structs-docs.lock";

/// How long a write waits for another process to release the folder's lock.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The folder's write lock, held until dropped (closing the file releases it).
pub(super) struct RootLock(#[allow(dead_code)] std::fs::File);

impl RootLock {
    /// Takes the lock of `root`, waiting up to `wait` for another holder; refuses with
    /// `RESOURCE_UNAVAILABLE` when it cannot be had, so nothing is written unlocked.
    pub(super) fn take(root: &Path, wait: std::time::Duration) -> Result<RootLock, ToolError> {
        use std::os::fd::AsRawFd as _;
        refuse_symlinks(root, LOCK_FILE)?;
        let refused = |why: String| {
            ToolError::new(
                ErrorCode::ResourceUnavailable,
                format!("cannot lock the docs folder for writing ({why}); nothing was changed"),
            )
            .with_extra("lock_file", serde_json::json!(LOCK_FILE))
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(root.join(LOCK_FILE))
            .map_err(|e| refused(format!("{LOCK_FILE}: {e}")))?;
        let deadline = std::time::Instant::now() + wait;
        loop {
            // SAFETY: flock on a descriptor this function owns; no memory is shared.
            let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if r == 0 {
                return Ok(RootLock(file));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::WouldBlock {
                return Err(refused(format!("{LOCK_FILE}: {e}")));
            }
            if std::time::Instant::now() >= deadline {
                return Err(refused(format!(
                    "another process has held it for over {} s",
                    wait.as_secs()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

pub(super) fn io_error(rel: &str, what: &str, e: &std::io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::ToolExecutionFailed,
        format!("cannot {what} {rel}: {e}; nothing was changed"),
    )
}

/// Writes `text` to a new temporary file beside `path` (created, never opened through
/// an existing name), flushes it to disk with the old file's permissions, then renames
/// it over `path`: a reader sees the old file or the new one, never half of one.
pub(super) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("doc");
    let unique = format!(
        "{}.{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let tmp = dir.join(format!(".{name}.{unique}.tmp"));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Refuses a write to `rel` under `root` when any part of the path is a symbolic
/// link: the index never follows them, and a write must not either.
pub(super) fn refuse_symlinks(root: &Path, rel: &str) -> Result<(), ToolError> {
    let mut at = root.to_path_buf();
    for part in rel.split('/') {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(ToolError::new(
                    ErrorCode::ValidationError,
                    format!(
                        "{rel}: {} is a symbolic link; links are only written to files inside \
                         the docs root",
                        at.strip_prefix(root).unwrap_or(&at).display()
                    ),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_error(rel, "check", &e)),
        }
    }
    Ok(())
}

/// The error for a file whose links a rewrite would change beyond the one asked for.
pub(super) fn rewrite_would_lose(rel: &str, trouble: &[String]) -> ToolError {
    ToolError::new(
        ErrorCode::ValidationError,
        format!(
            "{rel} has link entries a rewrite would lose or change ({}); fix them by hand, \
             then write the link again",
            trouble.join("; ")
        ),
    )
    .with_extra("problems", serde_json::json!(trouble))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock is exclusive between open files (as between processes), refuses
    /// clearly when it cannot be had in time, and is free again once dropped.
    #[test]
    fn the_folder_lock_is_taken_in_turn() {
        let dir = std::env::temp_dir().join(format!("structs-docs-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let held = RootLock::take(&dir, LOCK_WAIT).unwrap();
        let e = RootLock::take(&dir, std::time::Duration::from_millis(50))
            .err()
            .expect("a second holder waits, then is refused");
        assert_eq!(e.code, ErrorCode::ResourceUnavailable);
        assert!(
            e.message.contains("another process has held it"),
            "{}",
            e.message
        );
        drop(held);
        assert!(RootLock::take(&dir, std::time::Duration::from_millis(50)).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
