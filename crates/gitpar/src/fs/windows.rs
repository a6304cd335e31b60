//! The path-safe layer's system calls on Windows, the same functions as `unix.rs`.
//!
//! The work tree's directory is opened once; every entry below it is opened relative to an open
//! directory handle with `NtCreateFile` (`RootDirectory` set), one component at a time, with
//! `FILE_OPEN_REPARSE_POINT`: a symbolic link or a junction is opened itself, never followed, and
//! a component that turns out to be one is refused as a leading symlink is on Linux. Names are
//! single components; one holding `\`, `/` or `:`, or `.`/`..`, is refused before the system
//! sees it (the NT layer would take `\` as a separator and `:` as a stream).
//!
//! Every handle is opened for synchronous I/O (`FILE_SYNCHRONOUS_IO_NONALERT`), so that std's
//! `File` reads and writes it as any file, and shared with deletion (`FILE_SHARE_DELETE`), so
//! that another program may remove or replace a file git-par has open, as on Linux. Deletion uses
//! POSIX semantics where the filesystem has them (the name goes at once, even while another
//! process holds the file open with `FILE_SHARE_DELETE`); a file held open without that share is
//! retried with git's back-off (`mingw_unlink`) before the error is returned.
//!
//! The stat data are Git for Windows' (`compat/mingw.c`): no inode, device, uid or gid (all 0),
//! `ctime` the creation time, times in 100 ns steps, and a mode made of the attributes (a
//! reparse point is a symlink, so that nothing treats it as a directory to enter).

use std::ffi::c_void;
use std::fs::File;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::windows::fs::MetadataExt;
use std::os::windows::io::{AsHandle, AsRawHandle, FromRawHandle};
use std::path::Path;
use std::time::Duration;

use bstr::{BStr, BString, ByteSlice};
use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{
    NtCreateFile, FILE_CREATE, FILE_DELETE_ON_CLOSE, FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE,
    FILE_OPEN, FILE_OPEN_REPARSE_POINT, FILE_SYNCHRONOUS_IO_NONALERT,
};
use windows_sys::Win32::Foundation::{
    RtlNtStatusToDosError, HANDLE, OBJ_CASE_INSENSITIVE, UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem as w;
use windows_sys::Win32::System::Ioctl::{DUPLICATE_EXTENTS_DATA, FSCTL_DUPLICATE_EXTENTS_TO_FILE};
use windows_sys::Win32::System::IO::{DeviceIoControl, IO_STATUS_BLOCK};

pub use std::os::windows::io::{BorrowedHandle as Fd, OwnedHandle as OwnedFd};

/// Git for Windows records no inode or device number (both 0): they tell no two files apart
/// (see [`super::INODES_IDENTIFY_FILES`]).
pub(super) const INODES_IDENTIFY_FILES: bool = false;

/// The C library's text for the POSIX error Git for Windows makes of a Windows error
/// (`err_win_to_posix` in its `compat/mingw.c`), for the errors a work tree's files meet, so that
/// git-par.exe's messages read as Git for Windows' do: "Permission denied" where Windows says
/// "The process cannot access the file because it is being used by another process." Other
/// errors keep Windows' own text ([`super::strerror`]).
pub(super) fn posix_text(err: &io::Error) -> Option<&'static str> {
    use windows_sys::Win32::Foundation as f;
    let code = u32::try_from(err.raw_os_error()?).ok()?;
    Some(match code {
        f::ERROR_ACCESS_DENIED
        | f::ERROR_SHARING_VIOLATION
        | f::ERROR_LOCK_VIOLATION
        | f::ERROR_CANNOT_MAKE
        | f::ERROR_INVALID_ACCESS
        | f::ERROR_CURRENT_DIRECTORY => "Permission denied",
        f::ERROR_FILE_NOT_FOUND | f::ERROR_PATH_NOT_FOUND | f::ERROR_BAD_PATHNAME => {
            "No such file or directory"
        }
        f::ERROR_FILE_EXISTS | f::ERROR_ALREADY_EXISTS => "File exists",
        f::ERROR_DIR_NOT_EMPTY => "Directory not empty",
        f::ERROR_DISK_FULL | f::ERROR_HANDLE_DISK_FULL => "No space left on device",
        f::ERROR_FILENAME_EXCED_RANGE => "Filename too long",
        f::ERROR_DIRECTORY | f::ERROR_INVALID_NAME => "Invalid argument",
        f::ERROR_TOO_MANY_OPEN_FILES => "Too many open files",
        _ => return None,
    })
}

/// `ERROR_CANT_RESOLVE_FILENAME`: what a path through a reparse point gets, Linux's `ELOOP`.
const THROUGH_A_LINK: i32 = 1921;
/// `ERROR_BAD_PATHNAME`: a name that would leave its directory or name a stream.
const BAD_NAME: i32 = 161;
/// `ERROR_SHARING_VIOLATION` and `ERROR_ACCESS_DENIED`, which a file held open by another
/// program (an editor, an antivirus scanner, an indexer) gives for a while.
const HELD: [i32; 2] = [32, 5];
/// `ERROR_INVALID_PARAMETER` and `ERROR_NOT_SUPPORTED`: a call the filesystem does not have.
const UNSUPPORTED: [i32; 3] = [87, 50, 1];

/// The stat data of a file, in the shape of Unix's `struct stat` so that the engine reads it
/// the same on every system, filled as Git for Windows' `lstat` fills it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Stat {
    pub st_dev: u64,
    pub st_ino: u64,
    pub st_mode: u32,
    pub st_nlink: u64,
    pub st_uid: u32,
    pub st_gid: u32,
    pub st_size: i64,
    pub st_mtime: i64,
    pub st_mtime_nsec: i64,
    pub st_ctime: i64,
    pub st_ctime_nsec: i64,
}

/// The type of a file, as Unix names it (rustix's `FileType` on Unix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum FileType {
    RegularFile,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharacterDevice,
    BlockDevice,
    Unknown,
}

const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

impl FileType {
    /// The type of a `st_mode`.
    pub fn from_raw_mode(mode: u32) -> FileType {
        match mode & S_IFMT {
            S_IFREG => FileType::RegularFile,
            S_IFDIR => FileType::Directory,
            S_IFLNK => FileType::Symlink,
            0o010_000 => FileType::Fifo,
            0o140_000 => FileType::Socket,
            0o020_000 => FileType::CharacterDevice,
            0o060_000 => FileType::BlockDevice,
            _ => FileType::Unknown,
        }
    }

    /// Returns true if and only if this is a directory.
    pub fn is_dir(self) -> bool {
        self == FileType::Directory
    }
}

/// The type of a file with `attributes`: a reparse point (symbolic link, junction, ...) is a
/// symlink, never a directory to enter.
fn kind_of(attributes: u32) -> FileType {
    if attributes & w::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        FileType::Symlink
    } else if attributes & w::FILE_ATTRIBUTE_DIRECTORY != 0 {
        FileType::Directory
    } else {
        FileType::RegularFile
    }
}

/// Git for Windows' `file_attr_to_st_mode`: the type, and write permission unless read-only.
fn mode_of(attributes: u32) -> u32 {
    let kind = match kind_of(attributes) {
        FileType::Symlink => S_IFLNK,
        FileType::Directory => S_IFDIR,
        _ => S_IFREG,
    };
    let write = if attributes & w::FILE_ATTRIBUTE_READONLY == 0 {
        0o200
    } else {
        0
    };
    kind | 0o400 | write
}

/// A `FILETIME` (100 ns steps since 1601) as Unix seconds and nanoseconds, as Git for Windows'
/// `filetime_to_timespec` converts it.
fn unix_time(filetime: i64) -> (i64, i64) {
    let hns = filetime - 116_444_736_000_000_000;
    (hns.div_euclid(10_000_000), hns.rem_euclid(10_000_000) * 100)
}

/// The error for a path that would leave the work tree (`..`, an empty or `.` component).
pub(super) fn beneath_refused() -> io::Error {
    io::Error::from_raw_os_error(BAD_NAME)
}

/// Returns true if and only if `err` says that the path is not there for git (see
/// [`super::is_not_there`]).
pub(super) fn is_not_there(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    ) || err.raw_os_error() == Some(THROUGH_A_LINK)
}

/// Returns true if and only if `err` means that something already occupies the path.
pub(super) fn is_collision(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::AlreadyExists | io::ErrorKind::IsADirectory
    ) || err.raw_os_error() == Some(THROUGH_A_LINK)
}

/// The UTF-16 of one component, refused when it is not one (a separator, a stream, `.`, `..`).
fn component(name: &[u8]) -> io::Result<Vec<u16>> {
    let refused = name.is_empty()
        || name == b"."
        || name == b".."
        || name.iter().any(|b| matches!(b, b'\\' | b'/' | b':' | 0));
    let text = name.to_str().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "path is not UTF-8, which Windows cannot name",
        )
    })?;
    if refused {
        return Err(beneath_refused());
    }
    Ok(text.encode_utf16().collect())
}

/// What [`nt_open`] asks of the system.
struct Open {
    access: u32,
    disposition: u32,
    options: u32,
    attributes: u32,
}

/// `NtCreateFile` of the single component `name` relative to the directory `dir`, never
/// following a reparse point there, shared with every other reader, writer and deleter.
fn nt_open(dir: Fd<'_>, name: &[u8], open: &Open) -> io::Result<OwnedFd> {
    let wide = component(name)?;
    let bytes = u16::try_from(wide.len() * 2).map_err(|_| beneath_refused())?;
    let unicode = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: wide.as_ptr().cast_mut(),
    };
    // SAFETY: plain data, zero is a valid value for every field.
    let mut attrs: OBJECT_ATTRIBUTES = unsafe { zeroed() };
    attrs.Length = size_of::<OBJECT_ATTRIBUTES>() as u32;
    attrs.RootDirectory = dir.as_raw_handle();
    attrs.ObjectName = &unicode;
    attrs.Attributes = OBJ_CASE_INSENSITIVE;
    let mut handle: HANDLE = std::ptr::null_mut();
    // SAFETY: plain data, zero is a valid value.
    let mut status_block: IO_STATUS_BLOCK = unsafe { zeroed() };
    // SAFETY: every pointer is to a live local; `dir` is an open directory handle.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            open.access | w::SYNCHRONIZE,
            &attrs,
            &mut status_block,
            std::ptr::null(),
            open.attributes,
            w::FILE_SHARE_READ | w::FILE_SHARE_WRITE | w::FILE_SHARE_DELETE,
            open.disposition,
            open.options | FILE_OPEN_REPARSE_POINT | FILE_SYNCHRONOUS_IO_NONALERT,
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        return Err(status_error(status));
    }
    // SAFETY: NtCreateFile succeeded: `handle` is open and ours.
    Ok(unsafe { OwnedFd::from_raw_handle(handle) })
}

/// The error of a failed `NtCreateFile`, as the Win32 error Windows maps it to, except
/// `STATUS_FILE_IS_A_DIRECTORY`, which Windows calls "access denied" and git-par needs to tell
/// from a file held open: it is reported as `ERROR_DIRECTORY_NOT_SUPPORTED` ("is a directory").
fn status_error(status: i32) -> io::Error {
    const STATUS_FILE_IS_A_DIRECTORY: u32 = 0xC000_00BA;
    const ERROR_DIRECTORY_NOT_SUPPORTED: i32 = 336;
    if status as u32 == STATUS_FILE_IS_A_DIRECTORY {
        return io::Error::from_raw_os_error(ERROR_DIRECTORY_NOT_SUPPORTED);
    }
    // SAFETY: a pure conversion of a status code.
    let code = unsafe { RtlNtStatusToDosError(status) };
    io::Error::from_raw_os_error(code as i32)
}

/// The attributes and stat data of an open handle (`GetFileInformationByHandle`).
pub fn fstat(fd: Fd<'_>) -> io::Result<Stat> {
    // SAFETY: plain data.
    let mut info: w::BY_HANDLE_FILE_INFORMATION = unsafe { zeroed() };
    // SAFETY: an open handle and a writable struct.
    if unsafe { w::GetFileInformationByHandle(fd.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let time = |t: windows_sys::Win32::Foundation::FILETIME| {
        unix_time(((i64::from(t.dwHighDateTime)) << 32) | i64::from(t.dwLowDateTime))
    };
    let (st_mtime, st_mtime_nsec) = time(info.ftLastWriteTime);
    let (st_ctime, st_ctime_nsec) = time(info.ftCreationTime);
    Ok(Stat {
        st_mode: mode_of(info.dwFileAttributes),
        st_nlink: 1,
        st_size: (i64::from(info.nFileSizeHigh) << 32) | i64::from(info.nFileSizeLow),
        st_mtime,
        st_mtime_nsec,
        st_ctime,
        st_ctime_nsec,
        ..Stat::default()
    })
}

/// The stat data of an open file.
pub fn fstat_file(file: &File) -> io::Result<Stat> {
    fstat(file.as_handle())
}

/// The stat data of the file at `path` (links followed): for files outside work trees only.
pub fn stat_path(path: &Path) -> io::Result<Stat> {
    let meta = path.metadata()?;
    let (st_mtime, st_mtime_nsec) = unix_time(meta.last_write_time() as i64);
    let (st_ctime, st_ctime_nsec) = unix_time(meta.creation_time() as i64);
    Ok(Stat {
        st_mode: mode_of(meta.file_attributes()),
        st_nlink: 1,
        st_size: meta.file_size() as i64,
        st_mtime,
        st_mtime_nsec,
        st_ctime,
        st_ctime_nsec,
        ..Stat::default()
    })
}

/// Open the directory at `path` (links in it followed: the work tree may be anywhere).
pub(super) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    use std::os::windows::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(w::FILE_SHARE_READ | w::FILE_SHARE_WRITE | w::FILE_SHARE_DELETE)
        .custom_flags(w::FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)?;
    if !dir.metadata()?.is_dir() {
        return Err(io::ErrorKind::NotADirectory.into());
    }
    Ok(OwnedFd::from(dir))
}

/// A second handle of the same open directory.
pub(super) fn dup(fd: Fd<'_>) -> io::Result<OwnedFd> {
    fd.try_clone_to_owned()
}

const DIR_ACCESS: u32 = w::FILE_LIST_DIRECTORY | w::FILE_TRAVERSE | w::FILE_READ_ATTRIBUTES;

/// Open the directory `name` (one component) of `dir`; a reparse point there is refused as a
/// leading symlink is on Linux.
pub(super) fn open_dir_at(dir: Fd<'_>, name: &[u8]) -> io::Result<OwnedFd> {
    let open = Open {
        access: DIR_ACCESS,
        disposition: FILE_OPEN,
        options: FILE_DIRECTORY_FILE,
        attributes: 0,
    };
    let fd = nt_open(dir, name, &open)?;
    if fstat(borrow(&fd))?.st_mode & S_IFMT == S_IFLNK {
        return Err(io::Error::from_raw_os_error(THROUGH_A_LINK));
    }
    Ok(fd)
}

/// Open the directory `dir` below `root`, one component at a time.
pub(super) fn open_dir_beneath(root: Fd<'_>, dir: &BStr) -> io::Result<OwnedFd> {
    let mut fd = dup(root)?;
    for part in dir.split_str("/") {
        fd = open_dir_at(borrow(&fd), part)?;
    }
    Ok(fd)
}

/// `lstat` of `name` in `dir`: the entry itself, a reparse point not followed.
pub(super) fn lstat_at(dir: Fd<'_>, name: &[u8]) -> io::Result<Stat> {
    let open = Open {
        access: w::FILE_READ_ATTRIBUTES,
        disposition: FILE_OPEN,
        options: 0,
        attributes: 0,
    };
    fstat(borrow(&nt_open(dir, name, &open)?))
}

/// `lstat` of the relative `path` below `root`. Windows has no symlinks in git's checkouts
/// (`core.symlinks=false`), so leading components are opened as everywhere else, not followed.
pub(super) fn lstat_following_leading(root: Fd<'_>, path: &[u8]) -> io::Result<Stat> {
    let (dir, name) = super::split_path(path.as_bstr());
    let parent = if dir.is_empty() {
        dup(root)?
    } else {
        open_dir_beneath(root, dir)?
    };
    lstat_at(borrow(&parent), name)
}

/// Mark the open `fd` deleted: POSIX semantics (the name goes at once) where the filesystem
/// has them, the classic disposition (the name goes when the last handle closes) otherwise.
fn dispose(fd: Fd<'_>) -> io::Result<()> {
    let ex = w::FILE_DISPOSITION_INFO_EX {
        Flags: w::FILE_DISPOSITION_FLAG_DELETE
            | w::FILE_DISPOSITION_FLAG_POSIX_SEMANTICS
            | w::FILE_DISPOSITION_FLAG_IGNORE_READONLY_ATTRIBUTE,
    };
    // SAFETY: an open handle with DELETE access and a live struct of the given size.
    let done = unsafe {
        w::SetFileInformationByHandle(
            fd.as_raw_handle(),
            w::FileDispositionInfoEx,
            (&raw const ex).cast::<c_void>(),
            size_of::<w::FILE_DISPOSITION_INFO_EX>() as u32,
        )
    };
    if done != 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if !err.raw_os_error().is_some_and(|c| UNSUPPORTED.contains(&c)) {
        return Err(err);
    }
    let classic = w::FILE_DISPOSITION_INFO { DeleteFile: true };
    // SAFETY: as above.
    let done = unsafe {
        w::SetFileInformationByHandle(
            fd.as_raw_handle(),
            w::FileDispositionInfo,
            (&raw const classic).cast::<c_void>(),
            size_of::<w::FILE_DISPOSITION_INFO>() as u32,
        )
    };
    if done == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Git for Windows' back-off for a file another program holds (`mingw_unlink`'s `delay`).
const BACK_OFF_MS: [u64; 5] = [1, 10, 20, 40, 100];

/// Open `name` of `dir` for deletion with `options` and delete it, retrying with git's back-off
/// while another program holds it without sharing deletion.
fn delete(dir: Fd<'_>, name: &[u8], options: u32) -> io::Result<()> {
    let open = Open {
        access: w::DELETE | w::FILE_READ_ATTRIBUTES,
        disposition: FILE_OPEN,
        options,
        attributes: 0,
    };
    let mut waits = BACK_OFF_MS.iter();
    loop {
        let result = nt_open(dir, name, &open).and_then(|fd| dispose(borrow(&fd)));
        match result {
            Err(err) if err.raw_os_error().is_some_and(|c| HELD.contains(&c)) => {
                match waits.next() {
                    Some(ms) => std::thread::sleep(Duration::from_millis(*ms)),
                    None => return Err(err),
                }
            }
            other => return other,
        }
    }
}

/// Remove the non-directory `name` of `dir` (a reparse point itself, never what it names).
pub(super) fn unlink_at(dir: Fd<'_>, name: &[u8]) -> io::Result<()> {
    delete(dir, name, FILE_NON_DIRECTORY_FILE)
}

/// Remove the empty directory `name` of `dir`.
pub(super) fn rmdir_at(dir: Fd<'_>, name: &[u8]) -> io::Result<()> {
    delete(dir, name, FILE_DIRECTORY_FILE)
}

/// Create the directory `name` in `dir`.
pub(super) fn mkdir_at(dir: Fd<'_>, name: &[u8]) -> io::Result<()> {
    let open = Open {
        access: w::FILE_LIST_DIRECTORY,
        disposition: FILE_CREATE,
        options: FILE_DIRECTORY_FILE,
        attributes: w::FILE_ATTRIBUTE_NORMAL,
    };
    nt_open(dir, name, &open).map(drop)
}

/// One batch of a directory's entries (`GetFileInformationByHandleEx` with a full-directory
/// class), appended to `out`; false when there were no more.
fn read_batch(dir: Fd<'_>, restart: bool, out: &mut Vec<(BString, FileType)>) -> io::Result<bool> {
    let mut buf = vec![0u64; 8192];
    let class = if restart {
        w::FileFullDirectoryRestartInfo
    } else {
        w::FileFullDirectoryInfo
    };
    // SAFETY: an open directory handle and a writable, aligned buffer of the given size.
    let ok = unsafe {
        w::GetFileInformationByHandleEx(
            dir.as_raw_handle(),
            class,
            buf.as_mut_ptr().cast::<c_void>(),
            (buf.len() * 8) as u32,
        )
    };
    if ok == 0 {
        let err = io::Error::last_os_error();
        // ERROR_NO_MORE_FILES
        return if err.raw_os_error() == Some(18) {
            Ok(false)
        } else {
            Err(err)
        };
    }
    let base = buf.as_ptr().cast::<u8>();
    let mut at = 0usize;
    loop {
        // SAFETY: the system wrote a chain of FILE_FULL_DIR_INFO records into `buf`, each at
        // `at`, 8-byte aligned, its name `FileNameLength` bytes long.
        let (next, attributes, name) = unsafe {
            let info = &*base.add(at).cast::<w::FILE_FULL_DIR_INFO>();
            let len = info.FileNameLength as usize / 2;
            let name = std::slice::from_raw_parts(info.FileName.as_ptr(), len);
            (info.NextEntryOffset as usize, info.FileAttributes, name)
        };
        let name = String::from_utf16_lossy(name);
        if name != "." && name != ".." {
            out.push((BString::from(name), kind_of(attributes)));
        }
        if next == 0 {
            return Ok(true);
        }
        at += next;
    }
}

/// The names in the open directory `dir` with their types (a reparse point is a symlink), `.`
/// and `..` left out.
pub(super) fn read_dir(dir: Fd<'_>) -> io::Result<Vec<(BString, FileType)>> {
    let mut out = Vec::new();
    let mut restart = true;
    while read_batch(dir, restart, &mut out)? {
        restart = false;
    }
    Ok(out)
}

/// Returns true if and only if the open directory holds no name but `only`.
pub(super) fn holds_only(dir: Fd<'_>, only: &[u8]) -> io::Result<bool> {
    Ok(read_dir(dir)?
        .iter()
        .all(|(name, _)| name.eq_ignore_ascii_case(only)))
}

/// Symbolic links need a privilege on Windows and Git for Windows checks them out as files
/// (`core.symlinks=false`): the engine never asks for one there.
pub(super) fn symlink_at(_target: &[u8], _dir: Fd<'_>, _name: &[u8]) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "symbolic links are not made on Windows (core.symlinks=false)",
    ))
}

/// Reading a symbolic link's target: see [`symlink_at`].
pub(super) fn read_link_at(_dir: Fd<'_>, _name: &[u8]) -> io::Result<Vec<u8>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "symbolic links are not read on Windows (core.symlinks=false)",
    ))
}

/// Move `name` of `dir` to the absolute path `dest` (`FileRenameInfo` on the open entry).
pub(super) fn rename_out(dir: Fd<'_>, name: &[u8], dest: &Path) -> io::Result<()> {
    use std::os::windows::ffi::OsStrExt;
    let open = Open {
        access: w::DELETE | w::FILE_READ_ATTRIBUTES,
        disposition: FILE_OPEN,
        options: 0,
        attributes: 0,
    };
    let fd = nt_open(dir, name, &open)?;
    let target: Vec<u16> = dest.as_os_str().encode_wide().collect();
    let header = std::mem::offset_of!(w::FILE_RENAME_INFO, FileName);
    let size = header + target.len() * 2 + 2;
    let mut buf = vec![0u64; size.div_ceil(8)];
    let info = buf.as_mut_ptr().cast::<w::FILE_RENAME_INFO>();
    // SAFETY: `buf` is large enough and aligned for the header and the name after it.
    unsafe {
        (*info).FileNameLength = (target.len() * 2) as u32;
        let name = (&raw mut (*info).FileName).cast::<u16>();
        std::ptr::copy_nonoverlapping(target.as_ptr(), name, target.len());
    }
    // SAFETY: an open handle with DELETE access and the struct built above.
    let ok = unsafe {
        w::SetFileInformationByHandle(
            fd.as_raw_handle(),
            w::FileRenameInfo,
            info.cast::<c_void>(),
            size as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Open `name` of `dir` for reading, a reparse point opened itself (the caller checks the
/// type). Windows has no fifos: `nonblock` changes nothing.
pub(super) fn open_read_at(dir: Fd<'_>, name: &[u8], _nonblock: bool) -> io::Result<OwnedFd> {
    let open = Open {
        access: w::FILE_GENERIC_READ,
        disposition: FILE_OPEN,
        options: FILE_NON_DIRECTORY_FILE,
        attributes: 0,
    };
    nt_open(dir, name, &open)
}

/// No creation by a path below the root here: [`create_exclusive`] in its open directory.
pub(super) fn create_exclusive_beneath(
    _root: Fd<'_>,
    _path: &[u8],
    _executable: bool,
) -> io::Result<Option<OwnedFd>> {
    Ok(None)
}

/// Create `name` in `dir` for writing, where nothing may be yet. Windows has no executable
/// bit (`core.filemode=false`).
pub(super) fn create_exclusive(dir: Fd<'_>, name: &[u8], _executable: bool) -> io::Result<OwnedFd> {
    let open = Open {
        access: w::FILE_GENERIC_WRITE | w::FILE_READ_ATTRIBUTES,
        disposition: FILE_CREATE,
        options: FILE_NON_DIRECTORY_FILE,
        attributes: w::FILE_ATTRIBUTE_NORMAL,
    };
    nt_open(dir, name, &open)
}

/// Share the blocks of the open file `src` with the new, empty open file `dst`
/// (`FSCTL_DUPLICATE_EXTENTS_TO_FILE`, ReFS). `Ok(Err(_))` when the volume cannot clone.
pub(super) fn clone_into(dst: Fd<'_>, src: Fd<'_>) -> io::Result<Result<(), io::Error>> {
    let size = fstat(src)?.st_size;
    let end = w::FILE_END_OF_FILE_INFO { EndOfFile: size };
    // SAFETY: an open handle with write access and a live struct of the given size.
    if unsafe {
        w::SetFileInformationByHandle(
            dst.as_raw_handle(),
            w::FileEndOfFileInfo,
            (&raw const end).cast::<c_void>(),
            size_of::<w::FILE_END_OF_FILE_INFO>() as u32,
        )
    } == 0
    {
        return Err(io::Error::last_os_error());
    }
    // ReFS clones whole clusters: the count is rounded up to 64 KiB, its largest cluster; the
    // file's end was set above, so nothing past it is seen.
    let count = (size + 0xffff) & !0xffff;
    let data = DUPLICATE_EXTENTS_DATA {
        FileHandle: src.as_raw_handle(),
        SourceFileOffset: 0,
        TargetFileOffset: 0,
        ByteCount: count,
    };
    let mut returned = 0u32;
    // SAFETY: open handles and a live input struct; no output buffer.
    let ok = unsafe {
        DeviceIoControl(
            dst.as_raw_handle(),
            FSCTL_DUPLICATE_EXTENTS_TO_FILE,
            (&raw const data).cast::<c_void>(),
            size_of::<DUPLICATE_EXTENTS_DATA>() as u32,
            std::ptr::null_mut(),
            0,
            &mut returned,
            std::ptr::null_mut(),
        )
    };
    if ok != 0 {
        return Ok(Ok(()));
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error().is_some_and(|c| UNSUPPORTED.contains(&c)) {
        Ok(Err(err))
    } else {
        Err(err)
    }
}

/// Whether the volume clones between these directories: the donor file cloned into a file of
/// `dir` that is deleted when closed (Windows has no unnamed files).
pub(super) fn clone_probe(donor: Fd<'_>, dir: Fd<'_>) -> io::Result<()> {
    let name = format!(".git-par-clone-probe-{}", std::process::id());
    let open = Open {
        access: w::FILE_GENERIC_WRITE | w::FILE_READ_ATTRIBUTES | w::DELETE,
        disposition: FILE_CREATE,
        options: FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE,
        attributes: w::FILE_ATTRIBUTE_TEMPORARY,
    };
    let probe = nt_open(dir, name.as_bytes(), &open)?;
    clone_into(borrow(&probe), donor)?
}

/// The filesystem of `fd` by Linux's magic number for its counterpart (see
/// [`super::tune::magic`]): a network share by SMB's.
pub(super) fn fs_magic(fd: Fd<'_>) -> Option<u64> {
    use super::tune;
    // SAFETY: plain data.
    let mut remote: w::FILE_REMOTE_PROTOCOL_INFO = unsafe { zeroed() };
    // SAFETY: an open handle and a writable struct of the given size.
    let is_remote = unsafe {
        w::GetFileInformationByHandleEx(
            fd.as_raw_handle(),
            w::FileRemoteProtocolInfo,
            (&raw mut remote).cast::<c_void>(),
            size_of::<w::FILE_REMOTE_PROTOCOL_INFO>() as u32,
        )
    } != 0;
    if is_remote {
        return Some(tune::SMB2_MAGIC);
    }
    let mut name = [0u16; 64];
    // SAFETY: an open handle and a writable buffer of the given length; the rest unwanted.
    let ok = unsafe {
        w::GetVolumeInformationByHandleW(
            fd.as_raw_handle(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            name.as_mut_ptr(),
            name.len() as u32,
        )
    };
    if ok == 0 {
        return None;
    }
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    tune::windows_magic(&String::from_utf16_lossy(&name[..end]))
}

/// The kind of the volume `fd` is on: a share is a network filesystem, a local volume of a
/// known filesystem is behind Windows' filter drivers.
pub(super) fn kind_of_volume(fd: Fd<'_>) -> super::tune::Kind {
    use super::tune::{Kind, SMB2_MAGIC};
    match fs_magic(fd) {
        Some(SMB2_MAGIC) => Kind::Network,
        Some(_) => Kind::Filtered,
        None => Kind::Unknown,
    }
}

/// The volume's serial number: two directories with the same one are on one volume.
pub(super) fn volume_id(fd: Fd<'_>) -> io::Result<u64> {
    // SAFETY: plain data.
    let mut info: w::BY_HANDLE_FILE_INFORMATION = unsafe { zeroed() };
    // SAFETY: an open handle and a writable struct.
    if unsafe { w::GetFileInformationByHandle(fd.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::from(info.dwVolumeSerialNumber))
}

/// The bytes of a file that is replaced by renaming a new one over it (an index): read into
/// memory, since Windows refuses to replace a file while a view of it is mapped (git unmaps its
/// index before writing the new one, for the same reason).
pub type ReplaceableBytes = Vec<u8>;

/// Read `file` whole (see [`ReplaceableBytes`]).
pub fn replaceable_bytes(file: &File) -> io::Result<ReplaceableBytes> {
    use std::io::Read;
    let mut bytes = Vec::new();
    (&*file).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Borrow an owned handle.
pub(super) fn borrow(fd: &OwnedFd) -> Fd<'_> {
    fd.as_handle()
}

/// The layer's tests on Windows (run under Wine by `scripts/windows test`).
#[cfg(test)]
mod tests {
    use super::super::{create_file_at, Dirs, Root};
    use super::*;

    fn b(s: &str) -> &BStr {
        s.as_bytes().as_bstr()
    }

    fn root() -> (tempfile::TempDir, Root) {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::open(tmp.path()).unwrap();
        (tmp, root)
    }

    fn write(dirs: &mut Dirs<'_>, path: &str, data: &[u8]) -> Stat {
        let (dir, name) = super::super::split_path(b(path));
        let fd = dirs.dir(dir).unwrap();
        create_file_at(fd, name, data, false).unwrap()
    }

    /// Git for Windows' messages name POSIX errors (`err_win_to_posix`): a file another program
    /// holds is "Permission denied"; an error it does not map keeps Windows' text, without
    /// Rust's "(os error N)".
    #[test]
    fn errors_read_as_git_for_windows_words_them() {
        use windows_sys::Win32::Foundation as f;
        let text = |code: u32| crate::fs::strerror(&io::Error::from_raw_os_error(code as i32));
        assert_eq!(text(f::ERROR_SHARING_VIOLATION), "Permission denied");
        assert_eq!(text(f::ERROR_FILE_EXISTS), "File exists");
        assert_eq!(text(f::ERROR_DIR_NOT_EMPTY), "Directory not empty");
        let other = text(f::ERROR_CANT_RESOLVE_FILENAME);
        assert!(!other.is_empty() && !other.contains("os error"), "{other}");
    }

    #[test]
    fn files_are_created_relative_to_their_directory_and_exclusively() {
        let (tmp, root) = root();
        let mut dirs = root.dirs();
        dirs.mkdir_all(b("a/b"), false).unwrap();
        let st = write(&mut dirs, "a/b/f.txt", b"hello");
        assert_eq!(st.st_size, 5);
        assert_eq!(
            (st.st_ino, st.st_dev, st.st_uid),
            (0, 0, 0),
            "Git for Windows' stat"
        );
        assert_eq!(
            std::fs::read(tmp.path().join("a/b/f.txt")).unwrap(),
            b"hello"
        );
        let lstat = dirs.lstat(b("a/b/f.txt")).unwrap().unwrap();
        assert_eq!(
            (lstat.st_mtime, lstat.st_mtime_nsec),
            (st.st_mtime, st.st_mtime_nsec)
        );
        let fd = dirs.dir(b("a/b")).unwrap();
        let again = create_file_at(fd, b("f.txt"), b"x", false);
        assert!(matches!(again, Err(super::super::CreateError::Create(e)) if is_collision(&e)));
        let names = dirs.entries(b("a")).unwrap();
        assert_eq!(names, vec![(BString::from("b"), FileType::Directory)]);
    }

    #[test]
    fn names_that_leave_their_directory_are_refused() {
        let (tmp, root) = root();
        let mut dirs = root.dirs();
        dirs.mkdir(b("a"), false).unwrap();
        for bad in ["a/../x", "a\\..\\x", "a/..", "x:stream", "a/./x"] {
            let (dir, name) = super::super::split_path(b(bad));
            let refused = dirs.dir(dir).and_then(|fd| {
                create_file_at(fd, name, b"x", false).map_err(|e| e.io().kind().into())
            });
            assert!(refused.is_err(), "{bad} was created");
        }
        let outside = tmp.path().parent().unwrap().join("x");
        assert!(!outside.exists(), "nothing written outside the tree");
        assert!(!tmp.path().join("x").exists());
    }

    #[test]
    fn a_file_held_open_with_shared_deletion_is_removed_and_one_held_without_is_kept() {
        use std::os::windows::fs::OpenOptionsExt;
        let (tmp, root) = root();
        let mut dirs = root.dirs();
        write(&mut dirs, "shared.txt", b"1");
        write(&mut dirs, "held.txt", b"2");
        let open = |name: &str, share: u32| {
            std::fs::OpenOptions::new()
                .read(true)
                .share_mode(share)
                .open(tmp.path().join(name))
                .unwrap()
        };
        let shared = open("shared.txt", w::FILE_SHARE_READ | w::FILE_SHARE_DELETE);
        assert!(dirs.unlink(b("shared.txt")).unwrap());
        // With POSIX semantics (NTFS since Windows 10 1709) the name is gone at once; Wine keeps
        // it until the other handle closes, as Windows did before.
        drop(shared);
        assert!(dirs.lstat(b("shared.txt")).unwrap().is_none());
        let held = open("held.txt", w::FILE_SHARE_READ);
        let err = dirs.unlink(b("held.txt")).unwrap_err();
        assert!(
            err.raw_os_error().is_some_and(|c| HELD.contains(&c)),
            "{err:?}"
        );
        assert_eq!(
            std::fs::read(tmp.path().join("held.txt")).unwrap(),
            b"2",
            "nothing lost"
        );
        drop(held);
        assert!(dirs.unlink(b("held.txt")).unwrap(), "a rerun converges");
    }

    #[test]
    fn directories_are_removed_only_when_empty_and_subtrees_whole() {
        let (tmp, root) = root();
        let mut dirs = root.dirs();
        dirs.mkdir_all(b("d/e"), false).unwrap();
        write(&mut dirs, "d/e/f", b"x");
        let err = dirs.rmdir(b("d")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::DirectoryNotEmpty);
        let err = dirs.unlink(b("d")).unwrap_err();
        assert!(is_collision(&err), "{err:?}");
        assert!(dirs.remove_all(b("d")).unwrap());
        assert!(!tmp.path().join("d").exists());
    }

    #[test]
    fn a_directory_link_in_the_tree_is_never_entered() {
        let (tmp, root) = root();
        let outside = tempfile::tempdir().unwrap();
        if std::os::windows::fs::symlink_dir(outside.path(), tmp.path().join("lnk")).is_err() {
            eprintln!("not checked: this system made no directory link");
            return;
        }
        let mut dirs = root.dirs();
        // Windows opens the link itself (a symlink to git-par); Wine 8 cannot open a link with
        // FILE_OPEN_REPARSE_POINT and reports it missing. Either way it is never entered.
        let seen = dirs.file_type(b("lnk")).unwrap();
        assert!(matches!(seen, Some(FileType::Symlink) | None), "{seen:?}");
        let (dir, name) = super::super::split_path(b("lnk/pwned"));
        let through = dirs
            .dir(dir)
            .and_then(|fd| create_file_at(fd, name, b"x", false).map_err(|e| e.io().kind().into()));
        assert!(through.is_err());
        assert!(
            dirs.lstat(b("lnk/pwned")).unwrap().is_none(),
            "not there, as git sees it"
        );
        assert!(
            !outside.path().join("pwned").exists(),
            "nothing written through the link"
        );
        if seen.is_some() {
            assert!(dirs.remove_all(b("lnk")).unwrap());
        }
        assert!(outside.path().exists(), "the link's target is left alone");
    }

    #[test]
    fn the_volume_is_named_and_unix_times_are_git_for_windows_times() {
        let (_tmp, root) = root();
        let kind = kind_of_volume(root.fd());
        eprintln!(
            "the test directory's volume: {kind:?} ({:?})",
            fs_magic(root.fd())
        );
        assert!(matches!(
            kind,
            super::super::tune::Kind::Filtered | super::super::tune::Kind::Unknown
        ));
        assert!(volume_id(root.fd()).is_ok());
        assert_eq!(unix_time(116_444_736_000_000_000), (0, 0));
        assert_eq!(unix_time(116_444_736_000_000_000 + 15), (0, 1_500));
        assert_eq!(unix_time(116_444_736_000_000_000 - 1), (-1, 999_999_900));
    }
}
