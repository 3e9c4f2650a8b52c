//! Skills: folders of instructions the model may open, each described by a `SKILL.md` whose
//! front matter (between two `---` lines) gives `name` and `description`. This module finds them
//! on disk and writes the section of the developer message that names them to the model.
//!
//! Where skills are looked for (see docs/SKILLS.md):
//! - user skills: `$OPENTURN_HOME/skills` and any folder a client added with
//!   `skills/extraRoots/set`;
//! - repo skills: `.codex/skills` and `.agents/skills` in the working directory and each parent
//!   up to the project root (the nearest folder holding `.git`; without one, only the working
//!   directory itself).
//!
//! Each root is searched recursively for `SKILL.md` files, skipping hidden folders, at most
//! [`MAX_DEPTH`] levels deep and [`MAX_FOLDERS`] folders per root, so a huge tree cannot stall a
//! turn. A file that cannot be read or has no usable front matter becomes an error entry; it
//! never stops the listing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Folder levels below a root searched for `SKILL.md`.
pub const MAX_DEPTH: usize = 6;
/// Folders visited per root.
pub const MAX_FOLDERS: usize = 2000;
/// Longest `SKILL.md` read; front matter sits at the top, so more is never needed.
const MAX_SKILL_FILE_BYTES: u64 = 256 * 1024;

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkillScope {
    Repo,
    User,
}

impl SkillScope {
    pub fn as_str(self) -> &'static str {
        match self {
            SkillScope::Repo => "repo",
            SkillScope::User => "user",
        }
    }
}

/// One usable skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub short_description: Option<String>,
    /// The `SKILL.md` file.
    pub path: PathBuf,
    pub scope: SkillScope,
}

/// A `SKILL.md` that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillError {
    pub path: PathBuf,
    pub message: String,
}

/// What one working directory sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillListing {
    pub skills: Vec<Skill>,
    pub errors: Vec<SkillError>,
}

/// One `[[skills.config]]` entry: a skill turned on or off, chosen by `name` or by the path of
/// its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillToggle {
    pub name: Option<String>,
    pub path: Option<PathBuf>,
    pub enabled: bool,
}

/// Whether `skill` is on: the last toggle naming it (by name or path) decides; on by default.
pub fn is_enabled(skill: &Skill, toggles: &[SkillToggle]) -> bool {
    toggles
        .iter()
        .rev()
        .find(|toggle| {
            toggle.name.as_deref() == Some(skill.name.as_str())
                || toggle.path.as_deref() == Some(skill.path.as_path())
        })
        .is_none_or(|toggle| toggle.enabled)
}

/// The folders searched for a working directory: repo roots first, then user roots.
pub fn skill_roots(user_roots: &[PathBuf], cwd: &Path) -> Vec<(PathBuf, SkillScope)> {
    let mut roots = Vec::new();
    for folder in project_folders(cwd) {
        for name in [".codex", ".agents"] {
            roots.push((folder.join(name).join("skills"), SkillScope::Repo));
        }
    }
    roots.extend(
        user_roots
            .iter()
            .map(|root| (root.clone(), SkillScope::User)),
    );
    roots
}

/// The working directory and its parents up to the nearest one holding `.git`.
fn project_folders(cwd: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for folder in cwd.ancestors() {
        folders.push(folder.to_path_buf());
        if folder.join(".git").exists() {
            return folders;
        }
    }
    // Not inside a project: only the working directory counts as the repo.
    folders.truncate(1);
    folders
}

/// Every skill under the roots, sorted by scope (repo first) then name; a `SKILL.md` reached
/// through two roots is listed once.
pub fn list_skills(user_roots: &[PathBuf], cwd: &Path) -> SkillListing {
    let mut listing = SkillListing::default();
    let mut seen = BTreeSet::new();
    for (root, scope) in skill_roots(user_roots, cwd) {
        let mut files = Vec::new();
        find_skill_files(&root, &mut files);
        for file in files {
            let canonical = file.canonicalize().unwrap_or_else(|_| file.clone());
            if !seen.insert(canonical) {
                continue;
            }
            match read_skill(&file, scope) {
                Ok(skill) => listing.skills.push(skill),
                Err(message) => listing.errors.push(SkillError {
                    path: file,
                    message,
                }),
            }
        }
    }
    listing
        .skills
        .sort_by(|a, b| (a.scope, &a.name, &a.path).cmp(&(b.scope, &b.name, &b.path)));
    listing.errors.sort_by(|a, b| a.path.cmp(&b.path));
    listing
}

/// Breadth-first, bounded by depth and folder count; hidden folders are skipped.
fn find_skill_files(root: &Path, files: &mut Vec<PathBuf>) {
    let mut queue = std::collections::VecDeque::from([(root.to_path_buf(), 0usize)]);
    let mut visited = 0usize;
    while let Some((folder, depth)) = queue.pop_front() {
        visited += 1;
        if visited > MAX_FOLDERS {
            tracing::warn!(root = %root.display(), "skill search stopped after {MAX_FOLDERS} folders");
            return;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut children: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        children.sort();
        for child in children {
            let hidden = child
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with('.'));
            if child.file_name().is_some_and(|name| name == "SKILL.md") && child.is_file() {
                files.push(child);
            } else if child.is_dir() && !hidden && depth < MAX_DEPTH {
                queue.push_back((child, depth + 1));
            }
        }
    }
}

fn read_skill(file: &Path, scope: SkillScope) -> Result<Skill, String> {
    let size = std::fs::metadata(file)
        .map_err(|error| format!("cannot read: {error}"))?
        .len();
    if size > MAX_SKILL_FILE_BYTES {
        return Err(format!(
            "file is {size} bytes, more than the {MAX_SKILL_FILE_BYTES} read for a SKILL.md"
        ));
    }
    let text = std::fs::read_to_string(file).map_err(|error| format!("cannot read: {error}"))?;
    let fields = parse_front_matter(&text)?;
    let folder_name = file
        .parent()
        .and_then(|folder| folder.file_name())
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    let name = fields
        .name
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| folder_name.to_string());
    if name.is_empty() {
        return Err("no `name` in the front matter and no folder name to use".to_string());
    }
    let description = fields
        .description
        .filter(|description| !description.is_empty())
        .ok_or_else(|| "missing `description` in the front matter".to_string())?;
    Ok(Skill {
        name,
        description,
        short_description: fields.short_description,
        path: file.to_path_buf(),
        scope,
    })
}

#[derive(Debug, Default, PartialEq)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    short_description: Option<String>,
}

/// Reads the YAML-ish front matter: `key: value` lines between a first line `---` and the next
/// `---`. Values may be quoted; a `metadata:` block's indented `short-description:` is read too.
/// Other keys are ignored, so richer front matter still works.
fn parse_front_matter(text: &str) -> Result<FrontMatter, String> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("missing front matter: the file must start with a `---` line".to_string());
    }
    let mut fields = FrontMatter::default();
    let mut in_metadata = false;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(fields);
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        let Some((key, value)) = line.trim().split_once(':') else {
            continue;
        };
        let value = unquote(value.trim());
        match (indented, key.trim()) {
            (false, "name") => fields.name = Some(value),
            (false, "description") => fields.description = Some(value),
            (false, "metadata") => in_metadata = true,
            (true, "short-description") if in_metadata => fields.short_description = Some(value),
            (false, _) => in_metadata = false,
            _ => {}
        }
    }
    Err("front matter is not closed by a `---` line".to_string())
}

fn unquote(value: &str) -> String {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner.to_string();
        }
    }
    value.to_string()
}

/// The developer-message section that tells the model which skills exist and where, or `None`
/// when there are none. Each line names a skill, what it is for and its absolute path, so the
/// model can read the file when a task matches.
pub fn skills_instructions(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut text = String::from(
        "<skills_instructions>\n## Skills\n\
         Skills are folders of task-specific instructions on this machine, each described by a \
         `SKILL.md` file. When the user names a skill, or the task clearly matches a skill's \
         description, read that skill's SKILL.md first (for example with `cat`) and follow it; \
         open other files in the skill's folder only when SKILL.md points to them. Do not read \
         skills that are not relevant.\n### Available skills\n",
    );
    for skill in skills {
        text.push_str(&format!(
            "- {}: {} (file: {})\n",
            skill.name,
            skill.description,
            skill.path.display()
        ));
    }
    text.push_str("</skills_instructions>");
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/"))).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn front_matter_gives_name_description_and_short_description() {
        let text = "---\nname: pdf\ndescription: \"Read: PDFs\"\nmetadata:\n  short-description: PDFs\nother: x\n---\nbody\n";
        assert_eq!(
            parse_front_matter(text),
            Ok(FrontMatter {
                name: Some("pdf".to_string()),
                description: Some("Read: PDFs".to_string()),
                short_description: Some("PDFs".to_string()),
            })
        );
        assert!(parse_front_matter("no front matter\n").is_err());
        assert!(parse_front_matter("---\nname: x\n").is_err());
    }

    #[test]
    fn repo_and_user_roots_are_listed_and_bad_files_become_errors() {
        let dir = tempfile::tempdir().unwrap();
        let home_skills = dir.path().join("home/skills");
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        let cwd = project.join("src/deep");
        std::fs::create_dir_all(&cwd).unwrap();
        write(
            &project.join(".agents/skills/lint/SKILL.md"),
            "---\nname: lint\ndescription: Lints\n---\n",
        );
        write(
            &project.join(".codex/skills/fmt/SKILL.md"),
            "---\ndescription: Formats\n---\n",
        );
        write(
            &home_skills.join("nested/deep/SKILL.md"),
            "---\nname: deep\ndescription: Deep one\n---\n",
        );
        write(&home_skills.join("broken/SKILL.md"), "just text\n");
        write(
            &home_skills.join(".hidden/SKILL.md"),
            "---\nname: hidden\ndescription: no\n---\n",
        );
        // Outside the project root: not a repo skill.
        write(
            &dir.path().join(".agents/skills/outside/SKILL.md"),
            "---\nname: outside\ndescription: no\n---\n",
        );
        let listing = list_skills(std::slice::from_ref(&home_skills), &cwd);
        let names: Vec<_> = listing
            .skills
            .iter()
            .map(|s| (s.name.as_str(), s.scope))
            .collect();
        assert_eq!(
            names,
            vec![
                ("fmt", SkillScope::Repo),
                ("lint", SkillScope::Repo),
                ("deep", SkillScope::User)
            ]
        );
        assert_eq!(listing.errors.len(), 1);
        assert_eq!(listing.errors[0].path, home_skills.join("broken/SKILL.md"));
        assert!(listing.errors[0].message.contains("front matter"));
        let section = skills_instructions(&listing.skills).unwrap_or_default();
        assert!(section.contains(&format!(
            "- deep: Deep one (file: {})",
            home_skills.join("nested/deep/SKILL.md").display()
        )));
        assert_eq!(skills_instructions(&[]), None);
    }
}
