//! `testfs BACKING MOUNTPOINT [--latency 1ms] [--mkdir-latency 2ms] [--case-insensitive]
//! [--enospc-after BYTES] [--eio GLOB]... [--eacces GLOB]...`: mounts the testfs passthrough
//! in the foreground until SIGINT or SIGTERM (or an outside `umount`), then unmounts. For
//! benchmarks on a slow filesystem (`git par bench --dir MOUNTPOINT`) and for trying faults by
//! hand.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;

/// A FUSE passthrough over BACKING, mounted at MOUNTPOINT, with latency, case folding and faults.
#[derive(Parser)]
#[command(name = "testfs", version)]
struct Cli {
    /// The directory whose contents the mount shows.
    backing: PathBuf,
    /// An existing empty directory to mount on.
    mountpoint: PathBuf,
    /// Time each operation waits before it is served (e.g. 1ms, 250us); operations are served
    /// concurrently.
    #[arg(long, value_parser = testfs::parse_duration, default_value = "0")]
    latency: Duration,
    /// Time a mkdir waits on top of --latency (directories slow to make).
    #[arg(long, value_parser = testfs::parse_duration, default_value = "0")]
    mkdir_latency: Duration,
    /// Fold case in names, as NTFS and APFS do by default.
    #[arg(long)]
    case_insensitive: bool,
    /// Writes fail with ENOSPC once this many bytes have been written in total.
    #[arg(long, value_name = "BYTES")]
    enospc_after: Option<u64>,
    /// Operations on paths matching this glob fail with EIO (repeatable).
    #[arg(long, value_name = "GLOB")]
    eio: Vec<String>,
    /// Operations on paths matching this glob fail with EACCES (repeatable).
    #[arg(long, value_name = "GLOB")]
    eacces: Vec<String>,
    /// Threads serving requests (the most operations in flight at once).
    #[arg(long, default_value_t = 64)]
    threads: usize,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // Block the stop signals in every thread (the serving threads inherit the mask), so that
    // the main thread alone takes them with sigtimedwait and unmounts cleanly.
    // SAFETY: plain signal-mask calls on a set built here.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let options = testfs::Options {
        latency: cli.latency,
        mkdir_latency: cli.mkdir_latency,
        case_insensitive: cli.case_insensitive,
        faults: testfs::Faults {
            enospc_after: cli.enospc_after,
            eio: cli.eio,
            eacces: cli.eacces,
        },
        threads: cli.threads,
    };
    let mount = testfs::Mount::new(&cli.backing, &cli.mountpoint, options)
        .with_context(|| format!("testfs: mounting {}", cli.mountpoint.display()))?;
    eprintln!(
        "testfs: {} mounted at {} (latency {:?}{}); Ctrl-C or SIGTERM unmounts",
        cli.backing.display(),
        mount.path().display(),
        cli.latency,
        if cli.case_insensitive {
            ", case-insensitive"
        } else {
            ""
        },
    );
    let timeout = libc::timespec {
        tv_sec: 0,
        tv_nsec: 200_000_000,
    };
    loop {
        // SAFETY: `set` is initialised; a null siginfo is allowed.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &timeout) };
        if sig > 0 {
            break;
        }
        if !is_mounted(mount.path()) {
            eprintln!("testfs: {} was unmounted", mount.path().display());
            break;
        }
    }
    let stats = mount.stats();
    mount.unmount().context("testfs: unmounting")?;
    eprintln!(
        "testfs: unmounted after {} operations, {} bytes written, {} faults injected",
        stats.operations, stats.bytes_written, stats.faults_injected
    );
    Ok(())
}

/// Whether `path` is still a mount point in /proc/self/mounts (an outside `umount` ends us).
fn is_mounted(path: &std::path::Path) -> bool {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return true;
    };
    let want = path.to_string_lossy();
    mounts
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .any(|m| m.replace("\\040", " ") == want)
}
