//! `cargo xtask wasm-test`: the C API on `wasm32-unknown-unknown`, run by Node. Builds
//! `picobpe-capi` as a cdylib for that target (release, gpt2's tables baked in, symbols and
//! debug info stripped at link time with `-C strip=symbols`), then runs
//! `capi/wasm/conformance.mjs` on the module with Node: it instantiates it with no imports and
//! checks every committed gpt2 reference vector (`tests/fixtures/vectors/`, the sets
//! `capi/tests/c_api.rs` uses) through every exported function, with the checks
//! `capi/tests/conformance.c` makes on the host: one-shot encode both ways, encode resumed
//! through 7 ids, count, decode one-shot and through 5 bytes, the streaming encoder and decoder
//! (their state in the module's memory), the cached encode, and the refusal of null pointers
//! and of an unknown id.
//!
//! The script prints a summary (cases, checks, failures) and a footprint row: the module's size
//! and its code and data sections, and the encode throughput of the one-shot encodes in this
//! run (informational, never asserted). Installs the rustup target when missing; Node (18 or
//! newer) must be installed. Fails on any failing check.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::firmware::{ensure_target, repo_root};

/// The rustup target.
const TARGET: &str = "wasm32-unknown-unknown";
/// How to get Node on Debian or Ubuntu.
const NODE_INSTALL: &str = "apt-get install nodejs";

/// Entry point of `wasm-test` (no arguments).
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!("unexpected argument `{a}` (wasm-test takes none)"));
    }
    ensure_target(TARGET)?;
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| {
            format!("node not found ({e}); install Node.js 18 or newer: `{NODE_INSTALL}`")
        })?;
    println!(
        "== picobpe-capi for {TARGET} (Node {})",
        String::from_utf8_lossy(&node.stdout).trim()
    );
    let wasm = build_module()?;
    let root = repo_root();
    let status = Command::new("node")
        .arg(root.join("capi/wasm/conformance.mjs"))
        .arg(&wasm)
        .arg(root.join("tests/fixtures/vectors"))
        .status()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the wasm conformance run failed ({status})"))
    }
}

/// Builds the cdylib and returns the `.wasm` path, as cargo reports it.
fn build_module() -> Result<PathBuf, String> {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(repo_root())
        .args(["rustc", "-p", "picobpe-capi", "--release"])
        .args(["--target", TARGET, "--crate-type", "cdylib"])
        .args(["--message-format", "json-render-diagnostics"])
        .args(["--", "-C", "strip=symbols"])
        // The vectors are gpt2's: bake gpt2 whatever the environment says.
        .env_remove("PICOBPE_MODEL")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building picobpe-capi for {TARGET} failed ({})",
            out.status
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| {
            msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "picobpe_capi"
        })
        .flat_map(|msg| {
            msg["filenames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().filter(|f| f.ends_with(".wasm")))
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        })
        .last()
        .ok_or_else(|| "cargo reported no .wasm for picobpe-capi".into())
}
