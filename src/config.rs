//! The configuration file (`--config FILE`, TOML). Each table configures one part of
//! the core; command-line flags override what the file says, and a call's arguments
//! override both within the bounds set here.
//!
//! ```toml
//! [references]
//! include_references = false     # what a call gets when it does not say
//! reference_depth = 1
//! max_references = 50
//! max_parallel_queries = 5
//! reference_timeout_ms = 2000
//! cache_ttl_secs = 30
//!
//! [references.tools.structs_list_structs]
//! enabled = false
//!
//! [handles]
//! ttl_secs = 900                 # how long a result over 25 KB stays fetchable
//! cleanup_interval_secs = 60
//! store = "memory"              # or "redis://127.0.0.1:6379/0" to share handles
//! redis_prefix = "structs-console"
//! memory_limit_mb = 256          # the memory store's size; the oldest results go first
//! redis_limit_mb = 256           # the Redis store's, for every server sharing it
//!
//! [redact]                       # what recordings never hold (record::redact)
//! defaults = true                # the standard rules: tokens, keys, mnemonics
//! keys = ["(?i)^session_key$"]   # a key matching: its whole value is hidden
//! values = ['sk-live-\w{24}']    # the part of any string matching (or its group)
//! ```

use std::path::Path;

use serde::Deserialize;

use crate::handles::HandleConfig;
use crate::record::RedactConfig;
use crate::references::ReferenceConfig;

/// Everything the configuration file can set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub references: ReferenceConfig,
    pub handles: HandleConfig,
    pub redact: RedactConfig,
}

impl Config {
    /// Reads and checks a configuration file; the error names the file and the problem.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read config file {}: {e}", path.display()))?;
        Config::parse(&text).map_err(|e| format!("config file {}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        config.references.validate()?;
        config.handles.validate()?;
        config.redact.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::references::Include;

    #[test]
    fn an_empty_file_is_the_defaults() {
        let c = Config::parse("").unwrap();
        assert_eq!(c.references.max_references, 50);
        assert_eq!(c.references.include_references, Include::Off);
    }

    #[test]
    fn settings_are_read_and_checked() {
        let c =
            Config::parse("[references]\ninclude_references = \"primary\"\nreference_depth = 2\n")
                .unwrap();
        assert_eq!(c.references.include_references, Include::Primary);
        assert_eq!(c.references.reference_depth, 2);
        let e = Config::parse("[references]\nreference_depth = 5\n").unwrap_err();
        assert!(e.contains("reference_depth"), "{e}");
        let c = Config::parse("[handles]\nttl_secs = 60\n").unwrap();
        assert_eq!(c.handles.ttl_secs, 60);
        let e = Config::parse("[handles]\nttl_secs = 0\n").unwrap_err();
        assert!(e.contains("ttl_secs"), "{e}");
        assert_eq!(c.handles.memory_limit_mb, 256);
        let c = Config::parse("[handles]\nmemory_limit_mb = 8\n").unwrap();
        assert_eq!(c.handles.memory_limit_mb, 8);
        let e = Config::parse("[handles]\nmemory_limit_mb = 0\n").unwrap_err();
        assert!(e.contains("memory_limit_mb"), "{e}");
        let c = Config::parse("[redact]\nkeys = [\"(?i)^pin$\"]\n").unwrap();
        assert_eq!(c.redact.keys, ["(?i)^pin$"]);
        assert!(
            c.redact.defaults,
            "the standard rules stay on unless turned off"
        );
        let e = Config::parse("[redact]\nvalues = [\"(\"]\n").unwrap_err();
        assert!(e.contains("[redact] values rule"), "{e}");
        let e = Config::parse("[referencs]\n").unwrap_err();
        assert!(e.contains("referencs"), "{e}");
        let e = Config::parse("[references]\ninclude_references = \"most\"\n").unwrap_err();
        assert!(e.contains("include_references"), "{e}");
    }
}
