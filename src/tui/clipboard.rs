//! Where the console copies text: the system clipboard, the terminal (OSC 52) when
//! there is none, or whatever a test puts in their place.

use std::io::Write;

use base64::Engine as _;

/// Which way a copy went, for the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copied {
    /// Into the system clipboard.
    System,
    /// Through the terminal, as an OSC 52 sequence: the terminal (even over SSH)
    /// puts the text on its own clipboard, when it allows programs to.
    Terminal,
}

impl Copied {
    /// "to the system clipboard", "through the terminal (OSC 52)".
    pub fn way(self) -> &'static str {
        match self {
            Copied::System => "to the system clipboard",
            Copied::Terminal => "through the terminal (OSC 52)",
        }
    }
}

/// Copies a call's trace id (`trace`, `None` when it ran in none) to `clipboard`, when
/// the pane has one: what the status line says either way.
///
/// # Errors
///
/// Why nothing was copied.
pub fn copy_trace(
    clipboard: Option<&mut Box<dyn Clipboard>>,
    trace: Option<&str>,
) -> Result<String, String> {
    let trace = trace.ok_or("this call ran in no trace")?;
    let clipboard = clipboard.ok_or("no clipboard here")?;
    let way = clipboard.copy(trace)?;
    Ok(format!("copied trace {trace} {}", way.way()))
}

/// Something text can be copied to.
pub trait Clipboard: Send {
    /// Copies `text` and says which way it went; the error says why nothing was
    /// copied, in words for the status line.
    fn copy(&mut self, text: &str) -> Result<Copied, String>;
}

/// The most text copied through the terminal: terminals cap what an OSC 52 sequence
/// may carry (often around 100 KB), and a longer one would be dropped unseen.
pub const OSC52_MAX_BYTES: usize = 100_000;

/// The OSC 52 sequence that puts `text` on the terminal's clipboard.
pub fn osc52(text: &str) -> String {
    format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
    )
}

/// A clipboard that falls back on the terminal: the system clipboard when there is
/// one, else an OSC 52 sequence written to the terminal (a server, SSH without X),
/// as terminal programs do.
pub struct WithTerminalFallback {
    system: Box<dyn Clipboard>,
    terminal: Box<dyn Write + Send>,
}

impl WithTerminalFallback {
    pub fn new(system: Box<dyn Clipboard>, terminal: Box<dyn Write + Send>) -> Self {
        WithTerminalFallback { system, terminal }
    }
}

impl Clipboard for WithTerminalFallback {
    fn copy(&mut self, text: &str) -> Result<Copied, String> {
        let why = match self.system.copy(text) {
            Ok(way) => return Ok(way),
            Err(why) => why,
        };
        if text.len() > OSC52_MAX_BYTES {
            return Err(format!(
                "{why}, and {} bytes are more than a terminal takes through OSC 52 ({} KB at most)",
                text.len(),
                OSC52_MAX_BYTES / 1000
            ));
        }
        self.terminal
            .write_all(osc52(text).as_bytes())
            .and_then(|()| self.terminal.flush())
            .map_err(|e| format!("{why}, and the terminal could not be written ({e})"))?;
        Ok(Copied::Terminal)
    }
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
    fn copy(&mut self, text: &str) -> Result<Copied, String> {
        if self.inner.is_none() {
            let opened = arboard::Clipboard::new()
                .map_err(|e| format!("no clipboard is available here ({e})"))?;
            self.inner = Some(opened);
        }
        let Some(clipboard) = self.inner.as_mut() else {
            return Err("no clipboard is available here".into());
        };
        clipboard
            .set_text(text)
            .map(|()| Copied::System)
            .map_err(|e| {
                // A clipboard that failed once may have lost its connection; open it
                // anew next time.
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
    fn copy(&mut self, text: &str) -> Result<Copied, String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).copy(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    struct Refuses;
    impl Clipboard for Refuses {
        fn copy(&mut self, _text: &str) -> Result<Copied, String> {
            Err("no clipboard is available here (X11 server connection timed out)".into())
        }
    }

    struct Accepts;
    impl Clipboard for Accepts {
        fn copy(&mut self, _text: &str) -> Result<Copied, String> {
            Ok(Copied::System)
        }
    }

    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);
    impl Write for Screen {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn without_a_system_clipboard_the_text_goes_through_the_terminal() {
        let screen = Screen::default();
        let mut c = WithTerminalFallback::new(Box::new(Refuses), Box::new(screen.clone()));
        assert_eq!(c.copy("5-42BUILD1NONCE7"), Ok(Copied::Terminal));
        let written = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
        // ESC ] 52 ; c ; base64 BEL
        assert_eq!(written, "\x1b]52;c;NS00MkJVSUxEMU5PTkNFNw==\x07");
        assert_eq!(Copied::Terminal.way(), "through the terminal (OSC 52)");

        // Too much for a terminal: nothing written, and the error says both whys.
        screen.0.lock().unwrap().clear();
        let e = c.copy(&"x".repeat(OSC52_MAX_BYTES + 1)).unwrap_err();
        assert!(e.contains("X11") && e.contains("OSC 52"), "{e}");
        assert!(screen.0.lock().unwrap().is_empty());
    }

    #[test]
    fn a_system_clipboard_is_used_first() {
        let screen = Screen::default();
        let mut c = WithTerminalFallback::new(Box::new(Accepts), Box::new(screen.clone()));
        assert_eq!(c.copy("text"), Ok(Copied::System));
        assert!(screen.0.lock().unwrap().is_empty());
    }
}
