//! Embeds the project's own documentation (`docs/`) into the binary: the default root
//! of the reference docs. Writes `embedded_docs.rs` with every `.md` and `.meta.yaml`
//! file as `(path relative to docs/, text)`, in path order.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if path.is_dir() {
            collect(&path, &rel, out);
        } else if name.ends_with(".md") || name.ends_with(".meta.yaml") {
            out.push((rel, path));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    println!("cargo:rerun-if-changed=docs");
    let mut files = Vec::new();
    collect(&root, "", &mut files);
    files.sort();
    let mut code = String::from(
        "/// The project's `docs/` folder: (path relative to it, text), in path order.\n\
         pub static EMBEDDED_DOCS: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &files {
        writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded_docs.rs");
    std::fs::write(out, code).unwrap();
}
