//! Run a scenario file from the command line (Rust-only users): `cargo run --release --example run -- FILE [OUT]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run SCENARIO.toml [OUT_DIR]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(2)
    });
    let base = std::path::Path::new(path)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let t0 = std::time::Instant::now();
    match ccsim::run_scenario(&text, base, None, &[]) {
        Ok(r) => {
            let wall = t0.elapsed().as_secs_f64();
            let s = r.summary_with_perf(wall);
            println!("{}", serde_json::to_string_pretty(&s).unwrap());
            if let Some(out) = args.get(2) {
                r.write_dir(std::path::Path::new(out), wall)
                    .expect("write results");
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
