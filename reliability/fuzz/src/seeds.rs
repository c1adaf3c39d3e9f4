//! Writes every target's seed inputs into `DIR/<target>/` (`seeds DIR`).

fn main() -> std::io::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "seeds".into());
    for (target, name, bytes) in reliability::fuzz::seeds::all() {
        let folder = dir.join(target);
        std::fs::create_dir_all(&folder)?;
        std::fs::write(folder.join(name), bytes)?;
    }
    Ok(())
}
