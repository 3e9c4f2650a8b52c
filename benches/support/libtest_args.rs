//! The libtest arguments a `harness = false` bench target receives from `cargo test` (for
//! example `cargo test --all-targets -- --list`, or `scripts/test <filter>`), read the way
//! libtest reads them, so such a target lists itself, honours a name filter and never fails a
//! run over arguments meant for test harnesses. Each bench counts as one test named after its
//! target.

/// What the target should do with the arguments it was given.
#[derive(Debug, PartialEq, Eq)]
pub enum Mode {
    /// Run the smoke test.
    Run,
    /// Print the test's name (`--list`) and exit successfully.
    List,
    /// Filtered out (`--ignored`, `--skip`, a filter that does not match): exit successfully.
    Skip,
}

/// Flags of libtest that take a value as the next argument.
const WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--color",
    "--format",
    "--logfile",
    "--skip",
    "-Z",
    "--shuffle-seed",
    "--report-time",
];

/// Reads libtest's arguments for the one test `name`.
pub fn mode(name: &str, args: &[String]) -> Mode {
    let mut filters = Vec::new();
    let mut skips = Vec::new();
    let (mut list, mut exact, mut only_ignored) = (false, false, false);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--list" => list = true,
            "--exact" => exact = true,
            "--ignored" => only_ignored = true,
            "--skip" => skips.extend(args.next().cloned()),
            flag if WITH_VALUE.contains(&flag) => {
                args.next();
            }
            // Every other flag (--nocapture, --quiet, --include-ignored, --test-threads=2, …)
            // changes how tests run, not which.
            flag if flag.starts_with('-') => {}
            filter => filters.push(filter.to_string()),
        }
    }
    let matches = |pattern: &String| {
        if exact {
            name == pattern
        } else {
            name.contains(pattern.as_str())
        }
    };
    let selected = !only_ignored
        && (filters.is_empty() || filters.iter().any(matches))
        && !skips.iter().any(|skip| name.contains(skip.as_str()));
    match (selected, list) {
        (false, _) => Mode::Skip,
        (true, true) => Mode::List,
        (true, false) => Mode::Run,
    }
}

/// Prints what `--list` prints for one test.
pub fn print_listing(name: &str) {
    println!("{name}: test");
    println!();
    println!("1 test, 0 benchmarks");
}
