//! A figure that may be "not measured" (NaN) written as JSON `null` and read back as NaN: JSON
//! has no NaN, and serde_json writes one as `null` but cannot read that back into an `f64`.
//! Use as `#[serde(with = "crate::measure::nan_as_null")]`.

use serde::{Deserialize, Deserializer, Serializer};

pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
