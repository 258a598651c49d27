//! Caps on things held at once — live streams, long-polls, games against
//! people, sandbox instances — taken per client and in all in one atomic
//! step, and given back on every path.
//!
//! A [`Quota`] counts holders by key (a client's address, an account). A
//! [`Quota::take`] checks both limits and counts the new holder under one
//! lock, so twenty simultaneous requests from one client can never all see
//! room; the [`Held`] it returns gives the place back when dropped, whether
//! the work it guards finished, failed, was cancelled or panicked.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// Holders counted per key and in all (cheap to clone; clones share the
/// counts).
#[derive(Clone, Debug)]
pub struct Quota {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    per_key: usize,
    total: usize,
    held: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_key: HashMap<String, usize>,
}

/// Why [`Quota::take`] found no room.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Full {
    /// The key holds its limit already.
    #[error("at most {0} at once from one client")]
    Key(usize),
    /// Every place is held.
    #[error("all {0} places are taken")]
    Total(usize),
}

/// One place of a [`Quota`], given back when dropped.
#[derive(Debug)]
pub struct Held {
    quota: Quota,
    key: String,
}

impl Quota {
    /// At most `per_key` holders per key and `total` in all.
    pub fn new(per_key: usize, total: usize) -> Quota {
        Quota {
            inner: Arc::new(Inner {
                per_key,
                total,
                held: Mutex::new(Counts::default()),
            }),
        }
    }

    /// A place for `key`, or why there is none; counted before this
    /// returns, so no two callers can take the same last place.
    pub fn take(&self, key: &str) -> Result<Held, Full> {
        let mut counts = self.lock();
        let mine = counts.by_key.get(key).copied().unwrap_or(0);
        if mine >= self.inner.per_key {
            return Err(Full::Key(self.inner.per_key));
        }
        if counts.total >= self.inner.total {
            return Err(Full::Total(self.inner.total));
        }
        counts.total += 1;
        *counts.by_key.entry(key.to_owned()).or_default() += 1;
        Ok(Held {
            quota: self.clone(),
            key: key.to_owned(),
        })
    }

    /// Places held now, in all.
    pub fn held(&self) -> usize {
        self.lock().total
    }

    /// Places held now by `key`.
    pub fn held_by(&self, key: &str) -> usize {
        self.lock().by_key.get(key).copied().unwrap_or(0)
    }

    /// The limit per key.
    pub fn per_key(&self) -> usize {
        self.inner.per_key
    }

    /// The limit in all.
    pub fn total(&self) -> usize {
        self.inner.total
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.inner
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Held {
    /// The key this place is counted under.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut counts = self.quota.lock();
        counts.total = counts.total.saturating_sub(1);
        if let Some(count) = counts.by_key.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.by_key.remove(&self.key);
            }
        }
    }
}

/// The length of the IPv6 prefix that counts as one client by default: a
/// /64 is what one subscriber, one host or one LAN is given, so every
/// address inside it is the same client for every limit.
pub const DEFAULT_IPV6_CLIENT_PREFIX: u8 = 64;

/// The client `ip` is, for limits: an IPv4 address as it is, an IPv6
/// address as its prefix of `ipv6_prefix` bits (`2001:db8:1:2::/64`). An
/// IPv4-mapped IPv6 address is its IPv4 address. Prefix lengths above 128
/// count as 128.
pub fn client_key(ip: IpAddr, ipv6_prefix: u8) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4.to_string();
            }
            let bits = u32::from(ipv6_prefix.min(128));
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            let network = std::net::Ipv6Addr::from(u128::from(v6) & mask);
            format!("{network}/{bits}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_per_key_and_in_all_and_given_back_on_drop() {
        let quota = Quota::new(2, 3);
        let a1 = quota.take("a").expect("room");
        let _a2 = quota.take("a").expect("room");
        assert_eq!(quota.take("a").unwrap_err(), Full::Key(2));
        let _b1 = quota.take("b").expect("room");
        assert_eq!(quota.take("c").unwrap_err(), Full::Total(3));
        drop(a1);
        assert_eq!(quota.held_by("a"), 1);
        let _c1 = quota.take("c").expect("a place was given back");
        assert_eq!(quota.held(), 3);
    }

    #[test]
    fn a_crowd_of_threads_never_takes_more_than_the_limits() {
        let quota = Quota::new(2, 5);
        let barrier = Arc::new(std::sync::Barrier::new(40));
        let threads: Vec<_> = (0..40)
            .map(|i| {
                let (quota, barrier) = (quota.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    // Half the crowd is one client; the rest, ten others.
                    let key = if i % 2 == 0 {
                        "one".to_owned()
                    } else {
                        format!("k{}", i % 10)
                    };
                    quota.take(&key).ok()
                })
            })
            .collect();
        let held: Vec<Held> = threads
            .into_iter()
            .filter_map(|t| t.join().expect("no panic"))
            .collect();
        assert_eq!(held.len(), 5, "exactly the total is taken");
        assert!(held.iter().filter(|h| h.key() == "one").count() <= 2);
        drop(held);
        assert_eq!(quota.held(), 0);
    }

    #[test]
    fn ipv6_clients_are_counted_by_prefix() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("an address");
        assert_eq!(client_key(ip("203.0.113.9"), 64), "203.0.113.9");
        assert_eq!(client_key(ip("2001:db8:1:2:aaaa::1"), 64), "2001:db8:1:2::/64");
        assert_eq!(
            client_key(ip("2001:db8:1:2:aaaa::1"), 64),
            client_key(ip("2001:db8:1:2:ffff:1:2:3"), 64),
            "one /64 is one client"
        );
        assert_ne!(
            client_key(ip("2001:db8:1:2::1"), 64),
            client_key(ip("2001:db8:1:3::1"), 64)
        );
        assert_eq!(client_key(ip("2001:db8:1:2::1"), 48), "2001:db8:1::/48");
        assert_eq!(client_key(ip("2001:db8::1"), 128), "2001:db8::1/128");
        assert_eq!(client_key(ip("2001:db8::1"), 0), "::/0");
        assert_eq!(client_key(ip("::ffff:198.51.100.7"), 64), "198.51.100.7");
    }
}
