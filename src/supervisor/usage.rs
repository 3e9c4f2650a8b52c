//! What a running command costs, as `thread/backgroundTerminals/list` reports it: the CPU its
//! processes used and the memory they hold, read from `/proc`. Blocking file reads: async
//! callers run [`usage_of`] on a blocking thread.
//!
//! A command is its leader and every live process below it (what a command leaves running is
//! re-parented to its leader, a subreaper, so the tree holds it). CPU is a share of one CPU
//! averaged since the leader started: the processes' user and system time, including that of
//! their children already reaped, over the leader's age, times 100 (a command busy on two
//! CPUs reads 200). Memory is the sum of the processes' resident set sizes, in KiB.

use super::proc_table::{read_table, with_descendants};

/// A command's CPU share and resident memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Usage {
    pub cpu_percent: f64,
    pub rss_kb: u64,
}

/// The fields of `/proc/<pid>/stat` a usage needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatUsage {
    /// utime + stime + cutime + cstime, in clock ticks.
    cpu_ticks: u64,
    /// Clock ticks after boot.
    start_time: u64,
    /// Resident pages.
    rss_pages: u64,
}

/// The usage of the command led by `leader`; `None` once the leader is gone (or `/proc` cannot
/// tell).
pub(crate) fn usage_of(leader: u32) -> Option<Usage> {
    let leader = i32::try_from(leader).ok()?;
    let ticks_per_second = sysconf(libc::_SC_CLK_TCK)?;
    let page_kb = sysconf(libc::_SC_PAGESIZE)? / 1024;
    let uptime = std::fs::read_to_string("/proc/uptime").ok()?;
    let uptime_seconds: f64 = uptime.split_whitespace().next()?.parse().ok()?;
    let leader_stat = read_stat(leader)?;
    let table = read_table();
    let mut cpu_ticks = 0u64;
    let mut rss_pages = 0u64;
    for pid in with_descendants(&table, &[leader]) {
        // The leader's own figures are the ones read first: a process that ends meanwhile
        // simply no longer counts.
        let stat = if pid == leader {
            Some(leader_stat)
        } else {
            read_stat(pid)
        };
        if let Some(stat) = stat {
            cpu_ticks = cpu_ticks.saturating_add(stat.cpu_ticks);
            rss_pages = rss_pages.saturating_add(stat.rss_pages);
        }
    }
    let ticks_per_second = ticks_per_second as f64;
    let age_seconds = uptime_seconds - leader_stat.start_time as f64 / ticks_per_second;
    let cpu_seconds = cpu_ticks as f64 / ticks_per_second;
    Some(Usage {
        cpu_percent: cpu_percent(cpu_seconds, age_seconds),
        rss_kb: rss_pages.saturating_mul(page_kb),
    })
}

/// The share of one CPU, in percent; 0 for a command too young to tell (the clocks' ticks are
/// coarser than its age).
fn cpu_percent(cpu_seconds: f64, age_seconds: f64) -> f64 {
    if age_seconds <= 0.0 || !age_seconds.is_finite() {
        return 0.0;
    }
    let percent = 100.0 * cpu_seconds / age_seconds;
    // Two decimals are all a client shows; more would only be noise of the tick rounding.
    (percent * 100.0).round() / 100.0
}

fn sysconf(name: libc::c_int) -> Option<u64> {
    // SAFETY: sysconf only reads a system constant.
    let value = unsafe { libc::sysconf(name) };
    u64::try_from(value).ok().filter(|value| *value > 0)
}

fn read_stat(pid: i32) -> Option<StatUsage> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_usage(&text)
}

/// The fields after the command name (in parentheses, and free to hold `)` or spaces): utime,
/// stime, cutime and cstime are the 14th to 17th fields of the line, the start time the 22nd,
/// the resident pages the 24th.
fn parse_stat_usage(text: &str) -> Option<StatUsage> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |index: usize| -> Option<u64> { fields.get(index)?.parse().ok() };
    // cutime and cstime are signed in the kernel's format; they are never negative in practice.
    let signed = |index: usize| -> Option<u64> {
        let value: i64 = fields.get(index)?.parse().ok()?;
        Some(u64::try_from(value).unwrap_or(0))
    };
    Some(StatUsage {
        cpu_ticks: field(11)?
            .saturating_add(field(12)?)
            .saturating_add(signed(13)?)
            .saturating_add(signed(14)?),
        start_time: field(19)?,
        rss_pages: signed(21)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stat_line_gives_cpu_time_start_and_resident_pages() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        // utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss ...
        let line = "4242 (odd ) name) R 1 4242 4242 0 -1 0 0 0 0 0 150 50 7 3 20 0 1 0 98765 \
                    1000000 321 18446744073709551615";
        assert_eq!(
            parse_stat_usage(line),
            Some(StatUsage {
                cpu_ticks: 210,
                start_time: 98765,
                rss_pages: 321
            })
        );
        assert_eq!(parse_stat_usage("7 (sh) S 1 7"), None);
    }

    #[test]
    fn cpu_is_a_share_of_one_cpu_since_the_start() {
        assert_eq!(cpu_percent(1.0, 2.0), 50.0);
        assert_eq!(cpu_percent(4.0, 2.0), 200.0);
        assert_eq!(cpu_percent(1.0, 3.0), 33.33);
        assert_eq!(cpu_percent(1.0, 0.0), 0.0);
    }

    #[test]
    fn this_process_has_a_usage_and_a_gone_one_has_none() {
        let usage = usage_of(std::process::id()).unwrap();
        assert!(usage.rss_kb > 0, "{usage:?}");
        assert!(usage.cpu_percent >= 0.0, "{usage:?}");
        assert_eq!(usage_of(u32::MAX), None);
    }
}
