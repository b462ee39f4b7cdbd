//! The registry's machinery: `registry!` (in `cc/mod.rs`, one line per scheme type) generates
//! the parameter enum `CcParams`, one state store per part and one `match` per hook; lookups
//! of the registered names.

use super::scheme::SchemeInfo;
use crate::sim::input::ScenarioError;

/// Every scheme ccsim knows, in `ccsim list` order.
pub fn schemes() -> impl Iterator<Item = &'static SchemeInfo> {
    super::SCHEME_TYPES.iter().flat_map(|t| t.iter())
}

/// Look a scheme up by name.
pub fn scheme(name: &str) -> Option<&'static SchemeInfo> {
    schemes().find(|s| s.name == name)
}

pub(crate) fn unknown_scheme(name: &str) -> ScenarioError {
    let names: Vec<&str> = schemes().map(|s| s.name).collect();
    ScenarioError::new(
        "cc.scheme",
        format!("unknown scheme `{name}`; use one of: {}", names.join(", ")),
    )
}

/// An array's start, length and element size in bytes.
#[inline(always)]
pub(crate) fn array_view<T>(s: &[T]) -> (*const u8, usize, usize) {
    (s.as_ptr().cast(), s.len(), std::mem::size_of::<T>())
}

/// `len`, `is_empty` and `prefetch` of one of the registry's per-part state arrays.
macro_rules! states_impl {
    ($name:ident, $($(#[$m:meta])* $v:ident),+) => {
        impl $name {
            #[inline(always)]
            pub fn len(&self) -> usize {
                self.view().1
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            /// Start, length and element size (every variant is an array: they differ only in
            /// the element size).
            #[inline(always)]
            fn view(&self) -> (*const u8, usize, usize) {
                match self { $($(#[$m])* $name::$v(s) => $crate::cc::registry::array_view(s),)+ }
            }
            /// Start loading state `i`, if there is one: its first and last line.
            #[inline(always)]
            pub(crate) fn prefetch(&self, i: usize) {
                let (base, len, size) = self.view();
                if i < len {
                    crate::sim::prefetch_bytes(base.wrapping_add(i * size), size);
                }
            }
        }
    };
}

/// `swap_at` of one of the registry's per-part state arrays.
macro_rules! swap_impl {
    ($name:ident, $($(#[$m:meta])* $v:ident),+) => {
        impl $name {
            /// Exchange state `i` with `other`'s state `j` (merging the partitions of a
            /// parallel run: each state is taken from the partition that owns it).
            pub(crate) fn swap_at(&mut self, i: usize, other: &mut Self, j: usize) {
                match (self, other) {
                    $($(#[$m])* ($name::$v(a), $name::$v(b)) => std::mem::swap(&mut a[i], &mut b[j]),)+
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("state of another scheme"),
                }
            }
        }
    };
}

/// `picked` of the registry's per-flow state arrays.
macro_rules! pick_impl {
    ($name:ident, $($(#[$m:meta])* $v:ident),+) => {
        impl $name {
            /// Copies of the states of flows `ids`, in that order (a partition's flows).
            pub(crate) fn picked(&self, ids: &[u32]) -> Self {
                match self {
                    $($(#[$m])* $name::$v(a) => $name::$v(ids.iter().map(|&i| a[i as usize].clone()).collect()),)+
                }
            }
        }
    };
}

macro_rules! registry {
    ($($(#[$m:meta])* $v:ident => $module:ident :: $t:ident),+ $(,)?) => {
        $($(#[$m])* pub mod $module;)+
        /// The registered names of each scheme type, in `ccsim list` order.
        // Pushes, not vec![]: an entry may carry a #[cfg].
        #[allow(clippy::vec_init_then_push)]
        static SCHEME_TYPES: std::sync::LazyLock<Vec<&'static [SchemeInfo]>> =
            std::sync::LazyLock::new(|| {
                let mut v = Vec::new();
                $($(#[$m])* v.push(<$module::$t as Scheme>::SCHEMES);)+
                v
            });

        /// Typed parameters of the run's scheme.
        #[derive(Clone, Debug)]
        pub enum CcParams { $($(#[$m])* $v(<$module::$t as Scheme>::Params)),+ }
        /// Every flow's sender state, indexed by the flow's place (`transport::Flows::slot`): one
        /// array of the run's scheme's own type, so a state takes its own size, not the largest
        /// scheme's.
        #[derive(Clone, Debug)]
        pub enum SenderStates { $($(#[$m])* $v(Vec<<$module::$t as Scheme>::Sender>)),+ }
        /// Every flow's receiver state, indexed as the sender states.
        #[derive(Clone, Debug)]
        pub enum ReceiverStates { $($(#[$m])* $v(Vec<<$module::$t as Scheme>::Receiver>)),+ }
        /// Every host's receiver state, indexed by host id.
        #[derive(Clone, Debug)]
        pub enum HostRxStates {
            $($(#[$m])* $v(Vec<
                <<$module::$t as Scheme>::Receiver as ReceiverPart<<$module::$t as Scheme>::Params>>::Host
            >)),+
        }
        /// Every port's switch state, indexed by port id (empty: the scheme has no switch part).
        #[derive(Clone, Debug)]
        pub enum SwitchStates { $($(#[$m])* $v(Vec<<$module::$t as Scheme>::Switch>)),+ }
        states_impl!(SenderStates, $($(#[$m])* $v),+);
        states_impl!(ReceiverStates, $($(#[$m])* $v),+);
        states_impl!(SwitchStates, $($(#[$m])* $v),+);
        swap_impl!(SenderStates, $($(#[$m])* $v),+);
        pick_impl!(SenderStates, $($(#[$m])* $v),+);
        pick_impl!(ReceiverStates, $($(#[$m])* $v),+);
        swap_impl!(ReceiverStates, $($(#[$m])* $v),+);
        swap_impl!(HostRxStates, $($(#[$m])* $v),+);
        swap_impl!(SwitchStates, $($(#[$m])* $v),+);

        impl CcParams {
            /// Parse and check `[cc.params]` for `name`; errors name `cc.params.<key>`.
            pub fn parse(name: &str, params: &toml::Table) -> Result<CcParams, ScenarioError> {
                let v = toml::Value::Table(params.clone());
                $($(#[$m])* if <$module::$t as Scheme>::SCHEMES.iter().any(|s| s.name == name) {
                    let p: <$module::$t as Scheme>::Params = crate::sim::input::from_value_at(
                        v, "cc.params", <$module::$t as Scheme>::default_params(name))?;
                    p.validate()?;
                    <$module::$t as Scheme>::check(name, &p)?;
                    return Ok(CcParams::$v(p));
                })+
                Err($crate::cc::registry::unknown_scheme(name))
            }
            /// The parameters with defaults filled in, for the resolved config and `ccsim list`.
            pub fn to_table(&self) -> toml::Table {
                match self {
                    $($(#[$m])* CcParams::$v(p) => toml::Table::try_from(p).expect("params serialize"),)+
                }
            }
            /// Fresh sender states of `flows` flows.
            pub fn new_senders(&self, flows: usize) -> SenderStates {
                match self { $($(#[$m])* CcParams::$v(p) =>
                    SenderStates::$v((0..flows).map(|_| SenderPart::new(p)).collect()),)+ }
            }
            /// Fresh receiver states of `flows` flows.
            pub fn new_receivers(&self, flows: usize) -> ReceiverStates {
                match self { $($(#[$m])* CcParams::$v(p) =>
                    ReceiverStates::$v((0..flows).map(|_| ReceiverPart::new(p)).collect()),)+ }
            }
            /// Fresh receiver states of `hosts` hosts.
            pub fn new_hosts(&self, hosts: usize) -> HostRxStates {
                match self { $($(#[$m])* CcParams::$v(_) =>
                    HostRxStates::$v((0..hosts).map(|_| Default::default()).collect()),)+ }
            }
            /// The scheme has a switch part.
            pub fn has_switch(&self) -> bool {
                match self {
                    $($(#[$m])* CcParams::$v(_) =>
                        <<$module::$t as Scheme>::Switch as SwitchPart<<$module::$t as Scheme>::Params>>::ENABLED,)+
                }
            }
            /// The scheme's receiver part acts with these parameters.
            pub fn has_receiver(&self) -> bool {
                match self {
                    $($(#[$m])* CcParams::$v(p) =>
                        <<$module::$t as Scheme>::Receiver as ReceiverPart<_>>::active(p),)+
                }
            }
            /// Fresh switch states of egress ports `ports` (none if the scheme has no switch
            /// part).
            pub fn new_switches(&self, ports: &[Port]) -> SwitchStates {
                let ports = if self.has_switch() { ports } else { &[] };
                match self { $($(#[$m])* CcParams::$v(p) =>
                    SwitchStates::$v(ports.iter().map(|port| SwitchPart::new(p, port)).collect()),)+ }
            }

            pub(crate) fn on_start(&self, s: &mut SenderStates, tx: &mut Tx) {
                let i = tx.slot as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_start(&mut s[i], p, tx),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            #[inline]
            pub(crate) fn on_ack(&self, s: &mut SenderStates, tx: &mut Tx, ack: &AckInfo) {
                let i = tx.slot as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_ack(&mut s[i], p, tx, ack),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_ctrl(&self, s: &mut SenderStates, tx: &mut Tx, c: &CtrlInfo) {
                let i = tx.slot as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_ctrl(&mut s[i], p, tx, c),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            #[inline]
            pub(crate) fn on_send(&self, s: &mut SenderStates, tx: &mut Tx, d: &mut DataOut) {
                let i = tx.slot as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_send(&mut s[i], p, tx, d),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_sender_timer(&self, s: &mut SenderStates, tx: &mut Tx, kind: u8) {
                let i = tx.slot as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_timer(&mut s[i], p, tx, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_finish(&self, s: &mut SenderStates, tx: &mut Tx) {
                let i = tx.slot as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_finish(&mut s[i], p, tx),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_timeout(&self, s: &mut SenderStates, tx: &mut Tx) {
                let i = tx.slot as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_timeout(&mut s[i], p, tx),)+
                    _ => unreachable!("state of another scheme"),
                }
            }

            pub(crate) fn on_data(
                &self, s: &mut ReceiverStates, h: &mut HostRxStates, rx: &mut Rx, d: &DataInfo,
            ) {
                let (i, host) = (rx.slot as usize, rx.f.dst as usize);
                match (self, s, h) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s), HostRxStates::$v(h)) =>
                        ReceiverPart::on_data(&mut s[i], &mut h[host], p, rx, d),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_receiver_ctrl(
                &self, s: &mut ReceiverStates, h: &mut HostRxStates, rx: &mut Rx, c: &CtrlInfo,
            ) {
                let (i, host) = (rx.slot as usize, rx.f.dst as usize);
                match (self, s, h) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s), HostRxStates::$v(h)) =>
                        ReceiverPart::on_ctrl(&mut s[i], &mut h[host], p, rx, c),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn ack_hdr(&self, s: &ReceiverStates, i: usize) -> SchemeHdr {
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s)) => ReceiverPart::ack_hdr(&s[i], p),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_receiver_timer(
                &self, s: &mut ReceiverStates, h: &mut HostRxStates, rx: &mut Rx, kind: u8,
            ) {
                let (i, host) = (rx.slot as usize, rx.f.dst as usize);
                match (self, s, h) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s), HostRxStates::$v(h)) =>
                        ReceiverPart::on_timer(&mut s[i], &mut h[host], p, rx, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            /// The receiver part's event counts over the run (`ReceiverPart::counters`).
            pub fn counters(&self, s: &ReceiverStates, h: &HostRxStates) -> Vec<(&'static str, u64)> {
                match (self, s, h) {
                    $($(#[$m])* (CcParams::$v(_), ReceiverStates::$v(s), HostRxStates::$v(h)) =>
                        <<$module::$t as Scheme>::Receiver as ReceiverPart<<$module::$t as Scheme>::Params>>::counters(h, s),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_host_timer(&self, h: &mut HostRxStates, hx: &mut HostCtx, kind: u8) {
                match (self, h) {
                    $($(#[$m])* (CcParams::$v(p), HostRxStates::$v(h)) =>
                        <<$module::$t as Scheme>::Receiver as ReceiverPart<_>>::on_host_timer(
                            &mut h[hx.host as usize], p, hx, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }

            #[inline]
            pub(crate) fn on_enqueue(
                &self, s: &mut SwitchStates, sw: &mut Sw, pkt: &mut Packet,
            ) -> Verdict {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) => SwitchPart::on_enqueue(&mut s[i], p, sw, pkt),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            #[inline]
            pub(crate) fn on_dequeue(&self, s: &mut SwitchStates, sw: &mut Sw, pkt: &mut Packet) {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) => SwitchPart::on_dequeue(&mut s[i], p, sw, pkt),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_pfc(&self, s: &mut SwitchStates, sw: &mut Sw, pause: bool) {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) =>
                        if pause { SwitchPart::on_pause(&mut s[i], p, sw) } else { SwitchPart::on_resume(&mut s[i], p, sw) },)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_port_timer(&self, s: &mut SwitchStates, sw: &mut Sw, kind: u8) {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) => SwitchPart::on_timer(&mut s[i], p, sw, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
        }
    };
}
