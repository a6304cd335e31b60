//! testfs itself: a passthrough that shows and changes the backing directory, case folding as
//! NTFS/APFS fold, faults that fire where asked and nowhere else, requests served concurrently,
//! and no mount left behind, even by a test that panics.
//!
//! Every test skips (printing why) only when /dev/fuse is absent.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use testfs::{Faults, Mount, Options};

struct Fixture {
    // Field order: the mount goes before the directories it lives in.
    mount: Mount,
    backing: tempfile::TempDir,
    _mountpoint: tempfile::TempDir,
}

fn mount(options: Options) -> Option<Fixture> {
    if let Some(why) = testfs::unavailable() {
        eprintln!("skipped: {why}");
        return None;
    }
    let backing = tempfile::Builder::new()
        .prefix("testfs-b")
        .tempdir()
        .unwrap();
    let mountpoint = tempfile::Builder::new()
        .prefix("testfs-m")
        .tempdir()
        .unwrap();
    let mount = Mount::new(backing.path(), mountpoint.path(), options).expect("mount testfs");
    Some(Fixture {
        mount,
        backing,
        _mountpoint: mountpoint,
    })
}

fn mounted(path: &Path) -> bool {
    let want = path.canonicalize().unwrap_or(path.to_path_buf());
    fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .any(|m| Path::new(m) == want)
}

#[test]
fn passthrough_shows_and_changes_the_backing_directory() {
    let Some(f) = mount(Options::default()) else {
        return;
    };
    let m = f.mount.path();
    fs::write(f.backing.path().join("before"), "from the backing side").unwrap();
    assert_eq!(
        fs::read_to_string(m.join("before")).unwrap(),
        "from the backing side"
    );

    fs::create_dir_all(m.join("d/e")).unwrap();
    fs::write(m.join("d/e/f"), "x".repeat(300_000)).unwrap();
    std::os::unix::fs::symlink("e/f", m.join("d/link")).unwrap();
    fs::rename(m.join("d/e"), m.join("d/g")).unwrap();
    assert_eq!(fs::read_to_string(m.join("d/g/f")).unwrap().len(), 300_000);
    assert_eq!(
        fs::read_link(f.backing.path().join("d/link")).unwrap(),
        Path::new("e/f")
    );
    assert!(f.backing.path().join("d/g/f").is_file());
    assert!(!f.backing.path().join("d/e").exists());

    let mut names: Vec<_> = fs::read_dir(m.join("d"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["g", "link"]);

    // Truncation and permissions go through.
    let file = fs::OpenOptions::new()
        .write(true)
        .open(m.join("d/g/f"))
        .unwrap();
    file.set_len(10).unwrap();
    drop(file);
    assert_eq!(
        fs::metadata(f.backing.path().join("d/g/f")).unwrap().len(),
        10
    );

    // Distinct paths have distinct inode numbers; a hard link shares one.
    fs::hard_link(m.join("d/g/f"), m.join("hard")).unwrap();
    let (a, b, c) = (
        fs::metadata(m.join("d/g/f")).unwrap().ino(),
        fs::metadata(m.join("hard")).unwrap().ino(),
        fs::metadata(m.join("before")).unwrap().ino(),
    );
    assert_ne!(a, c);
    assert_eq!(fs::metadata(m.join("hard")).unwrap().nlink(), 2);
    let _ = b;

    fs::remove_file(m.join("d/link")).unwrap();
    fs::remove_file(m.join("d/g/f")).unwrap();
    fs::remove_dir(m.join("d/g")).unwrap();
    assert!(!f.backing.path().join("d/g").exists());
}

#[test]
fn case_insensitive_names_fold_like_ntfs() {
    let Some(f) = mount(Options {
        case_insensitive: true,
        ..Options::default()
    }) else {
        return;
    };
    let m = f.mount.path();
    fs::write(m.join("README"), "upper").unwrap();
    // Another spelling reads the same file, with the same inode number.
    assert_eq!(fs::read_to_string(m.join("readme")).unwrap(), "upper");
    assert_eq!(
        fs::metadata(m.join("ReadMe")).unwrap().ino(),
        fs::metadata(m.join("README")).unwrap().ino()
    );
    // O_CREAT|O_EXCL on another spelling: EEXIST, as git's checkout sees on NTFS.
    let err = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(m.join("readme"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    // O_CREAT without O_EXCL opens (and here truncates) the existing file.
    fs::write(m.join("readme"), "lower").unwrap();
    let mut names: Vec<_> = fs::read_dir(f.backing.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["README"], "one file on the backing disk");
    assert_eq!(
        fs::read_to_string(f.backing.path().join("README")).unwrap(),
        "lower"
    );

    // A directory and a file of the same name ignoring case.
    fs::create_dir(m.join("Dir")).unwrap();
    assert_eq!(
        fs::create_dir(m.join("dir")).unwrap_err().kind(),
        ErrorKind::AlreadyExists
    );
    fs::write(m.join("DIR/inside"), "x").unwrap();
    assert!(f.backing.path().join("Dir/inside").is_file());

    // (A rename that only changes case never reaches the filesystem: the kernel sees both names
    // resolve to one inode and, as POSIX asks for links to one file, does nothing.)
    // Renaming onto another spelling of an existing name replaces that entry.
    fs::write(m.join("other"), "other").unwrap();
    fs::rename(m.join("other"), m.join("readme")).unwrap();
    assert_eq!(
        fs::read_to_string(f.backing.path().join("README")).unwrap(),
        "other"
    );
    assert!(!f.backing.path().join("readme").exists());
    // Removing through another spelling removes it.
    fs::remove_file(m.join("ReadMe")).unwrap();
    assert!(!f.backing.path().join("README").exists());
}

#[test]
fn a_case_sensitive_mount_keeps_both_spellings() {
    let Some(f) = mount(Options::default()) else {
        return;
    };
    let m = f.mount.path();
    fs::write(m.join("a"), "lower").unwrap();
    fs::write(m.join("A"), "upper").unwrap();
    assert_eq!(fs::read_to_string(m.join("a")).unwrap(), "lower");
    assert_eq!(fs::read_to_string(m.join("A")).unwrap(), "upper");
}

#[test]
fn enospc_after_a_byte_count_then_lifted() {
    let Some(f) = mount(Options {
        faults: Faults {
            enospc_after: Some(100_000),
            ..Faults::default()
        },
        ..Options::default()
    }) else {
        return;
    };
    let m = f.mount.path();
    fs::write(m.join("small"), vec![b'a'; 60_000]).unwrap();
    let mut file = fs::File::create(m.join("big")).unwrap();
    let err = file.write_all(&vec![b'b'; 60_000]).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "{err}");
    drop(file);
    // The disk is "full" at exactly the limit.
    assert_eq!(
        fs::metadata(f.backing.path().join("big")).unwrap().len(),
        40_000
    );
    assert!(f.mount.stats().faults_injected >= 1);

    f.mount.set_faults(Faults::default());
    fs::write(m.join("big"), vec![b'b'; 60_000]).unwrap();
    assert_eq!(
        fs::metadata(f.backing.path().join("big")).unwrap().len(),
        60_000
    );
}

#[test]
fn eio_and_eacces_on_matching_paths_only() {
    let Some(f) = mount(Options {
        faults: Faults {
            eio: vec!["*.bad".into()],
            eacces: vec!["locked/**".into()],
            ..Faults::default()
        },
        ..Options::default()
    }) else {
        return;
    };
    let m = f.mount.path();
    let err = fs::write(m.join("x.bad"), "x").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    fs::create_dir(m.join("sub")).unwrap();
    let err = fs::write(m.join("sub/y.bad"), "x").unwrap_err();
    assert_eq!(
        err.raw_os_error(),
        Some(libc::EIO),
        "a pattern without / matches the name"
    );
    fs::write(m.join("x.good"), "x").unwrap();

    fs::create_dir(m.join("locked")).unwrap();
    let err = fs::write(m.join("locked/file"), "x").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EACCES), "{err}");
    assert!(!f.backing.path().join("locked/file").exists());

    // A file that existed before the fault: reading is fine until opened, writing fails.
    f.mount.set_faults(Faults::default());
    fs::write(m.join("later.bad"), "ok").unwrap();
    f.mount.set_faults(Faults {
        eio: vec!["later.bad".into()],
        ..Faults::default()
    });
    assert!(
        fs::metadata(m.join("later.bad")).is_ok(),
        "stat still works"
    );
    assert_eq!(
        fs::read(m.join("later.bad")).unwrap_err().raw_os_error(),
        Some(libc::EIO)
    );
}

/// Requests are served concurrently: callers on several threads overlap their latency (the
/// timing itself is a benchmark's business; here the filesystem counts requests in flight).
#[test]
fn latency_is_served_concurrently() {
    let Some(f) = mount(Options {
        latency: Duration::from_millis(1),
        ..Options::default()
    }) else {
        return;
    };
    let m = f.mount.path();
    std::thread::scope(|s| {
        for t in 0..8 {
            s.spawn(move || {
                for i in 0..10 {
                    fs::write(m.join(format!("t{t}-{i}")), "x").unwrap();
                }
            });
        }
    });
    let stats = f.mount.stats();
    assert_eq!(fs::read_dir(f.backing.path()).unwrap().count(), 80);
    assert!(
        stats.peak_in_flight >= 2,
        "8 writers never overlapped: {stats:?}"
    );
}

#[test]
fn no_mount_outlives_a_panicking_test() {
    if let Some(why) = testfs::unavailable() {
        eprintln!("skipped: {why}");
        return;
    }
    let backing = tempfile::Builder::new()
        .prefix("testfs-b")
        .tempdir()
        .unwrap();
    let mountpoint = tempfile::Builder::new()
        .prefix("testfs-m")
        .tempdir()
        .unwrap();
    let (b, mp) = (
        backing.path().to_path_buf(),
        mountpoint.path().to_path_buf(),
    );
    let panicked = std::thread::spawn(move || {
        let mount = Mount::new(&b, &mp, Options::default()).unwrap();
        assert!(mounted(mount.path()));
        // Something keeps the mount busy when the panic unwinds.
        let _open = fs::File::create(mount.path().join("held")).unwrap();
        panic!("a test fails with the mount up");
    })
    .join();
    assert!(panicked.is_err());
    assert!(!mounted(mountpoint.path()), "the mount outlived the panic");
    assert!(backing.path().join("held").exists());
}
