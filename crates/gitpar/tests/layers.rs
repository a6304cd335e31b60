//! The engine's folders are layers: a module may import from its own layer and the layers below
//! it, never from one above. This test fails when an import runs back up.
//!
//! The order is written down once, here ([`LAYERS`]); every module of the engine but `lib.rs`
//! lives in one of these folders (the test fails on a module outside them).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first, each a folder of `src/`.
const LAYERS: &[&str] = &[
    // The ground: CPUs, environment switches, the memory budget and the memory given back, the
    // context a run shares with its caller, phase timings.
    "sys",
    // The path-safe filesystem layer, locks, removal and the filesystem tuning: the platform
    // seam.
    "fs",
    // The repository around the work tree: branches, reference transactions, hooks, state
    // files, what git says along the way.
    "repo", // Content conversions: attributes, eol/ident/encoding, filter drivers.
    "convert",
    // The index file below the decisions that fill it: its format, checksum, and the extensions
    // that need nothing of an operation (fsmonitor, resolve-undo).
    "index",
    // What a command will do, before anything is done: the walk and diff of trees, pathspecs.
    "plan",
    // The object database as the writers read it: pack scan and inflation, streaming of big
    // blobs, the fetch of a partial clone's missing blobs.
    "objects",
    // The writers: the pool under the memory budget, one entry's write, the tail, the donor,
    // the options of a checkout and the error of writing entries.
    "write", // What the work tree holds against the index: refresh and status.
    "inspect",
    // The operations, each a command's whole job: checkout, update (with the submodule
    // recursion inside it), switch, reset, restore, merge, fast-forward, carry.
    "ops",
];

#[test]
fn no_layer_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let roots = root_names(&src);
    let mut offences = Vec::new();
    let mut checked = 0;
    for (floor, layer) in LAYERS.iter().enumerate() {
        for path in sources(&src.join(layer)) {
            checked += 1;
            let name = path.strip_prefix(&src).unwrap().display().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for target in imported(line, &roots) {
                    let ok = LAYERS[..=floor].contains(&target.as_str());
                    if !ok {
                        offences.push(format!(
                            "{name}:{}: layer `{layer}` imports `crate::{target}`, which is not \
                             below it: {}",
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        checked >= LAYERS.len(),
        "only {checked} modules were checked"
    );
    assert!(
        offences.is_empty(),
        "imports that run back up a layer:\n{}",
        offences.join("\n")
    );
}

#[test]
fn every_module_stands_in_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let outside: Vec<String> = sources(&src)
        .into_iter()
        .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
        .filter(|name| name != "lib.rs")
        .filter(|name| !LAYERS.iter().any(|l| name.starts_with(&format!("{l}/"))))
        .collect();
    assert!(
        outside.is_empty(),
        "modules outside every layer (give each a floor in LAYERS' folders): {outside:?}"
    );
}

/// The top-level modules `line` takes something from through `crate::`, a name the crate root
/// re-exports counted as the module it comes from.
fn imported(line: &str, roots: &HashMap<String, String>) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end]
                .split(',')
                .map(|item| item.trim().split("::").next().unwrap_or("").trim())
                .collect()
        } else {
            vec![rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")]
        };
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            let module = roots.get(name).cloned().unwrap_or_else(|| name.to_owned());
            found.push(module);
        }
    }
    found
}

/// The names `lib.rs` re-exports at the crate root (`pub use sys::context::{Context, ..}`), each
/// with the top-level module it comes from.
fn root_names(src: &Path) -> HashMap<String, String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut roots = HashMap::new();
    for line in lib.lines() {
        let Some(path) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let path = path.trim_end_matches(';');
        let module = path.split("::").next().unwrap_or("").to_owned();
        let items = match path.find('{') {
            Some(open) => path[open + 1..path.len() - 1].to_owned(),
            None => path.rsplit("::").next().unwrap_or("").to_owned(),
        };
        for item in items.split(',') {
            let name = item.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                roots.insert(name.to_owned(), module.clone());
            }
        }
    }
    roots
}

/// Every `.rs` file below `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}
