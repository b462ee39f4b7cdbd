//! Bad input and TOML values: the error every layer returns for a bad scenario field
//! (`ScenarioError`: the dotted field and how to fix it), and deserializing a TOML value with
//! errors that name the field, laid over defaults table by table.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Bad input: which field, and what is wrong with it (and how to fix it).
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    /// An error about `field`.
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        ScenarioError {
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// Building stopped because the user asked (`sim::interrupt`).
    pub fn interrupted() -> Self {
        ScenarioError::new(Self::INTERRUPTED, "stopped while building the scenario")
    }
    pub const INTERRUPTED: &'static str = "interrupted";
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn join_path(prefix: &str, inner: &str) -> String {
    match (prefix.is_empty(), inner.is_empty() || inner == ".") {
        (true, _) => inner.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{inner}"),
    }
}

/// Deserialize `T` from a TOML value; errors carry the dotted path under `prefix`.
pub fn from_value<T: DeserializeOwned>(v: toml::Value, prefix: &str) -> Result<T, ScenarioError> {
    let copy = v.clone();
    serde_path_to_error::deserialize(v).map_err(|e| {
        let mut path = e.path().to_string();
        let msg = e.into_inner().to_string();
        // The TOML deserializer appends "\nin `key`"; the path already names the key.
        let msg = msg.split("\nin `").next().unwrap_or("").trim().to_string();
        // Inside a tagged enum (`topology`) the path stops at the enum: the one value there
        // (a string, or a bare number) equal to the quoted bad value is the field.
        if let (Some(bad), Some(at)) = (msg.split('`').nth(1), lookup(&copy, &path)) {
            let mut found = Vec::new();
            values_equal_to(at, bad, &path, &mut found);
            if let [only] = &found[..] {
                path = only.clone();
            }
        }
        let field = join_path(prefix, &path);
        ScenarioError::new(if field.is_empty() { "scenario" } else { &field }, msg)
    })
}

/// The value at dotted `path` ("" or "." is `v` itself; list indices are numbers).
fn lookup<'a>(v: &'a toml::Value, path: &str) -> Option<&'a toml::Value> {
    path.split('.')
        .filter(|k| !k.is_empty())
        .try_fold(v, |v, k| match v {
            toml::Value::Table(t) => t.get(k),
            toml::Value::Array(a) => a.get(k.parse::<usize>().ok()?),
            _ => None,
        })
}

/// The dotted paths under `v` (at `path`) of every string equal to `s`.
fn values_equal_to(v: &toml::Value, s: &str, path: &str, out: &mut Vec<String>) {
    match v {
        toml::Value::String(x) if x == s => out.push(path.to_string()),
        toml::Value::Integer(x) if x.to_string() == s => out.push(path.to_string()),
        toml::Value::Float(x) if x.to_string() == s => out.push(path.to_string()),
        toml::Value::Table(t) => {
            for (k, x) in t {
                values_equal_to(x, s, &join_path(path, k), out);
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                values_equal_to(x, s, &join_path(path, &i.to_string()), out);
            }
        }
        _ => {}
    }
}

/// Deserialize `T` from `user` keys laid over the defaults `base` (so scheme-specific defaults apply).
pub fn from_value_at<T: DeserializeOwned + Serialize>(
    user: toml::Value,
    prefix: &str,
    base: T,
) -> Result<T, ScenarioError> {
    let mut merged = toml::Table::try_from(&base).expect("defaults serialize");
    if let toml::Value::Table(t) = user {
        merge_into(&mut merged, t);
    }
    from_value(toml::Value::Table(merged), prefix)
}

/// Lay `user` over `base`: a table given in both merges key by key (so `tcd = { max_t_on =
/// "50us" }` keeps the scheme's other TCD defaults); anything else replaces.
fn merge_into(base: &mut toml::Table, user: toml::Table) {
    for (k, v) in user {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(u)) => merge_into(b, u),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Parse TOML text as `T` (used for auxiliary files); `what` names the source.
pub fn parse_toml_as<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, ScenarioError> {
    let v: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        ScenarioError::new(what, format!("TOML syntax error: {}", e.message()))
    })?;
    from_value(toml::Value::Table(v), what)
}

/// The most bytes ccsim reads from one input file (a topology, a CDF, a flow list).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// The text of an input file. Only a regular file of at most `MAX_INPUT_BYTES` is read: a FIFO
/// would block forever and /dev/zero never end. The error says why, for a message naming the
/// file.
pub fn read_input(path: &std::path::Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file (a pipe, a device or a directory); give a file".into());
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "{} bytes, over the {MAX_INPUT_BYTES} ccsim reads from one input file",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::merge_into;

    #[test]
    fn user_params_merge_over_the_defaults_table_by_table() {
        let mut base: toml::Table = "a = 1\n[t]\nx = 1\ny = 2\n".parse().unwrap();
        let user: toml::Table = "b = 3\nt = { y = 5, z = 6 }\n".parse().unwrap();
        merge_into(&mut base, user);
        let want: toml::Table = "a = 1\nb = 3\n[t]\nx = 1\ny = 5\nz = 6\n".parse().unwrap();
        assert_eq!(base, want);
        // A value that is not a table on both sides replaces.
        merge_into(&mut base, "t = 7".parse().unwrap());
        assert_eq!(base["t"], toml::Value::Integer(7));
    }
}
