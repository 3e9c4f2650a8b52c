//! The fan-out floor: what the kernel alone charges a sender for delivering the same bytes to
//! more loopback TCP sockets. One thread writes a turn's worth of bytes, in pieces the size the
//! daemon gathers a fast stream into, to each of 1 and then N sockets that reader threads only
//! drain; its CPU time is measured. The difference per added socket and per delta is the cost of
//! the writes an added subscriber needs (the copy into the socket and, on loopback, the receiving
//! side's protocol work, which run in the sender's system call), which no daemon avoids; how
//! much of it a daemon pays also depends on when its readers sleep, so it is an estimate of the
//! floor, not a bound.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use super::daemon::{thread_cpu_time, BenchResult};

/// Bytes per write: about what the daemon writes per flush of a fast stream (`fanout.rs` in
/// `src/server` gathers text into about 32 KiB).
const WRITE_BYTES: usize = 32 * 1024;

/// Each socket count is measured this many times; the median counts.
const REPEATS: usize = 5;

/// The sender's CPU per delta for each socket beyond the first, sending `bytes_per_delta` bytes
/// per delta for `deltas` deltas to each of `sockets` sockets (compared with one socket).
pub fn per_added_socket(
    bytes_per_delta: f64,
    deltas: usize,
    sockets: usize,
) -> BenchResult<Duration> {
    let total = (bytes_per_delta * deltas as f64) as usize;
    let one = median(1, total)?;
    let many = median(sockets, total)?;
    let added = u32::try_from((sockets.max(2) - 1) * deltas.max(1)).map_err(|e| e.to_string())?;
    Ok(many.saturating_sub(one) / added)
}

fn median(sockets: usize, total: usize) -> BenchResult<Duration> {
    let mut runs = (0..REPEATS)
        .map(|_| sender_cpu(sockets, total))
        .collect::<BenchResult<Vec<_>>>()?;
    runs.sort_unstable();
    Ok(runs[runs.len() / 2])
}

/// The sending thread's CPU time for writing `total` bytes to each of `sockets` sockets.
fn sender_cpu(sockets: usize, total: usize) -> BenchResult<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io("bind"))?;
    let address = listener.local_addr().map_err(io("address"))?;
    let mut readers = Vec::with_capacity(sockets);
    let mut senders = Vec::with_capacity(sockets);
    for _ in 0..sockets {
        let reader = TcpStream::connect(address).map_err(io("connect"))?;
        readers.push(std::thread::spawn(move || drain(reader)));
        let (sender, _) = listener.accept().map_err(io("accept"))?;
        // As the daemon's connections: each write goes out at once.
        sender.set_nodelay(true).map_err(io("nodelay"))?;
        senders.push(sender);
    }
    let piece = vec![b'x'; WRITE_BYTES];
    let started = thread_cpu_time()?;
    let mut left = total;
    while left > 0 {
        let n = left.min(WRITE_BYTES);
        for sender in &mut senders {
            sender.write_all(&piece[..n]).map_err(io("write"))?;
        }
        left -= n;
    }
    let cpu = thread_cpu_time()?.saturating_sub(started);
    drop(senders);
    for reader in readers {
        let read = reader
            .join()
            .map_err(|_| "fan-out floor: a reader panicked".to_string())?
            .map_err(io("read"))?;
        if read != total {
            return Err(format!(
                "fan-out floor: a reader got {read} of {total} bytes"
            ));
        }
    }
    Ok(cpu)
}

/// An I/O error of the floor's `what`, as the driver reports errors.
fn io(what: &'static str) -> impl Fn(std::io::Error) -> String {
    move |e| format!("fan-out floor: {what}: {e}")
}

/// Reads until the sender closes; the bytes read.
fn drain(mut stream: TcpStream) -> std::io::Result<usize> {
    let mut buffer = vec![0; 64 * 1024];
    let mut read = 0;
    loop {
        match stream.read(&mut buffer)? {
            0 => return Ok(read),
            n => read += n,
        }
    }
}
