//! Installing DynamoDB Local: the download into the cache directory, its checksum, and the
//! unpacking, under a lock so concurrent test processes install it once.
use super::*;

/// A path in the cache that is removed when dropped, so that failures and early
/// returns leave no half-written files behind.
pub(super) struct TempPath(PathBuf);

impl Drop for TempPath {
    fn drop(&mut self) {
        if self.0.is_dir() {
            let _ = fs::remove_dir_all(&self.0);
        } else {
            let _ = fs::remove_file(&self.0);
        }
    }
}

/// A downloaded tarball; `_guard` deletes the file itself or the folder around it.
pub(super) struct Download {
    pub(super) file: PathBuf,
    _guard: TempPath,
}

/// A name no other thread or process uses at the same time.
pub(super) fn temp_name(what: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{what}-{}-{nanos}-{n}", std::process::id())
}

/// Takes the cache's exclusive lock; it is released when the returned file is dropped,
/// or by the kernel if this process dies, so a crash never leaves it held.
pub(super) fn lock_cache(cache: &Path) -> Result<File, LocalError> {
    fs::create_dir_all(cache).map_err(LocalError::io(format!(
        "could not create cache folder {}",
        cache.display()
    )))?;
    let path = cache.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(LocalError::io(format!("could not open {}", path.display())))?;
    match file.lock() {
        Ok(()) => Ok(file),
        // Some network file systems cannot lock; installing still cannot produce a
        // broken folder thanks to the final rename, only a duplicate download.
        Err(err) if err.kind() == io::ErrorKind::Unsupported => Ok(file),
        Err(source) => Err(LocalError::Io {
            context: format!("could not lock {}", path.display()),
            source,
        }),
    }
}

/// Deletes what an installer that died mid-way left. Must hold the install lock.
pub(super) fn remove_stale_temps(cache: &Path) {
    let Ok(entries) = fs::read_dir(cache) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            drop(TempPath(entry.path()));
        }
    }
}

pub(super) fn download(cache: &Path) -> Result<Download, LocalError> {
    let file = cache.join(format!("{}.tgz", temp_name("download")));
    let guard = TempPath(file.clone());
    let curl = Command::new("curl")
        .args(["-fsSL", "-o"])
        .arg(&file)
        .arg(TARBALL_URL)
        .stdin(Stdio::null())
        .output();
    let curl_failure = match curl {
        Ok(out) if out.status.success() => {
            return Ok(Download {
                file,
                _guard: guard,
            });
        }
        Ok(out) => format!("curl ({}): {}", out.status, last_lines(&out.stderr, 10)),
        Err(err) => format!("curl could not be run: {err}"),
    };
    drop(guard);

    let dir = cache.join(temp_name("npm"));
    fs::create_dir(&dir).map_err(LocalError::io(format!(
        "could not create {}",
        dir.display()
    )))?;
    let guard = TempPath(dir.clone());
    // Run inside the temp folder so that npm finds no package.json of the caller, and
    // with its cache there too, so that no second 50 MB copy stays in ~/.npm.
    let npm = Command::new("npm")
        .args(["pack", NPM_SPEC, "--pack-destination"])
        .arg(&dir)
        .arg("--cache")
        .arg(dir.join("npm-cache"))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output();
    let npm_failure = match npm {
        Ok(out) if out.status.success() => {
            let file = dir.join(NPM_TARBALL);
            if file.is_file() {
                return Ok(Download {
                    file,
                    _guard: guard,
                });
            }
            format!("npm succeeded but wrote no {NPM_TARBALL}")
        }
        Ok(out) => format!("npm ({}): {}", out.status, last_lines(&out.stderr, 10)),
        Err(err) => format!("npm could not be run: {err}"),
    };
    Err(LocalError::Download {
        tool: "curl and npm".to_owned(),
        stderr: format!("{curl_failure}\n{npm_failure}"),
    })
}

/// Checks the file before anything from it is unpacked; a mismatching file is deleted.
pub(super) fn verify_sha256(file: &Path, expected: &str) -> Result<(), LocalError> {
    let mut reader =
        File::open(file).map_err(LocalError::io(format!("could not open {}", file.display())))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(LocalError::io(format!("could not read {}", file.display())))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let found: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if found.eq_ignore_ascii_case(expected) {
        Ok(())
    } else {
        drop(reader);
        let _ = fs::remove_file(file);
        Err(LocalError::ChecksumMismatch {
            expected: expected.to_owned(),
            found,
        })
    }
}

/// Unpacks into a temp folder of the cache (same file system, so the rename is atomic)
/// and renames the result into place, so that `target` is never seen half-written.
pub(super) fn unpack(tarball: &Path, cache: &Path, target: &Path) -> Result<(), LocalError> {
    let context = || format!("could not unpack {}", tarball.display());
    let staging = TempPath(cache.join(temp_name("unpack")));
    fs::create_dir(&staging.0).map_err(LocalError::io(context()))?;
    let file = File::open(tarball).map_err(LocalError::io(context()))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(BufReader::new(file)));
    for entry in archive.entries().map_err(LocalError::io(context()))? {
        let mut entry = entry.map_err(LocalError::io(context()))?;
        let wanted = entry
            .path()
            .map_err(LocalError::io(context()))?
            .starts_with(TARBALL_FOLDER);
        if wanted {
            // unpack_in refuses paths that would escape the staging folder.
            entry
                .unpack_in(&staging.0)
                .map_err(LocalError::io(context()))?;
        }
    }
    let unpacked = staging.0.join(TARBALL_FOLDER);
    if !unpacked.join(JAR).is_file() {
        return Err(LocalError::Io {
            context: context(),
            source: io::Error::new(
                io::ErrorKind::NotFound,
                format!("no {TARBALL_FOLDER}/{JAR} in the tarball"),
            ),
        });
    }
    match fs::rename(&unpacked, target) {
        Ok(()) => Ok(()),
        // Another installer got there first (possible only without a working lock).
        Err(_) if target.join(JAR).is_file() => Ok(()),
        Err(source) => Err(LocalError::Io {
            context: format!("could not move DynamoDB Local to {}", target.display()),
            source,
        }),
    }
}
