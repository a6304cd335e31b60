//! The two shapes of a crash-safe file replacement, measured against each other on the
//! filesystem of a directory you name:
//!
//! - `unlink`: unlink the old file, then create the new one with `O_EXCL` and write it (what
//!   git-par's writers do: a SIGKILL between the two leaves the path missing, one per writer);
//! - `rename`: write the new content to a temporary name beside it, then `renameat` it over the
//!   old one (no window at all, but ext4's `auto_da_alloc` flushes the new data on a rename over an
//!   existing file).
//!
//! `cargo run --release -p gitpar --example replace_cost -- DIR [FILES] [ROUNDS]` prints the median
//! time per replaced file of each shape over ROUNDS interleaved rounds of FILES files each.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

fn create(path: &Path, data: &[u8]) {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(path)
        .expect("create");
    f.write_all(data).expect("write");
}

fn populate(dir: &Path, files: usize) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).expect("mkdir");
    for i in 0..files {
        create(
            &dir.join(format!("f{i:06}")),
            b"old content of a small source file\n",
        );
    }
    File::open(dir).and_then(|d| d.sync_all()).ok();
}

/// Seconds per file to replace every file of `dir` by unlink + O_EXCL create.
fn by_unlink(dir: &Path, files: usize, data: &[u8]) -> f64 {
    let start = Instant::now();
    for i in 0..files {
        let p = dir.join(format!("f{i:06}"));
        fs::remove_file(&p).expect("unlink");
        create(&p, data);
    }
    start.elapsed().as_secs_f64() / files as f64
}

/// Seconds per file to replace every file of `dir` by temporary file + rename over it.
fn by_rename(dir: &Path, files: usize, data: &[u8]) -> f64 {
    let start = Instant::now();
    for i in 0..files {
        let p = dir.join(format!("f{i:06}"));
        let tmp = dir.join(format!(".f{i:06}.git-par-tmp"));
        create(&tmp, data);
        fs::rename(&tmp, &p).expect("rename");
    }
    start.elapsed().as_secs_f64() / files as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let base = args
        .next()
        .expect("usage: replace_cost DIR [FILES] [ROUNDS]");
    let files: usize = args.next().map_or(5000, |s| s.parse().expect("FILES"));
    let rounds: usize = args.next().map_or(7, |s| s.parse().expect("ROUNDS"));
    let dir = Path::new(&base).join("replace-cost");
    let data = b"new content of a small source file, a little longer\n";
    let (mut unlink, mut rename) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        populate(&dir, files);
        unlink.push(by_unlink(&dir, files, data));
        populate(&dir, files);
        rename.push(by_rename(&dir, files, data));
    }
    let _ = fs::remove_dir_all(&dir);
    let (u, r) = (median(unlink) * 1e6, median(rename) * 1e6);
    println!(
        "{files} files x {rounds} rounds in {base}: unlink+create {u:.1} us/file, \
         temp+rename {r:.1} us/file (rename/unlink = {:.2})",
        r / u
    );
}
