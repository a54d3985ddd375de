// SPDX-License-Identifier: MIT
// Build script of tkbench's Tokio harness: records, for `--describe`, the
// compiler that built it (rustc --version) and the tokio version cargo
// resolved (from the package's Cargo.lock, which cargo writes before any
// build script runs).
use std::env;
use std::fs;
use std::path::Path;
use std::process::Command;

fn rustc_version() -> String {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "rustc (unknown version)".to_string())
}

/// The version of the `tokio` package in Cargo.lock: the line after
/// `name = "tokio"`.
fn tokio_version(manifest_dir: &str) -> String {
    let lock = Path::new(manifest_dir).join("Cargo.lock");
    let text = fs::read_to_string(lock).unwrap_or_default();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"tokio\"" {
            if let Some(v) = lines.next() {
                if let Some(rest) = v.trim().strip_prefix("version = \"") {
                    return rest.trim_end_matches('"').to_string();
                }
            }
        }
    }
    "(unknown version)".to_string()
}

fn main() {
    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    println!("cargo:rustc-env=TKB_RUSTC_VERSION={}", rustc_version());
    println!("cargo:rustc-env=TKB_TOKIO_VERSION={}", tokio_version(&dir));
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
