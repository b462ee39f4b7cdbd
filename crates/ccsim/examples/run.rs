//! Run a scenario file from the command line (Rust-only users):
//! `cargo run --release --example run -- FILE [OUT [KEY=VALUE ...]]` (overrides, e.g. `threads=4`;
//! OUT `-` writes no tables).
#[global_allocator]
static ALLOC: ccsim::sim::alloc::HugePageAlloc = ccsim::sim::alloc::HugePageAlloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run SCENARIO.toml [OUT_DIR|- [KEY=VALUE ...]]");
        std::process::exit(2);
    };
    // An empty OUT_DIR would write the tables into the working folder.
    let out = match args.get(2).map(String::as_str) {
        Some("") => {
            eprintln!("error: OUT_DIR is empty: give a folder, or - to write no tables");
            std::process::exit(2)
        }
        Some("-") | None => None,
        Some(dir) => Some(std::path::Path::new(dir)),
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(2)
    });
    let base = std::path::Path::new(path)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let t0 = std::time::Instant::now();
    let overrides = args.get(3..).unwrap_or_default();
    let built =
        ccsim::Scenario::load(&text, base, None, overrides).and_then(|sc| Ok((sc.start()?, sc)));
    let (mut run, sc) = built.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let build_s = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    if let Err(e) = run.run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let wall = t1.elapsed().as_secs_f64();
    let r = sc.results(&mut run.into_simulation());
    println!(
        "{}",
        serde_json::to_string_pretty(&r.summary_with_perf(build_s, wall)).unwrap()
    );
    if let Some(out) = out {
        if let Err(e) = r.write_dir(out, build_s, wall) {
            eprintln!("error: cannot write the tables into {}: {e}", out.display());
            std::process::exit(2);
        }
    }
}
