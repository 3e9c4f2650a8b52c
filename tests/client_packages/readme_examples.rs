//! The README examples of the clients, run as a reader would: each runnable code block is saved
//! to a file (or, for the packages' `examples/`, is that file, run where it lies) and run from an
//! empty folder with `openturn` on `PATH`, against the built-in `demo` provider it names — it must
//! exit 0 and print the demo's answer. Then it runs with a `config.toml` that points `demo` at a
//! provider that fails every request: it must exit non-zero and print the provider's reason.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::support::*;

/// What a failing provider answers, which a failed example must print.
pub const FAILURE_REASON: &str = "the mock provider has no scripted reply left";

/// The fenced code blocks tagged `lang` in the repository file `relative`, in order.
pub fn code_blocks(relative: &str, lang: &str) -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(relative))
        .unwrap_or_else(|error| panic!("reading {relative}: {error}"));
    let fence = format!("```{lang}\n");
    let mut blocks = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```").unwrap_or(body.len());
        blocks.push(body[..end].to_string());
        rest = &body[end..];
    }
    blocks
}

/// The example file of a package (`clients/python/examples/hello.py`), which its README shows
/// whole: the README's first block of `lang` under `## Use` must be the file, byte for byte.
pub fn example_file_shown_in_readme(package: &str, file: &str, lang: &str) -> PathBuf {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{package}/README.md")),
    )
    .unwrap();
    let usage = &readme[readme
        .find("## Use")
        .expect("the README has a `## Use` section")..];
    let fence = format!("```{lang}\n");
    let start = usage.find(&fence).expect("a code block under `## Use`") + fence.len();
    let end = start + usage[start..].find("```").unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{package}/examples/{file}"));
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        &usage[start..end],
        on_disk,
        "{package}/README.md shows {file} under `## Use`: keep the two the same"
    );
    path
}

/// How to run one example.
pub struct Example<'a> {
    /// Where it comes from, for failure messages.
    pub origin: String,
    pub source: String,
    /// Written into the run's folder under this name, unless `in_place` names the file to run.
    pub file_name: &'a str,
    pub in_place: Option<PathBuf>,
    pub program: &'a std::ffi::OsStr,
    /// Packages to make importable: (name under `node_modules`, folder it links to).
    pub node_modules: Vec<(&'a str, PathBuf)>,
}

impl Example<'_> {
    /// Runs the example offline (it must succeed and print the demo's answer containing
    /// `expected`), then against a failing provider (it must fail and say why).
    pub async fn check(&self, expected: &str) {
        let output = self.run(None).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stdout.contains(expected),
            "{} did not run offline as written:\nstdout:\n{stdout}\nstderr:\n{stderr}\nsource:\n{}",
            self.origin,
            self.source
        );
        let failing = MockProvider::start(Script::new(Vec::new())).await.unwrap();
        let output = self.run(Some(&failing)).await;
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !output.status.success() && all.contains(FAILURE_REASON),
            "{} must exit non-zero and print the reason when the turn fails (exit {:?}):\n{all}",
            self.origin,
            output.status.code()
        );
    }

    async fn run(&self, failing: Option<&MockProvider>) -> Output {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        if let Some(provider) = failing {
            // A table of the user's own replaces the built-in `demo` provider.
            let config = format!(
                "[model_providers.demo]\nbase_url = \"{}\"\nrequest_max_retries = 0\n\
                 stream_max_retries = 0\n",
                provider.base_url()
            );
            std::fs::write(home.join("config.toml"), config).unwrap();
        }
        let file = match &self.in_place {
            Some(path) => path.clone(),
            None => {
                let file = dir.path().join(self.file_name);
                std::fs::write(&file, &self.source).unwrap();
                file
            }
        };
        if !self.node_modules.is_empty() {
            let modules = dir.path().join("node_modules");
            for (name, target) in &self.node_modules {
                let link = modules.join(name);
                std::fs::create_dir_all(link.parent().unwrap()).unwrap();
                std::os::unix::fs::symlink(target, &link).unwrap();
            }
        }
        let bin_dir = openturn_bin().parent().unwrap().to_path_buf();
        let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .unwrap();
        let mut command = tokio::process::Command::new(self.program);
        command
            .arg(&file)
            .current_dir(dir.path())
            .env("PATH", path)
            .env("OPENTURN_HOME", &home)
            .env_remove("OPENTURN_BIN")
            .env_remove("OPENAI_API_KEY")
            .env_remove("CODEX_API_KEY")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        let limit = Duration::from_secs(120);
        tokio::time::timeout(limit, command.output())
            .await
            .unwrap_or_else(|_| panic!("{} ran longer than {limit:?}", self.origin))
            .expect("starting the example")
    }
}
