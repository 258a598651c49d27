//! Bot URLs and the addresses they may reach.
//!
//! A remote bot is a URL someone typed. Before anything connects to it, the
//! URL is read ([`BotUrl::parse`]), its host is resolved once (within
//! [`RESOLVE_TIMEOUT`]), and every address it resolves to is checked against
//! an [`AddressPolicy`]: by default only public unicast addresses pass, so a
//! bot URL cannot make the server reach its own loopback, its private
//! network or a cloud metadata service. The connection then goes to the
//! checked address only ([`Target::addr`]), so a name that resolves
//! differently a second later changes nothing.
//!
//! What is public is decided by one table, [`ADDRESS_TABLE`], which follows
//! IANA's IPv4 and IPv6 Special-Purpose Address Registries (and the address
//! space registries for multicast and for IPv6 outside `2000::/3`): the
//! longest prefix that contains an address decides, and a row either
//! refuses, accepts, or judges the address by the IPv4 address it carries.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use url::{Host, Url};

use Verdict::{Embedded, Public, Refused};

/// The longest bot URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// How long resolving a bot URL's host name may take: past it,
/// [`AddressPolicy::resolve`] gives up with [`UrlError::ResolveTimeout`].
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Which kind of transport a URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `http://` or `https://`: one POST per request (botsarena's transport).
    Http,
    /// `ws://` or `wss://`: one text frame each way per request (the Arène
    /// design's transport, used for skirmish).
    WebSocket,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Http => "HTTP",
            Transport::WebSocket => "WebSocket",
        })
    }
}

/// Why a bot URL cannot be used. Every message names the URL's problem in
/// words a bot author can act on, and none repeats the whole URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("{url:?} is not a URL: {reason}")]
    Syntax {
        /// The text given (cut to 200 characters).
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// Longer than [`MAX_URL_BYTES`].
    #[error("the bot URL is {0} bytes long; at most {MAX_URL_BYTES} are accepted")]
    TooLong(usize),
    /// A scheme other than http, https, ws and wss.
    #[error("a bot URL starts with http://, https://, ws:// or wss://, not {0}://")]
    Scheme(String),
    /// A user name or password in the URL: the referee sends no credentials.
    #[error("{0} carries a user name or password; bot URLs must not (the referee sends no credentials)")]
    Credentials(String),
    /// A URL without a host.
    #[error("the bot URL has no host")]
    NoHost,
    /// The host did not resolve, or resolved to no address.
    #[error("cannot resolve {host}: {reason}")]
    Resolve {
        /// The host, as written in the URL.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// Resolving the host took longer than allowed ([`RESOLVE_TIMEOUT`]).
    #[error("the host {host} did not resolve within {within:?}")]
    ResolveTimeout {
        /// The host, as written in the URL.
        host: String,
        /// How long was waited.
        within: Duration,
    },
    /// The host is or resolves to an address the policy refuses. The message
    /// names the kind of address once (the [`Row::name`] of the row that
    /// refused it) and says nothing of the server's settings.
    #[error("{}", refusal_text(.host.as_deref(), *.address, *.carried, .range, .name))]
    NotPublic {
        /// The host name the address came from; `None` when the URL names
        /// the address itself.
        host: Option<String>,
        /// The refused address.
        address: IpAddr,
        /// The IPv4 address `address` carries, when the verdict was taken
        /// from it (an IPv4-mapped, NAT64 or 6to4 address).
        carried: Option<Ipv4Addr>,
        /// The refusing row's prefix (`127.0.0.0/8`).
        range: String,
        /// The refusing row's name (`Loopback`).
        name: &'static str,
    },
}

/// The text of [`UrlError::NotPublic`]: `127.0.0.1 is in 127.0.0.0/8
/// (Loopback); …`, `localhost resolves to 127.0.0.1, which is in …`,
/// `::ffff:127.0.0.1 carries the IPv4 address 127.0.0.1, which is in …`.
fn refusal_text(host: Option<&str>, address: IpAddr, carried: Option<Ipv4Addr>, range: &str, name: &str) -> String {
    let what = match (host, carried) {
        (None, None) => format!("{address} is in {range} ({name})"),
        (None, Some(v4)) => format!("{address} carries the IPv4 address {v4}, which is in {range} ({name})"),
        (Some(host), None) => format!("{host} resolves to {address}, which is in {range} ({name})"),
        (Some(host), Some(v4)) => {
            format!("{host} resolves to {address}, which carries the IPv4 address {v4}, in {range} ({name})")
        }
    };
    format!("{what}; a bot must be reachable on a public address")
}

/// What a row of [`ADDRESS_TABLE`] says about the addresses it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Refused (unless the policy allows private addresses).
    Refused,
    /// Judged by the IPv4 address carried inside the IPv6 address, looked
    /// up in the same table: public if that IPv4 address is, refused (with
    /// the IPv4 row's name) if not.
    Embedded(Embedding),
    /// Accepted.
    Public,
}

/// Where an IPv6 address carries an IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embedding {
    /// In its last 32 bits (IPv4-mapped, IPv4-translated, NAT64 `/96`).
    Last32,
    /// In bits 16 to 47, after `2002` (6to4, RFC 3056).
    SixToFour,
}

impl Embedding {
    /// The IPv4 address `ip` carries at this place.
    #[must_use]
    pub fn carried(self, ip: Ipv6Addr) -> Ipv4Addr {
        let bits = u128::from(ip);
        let v4 = match self {
            Embedding::Last32 => bits,
            Embedding::SixToFour => bits >> 80,
        };
        Ipv4Addr::from(u32::try_from(v4 & 0xffff_ffff).unwrap_or_default())
    }
}

/// One row of [`ADDRESS_TABLE`]: an address block, its name in the registry
/// it comes from, and what the guard does with addresses inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The block's first address.
    pub prefix: IpAddr,
    /// Its prefix length in bits (at most 32 for IPv4, 128 for IPv6).
    pub len: u8,
    /// The registry's name for it, shown in a refusal.
    pub name: &'static str,
    /// What happens to addresses inside it.
    pub verdict: Verdict,
}

impl Row {
    /// Whether `ip` is inside this row's block: the same family, and the
    /// same first [`Row::len`] bits as [`Row::prefix`].
    #[must_use]
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.prefix, ip) {
            (IpAddr::V4(prefix), IpAddr::V4(ip)) => same_prefix(
                u128::from(u32::from(prefix)) << 96,
                u128::from(u32::from(ip)) << 96,
                self.len,
            ),
            (IpAddr::V6(prefix), IpAddr::V6(ip)) => same_prefix(u128::from(prefix), u128::from(ip), self.len),
            _ => false,
        }
    }

    /// The block as text: `127.0.0.0/8`, `::ffff:0:0/96`.
    #[must_use]
    pub fn range(&self) -> String {
        format!("{}/{}", self.prefix, self.len)
    }
}

/// Whether `a` and `b` agree in their first `len` bits (of 128).
fn same_prefix(a: u128, b: u128, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len.min(128))).unwrap_or(0);
    (a ^ b) & mask == 0
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8, name: &'static str, verdict: Verdict) -> Row {
    Row {
        prefix: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        len,
        name,
        verdict,
    }
}

const fn v6(s: [u16; 8], len: u8, name: &'static str, verdict: Verdict) -> Row {
    Row {
        prefix: IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])),
        len,
        name,
        verdict,
    }
}

/// Every address block the guard knows, IPv4 and IPv6: IANA's IPv4 and IPv6
/// Special-Purpose Address Registries (as of 2025), multicast from the
/// address space registries, IPv6 outside `2000::/3` (not global unicast),
/// and the IPv4-translated and IPv4-compatible forms of RFC 2765 and RFC
/// 4291. The longest prefix containing an address decides; the `/0` rows
/// give the verdict for everything else (IPv4: public; IPv6: refused), so
/// every address has a row.
///
/// Every special-purpose block is refused, including those the registry
/// marks globally reachable (anycast services such as AS112, AMT relays,
/// PCP and TURN anycast, ORCHIDv2, drone remote ID): no bot is served from
/// them. The rows judged by an embedded IPv4 address are those whose IPv4
/// address decides where a packet goes; the others that embed one are
/// refused outright, each with its reason below.
pub const ADDRESS_TABLE: &[Row] = &[
    // IPv4 (IANA IPv4 Special-Purpose Address Registry, and multicast).
    v4(0, 0, 0, 0, 0, "public IPv4", Public),
    v4(0, 0, 0, 0, 8, "This network", Refused),
    v4(0, 0, 0, 0, 32, "This host on this network", Refused),
    v4(10, 0, 0, 0, 8, "Private-Use", Refused),
    v4(100, 64, 0, 0, 10, "Shared Address Space", Refused),
    v4(127, 0, 0, 0, 8, "Loopback", Refused),
    v4(169, 254, 0, 0, 16, "Link Local", Refused),
    v4(172, 16, 0, 0, 12, "Private-Use", Refused),
    v4(192, 0, 0, 0, 24, "IETF Protocol Assignments", Refused),
    v4(192, 0, 0, 0, 29, "IPv4 Service Continuity Prefix", Refused),
    v4(192, 0, 0, 8, 32, "IPv4 dummy address", Refused),
    v4(192, 0, 0, 9, 32, "Port Control Protocol Anycast", Refused),
    v4(192, 0, 0, 10, 32, "Traversal Using Relays around NAT Anycast", Refused),
    v4(192, 0, 0, 170, 32, "NAT64/DNS64 Discovery", Refused),
    v4(192, 0, 0, 171, 32, "NAT64/DNS64 Discovery", Refused),
    v4(192, 0, 2, 0, 24, "Documentation (TEST-NET-1)", Refused),
    v4(192, 31, 196, 0, 24, "AS112-v4", Refused),
    v4(192, 52, 193, 0, 24, "AMT", Refused),
    v4(192, 88, 99, 0, 24, "Deprecated (6to4 Relay Anycast)", Refused),
    v4(192, 168, 0, 0, 16, "Private-Use", Refused),
    v4(192, 175, 48, 0, 24, "Direct Delegation AS112 Service", Refused),
    v4(198, 18, 0, 0, 15, "Benchmarking", Refused),
    v4(198, 51, 100, 0, 24, "Documentation (TEST-NET-2)", Refused),
    v4(203, 0, 113, 0, 24, "Documentation (TEST-NET-3)", Refused),
    v4(224, 0, 0, 0, 4, "Multicast", Refused),
    v4(240, 0, 0, 0, 4, "Reserved", Refused),
    v4(255, 255, 255, 255, 32, "Limited Broadcast", Refused),
    // IPv6: everything outside global unicast is refused unless a longer
    // row says otherwise.
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        0,
        "not global unicast (outside 2000::/3)",
        Refused,
    ),
    v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3, "public IPv6 (global unicast)", Public),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 128, "Unspecified Address", Refused),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "Loopback Address", Refused),
    // ::a.b.c.d, deprecated by RFC 4291: no stack is expected to send it as
    // IPv4 any more, so what it reaches is not the IPv4 address: refused.
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        96,
        "IPv4-compatible Address (deprecated)",
        Refused,
    ),
    // ::ffff:a.b.c.d: a dual-stack socket sends it as IPv4 to a.b.c.d.
    v6(
        [0, 0, 0, 0, 0, 0xffff, 0, 0],
        96,
        "IPv4-mapped Address",
        Embedded(Embedding::Last32),
    ),
    // ::ffff:0:a.b.c.d (RFC 2765, SIIT): a translator sends it to a.b.c.d.
    v6(
        [0, 0, 0, 0, 0xffff, 0, 0, 0],
        96,
        "IPv4-translated Address",
        Embedded(Embedding::Last32),
    ),
    // 64:ff9b::a.b.c.d: a NAT64 gateway sends it to a.b.c.d (RFC 6052).
    v6(
        [0x64, 0xff9b, 0, 0, 0, 0, 0, 0],
        96,
        "IPv4-IPv6 Translation",
        Embedded(Embedding::Last32),
    ),
    // 64:ff9b:1::/48 (RFC 8215): where the IPv4 address sits depends on
    // the operator's prefix length, unknown here: refused outright.
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "Local-use IPv4/IPv6 Translation",
        Refused,
    ),
    v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "Discard-Only Address Block", Refused),
    v6([0x100, 0, 0, 1, 0, 0, 0, 0], 64, "Dummy IPv6 Prefix", Refused),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, "IETF Protocol Assignments", Refused),
    // Teredo (RFC 4380) carries a server's IPv4 address and a client's
    // obfuscated one, but a packet goes through a relay and a UDP port
    // mapped in the client's NAT, which neither address decides; it is for
    // clients behind NAT, not for servers: refused outright.
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "TEREDO", Refused),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 1],
        128,
        "Port Control Protocol Anycast",
        Refused,
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 2],
        128,
        "Traversal Using Relays around NAT Anycast",
        Refused,
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 3],
        128,
        "DNS-SD Service Registration Protocol Anycast",
        Refused,
    ),
    v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48, "Benchmarking", Refused),
    v6([0x2001, 3, 0, 0, 0, 0, 0, 0], 32, "AMT", Refused),
    v6([0x2001, 4, 0x112, 0, 0, 0, 0, 0], 48, "AS112-v6", Refused),
    v6(
        [0x2001, 0x10, 0, 0, 0, 0, 0, 0],
        28,
        "Deprecated (previously ORCHID)",
        Refused,
    ),
    v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28, "ORCHIDv2", Refused),
    v6(
        [0x2001, 0x30, 0, 0, 0, 0, 0, 0],
        28,
        "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
        Refused,
    ),
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "Documentation", Refused),
    // 2002:a.b.c.d::/48: sent through a 6to4 relay to a.b.c.d.
    v6(
        [0x2002, 0, 0, 0, 0, 0, 0, 0],
        16,
        "6to4",
        Embedded(Embedding::SixToFour),
    ),
    v6(
        [0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0],
        48,
        "Direct Delegation AS112 Service",
        Refused,
    ),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "Documentation", Refused),
    v6(
        [0x5f00, 0, 0, 0, 0, 0, 0, 0],
        16,
        "Segment Routing (SRv6) SIDs",
        Refused,
    ),
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "Unique-Local", Refused),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "Link-Local Unicast", Refused),
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "Site-Local (deprecated)", Refused),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "Multicast", Refused),
];

/// Stands in for a row if the table ever stopped covering an address (its
/// `/0` rows make that impossible): such an address is refused.
const UNLISTED: Row = v4(0, 0, 0, 0, 0, "an address the guard's table does not cover", Refused);

/// The row of [`ADDRESS_TABLE`] that decides `ip`: the longest prefix
/// containing it.
#[must_use]
pub fn row_of(ip: IpAddr) -> &'static Row {
    ADDRESS_TABLE
        .iter()
        .filter(|row| row.contains(ip))
        .max_by_key(|row| row.len)
        .unwrap_or(&UNLISTED)
}

/// Why an address is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The row that refused it: its own, or its carried IPv4 address's.
    pub row: &'static Row,
    /// The IPv4 address it carries, when the verdict was taken from it.
    pub carried: Option<Ipv4Addr>,
}

/// Whether `ip` is refused under the public-only policy, and by which row;
/// `None` for an address a bot may be reached at. An address whose row
/// judges it by its embedded IPv4 address gets that address's verdict.
#[must_use]
pub fn refusal(ip: IpAddr) -> Option<Refusal> {
    let row = row_of(ip);
    match (row.verdict, ip) {
        (Public, _) => None,
        (Embedded(embedding), IpAddr::V6(v6)) => {
            let carried = embedding.carried(v6);
            let inner = row_of(IpAddr::V4(carried));
            (inner.verdict != Public).then_some(Refusal {
                row: inner,
                carried: Some(carried),
            })
        }
        (Refused | Embedded(_), _) => Some(Refusal { row, carried: None }),
    }
}

/// How a host name is looked up: the system's resolver, or a stand-in in
/// tests.
type Lookup = fn(&str, u16) -> std::io::Result<Vec<SocketAddr>>;

/// The system's resolver.
fn system_lookup(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    (host, port).to_socket_addrs().map(Iterator::collect)
}

/// Looks `domain` up on a thread of its own and waits at most `within`. A
/// lookup that takes longer is left to finish on its thread, its answer
/// dropped.
fn lookup_within(domain: &str, port: u16, within: Duration, lookup: Lookup) -> Result<Vec<SocketAddr>, UrlError> {
    let (answer, answered) = mpsc::sync_channel(1);
    let name = domain.to_owned();
    std::thread::Builder::new()
        .name("resolve".to_owned())
        .spawn(move || {
            // The receiver is gone when the wait timed out: nothing to do.
            let _ = answer.send(lookup(&name, port));
        })
        .map_err(|err| UrlError::Resolve {
            host: domain.to_owned(),
            reason: format!("cannot start a resolver thread: {err}"),
        })?;
    match answered.recv_timeout(within) {
        Ok(Ok(addrs)) => Ok(addrs),
        Ok(Err(err)) => Err(UrlError::Resolve {
            host: domain.to_owned(),
            reason: err.to_string(),
        }),
        Err(RecvTimeoutError::Timeout) => Err(UrlError::ResolveTimeout {
            host: domain.to_owned(),
            within,
        }),
        Err(RecvTimeoutError::Disconnected) => Err(UrlError::Resolve {
            host: domain.to_owned(),
            reason: "the resolver stopped without an answer".to_owned(),
        }),
    }
}

/// Which addresses bot URLs may reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Whether loopback, private, link-local and other non-public addresses
    /// are allowed (a bot on the author's own machine or LAN). Off by
    /// default; the command line turns it on for local play.
    pub allow_private: bool,
}

impl AddressPolicy {
    /// Public addresses only: what a server uses unless told otherwise.
    pub const PUBLIC_ONLY: AddressPolicy = AddressPolicy { allow_private: false };
    /// Any address: for an author's own machine.
    pub const ANY: AddressPolicy = AddressPolicy { allow_private: true };

    /// Resolves `url`'s host once, waiting at most [`RESOLVE_TIMEOUT`], and
    /// checks every address it gives against [`ADDRESS_TABLE`] (unless the
    /// policy allows private addresses); the [`Target`] connects to the
    /// first one only.
    ///
    /// # Errors
    ///
    /// [`UrlError::Resolve`] when the host does not resolve,
    /// [`UrlError::ResolveTimeout`] when it takes longer than
    /// [`RESOLVE_TIMEOUT`], [`UrlError::NotPublic`] when any address it
    /// resolves to is refused (a name with one public and one private
    /// address is refused too).
    pub fn resolve(&self, url: &BotUrl) -> Result<Target, UrlError> {
        self.resolve_with(url, RESOLVE_TIMEOUT, system_lookup)
    }

    /// [`AddressPolicy::resolve`] with the wait and the resolver given.
    fn resolve_with(&self, url: &BotUrl, within: Duration, lookup: Lookup) -> Result<Target, UrlError> {
        let port = url.port();
        let (name, addrs) = match url.url.host() {
            Some(Host::Ipv4(ip)) => (None, vec![SocketAddr::new(IpAddr::V4(ip), port)]),
            Some(Host::Ipv6(ip)) => (None, vec![SocketAddr::new(IpAddr::V6(ip), port)]),
            Some(Host::Domain(domain)) => (Some(domain.to_owned()), lookup_within(domain, port, within, lookup)?),
            None => return Err(UrlError::NoHost),
        };
        let Some(first) = addrs.first().copied() else {
            return Err(UrlError::Resolve {
                host: url.host_text(),
                reason: "no address".to_owned(),
            });
        };
        if !self.allow_private {
            for addr in &addrs {
                if let Some(Refusal { row, carried }) = refusal(addr.ip()) {
                    return Err(UrlError::NotPublic {
                        host: name,
                        address: addr.ip(),
                        carried,
                        range: row.range(),
                        name: row.name,
                    });
                }
            }
        }
        Ok(Target {
            url: url.clone(),
            addr: first,
        })
    }
}

/// A bot URL that parsed: http, https, ws or wss, with a host and no
/// credentials; its fragment is dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotUrl {
    url: Url,
}

impl BotUrl {
    /// Reads a bot URL.
    ///
    /// # Errors
    ///
    /// [`UrlError::Syntax`], [`UrlError::TooLong`], [`UrlError::Scheme`],
    /// [`UrlError::Credentials`] or [`UrlError::NoHost`].
    pub fn parse(text: &str) -> Result<BotUrl, UrlError> {
        let text = text.trim();
        if text.len() > MAX_URL_BYTES {
            return Err(UrlError::TooLong(text.len()));
        }
        let mut url = Url::parse(text).map_err(|err| UrlError::Syntax {
            url: text.chars().take(200).collect(),
            reason: err.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
            return Err(UrlError::Scheme(url.scheme().to_owned()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials(format!(
                "{}://{}",
                url.scheme(),
                url.host_str().unwrap_or("")
            )));
        }
        if url.host().is_none() {
            return Err(UrlError::NoHost);
        }
        url.set_fragment(None);
        Ok(BotUrl { url })
    }

    /// The transport its scheme names.
    #[must_use]
    pub fn transport(&self) -> Transport {
        match self.url.scheme() {
            "ws" | "wss" => Transport::WebSocket,
            _ => Transport::Http,
        }
    }

    /// Whether it is `https` or `wss`.
    #[must_use]
    pub fn is_tls(&self) -> bool {
        matches!(self.url.scheme(), "https" | "wss")
    }

    /// The URL.
    #[must_use]
    pub fn as_url(&self) -> &Url {
        &self.url
    }

    /// Its port, explicit or the scheme's default.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.url
            .port_or_known_default()
            .unwrap_or(if self.is_tls() { 443 } else { 80 })
    }

    /// Its host as written in the URL (brackets around IPv6).
    #[must_use]
    pub fn host_text(&self) -> String {
        self.url.host_str().unwrap_or_default().to_owned()
    }
}

impl fmt::Display for BotUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.url.fmt(f)
    }
}

impl std::str::FromStr for BotUrl {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<BotUrl, UrlError> {
        BotUrl::parse(text)
    }
}

/// A bot URL and the one address connections to it go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The URL (its host is still sent as `Host` and used for TLS).
    pub url: BotUrl,
    /// The address checked against the policy; the only one connected to.
    pub addr: SocketAddr,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str) -> UrlError {
        let url = BotUrl::parse(url).expect("parses");
        AddressPolicy::PUBLIC_ONLY.resolve(&url).expect_err("refused")
    }

    /// The URL of `ip` on port 80, brackets around IPv6.
    fn url_of(ip: IpAddr) -> BotUrl {
        BotUrl::parse(&format!("http://{}/", SocketAddr::new(ip, 80))).expect("parses")
    }

    /// Addresses inside `row`'s block worth trying: its first and last,
    /// around its middle, and one past the first.
    fn inside(row: &Row) -> Vec<IpAddr> {
        let (prefix, width) = match row.prefix {
            IpAddr::V4(ip) => (u128::from(u32::from(ip)), 32),
            IpAddr::V6(ip) => (u128::from(ip), 128),
        };
        let host = 1u128
            .checked_shl(width - u32::from(row.len))
            .unwrap_or(0)
            .wrapping_sub(1);
        let half = host ^ (host >> 1);
        let ip = |bits: u128| match row.prefix {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(u32::try_from(bits).expect("32 bits"))),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from(bits)),
        };
        [1 & host, half, half | (1 & host), host, host & !1, 0]
            .into_iter()
            .map(|bits| ip(prefix | bits))
            .collect()
    }

    /// `v4` placed inside the embedding row `row`.
    fn carrying(row: &Row, embedding: Embedding, v4: Ipv4Addr) -> IpAddr {
        let IpAddr::V6(prefix) = row.prefix else {
            panic!("{}: an IPv4 row cannot embed", row.range())
        };
        let v4 = u128::from(u32::from(v4));
        let bits = match embedding {
            Embedding::Last32 => v4,
            Embedding::SixToFour => v4 << 80,
        };
        IpAddr::V6(Ipv6Addr::from(u128::from(prefix) | bits))
    }

    /// Checks that `ip` is refused by the row named `name` at `range`, the
    /// name said once, nothing about the server's flag.
    fn assert_refused_by(ip: IpAddr, name: &str, range: &str, carried: Option<Ipv4Addr>) {
        let err = AddressPolicy::PUBLIC_ONLY.resolve(&url_of(ip)).expect_err("refused");
        let message = err.to_string();
        match err {
            UrlError::NotPublic {
                host: None,
                address,
                carried: was_carried,
                range: was_range,
                name: was_name,
            } => {
                assert_eq!(
                    (address, was_name, was_range.as_str(), was_carried),
                    (ip, name, range, carried)
                );
            }
            other => panic!("{ip}: refused for another reason: {other}"),
        }
        assert_eq!(message.matches(name).count(), 1, "{ip}: the name once: {message}");
        assert!(!message.contains("allow-private"), "{message}");
        assert!(!message.contains("http://"), "{message}");
    }

    #[test]
    fn every_row_decides_an_address_inside_it() {
        for row in ADDRESS_TABLE {
            let ip = inside(row)
                .into_iter()
                .find(|ip| row_of(*ip) == row)
                .unwrap_or_else(|| panic!("{} ({}): longer rows cover all of it", row.range(), row.name));
            match row.verdict {
                Refused => assert_refused_by(ip, row.name, &row.range(), None),
                Public => {
                    let target = AddressPolicy::PUBLIC_ONLY.resolve(&url_of(ip)).expect("public");
                    assert_eq!(target.addr.ip(), ip, "{}", row.range());
                }
                Embedded(embedding) => {
                    let public = carrying(row, embedding, Ipv4Addr::new(8, 8, 8, 8));
                    assert!(row_of(public) == row, "{public} is in {}", row.range());
                    let target = AddressPolicy::PUBLIC_ONLY.resolve(&url_of(public)).expect("public");
                    assert_eq!(target.addr.ip(), public);
                    for (v4, name, range) in [
                        (Ipv4Addr::LOCALHOST, "Loopback", "127.0.0.0/8"),
                        (Ipv4Addr::new(169, 254, 169, 254), "Link Local", "169.254.0.0/16"),
                        (
                            Ipv4Addr::new(192, 88, 99, 1),
                            "Deprecated (6to4 Relay Anycast)",
                            "192.88.99.0/24",
                        ),
                    ] {
                        let ip = carrying(row, embedding, v4);
                        assert!(row_of(ip) == row, "{ip} is in {}", row.range());
                        assert_refused_by(ip, name, range, Some(v4));
                    }
                }
            }
        }
    }

    #[test]
    fn the_registries_blocks_get_their_verdicts() {
        let judged = |text: &str| refusal(text.parse().expect("an address")).map(|r| r.row.name);
        for (address, verdict) in [
            ("8.8.8.8", None),
            ("0.0.0.0", Some("This host on this network")),
            ("0.1.2.3", Some("This network")),
            ("10.255.255.255", Some("Private-Use")),
            ("11.0.0.0", None),
            ("100.64.0.1", Some("Shared Address Space")),
            ("100.127.255.255", Some("Shared Address Space")),
            ("100.128.0.0", None),
            ("127.1.2.3", Some("Loopback")),
            ("169.254.169.254", Some("Link Local")),
            ("172.31.255.255", Some("Private-Use")),
            ("172.32.0.0", None),
            ("192.0.0.1", Some("IPv4 Service Continuity Prefix")),
            ("192.0.0.8", Some("IPv4 dummy address")),
            ("192.0.0.9", Some("Port Control Protocol Anycast")),
            ("192.0.0.10", Some("Traversal Using Relays around NAT Anycast")),
            ("192.0.0.170", Some("NAT64/DNS64 Discovery")),
            ("192.0.0.171", Some("NAT64/DNS64 Discovery")),
            ("192.0.0.200", Some("IETF Protocol Assignments")),
            ("192.0.1.0", None),
            ("192.0.2.1", Some("Documentation (TEST-NET-1)")),
            ("192.31.196.1", Some("AS112-v4")),
            ("192.52.193.1", Some("AMT")),
            ("192.88.99.1", Some("Deprecated (6to4 Relay Anycast)")),
            ("192.168.1.1", Some("Private-Use")),
            ("192.175.48.1", Some("Direct Delegation AS112 Service")),
            ("198.18.0.1", Some("Benchmarking")),
            ("198.19.255.255", Some("Benchmarking")),
            ("198.20.0.0", None),
            ("198.51.100.1", Some("Documentation (TEST-NET-2)")),
            ("203.0.113.1", Some("Documentation (TEST-NET-3)")),
            ("224.0.0.1", Some("Multicast")),
            ("239.255.255.255", Some("Multicast")),
            ("240.0.0.1", Some("Reserved")),
            ("255.255.255.255", Some("Limited Broadcast")),
            ("::", Some("Unspecified Address")),
            ("::1", Some("Loopback Address")),
            ("::127.0.0.1", Some("IPv4-compatible Address (deprecated)")),
            ("::8.8.8.8", Some("IPv4-compatible Address (deprecated)")),
            ("::ffff:8.8.8.8", None),
            ("::ffff:127.0.0.1", Some("Loopback")),
            ("::ffff:0:808:808", None),
            ("::ffff:0:7f00:1", Some("Loopback")),
            ("::ffff:0:a9fe:a9fe", Some("Link Local")),
            ("64:ff9b::808:808", None),
            ("64:ff9b::a00:1", Some("Private-Use")),
            ("64:ff9b:1::808:808", Some("Local-use IPv4/IPv6 Translation")),
            ("100::1", Some("Discard-Only Address Block")),
            ("100:0:0:1::1", Some("Dummy IPv6 Prefix")),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some("TEREDO")),
            ("2001:0:808:808::f7f7:f7f7", Some("TEREDO")),
            ("2001:1::1", Some("Port Control Protocol Anycast")),
            ("2001:1::2", Some("Traversal Using Relays around NAT Anycast")),
            ("2001:1::3", Some("DNS-SD Service Registration Protocol Anycast")),
            ("2001:1::4", Some("IETF Protocol Assignments")),
            ("2001:2::1", Some("Benchmarking")),
            ("2001:2:1::1", Some("IETF Protocol Assignments")),
            ("2001:3::1", Some("AMT")),
            ("2001:4:112::1", Some("AS112-v6")),
            ("2001:10::1", Some("Deprecated (previously ORCHID)")),
            ("2001:20::1", Some("ORCHIDv2")),
            ("2001:2f:ffff::1", Some("ORCHIDv2")),
            ("2001:30::1", Some("Drone Remote ID Protocol Entity Tags (DETs) Prefix")),
            ("2001:1ff::1", Some("IETF Protocol Assignments")),
            ("2001:200::1", None),
            ("2001:db8::1", Some("Documentation")),
            ("2002:808:808::1", None),
            ("2002:7f00:1::", Some("Loopback")),
            ("2002:c058:6301::1", Some("Deprecated (6to4 Relay Anycast)")),
            ("2606:4700::1111", None),
            ("2620:4f:8000::1", Some("Direct Delegation AS112 Service")),
            ("2620:4f:7fff::1", None),
            ("3fff::1", Some("Documentation")),
            ("3fff:fff::1", Some("Documentation")),
            ("3fff:1000::1", None),
            ("5f00::1", Some("Segment Routing (SRv6) SIDs")),
            ("4000::1", Some("not global unicast (outside 2000::/3)")),
            ("1fff::1", Some("not global unicast (outside 2000::/3)")),
            ("fc00::1", Some("Unique-Local")),
            ("fd00::1", Some("Unique-Local")),
            ("fe80::1", Some("Link-Local Unicast")),
            ("fec0::1", Some("Site-Local (deprecated)")),
            ("ff02::1", Some("Multicast")),
        ] {
            assert_eq!(judged(address), verdict, "{address}");
        }
    }

    #[test]
    fn the_table_is_well_formed() {
        for (i, row) in ADDRESS_TABLE.iter().enumerate() {
            let (bits, width) = match row.prefix {
                IpAddr::V4(ip) => (u128::from(u32::from(ip)) << 96, 32),
                IpAddr::V6(ip) => (u128::from(ip), 128),
            };
            assert!(row.len <= width, "{}: too long", row.range());
            assert_eq!(
                bits.checked_shl(u32::from(row.len)).unwrap_or(0),
                0,
                "{}: host bits set",
                row.range()
            );
            assert!(!row.name.is_empty());
            for other in &ADDRESS_TABLE[i + 1..] {
                assert!(
                    (row.prefix, row.len) != (other.prefix, other.len),
                    "{} twice",
                    row.range()
                );
            }
            if let (Embedded(_), IpAddr::V4(_)) = (row.verdict, row.prefix) {
                panic!("{}: an IPv4 row cannot embed an IPv4 address", row.range());
            }
        }
        // Every address has a row of its own family.
        assert!(ADDRESS_TABLE.iter().any(|r| r.len == 0 && r.prefix.is_ipv4()));
        assert!(ADDRESS_TABLE.iter().any(|r| r.len == 0 && r.prefix.is_ipv6()));
    }

    #[test]
    fn the_spec_lists_every_row() {
        let spec = include_str!("../../docs/spec/remote.md");
        for row in ADDRESS_TABLE {
            let range = format!("`{}`", row.range());
            assert!(spec.contains(&range), "docs/spec/remote.md does not list {range}");
            assert!(
                spec.contains(row.name),
                "docs/spec/remote.md does not name {}",
                row.name
            );
        }
    }

    #[test]
    fn non_public_addresses_are_refused() {
        for url in [
            "http://127.0.0.1/",
            "http://127.1.2.3:8080/bot",
            "http://[::1]/",
            "http://10.0.0.1/",
            "http://172.16.5.4/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://[::ffff:0:7f00:1]:8000/",
            "http://[::ffff:0:a9fe:a9fe]/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::a00:1]/",
            "http://[2002:7f00:1::]/",
            "http://[2001:2::1]/",
            "http://[3fff::1]/",
            "http://[5f00::1]/",
            "http://[2001:20::1]/",
            "http://192.88.99.1/",
            "http://0.0.0.0/",
            "http://[::]/",
            "http://100.64.0.1/",
            "http://224.0.0.1/",
            "http://255.255.255.255/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
            "http://[ff02::1]/",
            "ws://localhost:9000/",
        ] {
            assert!(
                matches!(refused(url), UrlError::NotPublic { .. }),
                "{url} should be refused as not public"
            );
        }
    }

    #[test]
    fn the_refusal_says_what_the_address_is_once() {
        assert_eq!(
            refused("http://169.254.169.254/latest/meta-data/").to_string(),
            "169.254.169.254 is in 169.254.0.0/16 (Link Local); a bot must be reachable on a public address"
        );
        assert_eq!(
            refused("http://[::ffff:0:7f00:1]:8000/").to_string(),
            "::ffff:0:7f00:1 carries the IPv4 address 127.0.0.1, which is in 127.0.0.0/8 (Loopback); \
             a bot must be reachable on a public address"
        );
    }

    /// A resolver that gives two addresses, one of them private.
    fn public_then_private(_: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(vec![
            SocketAddr::new(Ipv4Addr::new(8, 8, 8, 8).into(), port),
            SocketAddr::new(Ipv4Addr::new(10, 0, 0, 1).into(), port),
        ])
    }

    /// A resolver that gives an IPv4-mapped loopback address.
    fn mapped_loopback(_: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::new(Ipv4Addr::LOCALHOST.to_ipv6_mapped().into(), port)])
    }

    /// A resolver that gives public addresses only.
    fn public_only(_: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(vec![
            SocketAddr::new(Ipv4Addr::new(1, 1, 1, 1).into(), port),
            SocketAddr::new("2606:4700::1111".parse::<Ipv6Addr>().expect("an address").into(), port),
        ])
    }

    /// A resolver that answers nothing.
    fn no_address(_: &str, _: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(Vec::new())
    }

    /// A resolver that hangs (for 30 s, then answers a public address).
    fn hanging(_: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        std::thread::sleep(Duration::from_secs(30));
        public_only("", port)
    }

    #[test]
    fn a_name_is_judged_by_every_address_it_resolves_to() {
        let url = BotUrl::parse("http://bot.example:8000/").expect("parses");
        let resolve = |lookup: Lookup| AddressPolicy::PUBLIC_ONLY.resolve_with(&url, RESOLVE_TIMEOUT, lookup);
        assert_eq!(
            resolve(public_then_private).expect_err("refused").to_string(),
            "bot.example resolves to 10.0.0.1, which is in 10.0.0.0/8 (Private-Use); \
             a bot must be reachable on a public address"
        );
        assert_eq!(
            resolve(mapped_loopback).expect_err("refused").to_string(),
            "bot.example resolves to ::ffff:127.0.0.1, which carries the IPv4 address 127.0.0.1, \
             in 127.0.0.0/8 (Loopback); a bot must be reachable on a public address"
        );
        assert_eq!(resolve(public_only).expect("public").addr.to_string(), "1.1.1.1:8000");
        assert!(matches!(resolve(no_address), Err(UrlError::Resolve { .. })));
        let allowed = AddressPolicy::ANY.resolve_with(&url, RESOLVE_TIMEOUT, mapped_loopback);
        assert_eq!(allowed.expect("allowed").addr.to_string(), "[::ffff:127.0.0.1]:8000");
    }

    #[test]
    fn a_hanging_resolver_times_out() {
        let url = BotUrl::parse("wss://slow.example/").expect("parses");
        let within = Duration::from_millis(200);
        for policy in [AddressPolicy::PUBLIC_ONLY, AddressPolicy::ANY] {
            let started = std::time::Instant::now();
            let err = policy.resolve_with(&url, within, hanging).expect_err("timed out");
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "waited {:?}",
                started.elapsed()
            );
            assert_eq!(
                err,
                UrlError::ResolveTimeout {
                    host: "slow.example".to_owned(),
                    within
                }
            );
            assert_eq!(err.to_string(), "the host slow.example did not resolve within 200ms");
        }
    }

    #[test]
    fn public_addresses_pass_and_are_pinned() {
        for (url, addr) in [
            ("http://93.184.215.14/", "93.184.215.14:80"),
            ("https://8.8.8.8/bot", "8.8.8.8:443"),
            ("ws://[2606:4700::1111]:9000/", "[2606:4700::1111]:9000"),
            ("wss://1.1.1.1/", "1.1.1.1:443"),
            ("http://[::ffff:8.8.8.8]/", "[::ffff:8.8.8.8]:80"),
        ] {
            let target = AddressPolicy::PUBLIC_ONLY
                .resolve(&BotUrl::parse(url).expect("parses"))
                .expect("public");
            assert_eq!(target.addr.to_string(), addr);
        }
    }

    #[test]
    fn the_flag_allows_private_addresses() {
        let url = BotUrl::parse("http://127.0.0.1:8000/").expect("parses");
        let target = AddressPolicy::ANY.resolve(&url).expect("allowed");
        assert_eq!(target.addr.to_string(), "127.0.0.1:8000");
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        assert!(matches!(BotUrl::parse("ftp://x.org/"), Err(UrlError::Scheme(_))));
        assert!(matches!(BotUrl::parse("file:///etc/passwd"), Err(UrlError::Scheme(_))));
        assert!(matches!(BotUrl::parse("not a url"), Err(UrlError::Syntax { .. })));
        assert!(matches!(
            BotUrl::parse("http://user:pw@example.org/"),
            Err(UrlError::Credentials(_))
        ));
        let long = format!("http://example.org/{}", "a".repeat(MAX_URL_BYTES));
        assert!(matches!(BotUrl::parse(&long), Err(UrlError::TooLong(_))));
        let message = BotUrl::parse("http://user:secret@example.org/")
            .expect_err("refused")
            .to_string();
        assert!(!message.contains("secret"), "{message}");
    }

    #[test]
    fn transports_follow_the_scheme() {
        let transport = |url: &str| BotUrl::parse(url).expect("parses").transport();
        assert_eq!(transport("http://x.org/"), Transport::Http);
        assert_eq!(transport("https://x.org/"), Transport::Http);
        assert_eq!(transport("ws://x.org/"), Transport::WebSocket);
        assert_eq!(transport("wss://x.org/"), Transport::WebSocket);
    }
}
