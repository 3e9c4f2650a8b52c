//! Ranking checked against what the reference app-server answered for the same tree and
//! queries (scores and order copied from its responses), and the walk's rules.

use super::*;

/// The tree the reference was observed on: a git repository whose `.gitignore` hides a folder
/// and `*.log`.
fn observed_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for folder in [".git", "src/nested", "ignored", "many"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "ignored/\n*.log\n").unwrap();
    for file in [
        "src/main.rs",
        "src/lib.rs",
        "src/domain.rs",
        "src/nested/mainly.rs",
        "README.md",
        "Makefile",
        "ignored/main.rs",
        "debug.log",
        "many/file1.txt",
    ] {
        std::fs::write(root.join(file), "").unwrap();
    }
    dir
}

fn search(roots: &[String], query: &str) -> Vec<(u32, String, String, bool, Vec<u32>)> {
    let never = AtomicBool::new(false);
    let index = build_index(roots, WalkLimits::default(), &never);
    rank(&index, query, &never)
        .unwrap()
        .into_iter()
        .map(|m| (m.score, m.root, m.relative, m.is_directory, m.indices))
        .collect()
}

#[test]
fn scores_and_order_match_the_reference() {
    let dir = observed_tree();
    let root = dir.path().to_str().unwrap().to_string();
    let roots = [root.clone()];
    let r = |score: u32, path: &str, dir: bool, indices: &[u32]| {
        (score, root.clone(), path.to_string(), dir, indices.to_vec())
    };
    assert_eq!(
        search(&roots, "main"),
        vec![
            r(65645, "src/main.rs", false, &[4, 5, 6, 7]),
            r(65645, "src/nested/mainly.rs", false, &[11, 12, 13, 14]),
            r(65612, "src/domain.rs", false, &[6, 7, 8, 9]),
        ]
    );
    assert_eq!(
        search(&roots, "mainly.rs"),
        vec![r(
            196842,
            "src/nested/mainly.rs",
            false,
            &[11, 12, 13, 14, 15, 16, 17, 18, 19]
        )]
    );
    assert_eq!(
        search(&roots, "readme.md"),
        vec![r(196842, "README.md", false, &[0, 1, 2, 3, 4, 5, 6, 7, 8])]
    );
    assert_eq!(
        search(&roots, "src main"),
        vec![
            r(193, "src/main.rs", false, &[0, 1, 2, 4, 5, 6, 7]),
            r(
                193,
                "src/nested/mainly.rs",
                false,
                &[0, 1, 2, 11, 12, 13, 14]
            ),
            r(160, "src/domain.rs", false, &[0, 1, 2, 6, 7, 8, 9]),
        ]
    );
    let many = search(&roots, "many");
    assert_eq!(
        many,
        vec![
            r(131181, "many", true, &[0, 1, 2, 3]),
            r(65621, "src/nested/mainly.rs", false, &[11, 12, 14, 16]),
            r(109, "many/file1.txt", false, &[0, 1, 2, 3]),
        ]
    );
    let src = search(&roots, "src");
    assert_eq!(src[0], r(131156, "src", true, &[0, 1, 2]));
    assert_eq!(src[1], r(84, "src/domain.rs", false, &[0, 1, 2]));
    assert_eq!(search(&roots, ""), Vec::new());
}

#[test]
fn gitignored_entries_are_not_indexed() {
    let dir = observed_tree();
    let never = AtomicBool::new(false);
    let index = build_index(
        &[dir.path().to_str().unwrap().to_string()],
        WalkLimits::default(),
        &never,
    );
    let paths: Vec<&str> = index.entries.iter().map(|e| e.relative.as_str()).collect();
    assert!(paths.contains(&"src/main.rs"), "{paths:?}");
    assert!(paths.contains(&".gitignore"), "{paths:?}");
    assert!(!paths.iter().any(|p| p.starts_with("ignored")), "{paths:?}");
    assert!(!paths.contains(&"debug.log"), "{paths:?}");
}

#[test]
fn a_nested_root_owns_its_entries_and_limits_stop_the_walk() {
    let dir = observed_tree();
    let src = dir.path().join("src").to_str().unwrap().to_string();
    let nested = dir.path().join("src/nested").to_str().unwrap().to_string();
    let found = search(&[src.clone(), nested.clone()], "mainly");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].1.as_str(), found[0].2.as_str()),
        (nested.as_str(), "mainly.rs")
    );

    let never = AtomicBool::new(false);
    let limits = WalkLimits {
        max_entries: 3,
        max_duration: Duration::from_secs(60),
    };
    let index = build_index(&[dir.path().to_str().unwrap().to_string()], limits, &never);
    assert_eq!(index.entries.len(), 3);
    assert!(index.truncated);
    let raised = AtomicBool::new(true);
    assert!(rank(&index, "main", &raised).is_none());
}
