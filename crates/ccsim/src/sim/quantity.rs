//! Serde newtypes for quantities with units. They read "100Gbps" / "2us" / "64KB" (sizes also
//! accept a bare integer number of bytes) and write the canonical exact form back, so a
//! resolved config re-reads to the same values.

use crate::sim::units::*;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

macro_rules! unit_newtype {
    ($name:ident, $doc:literal, $parse:ident, $fmt:ident, $int_ok:expr, $what:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
        pub struct $name(pub u64);

        impl $name {
            /// Zero (a default left unwritten in a resolved config).
            pub fn is_zero(&self) -> bool {
                self.0 == 0
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$fmt(self.0))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, $what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        if $int_ok && v > MAX_SIZE_BYTES as i64 {
                            Err(E::custom(format!("`{v}` is too large: at most {MAX_SIZE_BYTES} bytes")))
                        } else if $int_ok && v >= 0 {
                            Ok($name(v as u64))
                        } else if v < 0 {
                            Err(E::custom(format!("`{v}` is negative; it must be >= 0")))
                        } else {
                            Err(E::custom(format!("`{v}` has no unit; write it as a string with a unit, e.g. \"{v}us\" or \"{v}Gbps\"")))
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(v.min(i64::MAX as u64) as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("`{v}` has no unit; write it as a string with a unit")))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_newtype!(
    Time,
    "A time in picoseconds, written \"2us\".",
    parse_time_ps,
    fmt_time,
    false,
    "a time with a unit, e.g. \"2us\""
);
unit_newtype!(
    Rate,
    "A rate in bits per second, written \"100Gbps\".",
    parse_rate_bps,
    fmt_rate,
    false,
    "a rate with a unit, e.g. \"100Gbps\""
);
unit_newtype!(
    Size,
    "A size in bytes, written \"64KB\" or as an integer.",
    parse_size_bytes,
    fmt_size,
    true,
    "a size, e.g. \"64KB\" or 64000"
);
