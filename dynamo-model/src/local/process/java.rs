//! A Java runtime for DynamoDB Local: the one the machine has, or one installed with
//! apt when it has none.

use super::*;

/// Makes sure a `java` executable exists and returns the command to run it.
///
/// `$JAVA_HOME/bin/java` is preferred when it exists and works, then `java` from `PATH`.
/// If neither runs `java -version`, this runs `apt-get update` and
/// `apt-get install -y --no-install-recommends openjdk-17-jre-headless` (through
/// `sudo -n` when not root), under the same lock as [`install`] so that parallel test
/// processes do not fight over dpkg's lock.
pub fn ensure_java() -> Result<PathBuf, LocalError> {
    static JAVA: OnceLock<PathBuf> = OnceLock::new();
    if let Some(java) = JAVA.get() {
        return Ok(java.clone());
    }
    let java = match find_java() {
        Some(java) => java,
        None => {
            let _lock = lock_cache(&cache_dir())?;
            match find_java() {
                Some(java) => java,
                None => {
                    apt_install_java()?;
                    find_java().ok_or_else(|| LocalError::JavaMissing {
                        detail: "openjdk-17-jre-headless was installed but `java -version` \
                                 still fails"
                            .to_owned(),
                    })?
                }
            }
        }
    };
    Ok(JAVA.get_or_init(|| java).clone())
}

/// The first java that runs `java -version`: `$JAVA_HOME/bin/java`, then `PATH`'s.
fn find_java() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        let java = PathBuf::from(home).join("bin").join("java");
        if java.is_file() {
            // Java is started from the install folder, where a relative path breaks.
            candidates.push(std::path::absolute(&java).unwrap_or(java));
        }
    }
    candidates.push(PathBuf::from("java"));
    candidates.into_iter().find(|java| {
        Command::new(java)
            .arg("-version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// Installs OpenJDK 17's headless runtime with apt-get, through `sudo -n` when not root.
fn apt_install_java() -> Result<(), LocalError> {
    let is_root = Command::new("id")
        .arg("-u")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    let steps: [&[&str]; 2] = [
        &["update"],
        &[
            "install",
            "-y",
            "--no-install-recommends",
            "openjdk-17-jre-headless",
        ],
    ];
    for args in steps {
        let mut command = if is_root {
            Command::new("apt-get")
        } else {
            // `-n`: fail instead of prompting for a password nobody can type in a test.
            let mut sudo = Command::new("sudo");
            sudo.args(["-n", "apt-get"]);
            sudo
        };
        let sudo = if is_root { "" } else { "sudo -n " };
        let shown = format!("{sudo}apt-get {}", args.join(" "));
        let out = command
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
            .map_err(|err| LocalError::JavaMissing {
                detail: format!("could not run `{shown}`: {err}"),
            })?;
        if !out.status.success() {
            return Err(LocalError::JavaMissing {
                detail: format!(
                    "`{shown}` failed ({}): {}",
                    out.status,
                    last_lines(&out.stderr, 10)
                ),
            });
        }
    }
    Ok(())
}
