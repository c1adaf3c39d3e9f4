//! AFL++ target: `reliability::fuzz::checkpoint`.

fn main() {
    afl::fuzz!(|data: &[u8]| reliability::fuzz::checkpoint(data));
}
