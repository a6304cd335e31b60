//! `winbridge`: built for Windows, the client that Wine runs as `git.exe` or `sh.exe`; built
//! for Linux, the server that runs the host's programs for it:
//!
//! ```text
//! winbridge serve (--port-file FILE | --port N) [--prefix WINEPREFIX] [--verbose]
//! ```
//!
//! The crate's documentation describes the protocol and the translation rules.

#[cfg(windows)]
fn main() {
    std::process::exit(winbridge::client::main());
}

#[cfg(not(windows))]
fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = match serve::Options::parse(&args) {
        Ok(options) => serve::run(options),
        Err(message) => {
            eprintln!("winbridge: {message}\n{}", serve::USAGE);
            2
        }
    };
    std::process::exit(code);
}

#[cfg(not(windows))]
mod serve;
