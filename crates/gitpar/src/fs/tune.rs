//! How many files to have in flight: chosen from the filesystem a work tree is on, then refined
//! at run time from the measured throughput.
//!
//! The cost of a file is the filesystem's, not ours: about 15 µs of CPU on tmpfs (more threads
//! than CPUs only add contention), tens of µs on a local ext4/xfs/btrfs (some waiting on the
//! journal and the page cache, so a few threads per CPU overlap it), and a millisecond or more of
//! *waiting* per operation on NFS, SMB, FUSE, 9p or virtiofs, where dozens of files in flight
//! are what hide the latency. No fixed default suits all three, so the auto count starts from the
//! kind of filesystem ([`Kind::of`], one `fstatfs` on the work tree's root) and the
//! [`Refiner`] grows it while the throughput of the first chunks keeps growing, up to a ceiling
//! that the memory budget also bounds.
//!
//! Precedence is git's: an explicit `-j N` wins, then `checkout.workers`, then this ([`Source`]).
//! The same choice serves every parallel pass over a work tree (writing files, refreshing stat
//! data), so [`workers_for`] takes only the kind, the number of items and the explicit count.

use std::time::{Duration, Instant};

use crate::fs::Fd;

/// Where the worker count of a run comes from, in git's order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `-j N` on the command line: used as given.
    Explicit,
    /// `checkout.workers` in the configuration: used as given.
    Config,
    /// Neither: chosen from the filesystem and refined at run time.
    Auto,
}

/// The kind of filesystem a work tree is on, as far as the cost of creating a file goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// tmpfs, ramfs: no I/O at all, a file costs CPU only.
    Memory,
    /// A local disk filesystem (ext4, xfs, btrfs, f2fs, zfs, bcachefs, vfat, exfat, ntfs3...);
    /// `rotational` is the backing block device's `queue/rotational` when it could be read.
    Local {
        /// `Some(true)` for a spinning disk, `Some(false)` for an SSD, `None` when unknown.
        rotational: Option<bool>,
    },
    /// overlayfs (containers): local files under a copy-up layer.
    Overlay,
    /// NFS, SMB/CIFS, 9p, AFS, Ceph...: every operation is a round trip to a server.
    Network,
    /// A local Windows volume (NTFS, ReFS, FAT, exFAT): every create, write and close passes
    /// through the I/O stack's filter drivers (real-time antivirus among them), so a file costs
    /// hundreds of µs, most of it waiting, not computing (docs/windows.md).
    Filtered,
    /// FUSE (which includes virtiofs and sshfs): every operation is a round trip to a process or
    /// a host, often with network latency behind it.
    Fuse,
    /// Anything else, or `fstatfs` failed.
    Unknown,
}

// `f_type` magic numbers from linux/magic.h (and the filesystems' own headers for those it
// lacks). Compared as u64: `f_type` is signed on some architectures.
const TMPFS_MAGIC: u64 = 0x0102_1994;
const RAMFS_MAGIC: u64 = 0x8584_58f6;
const EXT4_MAGIC: u64 = 0xef53; // ext2, ext3 and ext4 share it
pub(crate) const XFS_MAGIC: u64 = 0x5846_5342;
pub(crate) const BTRFS_MAGIC: u64 = 0x9123_683e;
const F2FS_MAGIC: u64 = 0xf2f5_2010;
pub(crate) const ZFS_MAGIC: u64 = 0x2fc1_2fc1;
pub(crate) const BCACHEFS_MAGIC: u64 = 0xca45_1a4e;
const MSDOS_MAGIC: u64 = 0x4d44;
const EXFAT_MAGIC: u64 = 0x2011_bab0;
const NTFS3_MAGIC: u64 = 0x7366_746e;
const OVERLAY_MAGIC: u64 = 0x794c_7630;
pub(crate) const NFS_MAGIC: u64 = 0x6969;
const SMB_MAGIC: u64 = 0x517b;
pub(crate) const CIFS_MAGIC: u64 = 0xff53_4d42;
pub(crate) const SMB2_MAGIC: u64 = 0xfe53_4d42;
const V9FS_MAGIC: u64 = 0x0102_1997;
const AFS_MAGIC: u64 = 0x5346_414f;
const CEPH_MAGIC: u64 = 0x00c3_6400;
const CODA_MAGIC: u64 = 0x7375_7245;
const FUSE_MAGIC: u64 = 0x6573_5546;
/// ReFS has no Linux driver and so no magic number: Windows' ReFS volumes (Dev Drive) are named
/// by this one (`"ReFS"` in ASCII), so that the rest of the engine knows them as it knows
/// Linux's filesystems.
pub(crate) const REFS_MAGIC: u64 = 0x5265_4653;

impl Kind {
    /// The kind of the filesystem `fd` (a work tree's root directory) is on: one `fstatfs`,
    /// and for a local disk filesystem one read under `/sys` for the rotational flag.
    pub fn of(fd: Fd<'_>) -> Kind {
        super::os::kind_of_volume(fd)
    }

    /// The kind for an `f_type` magic number; `rotational` is asked only for local disks.
    pub fn from_magic(magic: u64, rotational: impl FnOnce() -> Option<bool>) -> Kind {
        match magic {
            TMPFS_MAGIC | RAMFS_MAGIC => Kind::Memory,
            EXT4_MAGIC | XFS_MAGIC | BTRFS_MAGIC | F2FS_MAGIC | ZFS_MAGIC | BCACHEFS_MAGIC
            | MSDOS_MAGIC | EXFAT_MAGIC | NTFS3_MAGIC => Kind::Local {
                rotational: rotational(),
            },
            OVERLAY_MAGIC => Kind::Overlay,
            NFS_MAGIC | SMB_MAGIC | CIFS_MAGIC | SMB2_MAGIC | V9FS_MAGIC | AFS_MAGIC
            | CEPH_MAGIC | CODA_MAGIC => Kind::Network,
            FUSE_MAGIC => Kind::Fuse,
            _ => Kind::Unknown,
        }
    }

    /// Returns true if and only if a path on this kind of filesystem is resolved in the
    /// kernel's own cache of names, not by round trips to a server or a process: resolving a
    /// file's whole path then costs less than opening its directory for it.
    pub fn resolves_locally(self) -> bool {
        matches!(self, Kind::Memory | Kind::Local { .. } | Kind::Overlay)
    }

    /// Returns true if and only if an operation on this kind of filesystem is mostly waiting
    /// (a server, a process): many files in flight pay off, and even small jobs gain from them.
    pub fn is_high_latency(self) -> bool {
        matches!(self, Kind::Network | Kind::Fuse)
    }
}

/// The magic number (Linux's `f_type`) for a Windows volume's filesystem name
/// (`GetVolumeInformationByHandleW`): its Linux counterpart's, or ReFS's own number.
pub fn windows_magic(name: &str) -> Option<u64> {
    match name {
        "NTFS" => Some(NTFS3_MAGIC),
        "ReFS" => Some(REFS_MAGIC),
        "FAT" | "FAT12" | "FAT16" | "FAT32" => Some(MSDOS_MAGIC),
        "exFAT" => Some(EXFAT_MAGIC),
        _ => None,
    }
}

/// The filesystem `fd` is on, by Linux's `f_type` magic number (`fstatfs`), as the 32 bits the
/// filesystems define; a Windows volume is mapped onto the number of its Linux counterpart
/// (NTFS, FAT, exFAT, a network share) or [`REFS_MAGIC`].
pub(crate) fn magic(fd: Fd<'_>) -> Option<u64> {
    super::os::fs_magic(fd)
}

/// The calling thread's time on a CPU and time waiting for one (runnable, on a runqueue); `None`
/// where the kernel keeps no scheduler statistics. What is left of the wall time is time the
/// thread was blocked: on I/O, a lock, a server. A parallel pass tells a cold cache from a busy
/// machine by it.
///
/// The wait is `/proc/thread-self/schedstat`'s; the time on a CPU is the thread's CPU clock,
/// not that file's first field, which for a running thread is only brought up to date at the
/// scheduler's tick or switch: read by the thread itself it lagged by up to a tick (milliseconds),
/// which the refresh's probe took for time blocked and, on tmpfs, started 64 threads for it.
pub fn thread_schedstat() -> Option<(Duration, Duration)> {
    let wait = crate::sys::thread_wait_ns()?;
    let run = Duration::from_nanos(crate::sys::thread_cpu_ns());
    Some((run, Duration::from_nanos(wait)))
}

/// The worker count of one parallel pass, and how far the [`Refiner`] may take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Threads to start with; 1 means the calling thread does everything (no spawning).
    pub workers: usize,
    /// The most threads the run may grow to; equal to `workers` when the count is fixed.
    pub max: usize,
    /// Where the count came from.
    pub source: Source,
}

impl Choice {
    /// Returns true if and only if the run may grow its thread count from measurements.
    pub fn refinable(&self) -> bool {
        self.max > self.workers
    }
}

/// Items per thread below which another thread costs more than it saves on a filesystem where
/// a file costs CPU (tmpfs, local disks): a thread start is worth a few small files.
const ITEMS_PER_THREAD: usize = 16;

/// git's `checkout.thresholdForParallelism` default, for low-latency filesystems.
const LOCAL_THRESHOLD: usize = 100;

/// The threshold on high-latency filesystems: there one file waits longer than starting a
/// thread takes, so a handful of files already gain from being written in parallel.
const REMOTE_THRESHOLD: usize = 4;

/// The sequential threshold when `checkout.thresholdForParallelism` is not configured.
pub fn default_threshold(kind: Kind) -> usize {
    if kind.is_high_latency() {
        REMOTE_THRESHOLD
    } else {
        LOCAL_THRESHOLD
    }
}

/// The worker count for `n_items` on `kind`: `explicit` (from `-j` or `checkout.workers`, with
/// its `source`) is used as given; otherwise the start and the ceiling come from the kind:
/// tmpfs — the CPU count (a file is pure CPU there); a local disk — two threads per CPU,
/// growing to four (one per CPU on a spinning disk, growing to two); overlay or unknown — as a
/// local disk; NFS, SMB, 9p, FUSE, virtiofs — 32 threads, growing to 128; a local Windows
/// volume — four threads, growing to 16. Never more threads
/// than there are items (or, where a file is cheap, than `ITEMS_PER_THREAD` per thread).
/// The threshold for a sequential run is the caller's (see [`default_threshold`]).
pub fn workers_for(kind: Kind, n_items: usize, explicit: Option<(usize, Source)>) -> Choice {
    let n_items = n_items.max(1);
    if let Some((n, source)) = explicit {
        let n = n.clamp(1, n_items);
        return Choice {
            workers: n,
            max: n,
            source,
        };
    }
    let cpus = crate::sys::cpus::online_cpus();
    let (start, max) = match kind {
        Kind::Memory => (cpus, cpus),
        Kind::Local {
            rotational: Some(true),
        } => (cpus, 2 * cpus),
        Kind::Local { .. } | Kind::Overlay | Kind::Unknown => {
            ((2 * cpus).clamp(2, 16), (4 * cpus).clamp(4, 32))
        }
        Kind::Network | Kind::Fuse => (32, 128),
        // Git for Windows measured four worker processes best on NTFS with Defender and on a
        // Dev Drive (eight no better, one per CPU no faster than one); threads cost less than
        // processes, so the refiner may grow the four while the throughput grows.
        Kind::Filtered => (4, 16),
    };
    let per_thread = if kind.is_high_latency() {
        1
    } else {
        ITEMS_PER_THREAD
    };
    let fit = (n_items / per_thread).max(1);
    Choice {
        workers: start.min(fit),
        max: max.min(fit).max(start.min(fit)),
        source: Source::Auto,
    }
}

/// Memory a writer thread costs beyond the blobs it holds under the budget (its stack, its
/// object-database handle and buffers): the budget bounds the thread count too.
pub const PER_THREAD: u64 = 1024 * 1024;

/// Lower `choice.max` so that the threads themselves fit in `budget` ([`PER_THREAD`] each).
pub fn within_budget(mut choice: Choice, budget: u64) -> Choice {
    let fit = usize::try_from(budget / PER_THREAD)
        .unwrap_or(usize::MAX)
        .max(1);
    if choice.source == Source::Auto {
        choice.max = choice.max.min(fit).max(choice.workers.min(fit));
        choice.workers = choice.workers.min(choice.max);
    }
    choice
}

/// Growth by measurement, from the first chunks: over a window of items, the CPU the writers
/// used per second of wall time says how busy the CPUs are. Writers that mostly wait (a
/// filesystem with latency) leave them idle, and by Little's law `threads × cpus / busy`
/// writers would keep them busy: the target jumps there (at most ×4 a step, at most the
/// ceiling). The next window must show the throughput grown by [`GAIN`] to go on; a jump that
/// lost throughput is undone, and growth stops at the first that did not gain. Writers that
/// keep the CPUs busy already are never multiplied: more would only contend.
#[derive(Debug)]
pub struct Refiner {
    target: usize,
    max: usize,
    cpus: f64,
    /// The count before the last jump, to fall back to when it lost throughput.
    previous: usize,
    best: Option<f64>,
    window_start: Option<Sample>,
    /// Items done when the target last changed: the next window starts once the new threads
    /// have each finished one, so that their start-up is not measured as a lack of gain.
    settled_after: usize,
    done: bool,
}

/// One measurement of a run: items finished, CPU time the writers used, and when.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Items finished so far.
    pub done: usize,
    /// CPU time (user + system) the writer threads used so far.
    pub cpu: Duration,
    /// When.
    pub at: Instant,
}

/// The least gain in throughput that justifies going on: noise on a shared machine is a few
/// percent, so a smaller gain is not evidence.
pub const GAIN: f64 = 1.15;

/// A jump that lost more than this share of the throughput is undone.
const LOSS: f64 = 0.9;

/// The shortest measurement window.
pub const WINDOW: Duration = Duration::from_millis(10);

/// Items each thread must finish in a window for it to count.
const ITEMS_PER_WINDOW: usize = 2;

/// The share of the CPUs above which writers count as CPU-bound.
const BUSY: f64 = 0.75;

impl Refiner {
    /// A refiner for a run that starts as `choice` says.
    pub fn new(choice: &Choice) -> Refiner {
        Refiner::with_cpus(choice, crate::sys::cpus::online_cpus())
    }

    fn with_cpus(choice: &Choice, cpus: usize) -> Refiner {
        Refiner {
            target: choice.workers,
            max: choice.max,
            cpus: cpus.max(1) as f64,
            previous: choice.workers,
            best: None,
            window_start: None,
            settled_after: 0,
            done: !choice.refinable(),
        }
    }

    /// The number of threads the run should have now.
    pub fn target(&self) -> usize {
        self.target
    }

    /// Returns true if and only if measurements can still change the target.
    pub fn active(&self) -> bool {
        !self.done
    }

    /// Take a measurement. Returns the new target when it changes.
    pub fn observe(&mut self, now: Sample) -> Option<usize> {
        if self.done {
            return None;
        }
        let Some(start) = self.window_start else {
            // The first items include the threads' start: a window begins once every thread
            // has finished one since the last change.
            if now.done >= self.settled_after + self.target {
                self.window_start = Some(now);
            }
            return None;
        };
        let elapsed = now.at.saturating_duration_since(start.at);
        let items = now.done.saturating_sub(start.done);
        if elapsed < WINDOW || items < ITEMS_PER_WINDOW * self.target {
            return None;
        }
        let rate = items as f64 / elapsed.as_secs_f64();
        let busy = now.cpu.saturating_sub(start.cpu).as_secs_f64() / elapsed.as_secs_f64();
        self.window_start = Some(now);
        if let Some(best) = self.best {
            if rate < best * LOSS {
                // The last jump lost throughput: back to the count before it, and stop.
                self.done = true;
                self.target = self.previous;
                return Some(self.target);
            }
            if rate < best * GAIN {
                self.done = true;
                return None;
            }
        }
        self.best = Some(rate);
        if self.target >= self.max || busy >= BUSY * self.cpus {
            self.done = true;
            return None;
        }
        let wanted = (self.target as f64 * self.cpus / busy.max(1e-3)).ceil() as usize;
        self.previous = self.target;
        self.target = wanted.clamp(self.target + 1, self.target * 4).min(self.max);
        self.window_start = None;
        self.settled_after = now.done;
        Some(self.target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_map_to_kinds() {
        assert_eq!(Kind::from_magic(TMPFS_MAGIC, || None), Kind::Memory);
        assert_eq!(
            Kind::from_magic(EXT4_MAGIC, || Some(true)),
            Kind::Local {
                rotational: Some(true)
            }
        );
        assert_eq!(Kind::from_magic(NFS_MAGIC, || None), Kind::Network);
        assert_eq!(Kind::from_magic(FUSE_MAGIC, || None), Kind::Fuse);
        assert_eq!(Kind::from_magic(OVERLAY_MAGIC, || None), Kind::Overlay);
        assert_eq!(Kind::from_magic(0x1234, || None), Kind::Unknown);
    }

    #[test]
    #[cfg(unix)]
    fn tmpfs_of_the_shared_memory_directory() {
        let Ok(dir) = std::fs::File::open("/dev/shm") else {
            return; // no /dev/shm on this system: nothing to check
        };
        let st = rustix::fs::fstatfs(&dir).unwrap();
        #[allow(clippy::unnecessary_cast, clippy::cast_sign_loss)]
        if (st.f_type as i64 as u64) & 0xffff_ffff == TMPFS_MAGIC {
            assert_eq!(Kind::of(rustix::fd::AsFd::as_fd(&dir)), Kind::Memory);
        }
    }

    #[test]
    fn schedstat_counts_the_calling_threads_cpu_time() {
        let Some((run0, _)) = thread_schedstat() else {
            return; // a kernel without scheduler statistics: the wall time decides instead
        };
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let (run1, _) = thread_schedstat().unwrap();
        assert!(run1 > run0, "{run0:?} -> {run1:?}");
    }

    #[test]
    fn explicit_counts_win_and_are_fixed() {
        let c = workers_for(Kind::Fuse, 1000, Some((3, Source::Explicit)));
        assert_eq!((c.workers, c.max, c.source), (3, 3, Source::Explicit));
        assert!(!c.refinable());
        // Never more threads than items.
        assert_eq!(
            workers_for(Kind::Memory, 2, Some((8, Source::Config))).workers,
            2
        );
    }

    #[test]
    fn auto_counts_follow_the_kind() {
        let cpus = crate::sys::cpus::online_cpus();
        let mem = workers_for(Kind::Memory, 40_000, None);
        assert_eq!((mem.workers, mem.max), (cpus, cpus));
        let fuse = workers_for(Kind::Fuse, 2_000, None);
        assert_eq!((fuse.workers, fuse.max), (32, 128));
        assert!(fuse.refinable());
        // Few items: few threads where a file is cheap, one per item where it waits.
        assert_eq!(workers_for(Kind::Memory, 20, None).workers, 1);
        assert_eq!(workers_for(Kind::Network, 20, None).workers, 20);
        // The budget bounds the ceiling (and the start).
        let tight = within_budget(fuse, 8 * PER_THREAD);
        assert_eq!((tight.workers, tight.max), (8, 8));
        let fixed = within_budget(workers_for(Kind::Fuse, 99, Some((64, Source::Explicit))), 1);
        assert_eq!(fixed.workers, 64);
    }

    /// A sample `ms` milliseconds in, with `done` items and `cpu_ms` of CPU used.
    fn at(t0: Instant, ms: u64, done: usize, cpu_ms: u64) -> Sample {
        Sample {
            done,
            cpu: Duration::from_millis(cpu_ms),
            at: t0 + Duration::from_millis(ms),
        }
    }

    #[test]
    fn waiting_writers_are_multiplied_while_throughput_grows() {
        let choice = Choice {
            workers: 4,
            max: 64,
            source: Source::Auto,
        };
        let mut r = Refiner::with_cpus(&choice, 2);
        let t0 = Instant::now();
        assert_eq!(r.observe(at(t0, 1, 2, 0)), None); // not every thread has finished one
        assert_eq!(r.observe(at(t0, 2, 4, 0)), None); // the first window starts
                                                      // 100 items in 20 ms using 4 ms of CPU: the CPUs are 10% busy, 4 × 2 / 0.2 = 40
                                                      // threads would fill them; at most ×4 a step.
        assert_eq!(r.observe(at(t0, 22, 104, 4)), Some(16));
        // The new threads start: no window until each of the 16 has finished one.
        assert_eq!(r.observe(at(t0, 30, 110, 5)), None);
        assert_eq!(r.observe(at(t0, 32, 120, 6)), None); // the window starts here
                                                         // Three times the rate, CPUs 40% busy: 16 × 2 / 0.8 = 40.
        assert_eq!(r.observe(at(t0, 52, 420, 22)), Some(40));
        assert_eq!(r.observe(at(t0, 60, 470, 26)), None); // the window starts here
                                                          // Only 5% better: keep 40, and no more changes.
        assert_eq!(r.observe(at(t0, 80, 785, 42)), None);
        assert!(!r.active());
        assert_eq!(r.target(), 40);
        assert_eq!(r.observe(at(t0, 1000, 10_000, 800)), None);
    }

    #[test]
    fn a_jump_that_loses_throughput_is_undone() {
        let choice = Choice {
            workers: 8,
            max: 128,
            source: Source::Auto,
        };
        let mut r = Refiner::with_cpus(&choice, 2);
        let t0 = Instant::now();
        r.observe(at(t0, 0, 8, 0));
        assert_eq!(r.observe(at(t0, 20, 208, 2)), Some(32));
        r.observe(at(t0, 25, 240, 3));
        // Half the rate with 32: back to 8.
        assert_eq!(r.observe(at(t0, 45, 340, 5)), Some(8));
        assert!(!r.active());
    }

    #[test]
    fn busy_writers_are_not_multiplied() {
        let choice = Choice {
            workers: 2,
            max: 8,
            source: Source::Auto,
        };
        let mut r = Refiner::with_cpus(&choice, 2);
        let t0 = Instant::now();
        r.observe(at(t0, 0, 2, 0));
        // 20 ms of wall, 38 ms of CPU on 2 CPUs: busy.
        assert_eq!(r.observe(at(t0, 20, 400, 38)), None);
        assert!(!r.active());
        assert_eq!(r.target(), 2);
        // A fixed choice never changes.
        let fixed = Refiner::new(&Choice {
            workers: 8,
            max: 8,
            source: Source::Explicit,
        });
        assert!(!fixed.active());
    }

    #[test]
    fn a_windows_volume_starts_with_four_threads_and_may_grow_to_sixteen() {
        let big = workers_for(Kind::Filtered, 2_000, None);
        assert_eq!((big.workers, big.max), (4, 16));
        assert_eq!(workers_for(Kind::Filtered, 20, None).workers, 1);
        assert_eq!(windows_magic("ReFS"), Some(REFS_MAGIC));
        assert_eq!(windows_magic("NTFS"), Some(NTFS3_MAGIC));
        assert_eq!(windows_magic("CDFS"), None);
    }
}
