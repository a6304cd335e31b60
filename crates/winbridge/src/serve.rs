//! The `serve` command line: parses it, binds the listener, publishes the port, serves.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};

use winbridge::server::{self, Config};
use winbridge::translate::{self, Drives};

/// The command line, for the error message when it is wrong.
pub const USAGE: &str =
    "usage: winbridge serve (--port-file FILE | --port N) [--prefix WINEPREFIX] [--verbose]";

/// Where to listen and how to translate, as the command line says.
pub struct Options {
    /// Write the port chosen by the system here (for `--port-file`).
    port_file: Option<PathBuf>,
    /// The port to listen on; 0 lets the system choose.
    port: u16,
    /// The Wine prefix for `C:` and the other drives; the server's `WINEPREFIX` when absent.
    prefix: Option<PathBuf>,
    verbose: bool,
}

impl Options {
    /// Parses the arguments after the program name.
    pub fn parse(args: &[OsString]) -> Result<Options, String> {
        let mut args = args.iter();
        if args.next().map(|a| a.as_os_str()) != Some("serve".as_ref()) {
            return Err("the only command is `serve`".into());
        }
        let mut options = Options {
            port_file: None,
            port: 0,
            prefix: None,
            verbose: false,
        };
        let mut port = None;
        while let Some(arg) = args.next() {
            let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
            match arg.to_str() {
                Some("--port-file") => options.port_file = Some(value("--port-file")?.into()),
                Some("--prefix") => options.prefix = Some(value("--prefix")?.into()),
                Some("--port") => {
                    let text = value("--port")?.to_string_lossy().into_owned();
                    port = Some(text.parse().map_err(|_| format!("bad port {text:?}"))?);
                }
                Some("--verbose") => options.verbose = true,
                _ => return Err(format!("unknown argument {arg:?}")),
            }
        }
        match (port, &options.port_file) {
            (Some(_), Some(_)) => return Err("give --port or --port-file, not both".into()),
            (None, None) => return Err("give --port or --port-file".into()),
            (Some(port), None) => options.port = port,
            (None, Some(_)) => {}
        }
        Ok(options)
    }
}

/// Serves until killed; returns an exit code only when setting up or accepting fails.
pub fn run(options: Options) -> i32 {
    let listener = match TcpListener::bind((Ipv4Addr::LOCALHOST, options.port)) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!(
                "winbridge: cannot listen on 127.0.0.1:{}: {e}",
                options.port
            );
            return 1;
        }
    };
    if let Some(file) = &options.port_file {
        let published = listener
            .local_addr()
            .and_then(|addr| publish(file, addr.port()));
        if let Err(e) = published {
            eprintln!(
                "winbridge: cannot write the port to {}: {e}",
                file.display()
            );
            return 1;
        }
    }
    let prefix = translate::prefix_or_env(options.prefix);
    let config = Config {
        drives: Drives::wine(prefix.as_deref()),
        verbose: options.verbose,
    };
    let e = server::serve(listener, config);
    eprintln!("winbridge: accepting connections: {e}");
    1
}

/// Writes `port` to `file` under a temporary name, then renames it into place, so that a
/// reader polling for the file never sees it empty or half written.
fn publish(file: &Path, port: u16) -> io::Result<()> {
    let mut temp = file.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    fs::write(&temp, format!("{port}\n"))?;
    fs::rename(&temp, file)
}
