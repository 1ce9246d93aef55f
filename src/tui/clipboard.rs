//! Where the console copies text: the system clipboard, or whatever a test puts in its
//! place.

/// Something text can be copied to.
pub trait Clipboard: Send {
    /// Copies `text`; the error says why nothing was copied, in words for the status
    /// line.
    fn copy(&mut self, text: &str) -> Result<(), String>;
}

/// The system clipboard through arboard (X11 on Linux, the native one elsewhere).
///
/// It is opened on the first copy and kept open: on X11 the copied text is served by
/// this process, so it stays pasteable only while the clipboard object lives. On a
/// machine without one (a server, an SSH session without X forwarding) the copy fails
/// with a message saying so, and the console goes on.
#[derive(Default)]
pub struct SystemClipboard {
    inner: Option<arboard::Clipboard>,
}

impl Clipboard for SystemClipboard {
    fn copy(&mut self, text: &str) -> Result<(), String> {
        if self.inner.is_none() {
            let opened = arboard::Clipboard::new()
                .map_err(|e| format!("no clipboard is available here ({e})"))?;
            self.inner = Some(opened);
        }
        let Some(clipboard) = self.inner.as_mut() else {
            return Err("no clipboard is available here".into());
        };
        clipboard.set_text(text).map_err(|e| {
            // A clipboard that failed once may have lost its connection; open it anew
            // next time.
            self.inner = None;
            format!("the clipboard refused the text ({e})")
        })
    }
}

/// One clipboard shared by every pane that copies (clones share it).
#[derive(Clone)]
pub struct SharedClipboard(std::sync::Arc<std::sync::Mutex<Box<dyn Clipboard>>>);

impl SharedClipboard {
    pub fn new(inner: Box<dyn Clipboard>) -> SharedClipboard {
        SharedClipboard(std::sync::Arc::new(std::sync::Mutex::new(inner)))
    }

    /// Puts another clipboard behind every clone.
    pub fn replace(&self, inner: Box<dyn Clipboard>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = inner;
    }
}

impl Clipboard for SharedClipboard {
    fn copy(&mut self, text: &str) -> Result<(), String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).copy(text)
    }
}
