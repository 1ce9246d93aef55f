//! A docs root in a temporary folder, removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use structs_console::Core;
use structs_console::docs::Docs;
use structs_console::source::sim::SimSource;

pub struct TempDocs {
    pub dir: PathBuf,
}

impl TempDocs {
    /// A new empty folder with `files` (path relative to it, text) written into it.
    pub fn new(files: &[(&str, &str)]) -> TempDocs {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "structs-docs-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let docs = TempDocs { dir };
        for (path, text) in files {
            docs.write(path, text);
        }
        docs
    }

    /// A copy of the folder `tests/data/NAME` (a server writes links through to its
    /// docs, so each test gets its own).
    pub fn copy_of(name: &str) -> TempDocs {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name);
        let docs = TempDocs::new(&[]);
        fn copy(from: &Path, to: &Path) {
            std::fs::create_dir_all(to).unwrap();
            for entry in std::fs::read_dir(from).unwrap() {
                let entry = entry.unwrap();
                let target = to.join(entry.file_name());
                if entry.file_type().unwrap().is_dir() {
                    copy(&entry.path(), &target);
                } else {
                    std::fs::copy(entry.path(), target).unwrap();
                }
            }
        }
        copy(&from, &docs.dir);
        docs
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn root(&self) -> &Path {
        &self.dir
    }

    /// A core over the demo world serving these docs (a fresh index).
    pub fn core(&self) -> Core {
        structs_console::assembly::builder(Arc::new(SimSource::demo()))
            .docs(Arc::new(Docs::dir(&self.dir).unwrap()))
            .build()
            .unwrap()
    }
}

impl Drop for TempDocs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
