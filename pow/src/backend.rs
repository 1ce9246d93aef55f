//! What the process hashes on, chosen once at start (`--pow-backend`): the CPU pool, or
//! a GPU through wgpu when this build has it and a GPU answers.
//!
//! [`choose`] opens the GPU when asked (or, for `auto`, to see whether it is a discrete
//! one), falls back to the CPU pool with the reason when it cannot, and makes the pool
//! it chose the one every search uses ([`global`]).

use crate::pool::{Pool, cores};

/// The backend asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// A discrete GPU when there is one, else the CPU.
    Auto,
    Cpu,
    /// The GPU wgpu prefers, whatever its kind (a software driver included); the CPU
    /// when there is none.
    Gpu,
}

impl Choice {
    pub fn parse(text: &str) -> Option<Choice> {
        match text {
            "auto" => Some(Choice::Auto),
            "cpu" => Some(Choice::Cpu),
            "gpu" => Some(Choice::Gpu),
            _ => None,
        }
    }
}

/// What was chosen: the pool, what it hashes on, and why the GPU was not taken when it
/// was asked for (or, for `auto`, looked at) and not taken.
pub struct Chosen {
    pub pool: Pool,
    /// `cpu`, or `gpu: ADAPTER (KIND, BACKEND)`.
    pub engine: String,
    #[cfg(feature = "gpu")]
    gpu: Option<std::sync::Arc<crate::gpu::Gpu>>,
    pub fallback: Option<String>,
    /// The GPU taken is the CPU under a GPU's interface (lavapipe and the like).
    pub emulated: bool,
}

static ASKED: std::sync::OnceLock<Choice> = std::sync::OnceLock::new();
/// What a person should know of the engine chosen: why `auto` left the GPU, why `gpu`
/// found none, or that the GPU taken is the CPU under a GPU's interface.
static NOTE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// What a person should know of the engine the searches hash on, once the first
/// search has chosen it: `None` when there is nothing to say.
pub fn note() -> Option<String> {
    NOTE.get().cloned()
}

/// The note for what `asked` got: the fallback's reason, or the warning that the GPU
/// taken is a CPU emulation.
fn note_for(asked: Choice, chosen: &Chosen) -> Option<String> {
    match (&chosen.fallback, asked) {
        (Some(why), Choice::Gpu) => Some(format!(
            "--pow-backend gpu found no GPU to run on, so the CPU hashes: {why}"
        )),
        (Some(why), _) => Some(format!("the CPU hashes, not the GPU: {why}")),
        (None, _) if chosen.emulated => Some(format!(
            "{} is a CPU emulation of a GPU: it is seldom faster than the CPU kernel \
             (--pow-backend cpu, or auto, hashes on the CPU)",
            chosen.engine.trim_start_matches("gpu: ")
        )),
        (None, _) => None,
    }
}
/// The GPU the process's pool hashes on, when it does: asked whether it has failed.
#[cfg(feature = "gpu")]
static GPU: std::sync::OnceLock<std::sync::Arc<crate::gpu::Gpu>> = std::sync::OnceLock::new();

/// Says what the process's pool should hash on, before the first search; the GPU is
/// opened when that search starts, not before. False when it was already said.
pub fn configure(choice: Choice) -> bool {
    ASKED.set(choice).is_ok()
}

/// The pool every search uses unless given another: on what [`configure`] asked
/// for, made at the first search. It lives here, with what chooses it, so that the
/// pool itself knows nothing of backends.
pub fn global() -> &'static Pool {
    static GLOBAL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
    GLOBAL.get_or_init(global_pool)
}

/// The pool [`global`] makes on first use: what [`configure`] asked for (`auto` when
/// nothing was), the reason logged once when the GPU could not be had.
fn global_pool() -> Pool {
    let asked = ASKED.get().copied().unwrap_or(Choice::Auto);
    let chosen = choose(asked);
    let note = note_for(asked, &chosen);
    match (&note, asked, chosen.emulated) {
        (Some(note), Choice::Gpu, _) | (Some(note), _, true) => {
            tracing::warn!("proof-of-work: {note}");
        }
        (Some(note), _, _) => tracing::info!("proof-of-work: {note}"),
        (None, _, _) => tracing::info!(engine = %chosen.engine, "proof-of-work engine"),
    }
    if let Some(note) = note {
        let _ = NOTE.set(note);
    }
    #[cfg(feature = "gpu")]
    if let Some(gpu) = chosen.gpu {
        let _ = GPU.set(gpu);
    }
    chosen.pool
}

/// What searches hash on: `cpu`, `gpu: ADAPTER (KIND, BACKEND)`, or, once that GPU
/// has failed, `cpu (the GPU ADAPTER failed: WHY)`; `cpu` until the first search has
/// chosen.
pub fn engine() -> String {
    #[cfg(feature = "gpu")]
    if let Some(gpu) = GPU.get() {
        return match gpu.failed() {
            Some(why) => format!("cpu (the GPU {} failed: {why})", gpu.describe()),
            None => format!("gpu: {}", gpu.describe()),
        };
    }
    "cpu".to_string()
}

/// The name an answer gives for what ran a search: the GPU when the process hashes on
/// one (and it has not failed), else the CPU kernel.
pub fn kernel_name(cpu: crate::Kernel) -> String {
    #[cfg(feature = "gpu")]
    if let Some(gpu) = GPU.get()
        && gpu.failed().is_none()
    {
        return format!("gpu: {}", gpu.describe());
    }
    cpu.name().to_string()
}

/// Opens what `choice` asks for; the CPU pool when the GPU cannot be had.
pub fn choose(choice: Choice) -> Chosen {
    let cpu = |fallback: Option<String>| Chosen {
        pool: Pool::new(cores()),
        engine: "cpu".to_string(),
        fallback,
        emulated: false,
        #[cfg(feature = "gpu")]
        gpu: None,
    };
    match choice {
        Choice::Cpu => cpu(None),
        Choice::Auto | Choice::Gpu => match open(choice) {
            Ok(chosen) => chosen,
            Err(why) => cpu(Some(why)),
        },
    }
}

#[cfg(feature = "gpu")]
fn open(choice: Choice) -> Result<Chosen, String> {
    if choice == Choice::Auto {
        // Looked at before a device is opened and a kernel built for it.
        let info = crate::gpu::preferred_adapter()?;
        if info.device_type != wgpu::DeviceType::DiscreteGpu {
            return Err(format!(
                "the only GPU is {}, not a discrete one",
                crate::gpu::describe_adapter(&info)
            ));
        }
    }
    let gpu = crate::gpu::Gpu::open()?;
    let engine = format!("gpu: {}", gpu.describe());
    let emulated = gpu.is_emulated();
    let gpu = std::sync::Arc::new(gpu);
    Ok(Chosen {
        pool: Pool::with_gpu(gpu.clone()),
        engine,
        fallback: None,
        emulated,
        gpu: Some(gpu),
    })
}

#[cfg(not(feature = "gpu"))]
fn open(_: Choice) -> Result<Chosen, String> {
    Err("this build has no GPU backend (built without the `gpu` feature)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_is_taken_when_asked_and_when_the_gpu_cannot_be_had() {
        let cpu = choose(Choice::Cpu);
        assert_eq!(note_for(Choice::Cpu, &cpu), None);
        assert_eq!((cpu.engine.as_str(), cpu.fallback), ("cpu", None));
        assert!(!cpu.pool.on_gpu());
        let gpu = choose(Choice::Gpu);
        let auto = choose(Choice::Auto);
        if let Some(why) = &gpu.fallback {
            // No GPU here (or a build without the backend): the CPU, saying why.
            assert_eq!(gpu.engine, "cpu");
            assert!(!why.is_empty());
            assert_eq!(auto.engine, "cpu");
        } else {
            assert!(gpu.pool.on_gpu(), "{}", gpu.engine);
            assert!(gpu.engine.starts_with("gpu: "), "{}", gpu.engine);
            // auto takes it only when it is a discrete GPU.
            let discrete = gpu.engine.contains("DiscreteGpu");
            assert_eq!(auto.pool.on_gpu(), discrete, "{}", auto.engine);
            if !discrete {
                let why = auto.fallback.as_deref().unwrap_or_default();
                assert!(why.contains("not a discrete one"), "{why}");
                let note = note_for(Choice::Auto, &auto).unwrap_or_default();
                assert!(
                    note.starts_with("the CPU hashes, not the GPU: the only GPU is"),
                    "{note}"
                );
            }
            // A software GPU (lavapipe, as CI installs) is taken when asked for, with
            // the warning that it is the CPU under another name.
            if gpu.engine.contains("(Cpu,") {
                assert!(gpu.emulated);
                let note = note_for(Choice::Gpu, &gpu).unwrap_or_default();
                assert!(note.contains("is a CPU emulation of a GPU"), "{note}");
            } else {
                assert!(!gpu.emulated);
            }
        }
    }
}
