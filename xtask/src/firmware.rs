//! `cargo xtask firmware-run [--machine lm3s6965evb|mps2-an385] [--model FILE]`: train (or import)
//! the machine's model, bake it into the firmware, build it and run it under QEMU.
//!
//! Also the shared plumbing of the other firmware commands (`firmware-test`, `footprint`):
//! installing the missing tools, preparing the models in `firmware-example/target/models/`,
//! building the firmware with cargo and running an ELF under QEMU with a timeout.
//!
//! Models: `lm3s6965evb` gets a small vocabulary trained by `host-trainer train` on the sample in
//! `firmware-example/sample/`; `mps2-an385` gets GPT-2, imported by `host-trainer import` from
//! the tiktoken rank file in `tests/fixtures/models/`. The path reaches the firmware's build
//! script through `PICOBPE_MODEL`; `--model FILE` (or `PICOBPE_MODEL` in the environment) bakes
//! any other model instead.

pub mod vectors;

use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

/// Vocabulary size of the small model trained for the lm3s6965evb.
const SMALL_VOCAB: &str = "4096";
/// Wall-clock limit for one firmware run under QEMU.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// A line QEMU's lm3s6965evb model prints on every boot (a timer it leaves unconfigured).
const QEMU_NOISE: &str = "Timer with period zero, disabling";

/// A QEMU machine the firmware supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    /// TI Stellaris LM3S6965 evaluation board: 256 KiB flash, 64 KiB RAM.
    Lm3s6965evb,
    /// Arm MPS2 with the AN385 image: 4 MiB code memory, 4 MiB RAM.
    Mps2An385,
}

impl Machine {
    /// Both machines, in the order the commands run them.
    pub const ALL: [Machine; 2] = [Machine::Lm3s6965evb, Machine::Mps2An385];

    /// QEMU's name for the machine (also the cargo feature name).
    pub fn name(self) -> &'static str {
        match self {
            Machine::Lm3s6965evb => "lm3s6965evb",
            Machine::Mps2An385 => "mps2-an385",
        }
    }

    /// Parses a machine name.
    pub fn parse(s: &str) -> Result<Self, String> {
        Machine::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown machine `{s}` (expected lm3s6965evb or mps2-an385)"))
    }

    /// Cargo arguments that select the machine's feature.
    fn feature_args(self) -> Vec<&'static str> {
        match self {
            Machine::Lm3s6965evb => vec![],
            Machine::Mps2An385 => vec!["--no-default-features", "--features", "mps2-an385"],
        }
    }

    /// Short name of the machine's default model.
    pub fn model_name(self) -> &'static str {
        match self {
            Machine::Lm3s6965evb => "small (4096 ids, trained on the bundled sample)",
            Machine::Mps2An385 => "gpt2 (50257 ids, imported from tiktoken)",
        }
    }
}

/// Parsed `--machine`/`--model` options shared by the firmware commands.
pub struct Options {
    /// Machines to run (one, or both when `--machine` is absent and `all_by_default`).
    pub machines: Vec<Machine>,
    /// A user model that replaces the machine's default model.
    pub model: Option<PathBuf>,
    /// Arguments not understood here.
    pub rest: Vec<String>,
}

/// Parses `--machine M` and `--model FILE`; without `--machine`, `default` machines are used.
pub fn parse_options(args: &[String], default: &[Machine]) -> Result<Options, String> {
    let mut machines = Vec::new();
    let mut model = std::env::var_os("PICOBPE_MODEL").map(PathBuf::from);
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--machine" => {
                let v = it.next().ok_or("--machine needs a value")?;
                machines.push(Machine::parse(v)?);
            }
            "--model" => {
                let v = it.next().ok_or("--model needs a value")?;
                let p = PathBuf::from(v);
                model = Some(p.canonicalize().map_err(|e| format!("--model {v}: {e}"))?);
            }
            _ => {
                if let Some(v) = a.strip_prefix("--machine=") {
                    machines.push(Machine::parse(v)?);
                } else {
                    rest.push(a.clone());
                }
            }
        }
    }
    if machines.is_empty() {
        machines = default.to_vec();
    }
    Ok(Options {
        machines,
        model,
        rest,
    })
}

/// Entry point of `firmware-run`.
pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse_options(args, &[Machine::Lm3s6965evb])?;
    if let Some(a) = opts.rest.first() {
        return Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask firmware-run [--machine lm3s6965evb|mps2-an385] [--model FILE]"
        ));
    }
    ensure_tools()?;
    for machine in opts.machines {
        let model = match &opts.model {
            Some(m) => m.clone(),
            None => {
                println!("== preparing the {} model", machine.model_name());
                prepare_model(machine)?
            }
        };
        println!(
            "== firmware on {} with model {}",
            machine.name(),
            model.display()
        );
        let elf = build(&Build::new(machine, &model), Artifact::Firmware)?
            .pop()
            .ok_or("cargo built no firmware binary")?;
        let out = run_qemu(machine, &elf, &[], &[], RUN_TIMEOUT)?;
        print!("{}", out.stdout);
        eprint!("{}", out.stderr);
        match out.status {
            Some(0) => {}
            Some(code) => return Err(format!("firmware exited with status {code}")),
            None => return Err(format!("firmware timed out after {RUN_TIMEOUT:?}")),
        }
    }
    Ok(())
}

/// The repository root (xtask's manifest dir is `<root>/xtask`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// The firmware's cargo workspace.
pub fn firmware_dir() -> PathBuf {
    repo_root().join("firmware-example")
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
}

/// Installs what the firmware commands need, or stops with the command to run.
pub fn ensure_tools() -> Result<(), String> {
    ensure_target("thumbv7m-none-eabi")?;
    ensure_qemu()
}

/// Installs a rustup target when missing, or says which command to run.
pub fn ensure_target(target: &str) -> Result<(), String> {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|e| {
            format!("rustup not found ({e}); install rustup, then run `rustup target add {target}`")
        })?;
    if String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == target)
    {
        return Ok(());
    }
    println!("== rustup target add {target}");
    let ok = Command::new("rustup")
        .args(["target", "add", target])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "could not install the target; run `rustup target add {target}`"
        ))
    }
}

fn qemu_present() -> bool {
    Command::new("qemu-system-arm")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn ensure_qemu() -> Result<(), String> {
    const INSTALL: &str =
        "apt-get update && apt-get install -y --no-install-recommends qemu-system-arm";
    if qemu_present() {
        return Ok(());
    }
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let has_apt = Command::new("apt-get")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok();
    if !(is_root && has_apt) {
        return Err(format!(
            "qemu-system-arm is not installed; run `sudo sh -c '{INSTALL}'` (Debian/Ubuntu) or install QEMU's Arm system emulator"
        ));
    }
    println!("== {INSTALL}");
    let ok = Command::new("sh")
        .args(["-c", INSTALL])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok && qemu_present() {
        Ok(())
    } else {
        Err(format!("installing QEMU failed; run `{INSTALL}`"))
    }
}

/// Builds (or refreshes) the machine's default model under `firmware-example/target/models/` and
/// returns its path. The file is rewritten only when its bytes change, so the firmware is rebuilt
/// only when the model really changed.
pub fn prepare_model(machine: Machine) -> Result<PathBuf, String> {
    let root = repo_root();
    let models = firmware_dir().join("target").join("models");
    let scratch = models.join("scratch");
    let _ = fs::remove_dir_all(&scratch);
    fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let (args, produced, dest): (Vec<OsString>, PathBuf, PathBuf) = match machine {
        Machine::Lm3s6965evb => {
            let sample = firmware_dir().join("sample").join("english-sample.txt");
            (
                vec![
                    "train".into(),
                    "--input".into(),
                    sample.into(),
                    "--vocab-size".into(),
                    SMALL_VOCAB.into(),
                    "--special-token".into(),
                    "<|endoftext|>".into(),
                    "--quiet".into(),
                    "--out".into(),
                    scratch.clone().into(),
                ],
                scratch.join("tokenizer.model"),
                models.join("small.model"),
            )
        }
        Machine::Mps2An385 => {
            let rank_file = gpt2_rank_file(&root)?;
            let out = scratch.join("gpt2.model");
            (
                vec![
                    "import".into(),
                    "--tiktoken".into(),
                    rank_file.into(),
                    "--pattern".into(),
                    "gpt2".into(),
                    "--special".into(),
                    "<|endoftext|>=50256".into(),
                    "--out".into(),
                    out.clone().into(),
                ],
                out,
                models.join("gpt2.model"),
            )
        }
    };
    let status = cargo()
        .current_dir(&root)
        .args(["run", "--quiet", "--release", "-p", "host-trainer", "--"])
        .args(&args)
        // Progress lines go to stderr, so a command's stdout stays its own (e.g. a table).
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "host-trainer {} failed ({status})",
            args[0].to_string_lossy()
        ));
    }
    replace_if_changed(&produced, &dest)?;
    if machine == Machine::Lm3s6965evb {
        // Keep the GPT-2-style vocabulary files: the small model's reference vectors come
        // from them (see `vectors::prepare_small`).
        for f in ["vocab.json", "merges.txt"] {
            replace_if_changed(&scratch.join(f), &models.join(format!("small.{f}")))?;
        }
    }
    let _ = fs::remove_dir_all(&scratch);
    Ok(dest)
}

/// Moves `from` over `to` unless `to` already has the same bytes (keeps its mtime then).
fn replace_if_changed(from: &Path, to: &Path) -> Result<(), String> {
    let new = fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?;
    if fs::read(to).ok().as_deref() != Some(&new[..]) {
        fs::rename(from, to).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    Ok(())
}

/// The GPT-2 tiktoken rank file: the committed fixture, else the shared data set.
fn gpt2_rank_file(root: &Path) -> Result<PathBuf, String> {
    let candidates = [
        root.join("tests/fixtures/models/gpt2.tiktoken"),
        root.join("../shared/data/tiktoken/gpt2.tiktoken"),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "GPT-2 rank file not found (looked at {})",
                candidates[0].display()
            )
        })
}

/// The inputs of one firmware build.
#[derive(Clone, Copy)]
pub struct Build<'a> {
    /// Target machine.
    pub machine: Machine,
    /// Model file to bake.
    pub model: &'a Path,
    /// Conformance vectors to embed (tests only) and the name of their reference.
    pub vectors: Option<(&'a Path, &'static str)>,
    /// Whole-piece table, `minimal` or `full` (`PICOBPE_PIECES`); `None` keeps the environment's
    /// choice (default `minimal`).
    pub pieces: Option<&'static str>,
}

impl<'a> Build<'a> {
    /// A build of `model` for `machine`, no vectors, default pieces.
    pub fn new(machine: Machine, model: &'a Path) -> Self {
        Build {
            machine,
            model,
            vectors: None,
            pieces: None,
        }
    }
}

/// What to build.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Artifact {
    /// The demo/footprint binary.
    Firmware,
    /// The on-target test binaries.
    Tests,
}

/// Builds the firmware (release profile) for `machine` with `model` baked in (and, for the tests,
/// the conformance `vectors` embedded) and returns the paths of the ELF files cargo produced.
pub fn build(spec: &Build<'_>, what: Artifact) -> Result<Vec<PathBuf>, String> {
    let Build {
        machine,
        model,
        vectors,
        pieces,
    } = *spec;
    let mut cmd = cargo();
    cmd.current_dir(firmware_dir());
    match what {
        Artifact::Firmware => cmd.args(["build", "--release", "--bins"]),
        Artifact::Tests => cmd.args(["test", "--release", "--no-run", "--tests"]),
    };
    match vectors {
        Some((v, reference)) => cmd
            .env("PICOBPE_VECTORS", v)
            .env("PICOBPE_VECTORS_REF", reference),
        None => cmd
            .env_remove("PICOBPE_VECTORS")
            .env_remove("PICOBPE_VECTORS_REF"),
    };
    if let Some(p) = pieces {
        cmd.env("PICOBPE_PIECES", p);
    }
    cmd.args(machine.feature_args())
        .args(["--message-format", "json-render-diagnostics"])
        .env("PICOBPE_MODEL", model)
        .stderr(Stdio::inherit())
        .stdout(Stdio::piped());
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the firmware for {} failed",
            machine.name()
        ));
    }
    let mut elves = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        // `cargo test` also builds the binaries (for CARGO_BIN_EXE_*); keep what was asked for.
        let is_test = msg["profile"]["test"].as_bool().unwrap_or(false);
        if is_test != (what == Artifact::Tests) {
            continue;
        }
        if let Some(exe) = msg["executable"].as_str() {
            elves.push(PathBuf::from(exe));
        }
    }
    Ok(elves)
}

/// What a QEMU run printed and how it ended.
pub struct RunOutput {
    /// Exit status (the semihosting exit code); `None` when the run timed out and was killed.
    pub status: Option<i32>,
    /// Everything the firmware printed to stdout.
    pub stdout: String,
    /// QEMU's and the firmware's stderr, without QEMU's known boot noise.
    pub stderr: String,
}

/// Runs `elf` on `machine` with semihosting arguments `args` and extra QEMU options `qemu_opts`,
/// killing QEMU after `timeout`.
pub fn run_qemu(
    machine: Machine,
    elf: &Path,
    args: &[String],
    qemu_opts: &[&str],
    timeout: Duration,
) -> Result<RunOutput, String> {
    let mut semihosting = String::from("enable=on,target=native");
    for a in args {
        semihosting.push_str(",arg=");
        semihosting.push_str(a);
    }
    let mut child = Command::new("qemu-system-arm")
        .args(["-cpu", "cortex-m3", "-machine", machine.name()])
        .args(["-nographic", "-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", &semihosting])
        .args(qemu_opts)
        .arg("-kernel")
        .arg(elf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start qemu-system-arm: {e}"))?;
    // Drain both pipes on threads so a chatty firmware cannot block on a full pipe.
    let mut so = child.stdout.take().ok_or("no stdout pipe")?;
    let mut se = child.stderr.take().ok_or("no stderr pipe")?;
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = so.read_to_end(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        s
    });
    let status = match child
        .wait_timeout(timeout)
        .map_err(|e| format!("waiting for qemu: {e}"))?
    {
        Some(s) => Some(s.code().unwrap_or(-1)),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default())
        .lines()
        .filter(|l| l.trim() != QEMU_NOISE)
        .map(|l| format!("{l}\n"))
        .collect();
    Ok(RunOutput {
        status,
        stdout,
        stderr,
    })
}
