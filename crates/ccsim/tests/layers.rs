//! The engine's layers depend only downward (the layer map in `docs/design.md`): every
//! `crate::<module>` a source file names, outside its `#[cfg(test)]` tail, is its own module or
//! one of a lower layer.

/// Layer of each top-level module, bottom up.
const LAYERS: &[(&str, u32)] = &[
    ("sim", 0),
    ("net", 1),
    ("topo", 1),
    ("transport", 2),
    ("workload", 2),
    ("cc", 3),
    ("metrics", 3),
    ("engine", 4),
    ("scenario", 5),
    ("bench", 6),
];

fn layer(module: &str) -> u32 {
    LAYERS
        .iter()
        .find(|(m, _)| *m == module)
        .unwrap_or_else(|| {
            panic!("module `{module}` has no layer: add it to LAYERS and docs/design.md")
        })
        .1
}

/// The top-level modules that `crate::` paths in `text` name.
fn crate_refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut upward = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let own = match rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap()
        {
            "lib.rs" => continue, // the crate root re-exports the public API
            f => f.trim_end_matches(".rs").to_string(),
        };
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("\n#[cfg(test)]\nmod tests").next().unwrap();
        if code.contains("crate::{") {
            upward.push(format!(
                "{}: `crate::{{..}}` (name each module, so this check sees it)",
                rel.display()
            ));
        }
        for dep in crate_refs(code) {
            if dep != own && layer(&dep) >= layer(&own) {
                upward.push(format!("{}: crate::{dep}", rel.display()));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports at or above their layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_check_sees_an_upward_import() {
    let refs = crate_refs("use crate::engine::Simulation;\nfn f() { crate::sim::prefetch(0) }");
    assert_eq!(refs, ["engine", "sim"]);
    assert!(layer("engine") > layer("cc") && layer("cc") > layer("net"));
}
