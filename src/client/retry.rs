//! Backoff for retries: exponential with jitter, capped, honouring a server-given delay.

use std::time::Duration;

use rand::Rng;

const BASE_DELAY: Duration = Duration::from_millis(200);
const MAX_DELAY: Duration = Duration::from_secs(30);

/// Delay before retry number `attempt` (1-based). A provider-suggested delay wins when present.
pub fn backoff(attempt: u32, suggested: Option<Duration>) -> Duration {
    if let Some(delay) = suggested {
        return delay.min(MAX_DELAY);
    }
    let exponent = attempt.saturating_sub(1).min(10);
    let base = BASE_DELAY.saturating_mul(1u32 << exponent).min(MAX_DELAY);
    let jitter = rand::thread_rng().gen_range(0.9..1.1);
    base.mul_f64(jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_honours_suggestions() {
        assert!(backoff(1, None) < backoff(4, None));
        assert_eq!(
            backoff(1, Some(Duration::from_millis(5))),
            Duration::from_millis(5)
        );
        assert!(backoff(40, None) <= MAX_DELAY.mul_f64(1.1));
    }
}
