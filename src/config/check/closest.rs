//! The typo hint of an unknown-key warning: the known name nearest to what the user wrote.

/// The known key nearest to `key` by edit distance (a swap of two neighbours counts once), if
/// it is near enough to be a typo: at most 1 edit for short keys, 2 from four letters on.
pub(super) fn closest<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = if key.chars().count() >= 4 { 2 } else { 1 };
    known
        .map(|name| (edit_distance(key, name), name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in 0..=a.len() {
        rows[at(i, 0)] = i;
    }
    for j in 0..=b.len() {
        rows[at(0, j)] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[at(i - 1, j)] + 1)
                .min(rows[at(i, j - 1)] + 1)
                .min(rows[at(i - 1, j - 1)] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[at(i - 2, j - 2)] + 1);
            }
            rows[at(i, j)] = best;
        }
    }
    rows[at(a.len(), b.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_a_swap_once() {
        assert_eq!(edit_distance("modle", "model"), 1);
        assert_eq!(edit_distance("bas_url", "base_url"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
